#!/usr/bin/env python3
"""Golden outputs of the pe-vp binary: record them, or check a build against them.

    record.py record   --pe-vp build/platform/pe-vp            # (re)write tests/golden/golden.json
    record.py check    --pe-vp build/platform/pe-vp            # exit 1 and a per-key diff on any change
    record.py selftest --pe-vp build/platform/pe-vp            # a corrupted golden file must make `check` fail

Each case runs one or more pe-vp commands in a scratch folder of its own and keeps, per command, the exit
status, stdout and stderr (normalised, see normalise_text), and per output file either its sha256 (binary
outputs: .npy, .bin, trace, VCD) or its parsed content (--stats-json). README.md beside this file lists the
cases and says when and how to re-record. Standard library only.
"""

import argparse
import concurrent.futures
import difflib
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEFAULT_GOLDEN = HERE / "golden.json"
FORMAT = 1
GENS = ("CAYMAN", "MARIANA", "MARIANA_PLUS", "MAVERICK")
STEP_TIMEOUT_S = 300
# A work folder this script created carries this file; only such a folder is ever emptied.
WORK_MARKER = ".pevp-golden-work"

# `pe-vp gemm` prints the host time the simulation took and a rate derived from it; nothing else it prints
# depends on the host.
WALL_RE = re.compile(r"wall \S+ s, \S+ G simulated MACs per wall second")
WALL_SUB = "wall <stripped> s, <stripped> G simulated MACs per wall second"
# Progress lines on stderr ("pe-vp gemm: 68.8% (33 of 48 instructions), 1s elapsed, about 1s left") appear only
# when a run takes more than a second of host time, so a loaded machine adds them: they are dropped whole.
PROGRESS_RE = re.compile(r"^pe-vp \S+: \d+\.\d% \(\d+ of \d+ [a-z ]+\), \S+ elapsed(, about \S+ left)?\n", re.MULTILINE)
# Statistics keys dropped wherever they appear. None exists today; a host-time field added later must not
# turn every stats comparison into a flaky one.
HOST_KEY_RE = re.compile(r"wall|host", re.IGNORECASE)


# ---------------------------------------------------------------------------------------------------------
# The cases


class Case:
    """One golden case: steps run in order in the case's own folder.

    steps:  [(label, argv after the pe-vp binary, how stdout is kept: "lines" or "sha256")]
    copy:   folders (relative to the source tree) whose files are copied into the case folder first
    files:  {path in the case folder: "sha256" or "stats"} read after the last step
    setup:  optional function(case_dir) writing further inputs
    """

    def __init__(self, name, steps, copy=(), files=None, setup=None):
        self.name = name
        self.steps = [s if len(s) == 3 else (s[0], s[1], "lines") for s in steps]
        self.copy = tuple(copy)
        self.files = dict(files or {})
        self.setup = setup


def e4m3_name(gen):
    # CAYMAN's FP8_EXP4 is the IEEE-like e4m3; v4 and later take the OCP e4m3fn under that ISA dtype.
    return "fp8_e4m3" if gen == "CAYMAN" else "fp8_e4m3fn"


def gemm_dtypes(gen):
    """Every input type `pe-vp gemm --dtype` accepts on `gen`, as (label, extra argv)."""
    out = []
    for d in ("bf16", "fp16", e4m3_name(gen), "fp8_e5m2", "fp8_e3m4", "fp8_e2m5", "tf32", "fp32"):
        out.append((d, ["--dtype", d]))
    for mode in ("low", "high", "low_high"):
        out.append(("fp32-" + mode, ["--dtype", "fp32", "--fp32-mode", mode]))
    # The ISA spelling goes through a different branch of the dtype parser.
    out.append(("FP8_EXP4", ["--dtype", "FP8_EXP4"]))
    return out


