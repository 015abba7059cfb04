"""One command line: what every command shares, tried as a new user would.

- `run` honours a source's `.gen` line as `asm` does (the preset it chooses, read once from a pipe); an explicit
  `--gen` that contradicts it is refused naming both;
- `regs` and `cosim-check` take the same `--regfile` default, `top`, and say so in --help;
- every command that prints progress, a summary or a note takes `--quiet`; errors still reach stderr;
- the register RTL (csrs.impl = rtl) is announced in one line on stderr, not with --quiet, not with the TLM;
- `demo --out-dir` creates a missing folder with its parents and refuses a path that is a file.

Run with /usr/bin/python3 (ctest: cli.consistency)."""
import json
import os
import subprocess
import tempfile
import threading
import unittest

PEVP = os.environ["PEVP_BIN"]
EXAMPLE = os.environ["PEVP_EXAMPLE"]  # platform/examples/single_matmul
ENV = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
ENV.pop("PEVP_CSRS_IMPL", None)  # the default CSR block is the TLM model here, whatever the suite runs with
LOADS = ["--load", "st.npy@0x0:bf16", "--load", "mv.npy@0x1000:bf16"]
RTL_NOTE = "pe-vp: register RTL in use (csrs.impl = rtl)"


def run(args, cwd=EXAMPLE, timeout=120):
    return subprocess.run([PEVP, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout)


def example_source():
    with open(os.path.join(EXAMPLE, "program.pes"), encoding="utf-8") as f:
        return f.read()


def rtl_available():
    r = run(["run", "program.pes", *LOADS, "--set", "csrs.impl=rtl", "--mode", "functional", "--quiet"])
    return r.returncode == 0


class GenDirective(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        # The example for CAYMAN: same instructions, its .gen line changed (the example is valid on both).
        self.cay = os.path.join(self.dir, "cay.pes")
        with open(self.cay, "w", encoding="utf-8") as f:
            f.write(example_source().replace(".gen MARIANA", ".gen CAYMAN"))

    def tearDown(self):
        self.tmp.cleanup()

    def test_run_takes_the_generation_of_the_gen_line(self):
        # The configuration the run would use: CAYMAN's preset, chosen by the source alone.
        r = run(["run", self.cay, "--dump-config"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["generation"], "CAYMAN")
        # And it runs: the same C as on MARIANA (bf16 inputs of small integers are exact on both).
        outs = {}
        for gen, program in (("CAYMAN", self.cay), ("MARIANA", "program.pes")):
            out = os.path.join(self.dir, gen + ".npy")
            r = run(["run", program, *LOADS, "--dump", "0x2000000:32x48:fp32=" + out, "--mode", "functional"])
            self.assertEqual(r.returncode, 0, (gen, r.stderr))
            self.assertIn("pe-vp run: %s: 2 instructions, 2 retired" % program, r.stdout)
            with open(out, "rb") as f:
                outs[gen] = f.read()
        self.assertEqual(outs["CAYMAN"], outs["MARIANA"])

    def test_a_gen_option_that_agrees_is_taken_one_that_contradicts_is_refused_naming_both(self):
        r = run(["run", "--gen", "CAYMAN", self.cay, *LOADS, "--mode", "functional"])
        self.assertEqual(r.returncode, 0, r.stderr)
        for cmd, status in ((["run", "--gen", "MARIANA", self.cay, *LOADS], 2),
                            (["asm", "--gen", "MARIANA", self.cay, "-o", os.path.join(self.dir, "x.bin")], 1)):
            r = run(cmd)
            self.assertEqual(r.returncode, status, (cmd, r.stderr))
            self.assertIn("cay.pes:3:1: error: the file is for CAYMAN but --gen is MARIANA [asm.gen]", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "x.bin")))

    def test_a_gen_line_against_the_configuration_names_the_file(self):
        r = run(["run", self.cay, *LOADS, "--set", "generation=MARIANA"])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("cay.pes: .gen CAYMAN disagrees with the configuration's generation MARIANA", r.stderr)

    def test_an_unknown_gen_line_and_no_gen_line(self):
        bad = os.path.join(self.dir, "bad.pes")
        with open(bad, "w", encoding="utf-8") as f:
            f.write(example_source().replace(".gen MARIANA", ".gen PLUTO"))
        r = run(["run", bad, *LOADS])
        self.assertEqual(r.returncode, 2)
        self.assertIn("pe-vp run: %s: .gen names an unknown generation 'PLUTO'" % bad, r.stderr)
        # No .gen line: run keeps its default generation (as for a .bin), asm asks for one.
        none = os.path.join(self.dir, "none.pes")
        with open(none, "w", encoding="utf-8") as f:
            f.write(example_source().replace(".gen MARIANA", ""))
        r = run(["run", none, "--dump-config"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["generation"], "MARIANA")
        r = run(["asm", none, "-o", os.path.join(self.dir, "n.bin")])
        self.assertEqual(r.returncode, 2)
        self.assertIn("no --gen and no .gen directive", r.stderr)

    def test_run_reads_a_piped_source_once(self):
        fifo = os.path.join(self.dir, "fifo.pes")
        os.mkfifo(fifo)
        source = example_source().replace(".gen MARIANA", ".gen CAYMAN")

        def feed():
            with open(fifo, "w", encoding="utf-8") as f:
                f.write(source)
        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        try:
            r = run(["run", fifo, *LOADS, "--mode", "functional"], timeout=60)
        finally:
            try:  # release a writer still waiting
                os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
            except OSError:
                pass
            writer.join(10)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("2 instructions, 2 retired", r.stdout)


class MissingField(unittest.TestCase):
    def test_a_field_left_out_is_one_error_in_asm_and_run(self):
        """The example's matmul without its dst: one error naming matmul, line 8 and dst, for asm as for run."""
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "nodst.pes")
            with open(src, "w", encoding="utf-8") as f:
                f.write(example_source().replace(" dst=psum[0]:[1,N]", ""))
            line = ("%s:8:1: error: dst_mem_pattern: missing: matmul needs dst=ADDR:[step,num]...; left out, its "
                    "default breaks dst_mem_pattern.start_addr = 0: destination must lie in PSUM [0x2000000, "
                    "0x2200000) (rule mempattern.dst_psum) [asm.missing]" % src)
            r = run(["asm", src, "-o", os.path.join(d, "x.bin")])
            self.assertEqual(r.returncode, 1)
            self.assertEqual(r.stderr, line + "\npe-vp asm: 1 error(s); '%s' not written\n" % os.path.join(d, "x.bin"))
            r = run(["run", src, *LOADS])
            self.assertEqual((r.returncode, r.stderr), (2, "pe-vp run: " + line + "\n"))


class RegfileDefault(unittest.TestCase):
    def test_regs_and_cosim_check_default_to_top_and_say_so(self):
        plain, top = run(["regs"]), run(["regs", "--regfile", "top"])
        self.assertEqual(plain.returncode, 0, plain.stderr)
        self.assertEqual(plain.stdout, top.stdout)
        self.assertNotEqual(plain.stdout, run(["regs", "--regfile", "cluster"]).stdout)
        for cmd in ("regs", "cosim-check"):
            r = run([cmd, "--help"])
            self.assertRegex(r.stdout, r"--regfile TEXT[^\n]*=top\s", cmd)
        r = run(["cosim-check", "--cycles", "200"], cwd=tempfile.gettempdir())
        if r.returncode == 77:
            self.skipTest("no Verilated RTL in this build")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("pe-vp cosim-check: top ("), r.stdout)


