#!/usr/bin/python3
"""scripts/fuzz.sh's command line: every bad argument is refused with status 2 and a message naming it, before
anything is configured or built; good ones get as far as the compiler check. (The fuzzing itself runs in .ci/run
and in the long runs of docs/reliability.md: it needs the clang build.)"""
import os
import subprocess
import tempfile
import unittest

SCRIPT = os.path.join(os.environ["PEVP_SOURCE_DIR"], "scripts", "fuzz.sh")
NO_CLANG = "/nonexistent/clang++"


class FuzzScriptArguments(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.build = os.path.join(self.tmp.name, "build-fuzz")

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *args):
        env = dict(os.environ, PEVP_FUZZ_BUILD_DIR=self.build, PEVP_FUZZ_CXX=NO_CLANG)
        return subprocess.run([SCRIPT, *args], env=env, capture_output=True, text=True, timeout=60)

    def assert_refused(self, args, message):
        r = self.run_script(*args)
        self.assertEqual(r.returncode, 2, (args, r.stdout, r.stderr))
        self.assertIn(message, r.stderr, args)
        self.assertFalse(os.path.exists(self.build), f"{args}: the build directory was created")

    def test_bad_arguments_are_refused_before_the_build(self):
        a_file = os.path.join(self.tmp.name, "a_file")
        open(a_file, "w").close()
        cases = [
            (["--runs"], "fuzz.sh: --runs needs a value"),
            (["--runs", "0"], "--runs needs a positive whole number (at most 18 digits), not '0'"),
            (["--runs", "1e6"], "not '1e6'"),
            (["--runs", "1234567890123456789"], "not '1234567890123456789'"),
            (["--jobs", "-2"], "--jobs needs a positive whole number (at most 18 digits), not '-2'"),
            (["--jobs", "257"], "--jobs 257: at most 256 worker processes"),
            (["--jobs"], "fuzz.sh: --jobs needs a value"),
            (["--corpus", ""], "--corpus needs a directory"),
            (["--corpus", a_file], f"--corpus: '{a_file}' exists and is not a directory"),
            (["--seeds-only", "--update-grown", "decode"],
             "--update-grown keeps the grown corpus; it cannot go with --seeds-only"),
            (["--update-grown", "60"], "--update-grown needs the targets named"),
            (["--frob"], "unknown option '--frob'"),
            (["-5"], "unknown option '-5'"),
            (["0"], "SECONDS needs a positive whole number (at most 18 digits), not '0'"),
            (["+30"], "not '+30'"),
            (["30", "decode", "nosuch"], "unknown target 'nosuch'"),
            (["--runs", "100", "decodes"], "unknown target 'decodes'"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                self.assert_refused(args, message)

    def test_without_xz_the_grown_corpora_are_named_before_the_build(self):
        # A PATH of every /usr/bin program but xz.
        bin_dir = os.path.join(self.tmp.name, "bin")
        os.mkdir(bin_dir)
        for name in os.listdir("/usr/bin"):
            if name not in ("xz", "unxz", "xzcat"):
                os.symlink(os.path.join("/usr/bin", name), os.path.join(bin_dir, name))
        env = dict(os.environ, PEVP_FUZZ_BUILD_DIR=self.build, PEVP_FUZZ_CXX=NO_CLANG, PATH=bin_dir)
        r = subprocess.run([SCRIPT, "30", "decode"], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("fuzz.sh: xz not found, which unpacks tests/fuzz/grown/decode.tar.xz", r.stderr)
        self.assertFalse(os.path.exists(self.build))
        r = subprocess.run([SCRIPT, "--update-grown", "30", "npy"], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("fuzz.sh: xz not found, which --update-grown packs the archives with", r.stderr)
        self.assertFalse(os.path.exists(self.build))
        # From the seeds alone, xz is not needed: on to the compiler check.
        r = subprocess.run([SCRIPT, "--seeds-only", "30", "decode"], env=env, capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(f"fuzz.sh: {NO_CLANG} not found", r.stderr)

    def test_help_lists_every_option(self):
        r = self.run_script("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for word in ("--runs N", "--jobs N", "--corpus DIR", "--seeds-only", "--update-grown", "SECONDS",
                     "Exit status"):
            self.assertIn(word, r.stdout)
        self.assertFalse(r.stdout.startswith("#"))
        self.assertFalse(os.path.exists(self.build))

    def test_good_arguments_reach_the_compiler_check(self):
        corpus = os.path.join(self.tmp.name, "corpus")
        for args in (["decode"], ["45"], ["--runs", "10000000", "--jobs", "2", "--corpus", corpus, "7200", "decode"],
                     ["--jobs", "1", "30", "npy", "regs"], ["--runs", "5"], ["--seeds-only", "30", "decode"],
                     ["--corpus", corpus, "--update-grown", "60", "config"]):
            with self.subTest(args=args):
                r = self.run_script(*args)
                self.assertEqual(r.returncode, 2, (args, r.stderr))
                self.assertIn(f"fuzz.sh: {NO_CLANG} not found", r.stderr)
                self.assertFalse(os.path.exists(corpus), "the corpus is made only when a fuzzer runs")


if __name__ == "__main__":
    unittest.main()
