#!/usr/bin/env bash
# Configure (once) and build pe-vp with Ninja into ./build (or $PEVP_BUILD_DIR).
# Extra arguments are passed to the CMake configure step, e.g. -DPEVP_SANITIZE=ON.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${PEVP_BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build" -G Ninja "$@" >/dev/null
cmake --build "$build" --parallel "$(nproc)"