class Quiet(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_every_command_that_reports_takes_quiet(self):
        for cmd in ("gemm", "sweep", "run", "asm", "demo", "cosim-check", "calibrate", "serve", "qemu-device"):
            r = run([cmd, "--help"])
            self.assertEqual(r.returncode, 0, cmd)
            self.assertIn("--quiet", r.stdout, cmd)

    def test_run_quiet_prints_no_summary_but_the_scripts_reads(self):
        script = os.path.join(self.dir, "regs.txt")
        with open(script, "w", encoding="utf-8") as f:
            f.write("wait\nread vp retired_cnt_lsb\n")
        out = os.path.join(self.dir, "c.npy")
        args = ["run", "program.pes", *LOADS, "--regs", script, "--dump", "0x2000000:32x48:fp32=" + out]
        loud, quiet = run(args), run(args + ["--quiet"])
        self.assertEqual(loud.returncode, 0, loud.stderr)
        self.assertEqual(quiet.returncode, 0, quiet.stderr)
        self.assertIn("pe-vp run: program.pes: 2 instructions", loud.stdout)
        self.assertIn("  wrote " + out, loud.stdout)
        # Two instructions retired: the one line the script asked for, and nothing else.
        self.assertEqual(quiet.stdout, "vp:seq_ctrl.retired_cnt_lsb = 2 (0x2)\n")
        self.assertEqual(quiet.stderr, "")
        self.assertTrue(os.path.getsize(out) > 0)

    def test_asm_quiet_writes_silently_and_still_reports_errors(self):
        out = os.path.join(self.dir, "p.bin")
        r = run(["asm", "program.pes", "-o", out, "--quiet"])
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))
        self.assertEqual(os.path.getsize(out), 2 * 64)
        bad = os.path.join(self.dir, "bad.pes")
        with open(bad, "w", encoding="utf-8") as f:
            f.write(example_source().replace("in_dtype=bf16", "in_dtype=bf17", 1))
        r = run(["asm", bad, "-o", os.path.join(self.dir, "q.bin"), "--quiet"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("unknown dtype 'bf17'", r.stderr)

    def test_gemm_quiet_before_or_after_other_options(self):
        r = run(["gemm", "--m", "128", "--k", "128", "--n", "128", "--mode", "timing", "--quiet"])
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertIn("pe-vp gemm: MARIANA", r.stdout)  # its report is what it is for

    def test_cosim_check_quiet_prints_only_a_failure(self):
        r = run(["cosim-check", "--cycles", "200", "--quiet"], cwd=self.dir)
        if r.returncode == 77:
            self.skipTest("no Verilated RTL in this build")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))
        r = run(["cosim-check", "--cycles", "3000", "--inject-mismatch", "100", "--quiet"], cwd=self.dir)
        self.assertEqual(r.returncode, 1)
        self.assertIn("mismatches  ", r.stdout)
        self.assertIn("waveform    ", r.stdout)


