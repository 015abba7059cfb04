#!/bin/sh
# How many points per second `pe-vp sweep` simulates with each way of giving points their process, measured in one
# run so that the ratios are taken on the same machine state: persistent workers, each point in a fresh SystemC
# context (--point-isolation worker, the default), a child forked from the sweep per point (fork), and a `pe-vp gemm`
# process started afresh per point (process, the reference). The repetitions alternate between the three, and each
# reports the median. A point per second is one distinct simulation (points that simulate the same thing share a key
# and run once) over the whole command's wall time -- planning, the points, the merge into results.csv.
# docs/performance.md has the figures.
#
#   scripts/bench-sweep.sh [REPETITIONS]        # default 5
#
# Environment: PEVP (default build/platform/pe-vp), SPEC (default the ResNet-50 example,
# platform/examples/sweep/resnet50_array_size.toml), JOBS (default 2), TMPDIR.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
pevp=${PEVP:-$here/build/platform/pe-vp}
spec=${SPEC:-$here/platform/examples/sweep/resnet50_array_size.toml}
jobs=${JOBS:-2}
reps=${1:-5}
case $reps in '' | *[!0-9]* | 0)
  echo "bench-sweep.sh: REPETITIONS: a positive integer, got '$reps'" >&2
  exit 2
  ;;
esac
[ -x "$pevp" ] || { echo "bench-sweep.sh: $pevp: not an executable (build pe-vp, or set PEVP)" >&2; exit 2; }
[ -r "$spec" ] || { echo "bench-sweep.sh: $spec: cannot read the spec" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/pevp-bench-sweep.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

now() { date +%s.%N; }

# One sweep of the spec with points isolated as $1; appends "points_per_second" to $work/$1.rates.
run_once() {
  out=$work/out-$1
  rm -rf "$out"
  start=$(now)
  status=0
  "$pevp" sweep "$spec" --out "$out" --jobs "$jobs" --point-isolation "$1" --no-plots --quiet >"$work/$1.log" 2>&1 ||
    status=$?
  end=$(now)
  # 0: every point ok; 1: some point failed -- a bench of failures would not measure the simulations.
  if [ "$status" -ne 0 ]; then
    echo "bench-sweep.sh: the $1 sweep failed (status $status):" >&2
    cat "$work/$1.log" >&2
    exit 1
  fi
  distinct=$(sed -n 's/.* points (\([0-9]*\) distinct).*/\1/p' "$work/$1.log" | head -n 1)
  awk -v n="$distinct" -v s="$start" -v e="$end" 'BEGIN { printf "%.3f %.3f\n", n / (e - s), e - s }' >>"$work/$1.rates"
  echo "$distinct"
}

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

distinct=
i=1
while [ "$i" -le "$reps" ]; do
  for isolation in process fork worker; do
    distinct=$(run_once "$isolation")
    printf '  repetition %d, %-7s: %s points/s (%s s)\n' "$i" "$isolation" \
      "$(tail -n 1 "$work/$isolation.rates" | cut -d' ' -f1)" "$(tail -n 1 "$work/$isolation.rates" | cut -d' ' -f2)"
  done
  i=$((i + 1))
done

process=$(median "$work/process.rates")
fork=$(median "$work/fork.rates")
worker=$(median "$work/worker.rates")
echo "pe-vp sweep $(basename "$spec"): $distinct distinct points, --jobs $jobs, median of $reps repetition(s)"
echo "  --point-isolation process: $process points/s"
echo "  --point-isolation fork:    $fork points/s"
echo "  --point-isolation worker:  $worker points/s"
awk -v f="$fork" -v w="$worker" -v p="$process" 'BEGIN { printf "  fork / process:            %.2fx\n  worker / process:          %.2fx\n", f / p, w / p }'
