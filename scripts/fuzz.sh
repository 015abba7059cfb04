#!/usr/bin/env bash
# Build the libFuzzer harnesses of tests/fuzz with clang into ./build-fuzz (or $PEVP_FUZZ_BUILD_DIR) and run each
# one for SECONDS (default 60) on a copy of its seed corpus, with its dictionary. docs/reliability.md describes the
# targets and the sanitizers.
#
#   scripts/fuzz.sh [SECONDS] [TARGET ...]      # targets: decode assemble npy config regs sweep protocol checkpoint (default: all)
#   scripts/fuzz.sh --runs N [TARGET ...]       # each target until N executions instead, however long that takes (the
#                                               # long runs of docs/reliability.md: --runs 10000000, under nice -n 19,
#                                               # in a build directory of their own: PEVP_FUZZ_BUILD_DIR=build-fuzz-long,
#                                               # since a run holds its directory's lock, which .ci/run waits for)
#
# Exit status: 0 when no fuzzer crashed, 1 when one did (its reproducer is printed as a hex dump with the fuzzer's
# report, and kept under build-fuzz/fuzz-runs/<target>/artifacts/), 2 when clang or its libFuzzer runtime is
# missing. Installs nothing: the Debian packages are listed in docs/reliability.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${PEVP_FUZZ_BUILD_DIR:-$root/build-fuzz}"
cxx="${PEVP_FUZZ_CXX:-/usr/bin/clang++}"
runs=""
if [ "${1:-}" = "--runs" ]; then
  runs="${2:-}"
  shift 2 || shift $#
  if ! [[ "$runs" =~ ^[0-9]{1,18}$ ]] || [ "$runs" -eq 0 ]; then
    echo "fuzz.sh: --runs needs a positive whole number of executions (at most 18 digits), not '$runs'" >&2
    exit 2
  fi
  seconds=0
else
  seconds="${1:-60}"
  shift || true
  if ! [[ "$seconds" =~ ^[0-9]{1,18}$ ]] || [ "$seconds" -eq 0 ]; then
    echo "fuzz.sh: SECONDS must be a positive whole number (at most 18 digits), not '$seconds'" >&2
    exit 2
  fi
fi
budget="$([ -n "$runs" ] && echo "$runs runs" || echo "${seconds}s")"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(decode assemble npy config regs sweep protocol checkpoint)

# -max_len per target: the selector bytes and four records; text and files of a few KiB.
max_len_of() {
  case "$1" in
    decode) echo 260 ;;
    assemble | npy | config | sweep | protocol) echo 4096 ;;
    regs) echo 2048 ;;
    checkpoint) echo 131072 ;;  # its seeds are whole checkpoints of 21 and 99 KB
    *) echo "fuzz.sh: unknown target '$1' (decode assemble npy config regs sweep protocol checkpoint)" >&2; exit 2 ;;
  esac
}
for t in "${targets[@]}"; do max_len_of "$t" >/dev/null; done

if [ ! -x "$cxx" ]; then
  echo "fuzz.sh: $cxx not found. The fuzz build needs clang 14 with its libFuzzer and sanitizer runtimes" >&2
  echo "         (Debian 12: apt-get install clang-14 libclang-rt-14-dev; see docs/reliability.md)." >&2
  exit 2
fi
runtime_dir="$("$cxx" -print-runtime-dir 2>/dev/null || true)"
if [ ! -f "$runtime_dir/libclang_rt.fuzzer-x86_64.a" ] && [ ! -f "$runtime_dir/libclang_rt.fuzzer.a" ]; then
  echo "fuzz.sh: $cxx has no libFuzzer runtime in '$runtime_dir' (Debian 12: apt-get install libclang-rt-14-dev)." >&2
  exit 2
fi

# One run per build directory at a time: a second one would rebuild under the first and clear its run folders.
mkdir -p "$build"
exec 9>"$build/fuzz.lock"
if ! flock -n 9; then
  echo "fuzz.sh: another fuzz.sh is using $build; waiting for it"
  flock 9
fi

echo "== configure and build $build (clang, PEVP_FUZZ=ON)"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DPEVP_FUZZ=ON -DPEVP_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target pevp_fuzzers --parallel "$(nproc)"

export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
# Reports name functions and lines through llvm-symbolizer-14 (package llvm-14); without it, through addr2line.
export ASAN_OPTIONS="${ASAN_OPTIONS:-allow_addr2line=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:report_error_type=1:allow_addr2line=1}"

failed=()
summary=()
for t in "${targets[@]}"; do
  bin="$build/tests/fuzz/fuzz_$t"
  run="$build/fuzz-runs/$t"
  rm -rf "$run"
  mkdir -p "$run/corpus" "$run/artifacts"
  cp -R "$root/tests/fuzz/corpus/$t/." "$run/corpus/"   # a copy: the repository's seeds stay as they are
  args=(-max_len="$(max_len_of "$t")" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$run/artifacts/")
  if [ -n "$runs" ]; then args+=(-runs="$runs"); else args+=(-max_total_time="$seconds"); fi
  [ -f "$root/tests/fuzz/$t.dict" ] && args+=(-dict="$root/tests/fuzz/$t.dict")
  echo "== fuzz_$t: $budget, seeds $(ls "$root/tests/fuzz/corpus/$t" | wc -l)"
  status=0
  started=$SECONDS
  (cd "$run" && "$bin" "${args[@]}" corpus) >"$run/log" 2>&1 || status=$?
  elapsed=$((SECONDS - started))
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$run/log" | tail -1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$run/log" | tail -1)"
  cov="$(grep -E '^#[0-9]+' "$run/log" | tail -1 | sed -n 's/.* cov: \([0-9]*\) .*/\1/p')"
  summary+=("$(printf '%-14s %-8s %12s execs %8s exec/s  cov %-6s %6s s' "fuzz_$t" \
    "$([ $status -eq 0 ] && echo ok || echo CRASH)" "${execs:-?}" "${rate:-?}" "${cov:-?}" "$elapsed")")
  if [ "$status" -eq 0 ]; then
    continue
  fi
  failed+=("$t")
  echo "!! fuzz_$t failed (exit status $status); log: $run/log"
  for f in "$run"/artifacts/*; do
    [ -f "$f" ] || continue
    echo "-- reproducer $(basename "$f") ($(wc -c <"$f") bytes), replay: $bin $f"
    od -A x -t x1z -v "$f"
  done
  echo "-- report"
  # From the first line of the report (sanitizer, libFuzzer, the harness's own check, an uncaught exception).
  first="$(grep -n -m1 -E '==[0-9]+==ERROR|runtime error:|==pevp-fuzz==|terminate called|ERROR: libFuzzer' "$run/log" \
    | cut -d: -f1 || true)"
  if [ -n "$first" ]; then tail -n +"$((first > 3 ? first - 3 : 1))" "$run/log"; else tail -n 100 "$run/log"; fi
done

echo "== summary ($budget per target)"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: crashed: ${failed[*]}"
  exit 1
fi
