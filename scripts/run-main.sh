#!/usr/bin/env bash
# The README's main-job command: set up, build, and run the default workload.
# The workload: a bf16 GEMM through the driver path of the virtual platform
# (SBUF loads, arm sequence, Ldweights/Matmul program, PSUM read-back), checked
# bit-exact against the defined-order reference; C is written to build/samples/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${PEVP_BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
mkdir -p "$build/samples"
"$build/platform/pe-vp" gemm --gen MARIANA --m 256 --k 512 --n 512 --dtype bf16 --out "$build/samples/C.npy"
