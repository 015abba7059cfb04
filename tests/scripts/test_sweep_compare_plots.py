#!/usr/bin/python3
"""scripts/sweep_plots.py through its command line, on a tiny synthetic sweep whose figures are worked out by hand:
the baseline and the speedups, a string parameter as a categorical axis, the roofline's ceilings, the fp8 note, the
configuration column of COMPUTE_REPORT.csv, and the refusal of a bad baseline.

    /usr/bin/python3 tests/scripts/test_sweep_compare_plots.py [-v]

The sweep: one workload "net" of two layers, L1 (m = k = n = 64, count 1: 262144 MACs) and L2 (m = 128, k = n = 64,
count 2: 524288 MACs), so 2 x (262144 + 2 x 524288) = 2621440 operations per run, on four configurations:

  c1  64 x 64,   bf16,       double_row false  L1 1000 ns, L2 2000 ns -> 1000 + 2 x 2000 = 5000 ns
  c2  64 x 64,   fp8_e4m3fn, double_row true   L1  600 ns, L2 1100 ns -> 2800 ns
  c3  128 x 128, bf16,       double_row false  L1  400 ns, L2  800 ns -> 2000 ns (the fastest)
  c4  128 x 128, fp8_e4m3fn, double_row false  L1  400 ns, L2  810 ns -> 2020 ns (fp8 at the bf16 rate)

energies (pJ, L1 / L2): c1 1e6 / 2e6 -> 5e6; c2 0.4e6 / 0.7e6 -> 1.8e6; c3 0.8e6 / 1.6e6 -> 4e6; c4 0.6e6 / 1.2e6
-> 3e6, so TOPS/W = 2621440 / energy: c1 0.524288, c2 1.456356 (the most efficient), c3 0.65536, c4 0.873813.
"""

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.environ.get("PEVP_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "sweep_plots.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

HEADER = ["key", "status", "error", "workload", "layer", "count", "m", "k", "n", "macs", "gen", "dtype",
          "p:geometry.pe_rows", "p:geometry.pe_cols", "p:dtype", "p:double_row", "cycles", "time_ns", "utilisation",
          "tflops", "peak_tflops", "energy_pj", "power_w", "tops_per_w", "edp_pj_s", "stall:dependency",
          "stall:ififo_full", "acct:mapping", "acct:not_streaming", "acct:useful", "mem:intensity",
          "mem:bandwidth_gbps"]
# (rows, dtype, double_row, peak_tflops, bandwidth_gbps, (L1 ns, L2 ns), (L1 pJ, L2 pJ))
# peak = 2 x R x C x 2.4 GHz: 64 x 64 bf16 19.6608, double_row twice it; 128 x 128 78.6432 (bf16 and plain fp8)
CONFIGS = [
    (64, "bf16", "false", 19.6608, 612.5, (1000, 2000), (1e6, 2e6)),
    (64, "fp8_e4m3fn", "true", 39.3216, 612.5, (600, 1100), (0.4e6, 0.7e6)),
    (128, "bf16", "false", 78.6432, 306.25, (400, 800), (0.8e6, 1.6e6)),
    (128, "fp8_e4m3fn", "false", 78.6432, 306.25, (400, 810), (0.6e6, 1.2e6)),
]
LAYERS = [("L1", 1, 64, 64, 64), ("L2", 2, 128, 64, 64)]


def sweep_rows(configs=CONFIGS):
    rows = []
    for ci, (side, dtype, dr, peak, bw, times, energies) in enumerate(configs):
        for li, (name, count, m, k, n) in enumerate(LAYERS):
            macs = m * k * n
            ns = times[li]
            tflops = 2 * macs / (ns * 1e-9) / 1e12
            rows.append(["k%d%d" % (ci, li), "ok", "", "net", name, count, m, k, n, macs, "MARIANA", dtype, side, side,
                         dtype, dr, ns * 2.4, ns, tflops / peak, tflops, peak, energies[li], 0, 0, 0, 10, 500,
                         0.1, 0.3, 0.6, 8 + li, bw])
    return rows


def write_csv(path, rows, header=HEADER):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    return path


def run(*args):
    env = dict(os.environ, MPLBACKEND="Agg", MPLCONFIGDIR=MPL)
    env.pop("DISPLAY", None)
    return subprocess.run([PYTHON, SCRIPT] + [str(a) for a in args], capture_output=True, text=True, env=env,
                          timeout=300)


MPL = tempfile.mkdtemp(prefix="sweep_compare_mpl.")


class CompareTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sweep_compare.")
        cls.csv = write_csv(os.path.join(cls.tmp, "results.csv"), sweep_rows())
        cls.out = os.path.join(cls.tmp, "plots")
        cls.p = run(cls.csv, cls.out, "--baseline", "geometry.pe_rows=64", "--baseline", "dtype=bf16")
        with open(os.path.join(cls.out, "report.json")) as f:
            cls.report = json.load(f)
        with open(os.path.join(cls.out, "README.md")) as f:
            cls.readme = f.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    def network(self, **values):
        match = [n for n in self.report["networks"] if all(n["values"][k] == v for k, v in values.items())]
        self.assertEqual(len(match), 1, values)
        return match[0]

    def test_runs_and_writes_every_comparison(self):
        self.assertEqual(self.p.returncode, 0, self.p.stderr)
        written = [os.path.basename(l) for l in self.p.stdout.splitlines() if l.startswith(self.out)]
        for name in ("time_vs_geometry.pe_rows.png", "speedup_vs_geometry.pe_rows.png", "time_vs_dtype.png",
                     "speedup_vs_dtype.png", "util_vs_dtype.png", "accounting.png", "energy.png", "roofline.png",
                     "stalls.png", "layers_net.png", "README.md", "report.json"):
            self.assertIn(name, written)
        # pe_cols is zipped with pe_rows: one axis, named with its twin
        self.assertNotIn("time_vs_geometry.pe_cols.png", written)
        self.assertIn("How long does each network take as geometry.pe_rows (with geometry.pe_cols) changes?",
                      self.readme)

    def test_named_baseline_and_speedups_by_hand(self):
        self.assertEqual(self.report["baseline"]["values"],
                         {"geometry.pe_rows": "64", "geometry.pe_cols": "64", "dtype": "bf16", "double_row": "false"})
        self.assertIn("baseline: geometry.pe_rows=64, geometry.pe_cols=64, dtype=bf16, double_row=false (named by the "
                      "sweep's [plots] baseline (--baseline geometry.pe_rows=64, dtype=bf16))", self.p.stdout)
        # speedup = 5000 ns / the configuration's time
        self.assertAlmostEqual(self.network(dtype="bf16", **{"geometry.pe_rows": "64"})["speedup"], 1.0)
        self.assertAlmostEqual(self.network(dtype="fp8_e4m3fn", **{"geometry.pe_rows": "64"})["speedup"], 5000 / 2800)
        self.assertAlmostEqual(self.network(dtype="bf16", **{"geometry.pe_rows": "128"})["speedup"], 2.5)
        self.assertAlmostEqual(self.network(dtype="fp8_e4m3fn", **{"geometry.pe_rows": "128"})["speedup"], 5000 / 2020)
        self.assertAlmostEqual(self.network(dtype="bf16", **{"geometry.pe_rows": "128"})["time_ms"], 0.002)

    def test_default_baseline_is_the_first_complete_configuration_and_says_so(self):
        out = os.path.join(self.tmp, "default")
        p = run(self.csv, out, "--format", "png")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("baseline: geometry.pe_rows=64, geometry.pe_cols=64, dtype=bf16, double_row=false (the first "
                      "configuration in the CSV with every workload complete; [plots] baseline = {...} in the spec "
                      "(or --baseline NAME=VALUE) names another)", p.stdout.splitlines())
        # c1 (the first configuration) is incomplete here: the first complete one, c2, is taken
        rows = sweep_rows()
        rows[1][1], rows[1][16:] = "failed", [""] * (len(HEADER) - 16)
        p = run(write_csv(os.path.join(self.tmp, "c1failed.csv"), rows), os.path.join(self.tmp, "c1failed"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("baseline: geometry.pe_rows=64, geometry.pe_cols=64, dtype=fp8_e4m3fn, double_row=true (the "
                      "first configuration in the CSV with every workload complete", p.stdout)

    def test_the_answer_names_the_fastest_and_the_most_efficient(self):
        answer = self.report["answer"]["net"]
        self.assertEqual(answer["fastest"]["configuration"],
                         "geometry.pe_rows=128, geometry.pe_cols=128, dtype=bf16, double_row=false")
        self.assertAlmostEqual(answer["fastest"]["time_ms"], 0.002)
        self.assertEqual(answer["most_efficient"]["configuration"],
                         "geometry.pe_rows=64, geometry.pe_cols=64, dtype=fp8_e4m3fn, double_row=true")
        self.assertAlmostEqual(answer["most_efficient"]["tops_per_w"], 2621440 / 1.8e6)
        # the accounting explains: 30% not_streaming, 10% mapping (every layer's shares, weighted alike)
        self.assertAlmostEqual(answer["fastest"]["accounting"]["not_streaming"], 0.3)
        self.assertIn("- Fastest: geometry.pe_rows=128, geometry.pe_cols=128, dtype=bf16, double_row=false, 0.002 ms "
                      "(2.50x the baseline)", self.readme)
        self.assertIn("its PE-cycles not useful: not_streaming 30%, mapping 10%", self.readme)

    def test_string_parameter_is_a_categorical_axis(self):
        axes = {a["parameter"]: a for a in self.report["axes"]}
        self.assertEqual(axes["dtype"], {"parameter": "dtype", "kind": "categorical", "values": ["bf16", "fp8_e4m3fn"]})
        self.assertEqual(axes["geometry.pe_rows"]["kind"], "numeric")
        self.assertNotIn("geometry.pe_cols", axes)  # zipped with pe_rows
        self.assertNotIn("non-numeric", self.p.stdout)

    def test_roofline_ceilings_from_the_configuration(self):
        ceilings = {c["configuration"]: c for c in self.report["roofline"]}
        # 64 x 64 bf16 at 2.4 GHz: 2 x 64 x 64 x 2.4e9 = 19.6608 TFLOPS; HBM 612.5 GB/s; the ridge where
        # intensity x 612.5e9 = 19.6608e12: 32.0993 flop/byte
        c1 = ceilings["pe_rows=64, dtype=bf16, double_row=false"]
        self.assertAlmostEqual(c1["peak_tflops"], 19.6608)
        self.assertAlmostEqual(c1["bandwidth_gbps"], 612.5)
        self.assertAlmostEqual(c1["ridge_flop_per_byte"], 19660.8 / 612.5)
        # 128 x 128 bf16 at half the bandwidth: 78.6432 TFLOPS, 306.25 GB/s, ridge 256.794 flop/byte
        c3 = ceilings["pe_rows=128, dtype=bf16, double_row=false"]
        self.assertAlmostEqual(c3["peak_tflops"], 78.6432)
        self.assertAlmostEqual(c3["ridge_flop_per_byte"], 78643.2 / 306.25)
        # fp8 double_row's peak is twice bf16's on the same array
        self.assertAlmostEqual(ceilings["pe_rows=64, dtype=fp8_e4m3fn, double_row=true"]["peak_tflops"], 39.3216)

    def test_fp8_note_exactly_when_fp8_runs_without_double_row(self):
        note = ("note: dtype fp8_e4m3fn ran without double_row, so at the bf16 rate (one contraction row per "
                "partition: the same cycles and peak as bf16): set double_row = true in the spec ([set] or [grid]) to "
                "contract two fp8 rows per partition, twice the rate")
        self.assertEqual([l for l in self.p.stdout.splitlines() if "double_row" in l and l.startswith("note:")],
                         [note])
        self.assertIn(note[len("note: "):], self.readme)
        # c4 with double_row: no note
        configs = [c if c[0] != 128 or c[1] != "fp8_e4m3fn" else c[:2] + ("true",) + c[3:] for c in CONFIGS]
        out = os.path.join(self.tmp, "with_double_row")
        p = run(write_csv(os.path.join(self.tmp, "dr.csv"), sweep_rows(configs)), out, "--format", "scalesim")
        self.assertEqual(p.returncode, 0, p.stderr)
        p = run(os.path.join(self.tmp, "dr.csv"), out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("bf16 rate", p.stdout)
        with open(os.path.join(out, "report.json")) as f:
            self.assertEqual(json.load(f)["notes"], [])

    def test_the_sweeps_own_notes_come_first(self):
        # Beside pe-vp sweep's summary.json the notes are the plan's (it knows a double_row fixed in [set], which no
        # p: column shows): here none, though c4's row has no p:double_row = true.
        d = os.path.join(self.tmp, "with_summary")
        os.makedirs(d)
        shutil.copy(self.csv, os.path.join(d, "results.csv"))
        with open(os.path.join(d, "summary.json"), "w") as f:
            json.dump({"notes": ["the plan's own note"]}, f)
        p = run(os.path.join(d, "results.csv"), os.path.join(d, "plots"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([l for l in p.stdout.splitlines() if l.startswith("note: ")], ["note: the plan's own note"])

    def test_compute_report_separates_configurations(self):
        out = os.path.join(self.tmp, "report")
        p = run(self.csv, out, "--format", "scalesim")
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "COMPUTE_REPORT.csv")) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, "
                                   "Compute Util %, Configuration, Workload, Key,")
        by_config = {}
        for line in lines[1:]:
            fields = line[:-1].split(", ")
            by_config.setdefault(fields[6], []).append((fields[0], fields[8]))
        self.assertEqual(by_config, {
            "geometry.pe_rows=64;geometry.pe_cols=64;dtype=bf16;double_row=false": [("0", "k00"), ("1", "k01")],
            "geometry.pe_rows=64;geometry.pe_cols=64;dtype=fp8_e4m3fn;double_row=true": [("2", "k10"), ("3", "k11")],
            "geometry.pe_rows=128;geometry.pe_cols=128;dtype=bf16;double_row=false": [("4", "k20"), ("5", "k21")],
            "geometry.pe_rows=128;geometry.pe_cols=128;dtype=fp8_e4m3fn;double_row=false": [("6", "k30"),
                                                                                            ("7", "k31")]})

    def test_bad_baseline_is_refused_naming_the_key_and_its_values(self):
        out = os.path.join(self.tmp, "bad")
        cases = [
            (("dtype=int4",), "--baseline dtype=int4: not a value of dtype in %s (it takes: bf16, fp8_e4m3fn)"
             % self.csv),
            (("tile_n=128",), "--baseline tile_n: not a swept parameter of %s (swept: geometry.pe_rows, "
                              "geometry.pe_cols, dtype, double_row)" % self.csv),
            (("geometry.pe_rows=128",), "--baseline geometry.pe_rows=128: selects 2 configurations; give also dtype "
                                        "(bf16, fp8_e4m3fn)"),
            (("dtype",), "--baseline 'dtype': expected NAME=VALUE"),
            (("geometry.pe_rows=64", "double_row=true", "dtype=bf16"),
             "--baseline geometry.pe_rows=64, double_row=true, dtype=bf16: no configuration of %s has these values "
             "together" % self.csv),
        ]
        for args, message in cases:
            argv = [self.csv, out]
            for a in args:
                argv += ["--baseline", a]
            p = run(*argv)
            self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
            self.assertEqual(p.stderr, "sweep_plots.py: error: " + message + "\n" if "expected" not in message
                             else p.stderr)
            self.assertIn(message, p.stderr)
        # a number is matched as a number: 64.0 names 64
        p = run(self.csv, out, "--baseline", "geometry.pe_rows=64.0", "--baseline", "dtype=bf16")
        self.assertEqual(p.returncode, 0, p.stderr)


if __name__ == "__main__":
    try:
        unittest.main()
    finally:
        shutil.rmtree(MPL, True)
