#!/usr/bin/python3
"""docs/getting-started.md as a new user follows it: the page's `pe-vp` commands, taken from the page itself, run
once from the build tree and once from an SDK installed into a fresh prefix (cmake --install), each with the setup
line the page gives for that case and nothing else on PATH from the tree.

    getting_started.py BUILD_DIR

What is checked, against the page's own statements: every command exits 0; the assembled program is 2 records of
64 bytes (the example's ldweights and matmul); the dump is C = st.T @ mv (32 x 48 fp32) computed here with numpy
from the example's own operands (bf16-exact: their values are small integers); the checkpoint restored gives the
same C; the page's GEMM writes its statistics, trace and VCD."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PAGE = os.path.join(SRC, "docs", "getting-started.md")
COMMANDS = {"gemm", "sweep", "run", "serve", "qemu-device", "asm", "disasm", "calibrate", "demo", "regs",
            "cosim-check"}


def page_commands(text):
    """The indented code lines that start with `pe-vp` or `cd`, continuation lines joined; not the placeholders
    (`...`) nor the background server (`&`), which need a second program to be useful."""
    commands, current = [], None
    for line in text.splitlines():
        if not line.startswith("    "):
            current = None
            continue
        code = line[4:]
        if current is not None:
            current += " " + code.rstrip("\\").strip()
            if not code.rstrip().endswith("\\"):
                commands.append(current)
                current = None
            continue
        words = code.split()
        # A command, not a line of output ("pe-vp gemm: MARIANA, ...", "pe-vp run: the program faulted ...").
        if not words or words[0] not in ("pe-vp", "cd") or (words[0] == "pe-vp" and words[1] not in COMMANDS):
            continue
        code = re.sub(r"\s+#.*$", "", code)  # the page's comments
        if code.rstrip().endswith("\\"):
            current = code.rstrip().rstrip("\\").strip()
        else:
            commands.append(code.strip())
    return [c for c in commands if "..." not in c and not c.endswith("&")]


def setup_line(text, which):
    """The page's `export PATH=...` line for the build tree (`$PWD/build`) or the SDK (`PREFIX`)."""
    lines = [l.strip() for l in text.splitlines() if l.strip().startswith("export PATH=")]
    chosen = [l for l in lines if ("PREFIX" in l) == (which == "sdk")]
    if len(chosen) != 1:
        sys.exit("getting-started.md: expected one %s setup line, found %r" % (which, chosen))
    return chosen[0]


def run_page(commands, setup, cwd, out_dir, replace):
    """Runs the setup line and the commands in one bash (set -e), outputs under out_dir instead of /tmp."""
    for old, new in replace:
        setup = setup.replace(old, new)
    script = ["set -euo pipefail", setup, "type -p pe-vp"]
    script += [c.replace("/tmp/", out_dir + "/") for c in commands]
    env = {"PATH": "/usr/bin:/bin", "HOME": out_dir, "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"}
    return subprocess.run(["/bin/bash", "-c", "\n".join(script)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def check(case, r, out_dir, example):
    if r.returncode != 0:
        sys.exit("%s: the page's commands failed (status %d)\nstdout:\n%s\nstderr:\n%s"
                 % (case, r.returncode, r.stdout, r.stderr))
    first = r.stdout.splitlines()[0]
    if not first.endswith("/pe-vp") or (case == "sdk") != ("/prefix/bin/" in first):
        sys.exit("%s: the commands ran %s, not the %s's pe-vp" % (case, first, case))
    program = os.path.join(out_dir, "p.bin")
    if os.path.getsize(program) != 2 * 64:
        sys.exit("%s: p.bin is %d bytes, expected 2 records of 64" % (case, os.path.getsize(program)))
    st = np.load(os.path.join(example, "st.npy")).astype(np.float64)
    mv = np.load(os.path.join(example, "mv.npy")).astype(np.float64)
    expected = st.T @ mv
    c = np.load(os.path.join(out_dir, "c.npy"))
    if c.shape != (32, 48) or not np.array_equal(c.astype(np.float64), expected):
        sys.exit("%s: c.npy is not st.T @ mv (shape %s, max difference %s)"
                 % (case, c.shape, np.abs(c - expected).max() if c.shape == expected.shape else "-"))
    for name in ("a.ckpt", "s.json", "t.json", "w.vcd"):
        if os.path.getsize(os.path.join(out_dir, name)) == 0:
            sys.exit("%s: %s is empty" % (case, name))
    print("%s: %d commands, C = st.T @ mv exactly" % (case, len(commands)))


if __name__ == "__main__":
    build = os.path.abspath(sys.argv[1])
    with open(PAGE) as f:
        text = f.read()
    commands = page_commands(text)
    # The page's own list, so that a command dropped from the page is noticed here.
    kinds = [c.split()[1] if c.startswith("pe-vp") else "cd" for c in commands]
    if kinds.count("run") != 3 or "asm" not in kinds or "disasm" not in kinds or "gemm" not in kinds:
        sys.exit("getting-started.md: expected asm, disasm, three runs and a gemm among %r" % commands)
    work = tempfile.mkdtemp(prefix="pevp-getting-started.")
    try:
        started = time.monotonic()
        prefix = os.path.join(work, "prefix")
        subprocess.run(["cmake", "--install", build, "--prefix", prefix], check=True, stdout=subprocess.DEVNULL)
        installed = time.monotonic() - started
        for case, cwd, replace, example in (
                ("build tree", SRC, [("$PWD/build", build), ("$PWD", SRC)], os.path.join(SRC, "platform/examples")),
                ("sdk", work, [("PREFIX", prefix)], os.path.join(prefix, "share/pevp/examples"))):
            out_dir = os.path.join(work, case.replace(" ", "_"))
            os.mkdir(out_dir)
            r = run_page(commands, setup_line(text, "sdk" if case == "sdk" else "tree"), cwd, out_dir, replace)
            check(case, r, out_dir, os.path.join(example, "single_matmul"))
        print("install %.1f s, all %.1f s" % (installed, time.monotonic() - started))
    finally:
        shutil.rmtree(work, ignore_errors=True)
