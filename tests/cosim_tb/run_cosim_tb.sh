#!/bin/sh
# Runs the example RTL testbench against a reference VP in a `pe-vp serve` process of its own, on a Unix socket in
# a fresh temporary folder.
#
#   run_cosim_tb.sh PE_VP COSIM_TB match        the DUT must match the reference (exit 0)
#   run_cosim_tb.sh PE_VP COSIM_TB psum|uop     one expected PSUM word / micro-op field corrupted: the testbench
#                                               must fail (exit 1) and report exactly that mismatch
# Exit 77 (skipped) when either program is missing: the build had no Verilator.
set -u
pevp=$1
tb=$2
mode=$3
[ -x "$pevp" ] && [ -x "$tb" ] || { echo "run_cosim_tb: $pevp or $tb missing: skipped"; exit 77; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/pevp_cosim.XXXXXX") || exit 2
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

"$pevp" serve --gen MARIANA --listen "unix:$dir/vp.sock" --once > "$dir/serve.out" 2> "$dir/serve.err" &
server=$!
# The server's first line says it listens.
i=0
until grep -q "listening on" "$dir/serve.out" 2>/dev/null; do
  i=$((i + 1))
  if [ $i -gt 300 ] || ! kill -0 "$server" 2>/dev/null; then
    echo "run_cosim_tb: the server did not start"; cat "$dir/serve.err"; exit 2
  fi
  sleep 0.1
done

case "$mode" in
  match)
    "$tb" "unix:$dir/vp.sock" --out "$dir"
    status=$?
    if [ $status -ne 0 ]; then
      echo "--- reference micro-op log"; cat "$dir/reference.jsonl" 2>/dev/null
      echo "--- DUT micro-op log"; cat "$dir/dut.jsonl" 2>/dev/null
    fi
    exit $status ;;
  psum) expect="PSUM mismatch at partition 3 column 5:" ;;
  uop) expect="micro-op log mismatch: line 1 field complete:" ;;
  *) echo "run_cosim_tb: unknown mode $mode"; exit 2 ;;
esac
"$tb" "unix:$dir/vp.sock" --corrupt "$mode" > "$dir/tb.out"
status=$?
cat "$dir/tb.out"
if [ $status -ne 1 ]; then echo "run_cosim_tb: exit status $status, not 1 (a reported mismatch)"; exit 1; fi
if ! grep -qF "$expect" "$dir/tb.out"; then echo "run_cosim_tb: no line '$expect'"; exit 1; fi
if [ "$(grep -c "mismatch at\|mismatch:" "$dir/tb.out")" -ne 1 ]; then echo "run_cosim_tb: more than the one corrupted value differs"; exit 1; fi
echo "run_cosim_tb: the corrupted $mode value was reported"
exit 0
