#!/usr/bin/env bash
# The README's main-job command: set up, build, and run the default workload.
# For now the workload decodes a sample instruction stream for every generation
# and writes each as a binary file under build/samples/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${PEVP_BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
mkdir -p "$build/samples"
"$build/platform/pe-vp" demo --out-dir "$build/samples"