def gemm_case(name, argv, out_c=True, extra_files=None, setup=None, copy=()):
    files = {"stats.json": "stats"}
    # The host data path: the goldens pin the engine's results and timing without the memory system's, whose own
    # tests are in tests/dma, tests/hbm and tests/platform (the GEMM through DMA).
    args = ["gemm", "--data-path", "host"] + argv + ["--stats-json", "stats.json"]
    if out_c:
        args += ["--out", "C.npy"]
        files["C.npy"] = "sha256"
    files.update(extra_files or {})
    return Case(name, [("gemm", args)], copy=copy, files=files, setup=setup)


def shape_args(m, k, n):
    return ["--m", str(m), "--k", str(k), "--n", str(n)]


def write_npy(path, rows, cols, descr, value):
    """A C-order 2-D .npy (format 1.0) of value(i, j), descr '<f2', '<f4' or '<f8'."""
    fmt = {"<f2": "e", "<f4": "f", "<f8": "d"}[descr]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (descr, rows, cols)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    data = struct.pack("<%d%s" % (rows * cols, fmt), *(value(i, j) for i in range(rows) for j in range(cols)))
    Path(path).write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + data)


def npy_operands_f8_f2(d):
    # Small dyadic values: exact in every input format, so the golden records the VP's rounding, not the
    # writer's; the f8/f2 pair exercises two of the three element sizes the .npy reader takes.
    write_npy(d / "A.npy", 70, 150, "<f8", lambda i, j: ((i * 7 + j * 3) % 17 - 8) / 8.0)
    write_npy(d / "B.npy", 150, 90, "<f2", lambda i, j: ((i * 5 + j * 11) % 13 - 6) / 4.0)


def npy_operands_f4(d):
    # Values that are not exact in fp8: the conversion's rounding is part of what is recorded.
    write_npy(d / "A.npy", 130, 260, "<f4", lambda i, j: ((i * 131 + j * 71) % 1009 - 504) / 97.0)
    write_npy(d / "B.npy", 260, 140, "<f4", lambda i, j: ((i * 37 + j * 113) % 997 - 498) / 89.0)


def config_file(d):
    (d / "cfg.json").write_text(json.dumps({
        "generation": "MARIANA_PLUS",
        "arr_seq": {"ififo_depth": 8},
        "timing": {"mm_init_latency": 80, "seq_dispatch_cycles": 24},
    }))


def examples():
    """The programs under platform/examples with their run.args, as tests/platform/test_examples.cpp runs them."""
    base = ROOT / "platform" / "examples"
    for d in sorted(p for p in base.iterdir() if (p / "run.args").is_file()):
        args = (d / "run.args").read_text().split()
        dumps = [args[i + 1].split("=", 1)[1] for i, a in enumerate(args) if a == "--dump"]
        yield d.name, d.relative_to(ROOT), args, dumps


