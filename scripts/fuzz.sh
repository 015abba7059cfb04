#!/usr/bin/env bash
# Build the libFuzzer harnesses of tests/fuzz with clang into ./build-fuzz (or $PEVP_FUZZ_BUILD_DIR) and run each
# one for SECONDS (default 60) on a copy of its seed corpus, with its dictionary. docs/reliability.md describes the
# targets and the sanitizers.
#
#   scripts/fuzz.sh [OPTIONS] [SECONDS] [TARGET ...]
#     targets: decode assemble npy config regs sweep protocol requests checkpoint mpqemu (default: all); SECONDS per
#     target (default 60, none with --runs)
#   --runs N      each target until N executions (with SECONDS too: whichever comes first). The long runs of
#                 docs/reliability.md: --runs 10000000 under nice -n 19, in a build directory of their own
#                 (PEVP_FUZZ_BUILD_DIR=build-fuzz-long), since a run holds its directory's lock, which .ci/run waits for
#   --jobs N      N worker processes on one shared corpus (libFuzzer's -fork=N; the executions are summed)
#   --corpus DIR  keep and grow each target's corpus in DIR/<target>/ (created, the seeds copied in) instead of a
#                 fresh copy of the seeds: a campaign longer than one sitting resumes from what the last run found
#   --seeds-only  add no grown corpus (tests/fuzz/grown/<target>.tar.xz) to the run's corpus: a fresh run starts
#                 from the repository's seeds alone (a --corpus DIR still holds what earlier runs left in it)
#   --update-grown  after each named target's run without a crash, rewrite tests/fuzz/grown/<target>.tar.xz: a small
#                 set of the run's inputs (its corpus holds the old archive's too) that reaches every feature they
#                 reach beyond the seeds (libFuzzer's -merge=1, a greedy cover); needs the TARGETs named
#
# Each run starts from the target's seeds and, where the repository has one, its grown corpus: the inputs long runs
# found (docs/reliability.md, "Grown corpora"), replayed first, so even a short run checks every path they reach.
#
# Exit status: 0 when no fuzzer crashed, 1 when one did (its reproducer is printed as a hex dump with the fuzzer's
# report, and kept under build-fuzz/fuzz-runs/<target>/artifacts/) or --update-grown could not rewrite an archive,
# 2 on a bad argument or when clang, its libFuzzer runtime or xz (for the grown corpora) is missing. Installs nothing: the Debian packages are listed in docs/reliability.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${PEVP_FUZZ_BUILD_DIR:-$root/build-fuzz}"
cxx="${PEVP_FUZZ_CXX:-/usr/bin/clang++}"

usage_error() {
  echo "fuzz.sh: $1" >&2
  echo "usage: scripts/fuzz.sh [--runs N] [--jobs N] [--corpus DIR] [--seeds-only] [--update-grown] [SECONDS] [TARGET ...]" >&2
  exit 2
}
# A positive whole number of at most 18 digits (bash arithmetic is 64-bit).
check_count() {
  [[ "$2" =~ ^[0-9]{1,18}$ ]] && [ "$2" -gt 0 ] || usage_error "$1 needs a positive whole number (at most 18 digits), not '$2'"
}
runs=""
jobs=1
corpus_root=""
seconds=""
seeds_only=""
update_grown=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs | --jobs | --corpus) [ $# -ge 2 ] || usage_error "$1 needs a value" ;;&
    --runs) check_count --runs "$2"; runs="$2"; shift 2 ;;
    --jobs) check_count --jobs "$2"; jobs="$2"; shift 2 ;;
    --corpus)
      [ -n "$2" ] || usage_error "--corpus needs a directory"
      corpus_root="$(realpath -m -- "$2")"
      [ ! -e "$corpus_root" ] || [ -d "$corpus_root" ] || usage_error "--corpus: '$2' exists and is not a directory"
      shift 2 ;;
    --seeds-only) seeds_only=1; shift ;;
    --update-grown) update_grown=1; shift ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    -*) usage_error "unknown option '$1'" ;;
    *) break ;;
  esac
