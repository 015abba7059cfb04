"""pe_array.impl = rtl through the binary: the Verilated PE tile computes a GEMM's arithmetic bit for bit as the C++
executor does (bf16 and fp16, K tiled into accumulation groups, M tiled over two stationaries), its cycles stay
within 10% of the cost model's, the run says which implementation ran, and what the tile cannot run is refused up
front -- a configuration at validation, an instruction at its issue with its index, field and reason. Run with
/usr/bin/python3 (ctest: cli.pe_array_rtl; skipped, 77, in a build without the tile's RTL)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

PEVP = os.environ["PEVP_BIN"]
ENV = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
ARRAY_32 = ["--set", "geometry.pe_rows=32", "--set", "geometry.pe_cols=32"]
RTL = ARRAY_32 + ["--set", "pe_array.impl=rtl"]
SHAPE = ["--gen", "MARIANA", "--m", "64", "--k", "96", "--n", "256", "--seed", "3"]


def run(args, cwd=None):
    return subprocess.run([PEVP, *args], env=ENV, capture_output=True, text=True, timeout=600, cwd=cwd)


def gemm(d, tag, dtype, extra):
    out, stats = os.path.join(d, tag + ".npy"), os.path.join(d, tag + ".json")
    r = run(["gemm", *SHAPE, "--dtype", dtype, "--out", out, "--stats-json", stats, *extra])
    return r, out, stats


class PeArrayRtl(unittest.TestCase):
    def test_gemms_are_bit_identical_and_within_ten_percent_of_the_cost_model(self):
        with tempfile.TemporaryDirectory() as d:
            for dtype in ("bf16", "fp16"):
                with self.subTest(dtype=dtype):
                    cpp, cpp_out, cpp_stats = gemm(d, "cpp-" + dtype, dtype, ARRAY_32)
                    rtl, rtl_out, rtl_stats = gemm(d, "rtl-" + dtype, dtype, RTL)
                    self.assertEqual(cpp.returncode, 0, cpp.stderr)
                    self.assertEqual(rtl.returncode, 0, rtl.stderr)
                    with open(cpp_out, "rb") as a, open(rtl_out, "rb") as b:
                        self.assertEqual(a.read(), b.read(), "C differs between the C++ executor and the RTL tile")
                    self.assertIn("pe-vp: datapath RTL in use (pe_array.impl = rtl)", rtl.stderr)
                    self.assertNotIn("datapath RTL in use", cpp.stderr)
                    with open(cpp_stats) as f:
                        s_cpp = json.load(f)
                    with open(rtl_stats) as f:
                        s_rtl = json.load(f)
                    self.assertEqual(s_rtl["array_implementation"], "RTL tile 32x32")
                    self.assertNotIn("array_implementation", s_cpp)
                    self.assertIn("array: RTL tile 32x32 (pe_array.impl = rtl)", rtl.stdout)
                    # The same work, timed by the tile's clock against the cost model's figures.
                    self.assertEqual(s_rtl["macs"], s_cpp["macs"])
                    self.assertEqual(s_rtl["macs"], 64 * 96 * 256)
                    ratio = s_rtl["cycles"] / s_cpp["cycles"]
                    print(f"{dtype}: cost model {s_cpp['cycles']} cycles, RTL tile {s_rtl['cycles']} "
                          f"cycles ({100 * (ratio - 1):+.1f}%)", file=sys.stderr)
                    self.assertLess(abs(ratio - 1), 0.10, (s_cpp["cycles"], s_rtl["cycles"]))

    def test_features_the_tile_does_not_run_are_refused_at_the_instruction(self):
        cases = [
            (["--dtype", "fp32", "--fp32-mode", "high"], "in_dtype = 10: the RTL tile multiplies BFLOAT16 and FP16 only"),
            (["--dtype", "fp8_e4m3fn"], "in_dtype = 14: the RTL tile multiplies BFLOAT16 and FP16 only"),
            (["--dtype", "mxfp8_e4m3"], "the RTL tile takes no MX source"),
            (["--dtype", "bf16", "--sparsity", "2:4"], "the RTL tile has no structured sparsity"),
        ]
        for extra, message in cases:
            with self.subTest(extra=extra):
                r = run(["gemm", "--gen", "MARIANA", "--m", "32", "--k", "32", "--n", "64", "--no-check", *RTL,
                         *extra])
                self.assertNotEqual(r.returncode, 0, r.stdout)
                text = r.stdout + r.stderr
                self.assertIn(message, text)
                self.assertIn("exec.datapath", text)
                self.assertIn("instruction 0", text)

    def test_a_program_with_a_transposing_load_faults_at_that_instruction(self):
        with tempfile.TemporaryDirectory() as d:
            program = os.path.join(d, "xpose.pes")
            with open(program, "w", encoding="utf-8") as f:
                f.write(".gen MARIANA\n"
                        "ldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=32 num_active_cols=32 "
                        "row_grp=0xF col_grp=0xF\n"
                        "ldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=32 num_active_cols=32 "
                        "row_grp=0xF col_grp=0xF flags.xpose_mode=1\n")
            r = run(["run", program, *RTL])
            text = r.stdout + r.stderr
            self.assertNotEqual(r.returncode, 0, text)
            self.assertIn("instruction 1", text)
            self.assertIn("xpose_mode = 1: the RTL tile has no transpose path", text)

    def test_a_pe_register_write_and_a_mixed_dtype_matmul_fault_at_their_instruction(self):
        programs = {
            "regwrite.pes": (".gen MARIANA\n"
                             "pe_reg_write reg_addr=0x10 imm_value=0x3f800000 src=sbuf[0]+0x40:[1,1] row_grp=0xF "
                             "col_grp=0xF\n",
                             "instruction 0 (PE_REG_WRITE): reg_addr = 16: RTL tile 32x32 has no PE registers"),
            "mixed.pes": (".gen MARIANA\n"
                          "ldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=32 num_active_cols=32 "
                          "row_grp=0xF col_grp=0xF\n"
                          "matmul src=sbuf[0]+0x1000:[1,16] in_dtype=fp16 num_active_rows=32 num_active_cols=32 "
                          "row_grp=0xF col_grp=0xF psum_accumulate_flags=SINGLE dst=psum[0]:[1,16]\n",
                          "instruction 1 (MATMUL): in_dtype = 7: the tile's stationary was loaded as BFLOAT16"),
        }
        with tempfile.TemporaryDirectory() as d:
            for name, (text, message) in programs.items():
                with self.subTest(program=name):
                    path = os.path.join(d, name)
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(text)
                    r = run(["run", path, *RTL])
                    out = r.stdout + r.stderr
                    self.assertNotEqual(r.returncode, 0, out)
                    self.assertIn(message, out)
                    self.assertIn("[exec.datapath]", out)
                    # The C++ executor runs the same program.
                    self.assertEqual(run(["run", path, *ARRAY_32]).returncode, 0)

    def test_configurations_the_tile_cannot_run_are_refused_at_validation(self):
        default_size = run(["gemm", "--m", "8", "--k", "8", "--n", "8", "--set", "pe_array.impl=rtl"])
        self.assertEqual(default_size.returncode, 2)
        self.assertIn('pe_array.impl = "rtl"', default_size.stderr)
        self.assertIn("the RTL tile was built for", default_size.stderr)
        self.assertIn("not a 128x128 array", default_size.stderr)
        timing = run(["gemm", "--m", "8", "--k", "8", "--n", "8", *RTL, "--mode", "timing"])
        self.assertEqual(timing.returncode, 2)
        self.assertIn("mode = timing executes no arithmetic", timing.stderr)
        unknown = run(["gemm", "--set", "pe_array.impl=verilog"])
        self.assertEqual(unknown.returncode, 2)
        self.assertIn("unknown implementation (cpp, rtl)", unknown.stderr)


if __name__ == "__main__":
    probe = run(["--dump-config", *RTL])
    if probe.returncode != 0 and "no PE tile RTL" in probe.stderr:
        print("skipped: " + probe.stderr.strip())
        sys.exit(77)
    unittest.main()