def all_cases():
    cases = []

    for g in GENS:
        cases.append(Case(f"calibrate/{g}", [("calibrate", ["calibrate", "--gen", g])]))

    for name, rel, args, dumps in examples():
        run = ["run", "--gen", "MARIANA", "program.pes"] + args
        cases.append(Case(f"example/{name}", [("run", run)], copy=[rel], files={f: "sha256" for f in dumps}))
        cases.append(Case(f"example/{name}/functional", [("run", run + ["--mode", "functional"])], copy=[rel],
                          files={f: "sha256" for f in dumps}))
        files = {f: "sha256" for f in dumps}
        files.update({"stats.json": "stats", "trace.json": "sha256", "wave.vcd": "sha256"})
        cases.append(Case(f"example/{name}/observed",
                          [("run", run + ["--stats-json", "stats.json", "--trace", "trace.json", "--vcd", "wave.vcd"])],
                          copy=[rel], files=files))
        cases.append(Case(f"asm/{name}", [
            ("asm", ["asm", "--gen", "MARIANA", "program.pes", "-o", "program.bin"]),
            ("disasm", ["disasm", "--gen", "MARIANA", "program.bin"]),
            ("disasm_json", ["disasm", "--gen", "MARIANA", "--json", "program.bin"]),
        ], copy=[rel], files={"program.bin": "sha256"}))

    # Every generation x every input type on a shape with K tiling (K = 200: two k-tiles, one partial) and
    # partial tiles in M and N.
    for g in GENS:
        for label, dargs in gemm_dtypes(g):
            cases.append(gemm_case(f"gemm/{g}/{label}/96x200x160", ["--gen", g] + dargs + shape_args(96, 200, 160)))
    # What the dtype parser refuses is behaviour too (exit 2 and the message).
    for g in GENS:
        wrong = "fp8_e4m3fn" if g == "CAYMAN" else "fp8_e4m3"
        cases.append(Case(f"gemm/{g}/refused/{wrong}",
                          [("gemm", ["gemm", "--gen", g, "--dtype", wrong] + shape_args(96, 200, 160))]))
        cases.append(Case(f"gemm/{g}/refused/bf16-fp32-mode-high",
                          [("gemm", ["gemm", "--gen", g, "--dtype", "bf16", "--fp32-mode", "high"])]))

    # The main job's shape (M and K tiling), one dtype per generation; MARIANA's also keeps its trace and VCD.
    for g, label, dargs in (("CAYMAN", "fp8_e4m3", ["--dtype", "fp8_e4m3"]),
                            ("MARIANA", "bf16", ["--dtype", "bf16"]),
                            ("MARIANA_PLUS", "fp16", ["--dtype", "fp16"]),
                            ("MAVERICK", "fp32-low_high", ["--dtype", "fp32", "--fp32-mode", "low_high"])):
        extra, files = [], {}
        if g == "MARIANA":
            extra = ["--trace", "trace.json", "--vcd", "wave.vcd"]
            files = {"trace.json": "sha256", "wave.vcd": "sha256"}
        cases.append(gemm_case(f"gemm/{g}/{label}/256x512x512", ["--gen", g] + dargs + shape_args(256, 512, 512) + extra,
                               extra_files=files))
    # N tiling as well (N = 700 in 256-column Matmuls, the last one partial), odd M and K.
    for g, d in (("CAYMAN", "bf16"), ("MARIANA", "fp8_e5m2"), ("MARIANA_PLUS", "tf32"), ("MAVERICK", "fp8_e4m3fn")):
        cases.append(gemm_case(f"gemm/{g}/{d}/200x384x700-tile-n-256",
                               ["--gen", g, "--dtype", d, "--tile-n", "256"] + shape_args(200, 384, 700)))
    # SBUF streaming (a budget far below the operands), another seed, given operands, functional mode.
    cases.append(gemm_case("gemm/MARIANA/bf16/128x2048x1024-sbuf-budget-16384",
                           ["--gen", "MARIANA", "--sbuf-budget", "16384"] + shape_args(128, 2048, 1024)))
    cases.append(gemm_case("gemm/MARIANA_PLUS/fp16/200x1000x700-sbuf-budget-16384",
                           ["--gen", "MARIANA_PLUS", "--dtype", "fp16", "--sbuf-budget", "16384"]
                           + shape_args(200, 1000, 700)))
    cases.append(gemm_case("gemm/MARIANA/bf16/96x200x160-seed-7",
                           ["--gen", "MARIANA", "--seed", "7"] + shape_args(96, 200, 160)))
    cases.append(gemm_case("gemm/MARIANA/bf16/npy-f8-f2-70x150x90",
                           ["--gen", "MARIANA", "--a", "A.npy", "--b", "B.npy"], setup=npy_operands_f8_f2))
    cases.append(gemm_case("gemm/CAYMAN/fp8_e4m3/npy-f4-130x260x140",
                           ["--gen", "CAYMAN", "--dtype", "fp8_e4m3", "--a", "A.npy", "--b", "B.npy"],
                           setup=npy_operands_f4))
    cases.append(gemm_case("gemm/MAVERICK/fp8_e5m2/npy-f4-130x260x140",
                           ["--gen", "MAVERICK", "--dtype", "fp8_e5m2", "--a", "A.npy", "--b", "B.npy"],
                           setup=npy_operands_f4))
    cases.append(gemm_case("gemm/MARIANA/bf16/96x200x160-functional",
                           ["--gen", "MARIANA", "--mode", "functional"] + shape_args(96, 200, 160)))

    # Timing-only sweep points: no data, so these are the long streams the cost model alone decides.
    for g in ("MARIANA", "MAVERICK"):
        for m, k, n, extra in ((2048, 2048, 2048, []), (4096, 4096, 1024, []), (2048, 2048, 2048, ["--tile-n", "128"])):
            suffix = "-tile-n-128" if extra else ""
            cases.append(gemm_case(f"timing/{g}/bf16/{m}x{k}x{n}{suffix}",
                                   ["--gen", g, "--mode", "timing"] + shape_args(m, k, n) + extra, out_c=False))
    cases.append(gemm_case("timing/MARIANA/bf16/4096x4096x4096-tile-n-128",
                           ["--gen", "MARIANA", "--mode", "timing", "--tile-n", "128"] + shape_args(4096, 4096, 4096),
                           out_c=False))
    cases.append(gemm_case("timing/MARIANA_PLUS/fp8_e4m3fn/2048x2048x2048",
                           ["--gen", "MARIANA_PLUS", "--mode", "timing", "--dtype", "fp8_e4m3fn"]
                           + shape_args(2048, 2048, 2048), out_c=False))
    cases.append(gemm_case("timing/CAYMAN/fp32/2048x2048x1024",
                           ["--gen", "CAYMAN", "--mode", "timing", "--dtype", "fp32"] + shape_args(2048, 2048, 1024),
                           out_c=False))

    # Cost-model and platform parameters through --set and --config (docs/configuration.md).
    def sets(*kv):
        return [a for p in kv for a in ("--set", p)]

    cases.append(gemm_case("set/MARIANA/mm_init_latency-seq_dispatch/256x512x512-tile-n-64",
                           ["--gen", "MARIANA", "--tile-n", "64"] + shape_args(256, 512, 512)
                           + sets("timing.mm_init_latency=96", "timing.seq_dispatch_cycles=48")))
    cases.append(gemm_case("set/MARIANA/ififo-fill-drain-psum/timing-2048x2048x2048",
                           ["--gen", "MARIANA", "--mode", "timing"] + shape_args(2048, 2048, 2048)
                           + sets("arr_seq.ififo_depth=4", "timing.fill_cycles_per_row=2",
                                  "timing.drain_cycles_per_col=3", "timing.psum_write_cycles=20",
                                  "timing.psum_rmw_cycles=10"), out_c=False))
    cases.append(gemm_case("set/MAVERICK/sbuf-bandwidth-ls/timing-1024x1024x1024",
                           ["--gen", "MAVERICK", "--mode", "timing"] + shape_args(1024, 1024, 1024)
                           + sets("timing.sbuf_read_bytes_per_cycle=1", "timing.ls_elements_per_cycle=2",
                                  "timing.ls_to_mm_cycles=40", "timing.sbuf_access_cycles=100"), out_c=False))
    cases.append(gemm_case("set/CAYMAN/fp32-factor-clock-stagger/256x512x512",
                           ["--gen", "CAYMAN", "--dtype", "fp32"] + shape_args(256, 512, 512)
                           + sets("timing.fp32_factor=2", "tensor_engine.clock_ghz=1.4",
                                  "timing.stagger_wake_cycles=30")))
    cases.append(gemm_case("set/MARIANA/bus-quantum-queue/96x200x160",
                           ["--gen", "MARIANA"] + shape_args(96, 200, 160)
                           + sets("seq.quantum_ns=0", "seq.queue_depth=2", "sbuf.access_latency_ns=25",
                                  "sbuf.beat_bytes=32", "psum.beat_latency_ns=2", "csrs.access_time_ns=50")))
    cases.append(gemm_case("set/MARIANA_PLUS/config-file/timing-1024x1024x1024",
                           ["--config", "cfg.json", "--mode", "timing"] + shape_args(1024, 1024, 1024), out_c=False,
                           setup=config_file))
    for g in GENS:
        cases.append(Case(f"config/{g}/dump", [("dump", ["gemm", "--gen", g, "--dump-config"])]))
    cases.append(Case("config/MARIANA/dump-with-sets",
                      [("dump", ["gemm", "--gen", "MARIANA", "--dump-config"]
                        + sets("timing.throttle_fraction=0.5", "arr_seq.ififo_depth=3", "sbuf.access_latency_ns=12.5"))]))

    # CSR knobs: they are driver writes, so they go through `pe-vp run` and a register script
    # (tests/golden/programs: one stream, one script per knob, each reading the bus-visible counters back).
    prog = Path("tests/golden/programs")
    for knob, extra in (("baseline", []), ("throttle", sets("timing.throttle_fraction=0.5")), ("inter_instr", []),
                        ("p2f", []), ("flush", []), ("queue", [])):
        cases.append(Case(f"csr/MARIANA/{knob}",
                          [("run", ["run", "--gen", "MARIANA", "knobs.pes", "--regs", f"{knob}.regs",
                                    "--stats-json", "stats.json"] + extra)],
                          copy=[prog], files={"stats.json": "stats"}))
    cases.append(Case("csr/MARIANA/baseline-timing",
                      [("run", ["run", "--gen", "MARIANA", "knobs.pes", "--regs", "baseline.regs", "--mode", "timing",
                                "--stats-json", "stats.json"])],
                      copy=[prog], files={"stats.json": "stats"}))

    # The sample streams: their bytes, and the assembly and JSON Lines disassembly of each; a MARIANA stream
    # decoded as CAYMAN names the rules it breaks (exit 1).
    steps = [("demo", ["demo", "--out-dir", "."])]
    for g in GENS:
        steps.append((f"disasm_{g}", ["disasm", "--gen", g, f"sample_{g}.bin"]))
        steps.append((f"disasm_json_{g}", ["disasm", "--gen", g, "--json", f"sample_{g}.bin"]))
    steps.append(("disasm_CAYMAN_of_MARIANA", ["disasm", "--gen", "CAYMAN", "sample_MARIANA.bin"]))
    cases.append(Case("demo", steps, files={f"sample_{g}.bin": "sha256" for g in GENS}))

    # Register-file listings: long and generated, so kept as digests.
    for rf in ("top", "cluster", "protected", "vp"):
        cases.append(Case(f"regs/{rf}", [("text", ["regs", "--regfile", rf], "sha256"),
                                         ("json", ["regs", "--regfile", rf, "--json"], "sha256")]))
    return cases


