#!/usr/bin/python3
"""Tests of scripts/sweep_plots.py on the hand-written tests/sweep/data/plots_sample.csv.

    /usr/bin/python3 tests/sweep/test_sweep_plots.py [-v]

The sample: workloads netA (conv1 x1, conv2 x2, fc x1) and netB (attn x1, mlp x3), swept over
p:geometry.pe_rows in {64, 128} and p:tile_n in {128, 512} (4 configurations, 20 rows), MARIANA bf16
(128 PE columns). Row 16 (netB/mlp at pe_rows=128, tile_n=512) failed, so that netB point is incomplete.
The expected values below are worked out by hand from the sample's cells.
"""

import atexit
import csv
import importlib.util
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "scripts", "sweep_plots.py")
SAMPLE = os.path.join(HERE, "data", "plots_sample.csv")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# a writable matplotlib config/cache dir whatever HOME is, so matplotlib prints nothing on stderr
MPLCONFIGDIR = tempfile.mkdtemp(prefix="sweep_plots_mpl.")
atexit.register(shutil.rmtree, MPLCONFIGDIR, True)

_spec = importlib.util.spec_from_file_location("sweep_plots", SCRIPT)
sp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sp)


def run(*args):
    env = dict(os.environ, MPLBACKEND="Agg", MPLCONFIGDIR=MPLCONFIGDIR)
    env.pop("DISPLAY", None)
    return subprocess.run([PYTHON, SCRIPT] + [str(a) for a in args], capture_output=True, text=True, env=env,
                          timeout=300)


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == PNG_MAGIC and head[12:16] == b"IHDR", path
    return struct.unpack(">II", head[16:24])


class SampleTestCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="sweep_plots_test.")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()