done
# The first operand is SECONDS when it starts with a digit (a target name never does).
if [[ "${1:-}" =~ ^[0-9+] ]]; then
  check_count SECONDS "$1"
  seconds="$1"
  shift
elif [ -z "$runs" ]; then
  seconds=60
fi
if [ "$jobs" -gt 256 ]; then usage_error "--jobs $jobs: at most 256 worker processes"; fi
[ -z "$seeds_only" ] || [ -z "$update_grown" ] || usage_error "--update-grown keeps the grown corpus; it cannot go with --seeds-only"
[ -z "$update_grown" ] || [ $# -gt 0 ] || usage_error "--update-grown needs the targets named (the archives are kept for the slow ones)"
budget="${runs:+$runs runs}${runs:+${seconds:+ or }}${seconds:+${seconds}s}"
[ "$jobs" -eq 1 ] || budget+=", $jobs jobs"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(decode assemble npy config regs sweep protocol requests checkpoint mpqemu)

# -max_len per target: the selector bytes and four records; text and files of a few KiB.
max_len_of() {
  case "$1" in
    decode) echo 260 ;;
    assemble | npy | config | sweep | protocol | requests) echo 4096 ;;
    regs) echo 2048 ;;
    checkpoint) echo 131072 ;;  # its seeds are whole checkpoints of 21 and 99 KB
    mpqemu) echo 1024 ;;        # a few messages: headers of 16 bytes, payloads of at most 192
    *) echo "fuzz.sh: unknown target '$1' (decode assemble npy config regs sweep protocol requests checkpoint mpqemu)" >&2; exit 2 ;;
  esac
}
for t in "${targets[@]}"; do max_len_of "$t" >/dev/null; done

# The grown corpora are xz archives: without xz, say so now rather than after the build.
if ! command -v xz >/dev/null; then
  if [ -n "$update_grown" ]; then
    echo "fuzz.sh: xz not found, which --update-grown packs the archives with (Debian: apt-get install xz-utils)" >&2
    exit 2
  fi
  if [ -z "$seeds_only" ]; then
    for t in "${targets[@]}"; do
      if [ -f "$root/tests/fuzz/grown/$t.tar.xz" ]; then
        echo "fuzz.sh: xz not found, which unpacks tests/fuzz/grown/$t.tar.xz (Debian: apt-get install xz-utils);" >&2
        echo "         or run from the seeds alone with --seeds-only" >&2
        exit 2
      fi
    done
  fi
fi

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