# ---------------------------------------------------------------------------------------------------------
# Running and normalising


def normalise_text(text, case_dir):
    """The deterministic part of a command's output: scratch and source paths as placeholders, wall time out."""
    for real, shown in ((str(case_dir), "<work>"), (os.path.realpath(case_dir), "<work>"),
                        (str(ROOT), "<src>"), (os.path.realpath(ROOT), "<src>")):
        text = text.replace(real, shown)
    return PROGRESS_RE.sub("", WALL_RE.sub(WALL_SUB, text))


def strip_host_keys(value):
    if isinstance(value, dict):
        return {k: strip_host_keys(v) for k, v in value.items() if not HOST_KEY_RE.search(k)}
    if isinstance(value, list):
        return [strip_host_keys(v) for v in value]
    return value


def keep_stdout(text, how):
    if how == "sha256":
        return {"sha256": hashlib.sha256(text.encode()).hexdigest(), "lines": text.count("\n")}
    return text.splitlines()


def file_digest(path):
    data = path.read_bytes()
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def run_case(case, pe_vp, work):
    case_dir = work / case.name.replace("/", "__")
    case_dir.mkdir(parents=True)
    for rel in case.copy:
        for f in sorted((ROOT / rel).iterdir()):
            if f.is_file():
                shutil.copy2(f, case_dir / f.name)
    if case.setup:
        case.setup(case_dir)
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1", LC_ALL="C")
    result = {"steps": {}, "files": {}}
    t0 = time.monotonic()
    for label, argv, how in case.steps:
        try:
            p = subprocess.run([str(pe_vp)] + argv, cwd=case_dir, env=env, capture_output=True, text=True,
                               timeout=STEP_TIMEOUT_S)
            step = {"exit": p.returncode, "stdout": keep_stdout(normalise_text(p.stdout, case_dir), how),
                    "stderr": normalise_text(p.stderr, case_dir).splitlines()}
        except subprocess.TimeoutExpired:
            step = {"exit": f"timeout after {STEP_TIMEOUT_S} s"}
        result["steps"][label] = step
    for rel, kind in case.files.items():
        path = case_dir / rel
        if not path.is_file():
            result["files"][rel] = {"missing": True}
        elif kind == "stats":
            try:
                result["files"][rel] = strip_host_keys(json.loads(path.read_text()))
            except ValueError as e:
                result["files"][rel] = {"invalid_json": str(e)}
        else:
            result["files"][rel] = file_digest(path)
    return result, time.monotonic() - t0


