#!/usr/bin/env bash
# The README's test command: set up, build, and pass every test.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$@"
ctest --test-dir "${PEVP_BUILD_DIR:-$root/build}" --output-on-failure --parallel "$(nproc)"
