"""`--log-firmware` on `pe-vp run` and `pe-vp gemm`: the firmware's line for each instruction and each micro-op with
its simulated times, in program order; the trace and statistics written beside it are byte-for-byte those of the
same run without the log (the log chains the recorder's observer, it does not replace it); a faulting instruction
still gets its firmware line, and no micro-op. Run with /usr/bin/python3 (ctest: cli.log_firmware)."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

PEVP = os.environ["PEVP_BIN"]
EXAMPLE = os.environ["PEVP_EXAMPLE"]  # platform/examples/single_matmul
ENV = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
FW = re.compile(r"^fw \[\s*([0-9.]+) us\] instr (\d+): (.*)$")
OP = re.compile(r"^fw \[\s*([0-9.]+) us\]   (\w+) tile rows (\d+)-(\d+) cols (\d+)-(\d+): "
                r"start ([0-9.]+) us, complete ([0-9.]+), response ([0-9.]+)$")


def run(args, cwd=EXAMPLE):
    return subprocess.run([PEVP, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=120)


class LogFirmware(unittest.TestCase):
    def test_run_logs_each_instruction_and_micro_op_and_leaves_the_recording_alone(self):
        with tempfile.TemporaryDirectory() as d:
            common = ["run", "--gen", "MARIANA", "program.pes", "--load", "st.npy@0x0:bf16",
                      "--load", "mv.npy@0x1000:bf16"]
            logged = run(common + ["--log-firmware", "--trace", d + "/t1.json", "--stats-json", d + "/s1.json"])
            plain = run(common + ["--trace", d + "/t2.json", "--stats-json", d + "/s2.json"])
            self.assertEqual(logged.returncode, 0, logged.stderr)
            self.assertEqual(plain.returncode, 0, plain.stderr)
            for a, b in (("t1.json", "t2.json"), ("s1.json", "s2.json")):
                with open(os.path.join(d, a), "rb") as x, open(os.path.join(d, b), "rb") as y:
                    self.assertEqual(x.read(), y.read(), a + " differs with the log on")
        lines = [l for l in logged.stdout.splitlines() if l.startswith("fw ")]
        self.assertNotIn("fw ", plain.stdout)
        self.assertEqual(len(lines), 4, logged.stdout)
        fw0, op0, fw1, op1 = (FW.match(lines[0]), OP.match(lines[1]), FW.match(lines[2]), OP.match(lines[3]))
        self.assertTrue(all((fw0, op0, fw1, op1)), lines)
        self.assertEqual((fw0.group(2), fw0.group(3)), ("0", "S: Ldweights"))
        self.assertEqual((fw1.group(2), fw1.group(3)), ("1", "S: Matmul"))
        self.assertEqual(op0.group(2), "weight_load")
        self.assertEqual(op1.group(2), "matmul")
        # row_grp = col_grp = 0xF: the tile is the whole 128 x 128 array (its active part is 64 x 32).
        for op in (op0, op1):
            self.assertEqual([int(op.group(i)) for i in (3, 4, 5, 6)], [0, 127, 0, 127])
        for op in (op0, op1):
            push, start, complete, response = (float(op.group(i)) for i in (1, 7, 8, 9))
            self.assertLessEqual(push, start)
            self.assertLess(start, complete)
            self.assertLessEqual(start, response)
        self.assertLessEqual(float(fw0.group(1)), float(fw1.group(1)))
        self.assertLessEqual(float(op0.group(7)), float(op1.group(7)), "the Matmul starts after the load")

    def test_a_faulting_instruction_has_its_line_and_no_micro_op(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(EXAMPLE, "program.pes")) as f:
                text = f.read()
            # The Matmul alone: no stationary was loaded, so it faults when it executes (exec.no_stationary).
            with open(d + "/mm.pes", "w") as f:
                f.write("\n".join(l for l in text.splitlines() if not l.startswith("ldweights")) + "\n")
            r = run(["run", "--gen", "MARIANA", d + "/mm.pes", "--log-firmware"], cwd=d)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        lines = [l for l in r.stdout.splitlines() if l.startswith("fw ")]
        self.assertEqual(len(lines), 1, r.stdout)
        self.assertRegex(lines[0], r"instr 0: S: Matmul$")
        self.assertIn("exec.no_stationary", r.stdout + r.stderr)

    def test_gemm_logs_its_whole_plan(self):
        r = run(["gemm", "--m", "128", "--k", "256", "--n", "128", "--mode", "functional", "--log-firmware"],
                cwd=None)
        self.assertEqual(r.returncode, 0, r.stderr)
        names = [m.group(3) for m in map(FW.match, r.stdout.splitlines()) if m]
        # The plan printed above the log says 2 Ldweights and 2 Matmuls, one after the other.
        self.assertIn("LDWEIGHTS 2, MATMUL 2", r.stdout)
        self.assertEqual(names, ["S: Ldweights", "S: Matmul", "S: Ldweights", "S: Matmul"])


if __name__ == "__main__":
    unittest.main()
