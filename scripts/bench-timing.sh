#!/usr/bin/env bash
# The timing-simulation benchmarks of docs/performance.md: each platform variant
# is its own process (one SystemC simulation per process). Run on a quiet machine;
# the figures are CPU time of the simulation, one thread. PEVP_BENCH_IR=1 adds
# the machine instructions per micro-op (valgrind), which machine noise does not move.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${PEVP_BUILD_DIR:-build}"
scripts/build.sh >/dev/null
B="$BUILD/tests/bench/timing_bench"
N="${PEVP_BENCH_INSTRUCTIONS:-2000000}"
echo "== timing-only, decode cache (the default)";        "$B" --instructions "$N"
echo "== timing-only, no decode cache";                   "$B" --instructions "$N" --no-cache | tail -1
echo "== timing-only, empty observer (the tracing hook)"; "$B" --instructions "$N" --null-observer | tail -1
echo "== timing-only, tracing to a file";                 "$B" --instructions 200000 --trace /tmp/pevp_bench_trace.json | tail -2
echo "== both (functional + timing)";                     "$B" --instructions 20000 --mode both | tail -1

# Noise-free figures: machine instructions per micro-op under valgrind
# (cachegrind counts them; the difference of two run lengths removes the
# set-up). Slower (about 30 s); run with PEVP_BENCH_IR=1.
if [ "${PEVP_BENCH_IR:-0}" = 1 ] && command -v valgrind >/dev/null; then
  ir() {
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$B" --platform-only "$@" 2>&1 |
      awk '/I *refs:/ { gsub(",", "", $NF); print $NF }'
  }
  for variant in "" "--no-cache"; do
    a=$(ir --instructions 50000 $variant)
    b=$(ir --instructions 100000 $variant)
    echo "== instructions per micro-op, timing-only ${variant:-(decode cache)}: $(( (b - a) / 50000 ))"
  done
fi