def run_all(cases, pe_vp, work, jobs):
    results, seconds = {}, {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_case, c, pe_vp, work): c.name for c in cases}
        for f in concurrent.futures.as_completed(futures):
            results[futures[f]], seconds[futures[f]] = f.result()
    return {n: results[n] for n in sorted(results)}, seconds


class WorkDir:
    """The scratch folder: a fresh temporary one, or --work-dir (emptied only if this script made it)."""

    def __init__(self, path, keep):
        self.temporary = path is None
        self.keep = keep
        self.path = Path(tempfile.mkdtemp(prefix="pevp-golden-")) if path is None else Path(path).resolve()

    def __enter__(self):
        if not self.temporary and self.path.exists() and any(self.path.iterdir()):
            if not (self.path / WORK_MARKER).exists():
                raise Fatal(f"--work-dir {self.path} is not empty and was not made by this script")
            shutil.rmtree(self.path)
        self.path.mkdir(parents=True, exist_ok=True)
        (self.path / WORK_MARKER).write_text("scratch folder of tests/golden/record.py\n")
        return self.path

    def __exit__(self, *exc):
        if self.temporary and not self.keep:
            shutil.rmtree(self.path, ignore_errors=True)


# ---------------------------------------------------------------------------------------------------------
# Comparing


def short(value, limit=200):
    s = json.dumps(value, sort_keys=True)
    return s if len(s) <= limit else s[:limit] + "..."