# tests/fuzz/grown/<target>.tar.xz from a run's corpus (which holds the seeds and the old grown inputs too):
# libFuzzer's merge starts from the seeds and adds inputs of the corpus until every further feature of the whole is
# reached (a greedy cover); the seeds, which the repository has already, are left out, and tests/fuzz/pack_grown.sh
# writes the archive reproducibly. Returns 1 when the merge fails or finds nothing beyond the seeds.
update_grown_corpus() {
  local t=$1 bin=$2 run=$3 corpus=$4 merged="$3/merged" grown="$root/tests/fuzz/grown/$1.tar.xz"
  local seeds="$root/tests/fuzz/corpus/$t"
  rm -rf "$merged" && mkdir -p "$merged" "$root/tests/fuzz/grown" && cp -R "$seeds/." "$merged/" || return 1
  if ! (cd "$run" && "$bin" -merge=1 -max_len="$(max_len_of "$t")" "$merged" "$corpus") >"$run/merge.log" 2>&1; then
    echo "!! fuzz_$t: the merge failed; $grown unchanged (log: $run/merge.log)"
    return 1
  fi
  # The seeds out, under their own names and under the SHA-1 name of a copy the merge took again (an input of a
  # stateful target such as protocol need not reach the same features twice).
  local seed
  for seed in "$seeds"/*; do
    rm -f "$merged/$(basename "$seed")" "$merged/$(sha1sum <"$seed" | cut -d' ' -f1)" || return 1
  done
  local inputs
  inputs=$(find "$merged" -maxdepth 1 -type f | wc -l)
  if [ "$inputs" -eq 0 ]; then
    echo "!! fuzz_$t: the run reached nothing beyond the seeds; $grown unchanged"
    return 1
  fi
  # Called from a condition, where set -e does not hold: every step checks its own status.
  if ! "$root/tests/fuzz/pack_grown.sh" "$merged" "$grown"; then
    echo "!! fuzz_$t: packing the merged inputs failed; $grown unchanged"
    return 1
  fi
  echo "== fuzz_$t: $grown: $inputs inputs ($(du -k "$grown" | cut -f1) KiB)"
}

failed=()
summary=()
for t in "${targets[@]}"; do
  bin="$build/tests/fuzz/fuzz_$t"
  run="$build/fuzz-runs/$t"
  rm -rf "$run"
  mkdir -p "$run/artifacts"
  corpus="${corpus_root:+$corpus_root/$t}"
  corpus="${corpus:-$run/corpus}"
  mkdir -p "$corpus"
  before=$(find "$corpus" -maxdepth 1 -type f | wc -l)
  cp -R "$root/tests/fuzz/corpus/$t/." "$corpus/"   # a copy: the repository's seeds stay as they are
  grown="$root/tests/fuzz/grown/$t.tar.xz"
  grown_files=0
  if [ -z "$seeds_only" ] && [ -f "$grown" ]; then
    tar -xJf "$grown" -C "$corpus" --no-overwrite-dir
    grown_files=$(tar -tJf "$grown" | grep -vc '/$' || true)
  fi
  args=(-max_len="$(max_len_of "$t")" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$run/artifacts/")
  [ -z "$runs" ] || args+=(-runs="$runs")
  [ -z "$seconds" ] || args+=(-max_total_time="$seconds")
  [ "$jobs" -eq 1 ] || args+=(-fork="$jobs")
  [ -f "$root/tests/fuzz/$t.dict" ] && args+=(-dict="$root/tests/fuzz/$t.dict")
  echo "== fuzz_$t: $budget, seeds $(ls "$root/tests/fuzz/corpus/$t" | wc -l), grown $grown_files$([ -z "$corpus_root" ] ||
    echo ", corpus $corpus ($before files before)")"
  status=0
  started=$SECONDS
  (cd "$run" && "$bin" "${args[@]}" "$corpus") >"$run/log" 2>&1 || status=$?
  elapsed=$((SECONDS - started))
  if [ "$jobs" -eq 1 ]; then
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$run/log" | tail -1)"
    rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$run/log" | tail -1)"
    cov="$(grep -E '^#[0-9]+' "$run/log" | tail -1 | sed -n 's/.* cov: \([0-9]*\) .*/\1/p')"
  else
    # Fork mode prints no final statistics, and its "cov:" counts features, not edges: the executions are the last
    # progress line's, and the edges those of a replay of the grown corpus, as a single-process run counts them.
    execs="$(grep -E '^#[0-9]+:' "$run/log" | tail -1 | sed -n 's/^#\([0-9]*\):.*/\1/p')"
    rate="$([ -n "$execs" ] && [ "$elapsed" -gt 0 ] && echo $((execs / elapsed)) || true)"
    cov=""
    if [ "$status" -eq 0 ]; then
      cov="$( (cd "$run" && "$bin" -runs=0 -max_len="$(max_len_of "$t")" "$corpus") 2>&1 |
        sed -n 's/^#[0-9]*[[:space:]]*INITED cov: \([0-9]*\) .*/\1/p' | tail -1)"
    fi
  fi
  summary+=("$(printf '%-14s %-8s %12s execs %8s exec/s  cov %-6s %6s s' "fuzz_$t" \
    "$([ $status -eq 0 ] && echo ok || echo CRASH)" "${execs:-?}" "${rate:-?}" "${cov:-?}" "$elapsed")")
  if [ "$status" -eq 0 ]; then
    if [ -n "$update_grown" ] && ! update_grown_corpus "$t" "$bin" "$run" "$corpus"; then
      failed+=("$t (--update-grown)")
    fi
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
  echo "fuzz.sh: failed: ${failed[*]}"
  exit 1
fi