class RegisterRtlNote(unittest.TestCase):
    def test_one_line_when_the_rtl_is_in_use(self):
        if not rtl_available():
            self.skipTest("no Verilated RTL in this build")
        base = ["run", "program.pes", *LOADS, "--mode", "functional"]
        r = run(base + ["--set", "csrs.impl=rtl"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([l for l in r.stderr.splitlines() if "register RTL" in l], [
            RTL_NOTE + ": the CSR block's top, cluster and protected faces are the Verilated register files behind "
            "TLM-to-APB bridges; vp_seq is the TLM model"])
        self.assertNotIn("register RTL", r.stdout)
        # The environment's default says the same.
        r = subprocess.run([PEVP, *base], cwd=EXAMPLE, env=dict(ENV, PEVP_CSRS_IMPL="rtl"), capture_output=True,
                           text=True, timeout=120)
        self.assertIn(RTL_NOTE, r.stderr)
        # Not with --quiet, not with the TLM model, not for a command that builds no platform.
        r = run(base + ["--set", "csrs.impl=rtl", "--quiet"])
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        r = run(base + ["--set", "csrs.impl=tlm"])
        self.assertNotIn("register RTL", r.stderr)
        r = run(["asm", "program.pes", "-o", "/dev/null", "--set", "csrs.impl=rtl"])
        self.assertNotIn("register RTL", r.stderr)
        r = run(["gemm", "--m", "128", "--k", "128", "--n", "128", "--mode", "timing", "--set", "csrs.impl=rtl"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(RTL_NOTE, r.stderr)


class DemoOutDir(unittest.TestCase):
    def test_a_missing_folder_is_created_with_its_parents(self):
        with tempfile.TemporaryDirectory() as d:
            target = os.path.join(d, "new", "nested")
            r = run(["demo", "--out-dir", target, "--quiet"], timeout=300)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertEqual(sorted(os.listdir(target)), ["sample_CAYMAN.bin", "sample_MARIANA.bin",
                                                          "sample_MARIANA_PLUS.bin", "sample_MAVERICK.bin"])
            # --quiet: the verdict line alone.
            self.assertEqual(r.stdout, "demo: every sample instruction is valid, and every stream runs to completion "
                                       "on the platform\n")

    def test_a_file_in_the_way_is_refused_before_anything_runs(self):
        with tempfile.TemporaryDirectory() as d:
            f = os.path.join(d, "file")
            with open(f, "w", encoding="utf-8") as h:
                h.write("x")
            r = run(["demo", "--out-dir", f])
            self.assertEqual((r.returncode, r.stdout), (2, ""))
            self.assertEqual(r.stderr, "pe-vp demo: --out-dir %s: exists and is not a folder (give a folder, or a "
                                       "path that does not exist yet)\n" % f)
            r = run(["demo", "--out-dir", os.path.join(f, "sub")])
            self.assertEqual((r.returncode, r.stdout), (2, ""))
            self.assertEqual(r.stderr, "pe-vp demo: --out-dir %s/sub: %s exists and is not a folder, so nothing can "
                                       "be created in it\n" % (f, f))


if __name__ == "__main__":
    unittest.main()
