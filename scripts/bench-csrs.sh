#!/usr/bin/env bash
# The cost of the register RTL against the TLM register model, in one run (docs/performance.md): the same register
# script -- N writes and N reads of top spare_register0, N reads of a 48-bit counter and of the protected face --
# and the same GEMM, with csrs.impl = tlm and csrs.impl = rtl (each its own process: one SystemC elaboration per
# process). Figures are wall seconds of the whole process (best of 3) and accesses per wall second.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${PEVP_BUILD_DIR:-build}"
PEVP="$BUILD/platform/pe-vp"
N="${PEVP_BENCH_CSR_ACCESSES:-20000}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The register script, beside the one-matmul example program.
cp platform/examples/single_matmul/program.pes "$work/p.pes"
{
  for ((i = 0; i < N; i++)); do
    echo "write top spare_register0 $i"
    echo "read top spare_register0"
  done
  for ((i = 0; i < N / 4; i++)); do
    echo "read top arr_seq_ififo_perf_matmul.tile_128x128_tile0_instr_cnt_lsb"
    echo "read protected throttle_cfg"
  done
} > "$work/regs.txt"
accesses=$((2 * N + N / 2))

best() {  # best wall seconds of 3 runs of "$@"
  local b=""
  for _ in 1 2 3; do
    local s e
    s=$(date +%s.%N)
    "$@" > /dev/null
    e=$(date +%s.%N)
    b=$(echo "$s $e ${b:-1e9}" | awk '{ d = $2 - $1; print (d < $3) ? d : $3 }')
  done
  echo "$b"
}

printf '%-34s %10s %10s %14s\n' "workload" "tlm s" "rtl s" "rtl / tlm"
for label in script gemm; do
  if [ "$label" = script ]; then
    args=(run "$work/p.pes" --regs "$work/regs.txt" --mode functional)
  else
    args=(gemm --m 1024 --k 1024 --n 1024 --quiet)
  fi
  t=$(best "$PEVP" "${args[@]}" --set csrs.impl=tlm)
  r=$(best "$PEVP" "${args[@]}" --set csrs.impl=rtl)
  name=$([ "$label" = script ] && echo "$accesses register accesses" || echo "gemm 1024^3 (both modes)")
  printf '%-34s %10.3f %10.3f %14.2f\n' "$name" "$t" "$r" "$(echo "$r $t" | awk '{ print $1 / $2 }')"
  if [ "$label" = script ]; then
    echo "  accesses per wall second: tlm $(echo "$accesses $t" | awk '{ printf "%.0f", $1 / $2 }')," \
         "rtl $(echo "$accesses $r" | awk '{ printf "%.0f", $1 / $2 }')"
  fi
done