def diff_values(expected, actual, path, out):
    """Appends (key path, message) for every difference between two JSON values."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for k in sorted(set(expected) | set(actual)):
            sub = f"{path}.{k}" if path else k
            if k not in actual:
                out.append((sub, f"missing; expected {short(expected[k])}"))
            elif k not in expected:
                out.append((sub, f"unexpected; actual {short(actual[k])}"))
            else:
                diff_values(expected[k], actual[k], sub, out)
    elif (isinstance(expected, list) and isinstance(actual, list) and expected != actual
          and all(isinstance(x, str) for x in expected + actual)):
        lines = list(difflib.unified_diff(expected, actual, "expected", "actual", n=1, lineterm=""))
        if len(lines) > 60:
            lines = lines[:60] + [f"... ({len(lines) - 60} more diff lines)"]
        out.append((path, "text differs:\n" + "\n".join("      " + l for l in lines)))
    elif isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        for i, (e, a) in enumerate(zip(expected, actual)):
            diff_values(e, a, f"{path}[{i}]", out)
    elif type(expected) is not type(actual) or expected != actual:
        out.append((path, f"expected {short(expected)}, actual {short(actual)}"))


def compare(golden_cases, actual_cases):
    """{case name: [(key path, message)]} for every case that differs."""
    report = {}
    for name in sorted(set(golden_cases) | set(actual_cases)):
        if name not in actual_cases:
            report[name] = [("", "in the golden file but not run (case removed or renamed: re-record)")]
        elif name not in golden_cases:
            report[name] = [("", "not in the golden file (new case: re-record)")]
        else:
            diffs = []
            diff_values(golden_cases[name], actual_cases[name], "", diffs)
            if diffs:
                report[name] = diffs
    return report


# ---------------------------------------------------------------------------------------------------------
# Commands


def select(cases, only):
    if not only:
        return cases
    rx = re.compile(only)
    return [c for c in cases if rx.search(c.name)]


class Fatal(Exception):
    """A usage or environment problem: exit status 2, never confused with 1 (a difference)."""


def load_golden(path):
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise Fatal(f"cannot read the golden file {path}: {e}")
    if doc.get("format") != FORMAT or not isinstance(doc.get("cases"), dict):
        raise Fatal(f"{path} is not a format-{FORMAT} golden file")
    return doc


def cmd_record(args, pe_vp):
    cases = all_cases()
    with WorkDir(args.work_dir, args.keep) as work:
        t0 = time.monotonic()
        results, seconds = run_all(cases, pe_vp, work / "run1", args.jobs)
        elapsed = time.monotonic() - t0
        if not args.once:
            # A value that differs between two runs of the same binary cannot be a golden value.
            again, _ = run_all(cases, pe_vp, work / "run2", args.jobs)
            report = compare(results, again)
            if report:
                print_report(report)
                print(f"record.py: {len(report)} case(s) differ between two runs; golden file not written")
                return 1
    failed = [n for n, r in results.items() for s in r["steps"].values() if not isinstance(s.get("exit"), int)]
    if failed:
        print("record.py: step(s) timed out in: " + ", ".join(sorted(set(failed))) + "; golden file not written")
        return 1
    doc = {
        "format": FORMAT,
        "about": "Golden outputs of pe-vp; written by tests/golden/record.py record, see tests/golden/README.md.",
        "cases": results,
    }
    Path(args.golden).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    slow = sorted(seconds.items(), key=lambda kv: -kv[1])[:5]
    print(f"record.py: wrote {args.golden}: {len(results)} cases, one pass {elapsed:.1f} s"
          + ("" if args.once else " (recorded twice, identical)"))
    print("  slowest: " + ", ".join(f"{n} {s:.2f} s" for n, s in slow))
    return 0


def print_report(report):
    for name, diffs in report.items():
        for key, msg in diffs:
            print(f"DIFF {name}: {key or '(case)'}: {msg}")


def cmd_check(args, pe_vp):
    golden = load_golden(args.golden)["cases"]
    cases = select(all_cases(), args.only)
    if args.only:
        golden = {n: v for n, v in golden.items() if re.search(args.only, n)}
    with WorkDir(args.work_dir, args.keep) as work:
        t0 = time.monotonic()
        results, _ = run_all(cases, pe_vp, work, args.jobs)
        elapsed = time.monotonic() - t0
    report = compare(golden, results)
    print_report(report)
    ndiff = sum(len(d) for d in report.values())
    print(f"golden check: {len(results)} cases run in {elapsed:.1f} s, {len(report)} differ ({ndiff} difference(s))"
          f" against {args.golden}")
    if report:
        print("If the change is intended, re-record: /usr/bin/python3 tests/golden/record.py record "
              "--pe-vp build/platform/pe-vp (tests/golden/README.md)")
    return 1 if report else 0


def cmd_selftest(args, pe_vp):
    """Corrupts three golden values of different kinds and requires `check` to name each and exit 1."""
    doc = load_golden(args.golden)
    cases = doc["cases"]
    stats_case, text_case, sha_case = ("example/single_matmul/observed", "calibrate/MARIANA",
                                       "gemm/MARIANA/bf16/96x200x160")
    for n in (stats_case, text_case, sha_case):
        if n not in cases:
            raise Fatal(f"selftest: case {n} is not in {args.golden}")
    stats = cases[stats_case]["files"]["stats.json"]
    line = cases[text_case]["steps"]["calibrate"]["stdout"][2]
    sha = cases[sha_case]["files"]["C.npy"]["sha256"]
    bad_sha = ("0" if sha[0] != "0" else "1") + sha[1:]
    # (case, key path, what the report must show for the golden side, and for the actual side)
    expect = [
        (stats_case, "files.stats.json.cycles", "expected " + json.dumps(stats["cycles"] + 1),
         "actual " + json.dumps(stats["cycles"])),
        (text_case, "steps.calibrate.stdout", "-" + line + " (corrupted)", "+" + line),
        (sha_case, "files.C.npy.sha256", "expected " + json.dumps(bad_sha), "actual " + json.dumps(sha)),
    ]
    stats["cycles"] += 1
    cases[text_case]["steps"]["calibrate"]["stdout"][2] = line + " (corrupted)"
    cases[sha_case]["files"]["C.npy"]["sha256"] = bad_sha
    only = "^(" + "|".join(re.escape(n) for n in (stats_case, text_case, sha_case)) + ")$"

    with WorkDir(args.work_dir, args.keep) as work:
        corrupted = work / "corrupted.json"
        corrupted.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")

        def check(golden_path, sub):
            p = subprocess.run([sys.executable, str(Path(__file__).resolve()), "check", "--pe-vp", str(pe_vp),
                                "--golden", str(golden_path), "--only", only, "--work-dir", str(work / sub)],
                               capture_output=True, text=True, timeout=STEP_TIMEOUT_S)
            return p.returncode, p.stdout + p.stderr

        problems = []
        rc, out = check(args.golden, "control")
        if rc != 0:
            problems.append(f"check against the real golden file exited {rc}, expected 0:\n{out}")
        rc, out = check(corrupted, "corrupted")
        print(out, end="")
        if rc != 1:
            problems.append(f"check against the corrupted golden file exited {rc}, expected 1")
        for name, key, want_expected, want_actual in expect:
            head = f"DIFF {name}: {key}:"
            at = out.find(head)
            # The report of one key runs from its DIFF line to the next one.
            block = "" if at < 0 else out[at:].split("\nDIFF ", 1)[0]
            if not block:
                problems.append(f"no DIFF line for {name}: {key}")
            elif want_expected not in block or want_actual not in block:
                problems.append(f"the report for {name}: {key} does not show {want_expected!r} and "
                                f"{want_actual!r}:\n{block}")
    for p in problems:
        print("selftest: " + p)
    print("selftest: " + ("FAILED" if problems else "the corrupted golden file was caught, every change named"))
    return 1 if problems else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("record", "check", "selftest", "list"))
    ap.add_argument("--pe-vp", default=str(ROOT / "build" / "platform" / "pe-vp"), help="the pe-vp binary")
    ap.add_argument("--golden", default=str(DEFAULT_GOLDEN), help="golden file (default: %(default)s)")
    ap.add_argument("--work-dir", help="scratch folder (default: a temporary one, removed afterwards)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary scratch folder")
    ap.add_argument("--only", help="check: only cases whose name matches this regular expression")
    ap.add_argument("--jobs", type=int, default=1, help="cases run at once (default 1)")
    ap.add_argument("--once", action="store_true", help="record: one pass, without the determinism re-run")
    args = ap.parse_args()
    if args.mode == "list":
        for c in all_cases():
            print(c.name)
        return 0
    pe_vp = Path(args.pe_vp).resolve()
    if not os.access(pe_vp, os.X_OK):
        print(f"record.py: no executable pe-vp at {pe_vp}", file=sys.stderr)
        return 2
    if args.mode == "record" and args.only:
        print("record.py: record always writes every case (--only is for check)", file=sys.stderr)
        return 2
    try:
        return {"record": cmd_record, "check": cmd_check, "selftest": cmd_selftest}[args.mode](args, pe_vp)
    except Fatal as e:
        print(f"record.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
