#!/usr/bin/env bash
# The installed SDK from outside the tree, as a user meets it: `cmake --install` of this build into a fresh prefix,
# then tests/sdk/consumer configured with find_package(pevp) against that prefix alone, built and run (its own
# sc_main driving the platform module on its own bus; a C99 program on the C register headers; a C driver on the C
# API), and the same three
# programs built with pkg-config (pevp.pc) instead of CMake.
#   tests/sdk/run_sdk_test.sh BUILD_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
src="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/pevp-sdk.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1

echo "== cmake --install into $work/prefix"
cmake --install "$build" --prefix "$work/prefix" >/dev/null

echo "== find_package(pevp) from outside the tree"
cmake -S "$src/tests/sdk/consumer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
      -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/own_sc_main"
"$work/consumer/regs_c99"
"$work/consumer/c_driver"

echo "== pkg-config pevp"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
# shellcheck disable=SC2046
g++ -std=c++17 -O1 "$src/tests/sdk/consumer/own_sc_main.cpp" $(pkg-config --cflags --libs --static pevp) \
    -o "$work/own_sc_main_pc"
"$work/own_sc_main_pc"
# shellcheck disable=SC2046
gcc -std=c99 -Wall -Wextra -pedantic -Werror "$src/tests/sdk/consumer/regs_c99.c" $(pkg-config --cflags pevp) \
    -o "$work/regs_c99_pc"
"$work/regs_c99_pc"
# shellcheck disable=SC2046
gcc -std=c99 -Wall -Wextra -pedantic -Werror -c "$src/tests/capi/c_driver.c" $(pkg-config --cflags pevp) \
    -o "$work/c_driver.o"
# shellcheck disable=SC2046
g++ "$work/c_driver.o" $(pkg-config --libs --static pevp) -o "$work/c_driver_pc"
"$work/c_driver_pc"

echo "== the installed pe-vp"
"$work/prefix/bin/pe-vp" gemm --mode timing --m 256 --k 256 --n 256 --quiet | grep -q "timing (timing"
echo "== the installed Python client (python3 -m pevp's package) and the C driver against the installed pe-vp serve"
PYTHONPATH="$work/prefix/lib/python3/dist-packages" /usr/bin/python3 - "$work/prefix/bin/pe-vp" "$work/c_driver_pc" <<'PY'
import os, subprocess, sys
import numpy as np, pevp
pe_vp, c_driver = sys.argv[1], sys.argv[2]
assert "dist-packages" in pevp.__file__, pevp.__file__  # the installed package, not the tree's
with pevp.serve(pe_vp=pe_vp, args=["--once"]) as server:
    r = subprocess.run([c_driver, server.endpoint], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
# Over TCP: the server's token, in the file pevp.serve keeps, read by the installed C API.
with pevp.serve(pe_vp=pe_vp, endpoint="tcp:0", args=["--once"]) as server:
    env = dict(os.environ, PEVP_TOKEN_FILE=server.token_file)
    r = subprocess.run([c_driver, server.endpoint], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
with pevp.serve(pe_vp=pe_vp, gen="CAYMAN") as server, server.connect() as vp:
    assert vp.generation == "CAYMAN"
    vp.write_reg("cluster", "arr_cluster_cfg.inter_instr_dly_cnt", 9)
    assert vp.read_reg("cluster", "arr_cluster_cfg.inter_instr_dly_cnt") == 9
PY
echo "sdk: ok"
