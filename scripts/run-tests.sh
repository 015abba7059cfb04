#!/usr/bin/env bash
# The README's test command: set up, build, and pass every test.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$@"
build_dir="${PEVP_BUILD_DIR:-$root/build}"
if ! ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)"; then
  # Repeat each failed test's output at the end, where a log's tail shows it (CI keeps only a part of the log).
  failed="$build_dir/Testing/Temporary/LastTestsFailed.log"
  log="$build_dir/Testing/Temporary/LastTest.log"
  if [ -f "$failed" ] && [ -f "$log" ]; then
    echo "== the output of each failed test again:"
    cut -d: -f2- "$failed" | while read -r name; do
      awk -v name="$name" '
        /^[0-9]+\/[0-9]+ Test: / { line = $0; sub(/^[0-9]+\/[0-9]+ Test: /, "", line); if (line == name) take = 1 }
        take { print; if ($0 ~ /^"/ && index($0, "time elapsed")) exit }' "$log" | tail -n 60
    done
  fi
  exit 1
fi
