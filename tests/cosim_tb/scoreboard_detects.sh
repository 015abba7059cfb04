#!/usr/bin/env bash
# cosim_tb.scoreboard_detects: the scoreboard example's DUT wrong by 1 in one word of transaction 2 (17 x 5 x 3 into
# partitions 40..44; word 7 of 15 is partition 42 element 1; that transaction's matmul is instruction 5): the
# testbench must exit 1 and report exactly that mismatch.
tb="$1"
out="$("$tb" --inject 2)"
status=$?
echo "$out"
[ "$status" -eq 1 ] || { echo "scoreboard_detects: exit status $status, not 1"; exit 1; }
echo "$out" | grep -q '^scoreboard_tb: transaction 2 (instruction 5, complete at cycle [0-9]*): mismatch at partition 42 element 1: DUT -\?[0-9]*, pe-vp -\?[0-9]*$' ||
  { echo "scoreboard_detects: not the mismatch injected"; exit 1; }