class PlotsTest(SampleTestCase):
    EXPECTED = ("time_vs_geometry.pe_rows.png", "time_vs_tile_n.png", "speedup_vs_geometry.pe_rows.png",
                "speedup_vs_tile_n.png", "util_vs_geometry.pe_rows.png", "util_vs_tile_n.png", "tflops_vs_tile_n.png",
                "stalls.png", "layers_netA.png", "layers_netB.png")
    # the sample has no acct:*, energy or mem:* columns: those plots say why they are absent
    SKIPPED = ("skip: accounting.png: no acct:* column", "skip: energy.png: no energy_pj column",
               "skip: roofline.png: no mem:intensity, mem:bandwidth_gbps column (a sweep through device memory, "
               "data_path = dma, has them)")

    def test_every_plot_written_and_valid_png(self):
        out = os.path.join(self.dir, "plots")  # created by the script
        p = run(SAMPLE, out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        lines = p.stdout.splitlines()
        written = [l for l in lines if l.endswith(".png")]
        self.assertEqual(written, [os.path.join(out, n) for n in self.EXPECTED])
        for path in written:
            self.assertGreater(os.path.getsize(path), 0, path)
            with open(path, "rb") as f:
                self.assertEqual(f.read(8), PNG_MAGIC, path)
            w, h = png_size(path)
            self.assertGreater(w, 100, path)
            self.assertGreater(h, 100, path)
        self.assertEqual(sorted(os.listdir(out)), sorted(self.EXPECTED + ("README.md", "report.json")))
        self.assertIn("skipped 1 row(s) with status failed", lines)
        self.assertIn("note: netB at geometry.pe_rows=128, tile_n=512 is incomplete (1 of 2 layer row(s) not ok): "
                      "left out of the network-level plots", lines)
        self.assertEqual([l for l in lines if l.startswith("skip:")], list(self.SKIPPED), p.stdout)
        # the index names every plot written, one line each
        with open(os.path.join(out, "README.md")) as f:
            index = f.read()
        for name in self.EXPECTED:
            self.assertIn("- [%s](%s): " % (name, name), index)

    def test_max_configs_truncates_and_says_so(self):
        p = run(SAMPLE, self.dir, "--max-configs", "2")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("note: layers_netA.png: 4 configurations, showing the first 2 (--max-configs)", p.stdout)
        self.assertIn("note: layers_netB.png: 4 configurations, showing the first 2 (--max-configs)", p.stdout)
        p = run(SAMPLE, self.dir, "--max-configs", "0")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--max-configs must be at least 1", p.stderr)

    def test_absent_inputs_skip_with_a_reason(self):
        path = os.path.join(self.dir, "bare.csv")
        write_csv(path, ["status", "workload", "layer", "count", "cycles", "utilisation"],
                  [["ok", "g1", "gemm", "1", "100", "0.5"], ["ok", "g2", "gemm", "1", "200", "0.25"]])
        p = run(path, os.path.join(self.dir, "out"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.splitlines(), [
            "skip: time_vs_<param>.png: no time_ns column",
            "skip: speedup_vs_<param>.png: no baseline (no configuration with time_ns complete for a workload)",
            "skip: util_vs_<param>.png: no p: column",
            "skip: tflops_vs_tile_n.png: no p:tile_n column",
            "skip: accounting.png: no acct:* column",
            "skip: energy.png: no energy_pj column",
            "skip: roofline.png: no mem:intensity, mem:bandwidth_gbps, tflops, peak_tflops column (a sweep through "
            "device memory, data_path = dma, has them)",
            "skip: stalls.png: no stall:* columns",
            "skip: layers_<workload>.png: no workload has more than one layer",
        ])
        self.assertEqual(os.listdir(os.path.join(self.dir, "out")), [])

    def test_single_valued_params_skip_and_string_params_are_categorical_axes(self):
        path = os.path.join(self.dir, "strs.csv")
        header = ["status", "workload", "layer", "count", "cycles", "utilisation", "p:tile_n", "p:dataflow",
                  "time_ns", "macs"]
        write_csv(path, header, [["ok", "w", "a", "1", "100", "0.5", "128", "ws", "50", "1000"],
                                 ["ok", "w", "a", "1", "120", "0.4", "128", "os", "60", "1000"]])
        p = run(path, self.dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        # a string parameter is a categorical axis (ws, os in the CSV's order), not skipped
        for name in ("util_vs_dataflow.png", "time_vs_dataflow.png", "speedup_vs_dataflow.png"):
            self.assertIn(os.path.join(self.dir, name), p.stdout.splitlines())
        self.assertNotIn("util_vs_tile_n.png", p.stdout)  # one value: no axis
        self.assertIn("skip: tflops_vs_tile_n.png: p:tile_n has one value (128)", p.stdout)


class NetworkMetricsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.results = sp.read_results(SAMPLE)
        cls.table = sp.network_table(cls.results)

    def test_configuration_columns(self):
        self.assertEqual(self.results.dims, ["p:geometry.pe_rows", "p:tile_n"])
        self.assertEqual(self.results.stall_cols, ["stall:sbuf_read", "stall:psum_bank"])
        self.assertEqual(len(self.results.rows), 20)
        self.assertEqual(len(self.results.ok), 19)
        self.assertEqual(self.results.skipped, {"failed": 1})
        self.assertEqual(list(self.table), [
            ("netA", ("64", "128")), ("netB", ("64", "128")), ("netA", ("64", "512")), ("netB", ("64", "512")),
            ("netA", ("128", "128")), ("netB", ("128", "128")), ("netB", ("128", "512")),
            ("netA", ("128", "512"))])

    def test_utilisation_by_hand(self):
        # util = sum(count * utilisation * cycles) / sum(count * cycles), cells copied from the sample
        expected = {
            ("netA", ("64", "128")): (1 * 0.236686 * 8112 + 2 * 0.621963 * 8232 + 1 * 0.260417 * 1536)
                                     / (8112 + 2 * 8232 + 1536),
            ("netA", ("64", "512")): (1 * 0.292505 * 6564 + 2 * 0.740741 * 6912 + 1 * 0.208333 * 1920)
                                     / (6564 + 2 * 6912 + 1920),
            ("netA", ("128", "128")): (1 * 0.232558 * 4128 + 2 * 0.602637 * 4248 + 1 * 0.193798 * 1032)
                                      / (4128 + 2 * 4248 + 1032),
            ("netA", ("128", "512")): (1 * 0.286738 * 3348 + 2 * 0.713489 * 3588 + 1 * 0.163399 * 1224)
                                      / (3348 + 2 * 3588 + 1224),
            ("netB", ("64", "128")): (1 * 0.634449 * 12912 + 3 * 0.628607 * 13032) / (12912 + 3 * 13032),
            ("netB", ("64", "512")): (1 * 0.783773 * 10452 + 3 * 0.777525 * 10536) / (10452 + 3 * 10536),
            ("netB", ("128", "128")): (1 * 0.627451 * 6528 + 3 * 0.616125 * 6648) / (6528 + 3 * 6648),
        }
        for key, util in expected.items():
            self.assertTrue(self.table[key]["complete"], key)
            self.assertAlmostEqual(self.table[key]["utilisation"], util, places=12, msg=key)
        # the numbers themselves: netA at (64, 128) = (1920.0 + 10240.0 + 400.0) / 26112 (to the cells' rounding)
        self.assertAlmostEqual(self.table[("netA", ("64", "128"))]["utilisation"], 12560 / 26112, places=6)
        self.assertAlmostEqual(self.table[("netA", ("64", "128"))]["utilisation"], 0.481005, places=6)
        self.assertAlmostEqual(self.table[("netB", ("128", "128"))]["utilisation"], 0.618918, places=6)
        # the sample is self-consistent: utilisation = macs / (pe_rows * 128 * cycles), so the network
        # figure also equals sum(count * macs) / (PEs * sum(count * cycles)) up to the 6-decimal rounding
        self.assertAlmostEqual(self.table[("netB", ("128", "128"))]["utilisation"],
                               (67108864 + 3 * 67108864) / (128 * 128 * (6528 + 3 * 6648)), places=6)
        self.assertAlmostEqual(self.table[("netA", ("64", "128"))]["utilisation"],
                               (15728640 + 2 * 41943040 + 3276800) / (64 * 128 * (8112 + 2 * 8232 + 1536)),
                               places=6)

    def test_incomplete_network_point(self):
        row = self.table[("netB", ("128", "512"))]
        self.assertFalse(row["complete"])
        self.assertEqual(row["cycles"], 5292)  # only attn is ok

    def test_cycles_tflops_stalls_by_hand(self):
        a = self.table[("netA", ("64", "128"))]
        self.assertEqual(a["cycles"], 8112 + 2 * 8232 + 1536)
        # flops / seconds / 1e12: 2 * (15728640 + 2*41943040 + 3276800) / ((3380 + 2*3430 + 640) * 1e-9) / 1e12
        self.assertAlmostEqual(a["tflops"], 205783040 / (10880 * 1e-9) / 1e12, places=9)
        self.assertAlmostEqual(a["tflops"], 18.913882352941, places=9)
        self.assertAlmostEqual(a["peak_tflops"], 39.3216, places=9)
        self.assertEqual(a["stalls"], {"stall:sbuf_read": 1920 + 2 * 1920 + 384, "stall:psum_bank": 304 + 2 * 288})
        b = self.table[("netB", ("128", "128"))]
        self.assertAlmostEqual(b["tflops"], 2 * (67108864 + 3 * 67108864) / ((2720 + 3 * 2770) * 1e-9) / 1e12,
                               places=9)
        self.assertEqual(b["stalls"], {"stall:sbuf_read": 1536 + 3 * 1536, "stall:psum_bank": 248 + 3 * 240})

    def test_single_layer_tflops_matches_the_row(self):
        for r in self.results.ok:
            self.assertAlmostEqual(sp.network_tflops([r.num]), r.num["tflops"], places=5, msg=r)

    def test_functions_on_hand_made_layers(self):
        layers = [{"count": 2, "cycles": 100, "utilisation": 0.5, "macs": 1e6, "time_ns": 1000, "peak_tflops": 10},
                  {"count": 1, "cycles": 200, "utilisation": 1.0, "m": 10, "k": 10, "n": 10, "time_ns": 500,
                   "peak_tflops": 40, "stall:x": 7}]
        self.assertEqual(sp.network_cycles(layers), 400)
        self.assertAlmostEqual(sp.network_utilisation(layers), (2 * 0.5 * 100 + 200) / 400)
        # (2*2*1e6 + 2*1000) flops in (2000 + 500) ns
        self.assertAlmostEqual(sp.network_tflops(layers), 4002000 / 2500e-9 / 1e12)
        self.assertAlmostEqual(sp.network_peak_tflops(layers), (2 * 10 * 1000 + 40 * 500) / 2500)
        self.assertEqual(sp.network_stalls(layers, ["stall:x"]), {"stall:x": 7})
        self.assertIsNone(sp.network_utilisation([]))
        self.assertIsNone(sp.network_tflops([{"count": 1, "cycles": 1, "utilisation": 1}]))

    def test_columns_read_by_name(self):
        with tempfile.TemporaryDirectory() as d:
            with open(SAMPLE, newline="") as f:
                rows = list(csv.reader(f))
            path = os.path.join(d, "reversed.csv")
            write_csv(path, rows[0][::-1], [r[::-1] for r in rows[1:]])
            results = sp.read_results(path)
            table = sp.network_table(results)

        def by_name(res, tab):
            return {(wl, tuple(sorted(zip(res.dims, config)))): v for (wl, config), v in tab.items()}
        self.assertEqual(results.dims, ["p:tile_n", "p:geometry.pe_rows"])
        self.assertEqual(by_name(results, table), by_name(self.results, self.table))

    def test_hidden_dimension_joins_the_configuration(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "gens.csv")
            write_csv(path, ["status", "workload", "layer", "count", "cycles", "utilisation", "gen", "dtype", "p:x"],
                      [["ok", "w", "a", "1", "100", "0.5", "MARIANA", "bf16", "1"],
                       ["ok", "w", "b", "1", "300", "0.1", "MARIANA", "fp8", "1"],
                       ["ok", "w", "a", "1", "200", "0.25", "CAYMAN", "bf16", "1"],
                       ["ok", "w", "b", "1", "200", "0.75", "CAYMAN", "fp8", "1"]])
            results = sp.read_results(path)
            table = sp.network_table(results)
        # gen tells the points apart; dtype (per layer here) does not join
        self.assertEqual(results.dims, ["p:x", "gen"])
        self.assertAlmostEqual(table[("w", ("1", "MARIANA"))]["utilisation"], (50 + 30) / 400)
        self.assertAlmostEqual(table[("w", ("1", "CAYMAN"))]["utilisation"], (50 + 150) / 400)


class ScaleSimTest(SampleTestCase):
    HEADER = ("LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %, "
              "Configuration, Workload, Key,")

    def test_compute_report(self):
        p = run(SAMPLE, self.dir, "--format", "scalesim")
        self.assertEqual(p.returncode, 0, p.stderr)
        report = os.path.join(self.dir, "COMPUTE_REPORT.csv")
        self.assertEqual(p.stdout.splitlines(), ["skipped 1 row(s) with status failed", report])
        self.assertEqual(os.listdir(self.dir), ["COMPUTE_REPORT.csv"])  # no plots
        with open(report, newline="") as f:
            text = f.read()
        lines = text.split("\n")
        self.assertEqual(lines[0], self.HEADER)
        self.assertEqual(lines[-1], "")  # newline-terminated
        body = lines[1:-1]
        self.assertEqual(len(body), 19)
        for line in body:
            self.assertTrue(line.endswith(","), line)
            self.assertEqual(len(line[:-1].split(", ")), 9, line)
        ids = [int(l.split(", ")[0]) for l in body]
        self.assertEqual(ids, [i for i in range(20) if i != 16])  # the failed row's index is missing
        by_id = {int(l.split(", ")[0]): l for l in body}
        # netA/conv1 at pe_rows=64: k=96 m=64 -> 96*64 / (2*64 * 1*128) = 37.5 %; stalls 1920 + 304
        self.assertEqual(by_id[0], "0, 8112, 2224, 23.6686, 37.5, 23.6686, geometry.pe_rows=64;tile_n=128, netA, "
                         "f3e03c812910f917,")
        # netA/conv2: k=256 m=128 fill the array
        self.assertEqual(by_id[1], "1, 8232, 2208, 62.1963, 100.0, 62.1963, geometry.pe_rows=64;tile_n=128, netA, "
                         "76ab5ce9a50e92cb,")
        # netA/fc: k=512 m=100 -> 512*100 / (512 * 128) = 78.125 %; stalls 384 + 0
        self.assertEqual(by_id[2], "2, 1536, 384, 26.0417, 78.125, 26.0417, geometry.pe_rows=64;tile_n=128, netA, "
                         "92cc804347c4c6e5,")
        # netA/conv1 at pe_rows=128: 96*64 / (128 * 128) = 37.5 %
        self.assertEqual(by_id[17], "17, 3348, 576, 28.6738, 37.5, 28.6738, geometry.pe_rows=128;tile_n=512, netA, "
                         "8425c34eada98652,")
        # netB/attn at pe_rows=128, tile_n=512 (its mlp failed): stalls 768 + 168
        self.assertEqual(by_id[15], "15, 5292, 936, 77.3998, 100.0, 77.3998, geometry.pe_rows=128;tile_n=512, netB, "
                         "2d86ec42add086ed,")

    def test_array_columns_and_generation_default(self):
        path = os.path.join(self.dir, "arr.csv")
        write_csv(path, ["status", "workload", "layer", "count", "m", "k", "cycles", "utilisation", "gen",
                         "array_rows", "array_cols"],
                  [["ok", "w", "a", "1", "100", "40", "1000", "0.5", "MARIANA", "32", "64"],
                   ["ok", "w", "b", "1", "300", "200", "2000", "0.125", "MAVERICK", "", ""],
                   ["ok", "w", "c", "1", "300", "200", "2000", "0.125", "MARIANA", "", ""]])
        out = os.path.join(self.dir, "out")
        p = run(path, out, "--format", "scalesim")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("note: no stall:* columns: Stall Cycles is 0", p.stdout)
        with open(os.path.join(out, "COMPUTE_REPORT.csv")) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines, [
            self.HEADER,
            # 40*100 / (ceil(40/32)*32 * ceil(100/64)*64) = 4000 / (64 * 128)
            "0, 1000, 0, 50.0, 48.828125, 50.0, default, w, ,",
            # MAVERICK default 128 x 256: 200*300 / (256 * 512)
            "1, 2000, 0, 12.5, 45.776367, 12.5, default, w, ,",
            # MARIANA default 128 x 128: 200*300 / (256 * 384)
            "2, 2000, 0, 12.5, 61.035156, 12.5, default, w, ,",
        ])
        self.assertEqual(sp.mapping_efficiency(96, 64, 64, 128), 0.375)
        self.assertEqual(sp.mapping_efficiency(128, 128, 128, 128), 1.0)


class ErrorPathTest(SampleTestCase):
    def assertExit2(self, p, message):
        self.assertEqual(p.returncode, 2, (p.stdout, p.stderr))
        self.assertIn(message, p.stderr)
        self.assertTrue(p.stderr.startswith("sweep_plots.py: error: "), p.stderr)

    def test_missing_file(self):
        missing = os.path.join(self.dir, "nope.csv")
        p = run(missing, os.path.join(self.dir, "out"))
        self.assertExit2(p, "%s: no such file" % missing)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "out")))

    def test_directory_instead_of_file(self):
        self.assertExit2(run(self.dir, os.path.join(self.dir, "out")), "%s: is a directory" % self.dir)

    def test_empty_file(self):
        path = os.path.join(self.dir, "empty.csv")
        open(path, "w").close()
        self.assertExit2(run(path, self.dir), "%s: empty file (no header row)" % path)

    def test_missing_columns_are_named(self):
        path = os.path.join(self.dir, "cols.csv")
        write_csv(path, ["status", "workload", "layer", "count", "m"], [["ok", "w", "a", "1", "4"]])
        p = run(path, os.path.join(self.dir, "out"))
        self.assertExit2(p, "%s: missing required column(s): cycles, utilisation (has: status, workload, layer, "
                            "count, m)" % path)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "out")))

    def test_scalesim_needs_m_and_k(self):
        path = os.path.join(self.dir, "nomk.csv")
        write_csv(path, ["status", "workload", "layer", "count", "cycles", "utilisation", "n"],
                  [["ok", "w", "a", "1", "10", "0.5", "4"]])
        self.assertExit2(run(path, self.dir, "--format", "scalesim"), "missing required column(s): m, k")
        self.assertEqual(run(path, os.path.join(self.dir, "png")).returncode, 0)  # the plots do not need them

    def test_bad_values_in_ok_rows(self):
        header = ["status", "workload", "layer", "count", "cycles", "utilisation", "stall:x"]
        path = os.path.join(self.dir, "bad.csv")
        write_csv(path, header, [["failed", "w", "a", "1", "", "", ""], ["ok", "w", "b", "1", "abc", "0.5", ""]])
        self.assertExit2(run(path, self.dir), "%s:3: cycles = 'abc' is not a number (w/b)" % path)
        write_csv(path, header, [["ok", "w", "b", "1", "", "0.5", ""]])
        self.assertExit2(run(path, self.dir), "%s:2: status ok but cycles is empty (w/b)" % path)
        write_csv(path, header, [["ok", "w", "b", "1", "5", "0.5", "nan"]])
        self.assertExit2(run(path, self.dir), "%s:2: stall:x = 'nan' is not a number (w/b)" % path)

    def test_out_dir_is_a_file(self):
        target = os.path.join(self.dir, "afile")
        open(target, "w").close()
        self.assertExit2(run(SAMPLE, target), "%s: output directory is an existing file" % target)
        self.assertExit2(run(SAMPLE, target, "--format", "scalesim"),
                         "%s: output directory is an existing file" % target)

    def test_out_dir_cannot_be_created(self):
        target = os.path.join(self.dir, "afile", "sub")
        open(os.path.join(self.dir, "afile"), "w").close()
        self.assertExit2(run(SAMPLE, target), "%s: cannot create output directory: Not a directory" % target)

    @unittest.skipIf(hasattr(os, "geteuid") and os.geteuid() == 0, "root can write to a read-only directory")
    def test_out_dir_read_only(self):
        target = os.path.join(self.dir, "ro")
        os.mkdir(target, 0o500)
        try:
            self.assertExit2(run(SAMPLE, target), "%s: output directory is not writable: Permission denied" % target)
        finally:
            os.chmod(target, 0o700)


if __name__ == "__main__":
    unittest.main()
