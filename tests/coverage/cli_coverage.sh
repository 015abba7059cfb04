#!/usr/bin/env bash
# `pe-vp run --coverage` and `pe-vp coverage` end to end (ctest coverage.cli): a MARIANA program of a weight load,
# a matmul and an instruction the SEQ refuses (rule mm.in_dtype), run with --coverage; the file's bins; the table;
# two copies merged (counts doubled, runs 2); a bad file refused naming the file and the field.
set -euo pipefail
pevp="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
fail() { echo "cli_coverage: $*" >&2; exit 1; }

cat > "$dir/p.pes" <<'PES'
.gen MARIANA
ldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF
matmul src=sbuf[0]+0x1000:[1,48] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF psum_accumulate_flags=SINGLE dst=psum[0]:[1,48]
matmul src=sbuf[0]+0x1000:[1,48] in_dtype=12 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF psum_accumulate_flags=SINGLE dst=psum[0]:[1,48]
PES
"$pevp" asm --allow-invalid "$dir/p.pes" -o "$dir/p.bin" >/dev/null 2>&1
# The third instruction stops the SEQ (exit 3 for a faulting program); the coverage file is written all the same.
set +e
"$pevp" run --gen MARIANA "$dir/p.bin" --coverage "$dir/c.json" >"$dir/run.out" 2>&1
status=$?
set -e
[ "$status" -ne 0 ] || fail "the faulting program exited 0"
[ -s "$dir/c.json" ] || fail "no coverage file after a faulting run: $(cat "$dir/run.out")"
python3 - "$dir/c.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["format"] == "pe-vp-coverage" and doc["version"] == 1 and doc["runs"] == 1, doc
bins = {(b["group"], b["generation"], b["bin"]): b["count"] for b in doc["bins"]}
# By hand: one Ldweights and one Matmul ran (64 of 128 rows, 32 of 128 columns active: partial both), the refused
# Matmul counts only its rule.
want = {
    ("opcode", "MARIANA", "LDWEIGHTS"): 1, ("opcode", "MARIANA", "MATMUL"): 1,
    ("dtype", "MARIANA", "LDWEIGHTS/BFLOAT16"): 1, ("dtype", "MARIANA", "MATMUL/BFLOAT16"): 1,
    ("psum", "MARIANA", "group/SINGLE"): 1, ("psum", "MARIANA", "write/overwrite"): 1,
    ("psum", "MARIANA", "zero/1_banks"): 1,
    ("tile_shape", "MARIANA", "weight_load/partial_both"): 1, ("tile_shape", "MARIANA", "matmul/partial_both"): 1,
    ("tile_grid", "MARIANA", "whole_array"): 2,
    ("rule", "", "mm.in_dtype"): 1,
}
assert bins == want, "bins %s\nwant %s" % (bins, want)
PY
"$pevp" coverage "$dir/c.json" >"$dir/table.txt"
grep -q "^rule: 1 of " "$dir/table.txt" || fail "no rule line: $(cat "$dir/table.txt")"
grep -q "^opcode: 2 of 29 bins (6.9%)" "$dir/table.txt" || fail "no opcode line: $(cat "$dir/table.txt")"
"$pevp" coverage "$dir/c.json" "$dir/c.json" --merge-to "$dir/m.json" --quiet
python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["runs"] == 2, doc["runs"]
assert {b["bin"]: b["count"] for b in doc["bins"] if b["group"] == "tile_grid"} == {"whole_array": 4}
' "$dir/m.json"
sed 's/"count": 1/"count": -1/' "$dir/c.json" > "$dir/bad.json"
if "$pevp" coverage "$dir/c.json" "$dir/bad.json" 2>"$dir/err.txt"; then fail "a bad file was read"; fi
grep -q "pe-vp coverage: $dir/bad.json: bins\[0\].count: must be a positive integer, not -1" "$dir/err.txt" ||
  fail "the refusal: $(cat "$dir/err.txt")"
# A sweep: each distinct point runs `pe-vp gemm --coverage` into a file beside its record, and the sweep's file is
# their merge -- its runs the points', its counts their sums.
cat > "$dir/s.toml" <<'TOML'
name = "tiny"
[[workload]]
name = "gemms"
gemms = [{ name = "a", m = 64, k = 64, n = 64 }, { name = "b", m = 32, k = 128, n = 16 }]
[grid]
dependency_check = [true, false]
TOML
"$pevp" sweep "$dir/s.toml" --out "$dir/sw" --coverage "$dir/sw.json" --no-plots -j 2 >"$dir/sweep.out" 2>&1 ||
  fail "the sweep: $(cat "$dir/sweep.out")"
grep -q "coverage: 4 points merged into $dir/sw.json" "$dir/sweep.out" || fail "no merge line: $(cat "$dir/sweep.out")"
python3 - "$dir/sw.json" "$dir"/sw/points/*.coverage.json <<'PY'
import json, sys
merged, points = json.load(open(sys.argv[1])), [json.load(open(p)) for p in sys.argv[2:]]
assert len(points) == 4 and merged["runs"] == 4, (len(points), merged["runs"])
total = {}
for doc in points:
    for b in doc["bins"]:
        key = (b["group"], b["generation"], b["bin"])
        total[key] = total.get(key, 0) + b["count"]
assert {(b["group"], b["generation"], b["bin"]): b["count"] for b in merged["bins"]} == total
PY
echo "cli_coverage: every check passed"
