#!/usr/bin/python3
"""The test suite's own functional coverage of the ISA (docs/coverage.md "The suite's own coverage").

Runs, each with --coverage, every `pe-vp run` and `pe-vp gemm` step of the golden cases (tests/golden/record.py:
the assembler examples of platform/examples, the GEMMs of every generation and dtype, the configuration knobs)
and every generation's demo sample stream (`pe-vp demo --coverage`), merges the files with `pe-vp coverage --merge-to`
and prints the table: per feature group the bins hit with their counts, the percentage and the holes.

    scripts/suite_coverage.py build/platform/pe-vp [--out suite-coverage.json] [--jobs N] [--table FILE]

Standard library only; run with /usr/bin/python3. Exit status 0, or 1 when a step could not be run or the merge
failed (a run that fails on purpose, such as a refused program, still counts: its coverage file is written)."""

import argparse
import concurrent.futures
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "golden"))
import record  # noqa: E402  (the golden cases: one list of what the suite runs)

GENERATIONS = ("CAYMAN", "MARIANA", "MARIANA_PLUS", "MAVERICK")


def covered_steps(case):
    """The case's run and gemm steps with --coverage added (a --dump-config step simulates nothing)."""
    steps = []
    for i, (label, argv, how) in enumerate(case.steps):
        if argv and argv[0] in ("run", "gemm") and "--dump-config" not in argv:
            steps.append((label, argv + ["--coverage", f"coverage_{i}.json"], how))
    return steps


def run_case(case, pe_vp, work):
    """The case in its own folder, as record.py runs it; the coverage files it left."""
    steps = covered_steps(case)
    if not steps:
        return []
    covered = record.Case(case.name, steps, copy=case.copy, setup=case.setup)
    record.run_case(covered, pe_vp, work)
    return sorted((work / case.name.replace("/", "__")).glob("coverage_*.json"))


def demo_streams(pe_vp, work):
    """Every generation's sample stream, run as `pe-vp demo` runs it (what the platform models of it, the identity
    its seed moves need loaded), with --coverage."""
    out = work / "demo_coverage.json"
    subprocess.run([str(pe_vp), "demo", "--quiet", "--coverage", str(out)], check=False, capture_output=True)
    if not out.is_file():
        raise SystemExit(f"suite_coverage: pe-vp demo wrote no {out}")
    return [out]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pe_vp", type=Path)
    ap.add_argument("--out", type=Path, default=Path("suite-coverage.json"), help="the merged coverage file")
    ap.add_argument("--table", type=Path, help="also write the table here")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    pe_vp = args.pe_vp.resolve()
    work = Path(tempfile.mkdtemp(prefix="pevp-suite-coverage-"))
    try:
        cases = record.all_cases()
        files = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for found in pool.map(lambda c: run_case(c, pe_vp, work), cases):
                files.extend(found)
        files.extend(demo_streams(pe_vp, work))
        missing = [f for f in files if not f.is_file()]
        files = [f for f in files if f.is_file()]
        merged = subprocess.run([str(pe_vp), "coverage", "--merge-to", str(args.out)] + [str(f) for f in files],
                                capture_output=True, text=True)
        if merged.returncode != 0:
            sys.stderr.write(merged.stderr)
            return 1
        table = merged.stdout
        header = (f"# the suite's coverage: {len(files)} coverage files from {len(cases)} golden cases and the "
                  f"{len(GENERATIONS)} demo streams ({len(missing)} steps wrote none)\n")
        sys.stdout.write(header + table)
        if args.table:
            args.table.write_text(header + table)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
