#!/usr/bin/env bash
# Idempotent: installs every build and test dependency of pe-vp on Debian 12.
# Safe to run again; it only asks apt for what is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libsystemc-dev            # SystemC 2.3.4 + TLM-2.0 (pkg-config: systemc)
  libgtest-dev libgmock-dev # GoogleTest
  libbenchmark-dev          # Google Benchmark
  libopenblas-dev           # dgemm for the fp64 host references; sgemm for the matmul benchmark
  libhwy-dev                # Highway: portable SIMD with runtime dispatch (matmul kernel)
  nlohmann-json3-dev        # JSON (decoder output, configuration)
  libcli11-dev              # command-line parsing of pe-vp
  libboost-dev
  verilator                 # lint of the generated register-file RTL
  clang libclang-rt-14-dev  # libFuzzer harnesses with ASan/UBSan (scripts/fuzz.sh, docs/reliability.md)
  llvm-14                   # llvm-symbolizer-14: function names and lines in sanitizer and fuzzer reports
  xz-utils                  # tar -J: the grown fuzz corpora (tests/fuzz/grown/*.tar.xz)
  python3
  python3-matplotlib       # PNG plots of sweep results (scripts/sweep_plots.py)
  python3-numpy            # the Python client (python/pevp) and its tests
  python3-onnx             # ONNX models as sweep workloads (scripts/onnx_gemms.py)
  libtomlplusplus-dev       # sweep spec files in TOML
  slurm-wlm munge           # the Slurm sweep backend; CI starts a single-node cluster (scripts/slurm-cluster.sh)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
