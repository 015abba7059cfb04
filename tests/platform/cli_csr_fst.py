"""`--csr-fst PREFIX` with csrs.impl = rtl: FST waveforms of the three CSR faces' Verilated RTL, from the start of
the simulation to its end, beside an unchanged run; refused without the RTL and for a missing directory. The FST
header block (block type 0, then its length, start time and end time as big-endian 64-bit integers, per the FST
format GTKWave's fstapi writes) is read back. Run with /usr/bin/python3 (ctest: cli.csr_fst; skipped, 77, in a build
without Verilator)."""
import os
import struct
import subprocess
import sys
import tempfile
import unittest

PEVP = os.environ["PEVP_BIN"]
EXAMPLE = os.environ["PEVP_EXAMPLE"]  # platform/examples/single_matmul
ENV = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
COMMON = ["run", "--gen", "MARIANA", "program.pes", "--load", "st.npy@0x0:bf16", "--load", "mv.npy@0x1000:bf16"]


def run(args):
    return subprocess.run([PEVP, *args], cwd=EXAMPLE, env=ENV, capture_output=True, text=True, timeout=120)


def fst_header(path):
    with open(path, "rb") as f:
        block = f.read(25)
    kind, length, start, end = struct.unpack(">BQQQ", block)
    return kind, length, start, end


class CsrFst(unittest.TestCase):
    def test_three_waveforms_and_the_same_run(self):
        with tempfile.TemporaryDirectory() as d:
            script = os.path.join(d, "regs.txt")
            with open(script, "w", encoding="utf-8") as f:
                f.write("write top spare_register0 0x12345678\nexpect top spare_register0 0x12345678\n")
            traced = run(COMMON + ["--set", "csrs.impl=rtl", "--regs", script, "--csr-fst", d + "/w"])
            plain = run(COMMON + ["--set", "csrs.impl=rtl", "--regs", script])
            self.assertEqual(traced.returncode, 0, traced.stderr)
            self.assertEqual(plain.returncode, 0, plain.stderr)
            self.assertEqual(traced.stdout, plain.stdout, "the waveforms change the run")
            for face in ("top", "cluster", "protected"):
                path = os.path.join(d, f"w.{face}.fst")
                self.assertTrue(os.path.isfile(path), path)
                kind, length, start, end = fst_header(path)
                self.assertEqual(kind, 0, f"{path}: not an FST header block")
                self.assertGreater(length, 24)
                self.assertEqual(start, 0, path)
                # The time unit is the simulation's (1 ps): the driver's accesses happen after 0.
                self.assertGreater(end, start, f"{path}: nothing recorded")

    def test_refused_without_the_rtl_or_a_directory(self):
        r = run(COMMON + ["--csr-fst", "/tmp/x"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("--csr-fst", r.stderr)
        self.assertIn("csrs.impl = rtl", r.stderr)
        r = run(COMMON + ["--set", "csrs.impl=rtl", "--csr-fst", "/no/such/dir/w"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("/no/such/dir/w.top.fst", r.stderr)


if __name__ == "__main__":
    probe = subprocess.run([PEVP, "gemm", "--m", "1", "--k", "1", "--n", "1", "--set", "csrs.impl=rtl",
                            "--dump-config"], env=ENV, capture_output=True, text=True)
    if probe.returncode != 0 and "no register-file RTL" in probe.stderr:
        print("SKIP: this build has no register-file RTL")
        sys.exit(77)
    sys.exit(0 if unittest.main(exit=False).result.wasSuccessful() else 1)
