#!/usr/bin/python3
"""PNG plots of a `pe-vp sweep` results CSV, or a SCALE-Sim style COMPUTE_REPORT.csv.

    sweep_plots.py RESULTS_CSV OUT_DIR                      # PNG plots, README.md and report.json into OUT_DIR
    sweep_plots.py RESULTS_CSV OUT_DIR --baseline dtype=bf16 --baseline geometry.pe_rows=128
    sweep_plots.py RESULTS_CSV OUT_DIR --max-configs 8      # per-layer plots: the first 8 configurations
    sweep_plots.py RESULTS_CSV OUT_DIR --format scalesim    # OUT_DIR/COMPUTE_REPORT.csv, no plots

Options: --format png|scalesim (default png: the plots below; scalesim: only COMPUTE_REPORT.csv);
--baseline NAME=VALUE, repeated (the speedups' baseline configuration by its swept values: NAME a p: column
without its prefix, or gen / dtype when they join the configuration; `pe-vp sweep` passes the spec's
[plots] baseline; without it the first configuration in the CSV with every workload complete, and stdout
says so); --max-configs N (default: every configuration in each layers_<workload>.png). OUT_DIR is created
if missing; files already there with the same names are overwritten.

Input
-----
RESULTS_CSV has one row per sweep point; columns are read by name, in any order:

  identity    key, status (ok | failed), error, workload, layer, count (times the layer runs in the
              network), m, k, n, macs (m*k*n of one run), gen, dtype
  parameters  every column named p:<name> (p:geometry.pe_rows, p:tile_n, ...), numbers or strings
  metrics     cycles, time_ns, utilisation (0..1), tflops, peak_tflops, stall:<reason>, instr:<opcode>, wall_s

Required columns: status, workload, layer, count, cycles, utilisation (and m, k with --format scalesim).
Rows whose status is not `ok` have empty metrics: they are left out and their number is printed.
An `ok` row must have numbers in count, cycles and utilisation; any other metric it has must be a number.

Configurations and networks
---------------------------
A configuration is one combination of the values of every p: column. If a workload still has the same
layer twice within one configuration, the sweep varied something no p: column names, so `gen` and then
`dtype` join the configuration (only where that is needed, and they then show in the labels).
A network point is one (workload, configuration): the layers of that workload in that configuration.
A network point with a failed layer is incomplete and is left out of the network-level plots (1-3),
which would otherwise understate its cycles; stdout says which.

Network-level metrics, over the ok layers L of a network point, each weighted by count(L):

  cycles       sum(count * cycles)
  utilisation  sum(count * utilisation * cycles) / sum(count * cycles)
               (cycle-weighted; equal to sum(count * macs) / (PEs * sum(count * cycles)) when the rows'
               utilisation is macs / (PEs * cycles))
  tflops       flops / seconds / 1e12 with flops = sum(count * 2 * macs) and
               seconds = sum(count * time_ns) * 1e-9, i.e. sum(count * 2 * macs) / sum(count * time_ns) / 1e3
               (macs falls back to m*k*n where the macs cell is empty)
  peak_tflops  sum(count * peak_tflops * time_ns) / sum(count * time_ns) (time-weighted; the row value when
               all layers share it)
  stall:<r>    sum(count * stall:<r>)

Plots (--format png, the default)
--------------------------------
Each plot is OUT_DIR/<name>.png, drawn with matplotlib's Agg renderer (no display needed).

  The x axes are the swept parameters: every p: column with more than one value, a zipped twin drawn
  once (geometry.pe_cols with geometry.pe_rows), a parameter another one sets (double_row zipped beside
  dtype) named under that one's ticks. A numeric parameter is a numeric axis (log2 for powers of two), any
  other a categorical one in CSV order. Lines: one per workload and combination of the other parameters
  (colour = workload, style = the others); past 8 lines, one panel per combination (at most 12).

  time_vs_<param>.png     network time (ms: sum(count * time_ns) / 1e6; log y when it spans > 20x).
  speedup_vs_<param>.png  the baseline's time for the workload / the network's time (x; dashed line at 1).
  util_vs_<param>.png     network utilisation (cycle-weighted, %).
  tflops_vs_tile_n.png    network TFLOPS against p:tile_n with each combination's peak_tflops (dotted).
  accounting.png          one bar per configuration (one panel per workload): the network's time split
                          by its acct: shares (time x sum(count * cycles * share) / sum(count * cycles)).
  energy.png              energy (mJ, sum(count * energy_pj)), TOPS/W (2 * sum(count * macs) / energy_pj)
                          and energy x delay (mJ x ms) per configuration, one column per workload.
  roofline.png            one panel per configuration: each ok layer at (mem:intensity flop/byte, tflops)
                          under min(peak, intensity * bandwidth), peak = the configuration's largest
                          peak_tflops, bandwidth = its mem:bandwidth_gbps (needs both columns).
  stalls.png              stacked bars of the stall:* reasons (count-weighted sums), one panel per
                          workload, one bar per configuration; stall:ififo_full (back-pressure from a busy
                          array) in a panel of its own on the right. An incomplete point is marked.
  layers_<workload>.png   one per workload with more than one layer: count * time_ns (us; cycles without
                          time_ns) of every layer on a log scale, one line per configuration.
  README.md               the plots written, one line each on what to read from them, and the answer per
                          workload: the fastest and slowest configuration (with the speedup), the most
                          efficient (TOPS/W), and why (peak x utilisation, the fastest's lost PE-cycles);
                          notes (an fp8 dtype run without double_row ran at the bf16 rate: summary.json's
                          notes when `pe-vp sweep` wrote one beside RESULTS_CSV, else from the CSV's
                          dtype and p:double_row columns).
  report.json             the same figures: baseline, axes, notes, networks (time_ms, speedup,
                          utilisation, tflops, peak_tflops, accounting, energy), roofline ceilings, answer.

stdout: `skipped N row(s) with status S`; `note: ...` lines (incomplete network points, truncations);
one line per file written (its path); `skip: <plot>: <reason>` for a plot whose inputs are absent.
Errors go to stderr as `sweep_plots.py: error: ...`.

COMPUTE_REPORT.csv (--format scalesim)
--------------------------------------
SCALE-Sim v2's compute report layout (as its simulator writes it), with three columns after its six: the
header line `LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,
Configuration, Workload, Key,` and then one
line per ok row, fields joined by ", " and each line ending in "," (then a newline). Cycle counts are
written as integers (when whole), percentages as decimals rounded to 6 places. The columns:

  LayerID               the row's 0-based index among the data rows of RESULTS_CSV (failed rows are left
                        out, so their indices are missing and every line maps back to its results row)
  Total Cycles          cycles (scalesim_total_cycles, the last cycle's index, under timing.model=scalesim_ws)
  Stall Cycles          the cycles the array lost to stalls: cycles x the acct:* shares of PE-cycles no stream
                        used or that stretched a stream (not_streaming, waiting_for_data, short_stream,
                        sbuf_bandwidth, throttle; mapping is Mapping Efficiency's, not a stall) when the CSV has them and the
                        row is pe-vp's own model; 0 for a scalesim_ws row (SCALE-Sim's compute model has no
                        stall); else the sum of the row's stall:* columns (0 when the CSV has none) -- those
                        are per-instruction waits that overlap, an upper bound at best
  Overall Util %        utilisation * 100 (SCALE-Sim: MACs * 100 / (cycles * PEs), the same quantity)
  Mapping Efficiency %  the share of the PE array the layer's tiles occupy, averaged over its folds (the
                        mean of min(k left, R) * min(m left, C) / (R*C) over the ceil(k/R) * ceil(m/C) folds),
                        i.e. k*m / (ceil(k/R)*R * ceil(m/C)*C) * 100 -- K runs down the R PE rows and M across
                        the C PE columns (docs/gemm-tiling.md). R, C come from the row's p:geometry.pe_rows /
                        p:geometry.pe_cols, else array_rows / array_cols columns, else the generation's
                        default (128 x 128; MAVERICK: 128 x 256, docs/configuration.md)
  Compute Util %        utilisation * 100 (SCALE-Sim's compute utilisation leaves out the memory stalls;
                        the results CSV has no such figure, so the overall one stands in)
  Configuration         every configuration column as NAME=VALUE joined by ';' ("default": none), so the
                        rows of one configuration can be told from another's (commas become ';')
  Workload, Key         the row's workload and its point key (empty without a key column)

Exit status: 0 done; 2 for a missing or unreadable RESULTS_CSV, a CSV without the required columns (named),
a bad value in an ok row, or an OUT_DIR that cannot be created or written.

Python standard library and matplotlib (Agg, no display; only for the plots).
"""

import argparse
import csv
import json
import math
import os
import re
import sys
import tempfile

EXIT_INPUT = 2
PROG = "sweep_plots.py"

REQUIRED = ("status", "workload", "layer", "count", "cycles", "utilisation")
REQUIRED_SCALESIM = REQUIRED + ("m", "k")
# numeric columns an ok row may carry (besides stall:* and instr:*), checked when present and non-empty
NUMERIC = ("count", "m", "k", "n", "macs", "cycles", "time_ns", "utilisation", "tflops", "peak_tflops",
           "wall_s", "scalesim_folds", "scalesim_total_cycles", "energy_pj", "power_w", "tops_per_w", "edp_pj_s")
MUST_HAVE = ("count", "cycles", "utilisation")  # non-empty in every ok row
HIDDEN_DIMS = ("gen", "dtype")  # join the configuration only when the p: columns do not separate rows

ROW_COLUMNS = ("p:geometry.pe_rows", "array_rows", "p:array_rows")
COL_COLUMNS = ("p:geometry.pe_cols", "array_cols", "p:array_cols")
DEFAULT_ARRAY = (128, 128)
GEN_ARRAY = {"MAVERICK": (128, 256), "V5": (128, 256)}

SCALESIM_HEADER = ("LayerID", "Total Cycles", "Stall Cycles", "Overall Util %", "Mapping Efficiency %",
                   "Compute Util %", "Configuration", "Workload", "Key")

MAX_LINES_ONE_AXES = 8
MAX_PANELS = 12


class InputError(Exception):
    """A problem with the command's inputs or output directory: exit status 2 with this message."""


# ---------------------------------------------------------------------------------------------- reading

def parse_number(text):
    """The finite float in `text`, or None when it is empty or not a finite number."""
    text = text.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


class Row:
    """One results row: `index` (0-based data row), `raw` (column -> text) and `num` (column -> float)."""

    def __init__(self, index, line, raw):
        self.index = index
        self.line = line
        self.raw = raw
        self.num = {}

    @property
    def status(self):
        return self.raw["status"].strip().lower()

    @property
    def workload(self):
        return self.raw["workload"]

    @property
    def layer(self):
        return self.raw["layer"]

    def __repr__(self):
        return "Row(%d, %s/%s)" % (self.index, self.workload, self.layer)


class Results:
    """A parsed results CSV."""

    def __init__(self, path, fieldnames, rows):
        self.path = path
        self.fieldnames = fieldnames
        self.rows = rows
        self.params = [c for c in fieldnames if c.startswith("p:")]
        self.stall_cols = [c for c in fieldnames if c.startswith("stall:")]
        self.instr_cols = [c for c in fieldnames if c.startswith("instr:")]
        self.acct_cols = [c for c in fieldnames if c.startswith("acct:")]
        self.ok = [r for r in rows if r.status == "ok"]
        self.skipped = {}
        for r in rows:
            if r.status != "ok":
                self.skipped[r.status] = self.skipped.get(r.status, 0) + 1
        self.dims = choose_dims(self)
        self.duplicate_layers = _has_duplicate_layers(rows, self.dims)

    def has(self, *cols):
        return all(c in self.fieldnames for c in cols)

    def config(self, row):
        return tuple(row.raw.get(d, "") for d in self.dims)

    def distinct(self, dim, rows=None):
        """The distinct values of `dim`, in order of first appearance."""
        seen = {}
        for r in self.rows if rows is None else rows:
            seen.setdefault(r.raw.get(dim, ""), None)
        return list(seen)

    def varying_dims(self):
        return [d for d in self.dims if len(self.distinct(d)) > 1]

    def function_of(self, a, b):
        """Whether every value of `b` goes with one value of `a` (a is determined by b: double_row by dtype when they
        are zipped as fp8/true, bf16/false, fp32/false)."""
        seen = {}
        for r in self.rows:
            if seen.setdefault(r.raw.get(b, ""), r.raw.get(a, "")) != r.raw.get(a, ""):
                return False
        return True

    def moves_with(self, a, b):
        """Whether `a` and `b` vary together (a zipped pair): each value of one goes with one value of the other."""
        ab, ba = {}, {}
        for r in self.rows:
            va, vb = r.raw.get(a, ""), r.raw.get(b, "")
            if ab.setdefault(va, vb) != vb or ba.setdefault(vb, va) != va:
                return False
        return True


def choose_dims(results):
    """The configuration's columns: every p: column, then gen / dtype where needed to tell rows apart."""
    dims = list(results.params)
    for extra in HIDDEN_DIMS:
        if extra not in results.fieldnames:
            continue
        if _has_duplicate_layers(results.rows, dims):
            dims.append(extra)
    return dims


def _has_duplicate_layers(rows, dims):
    seen = set()
    for r in rows:
        k = (r.workload, r.layer) + tuple(r.raw.get(d, "") for d in dims)
        if k in seen:
            return True
        seen.add(k)
    return False


def read_results(path, required=REQUIRED):
    """Read and check RESULTS_CSV; raise InputError with a precise message on any problem."""
    if not os.path.exists(path):
        raise InputError("%s: no such file" % path)
    if os.path.isdir(path):
        raise InputError("%s: is a directory, not a results CSV" % path)
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.reader(f)
            try:
                header = next(reader)
            except StopIteration:
                raise InputError("%s: empty file (no header row); required columns: %s"
                                 % (path, ", ".join(required)))
            header = [h.strip() for h in header]
            dups = sorted({h for h in header if header.count(h) > 1 and h})
            if dups:
                raise InputError("%s: duplicate column(s): %s" % (path, ", ".join(dups)))
            missing = [c for c in required if c not in header]
            if missing:
                raise InputError("%s: missing required column(s): %s (has: %s)"
                                 % (path, ", ".join(missing), ", ".join(h for h in header if h) or "none"))
            rows = []
            for cells in reader:
                if not any(c.strip() for c in cells):
                    continue  # blank line
                line = reader.line_num
                if len(cells) > len(header):
                    raise InputError("%s:%d: %d fields, the header has %d" % (path, line, len(cells), len(header)))
                cells = cells + [""] * (len(header) - len(cells))
                rows.append(Row(len(rows), line, dict(zip(header, cells))))
    except UnicodeDecodeError as e:
        raise InputError("%s: not UTF-8 text (%s)" % (path, e.reason))
    except csv.Error as e:
        raise InputError("%s: malformed CSV: %s" % (path, e))
    except OSError as e:
        raise InputError("%s: cannot read: %s" % (path, e.strerror or e))

    numeric = [c for c in header
               if c in NUMERIC or c.startswith(("stall:", "instr:", "acct:", "mem:"))]
    for r in rows:
        if r.status != "ok":
            continue
        for c in numeric:
            text = r.raw[c].strip()
            if not text:
                if c in MUST_HAVE:
                    raise InputError("%s:%d: status ok but %s is empty (%s/%s)"
                                     % (path, r.line, c, r.workload, r.layer))
                continue
            value = parse_number(text)
            if value is None:
                raise InputError("%s:%d: %s = %r is not a number (%s/%s)"
                                 % (path, r.line, c, text, r.workload, r.layer))
            r.num[c] = value
    return Results(path, header, rows)


# ------------------------------------------------------------------------------------ network metrics

def _count(layer):
    return layer.get("count", 1.0)


def _macs(layer):
    if "macs" in layer:
        return layer["macs"]
    if all(d in layer for d in ("m", "k", "n")):
        return layer["m"] * layer["k"] * layer["n"]
    return None


def network_cycles(layers):
    """sum(count * cycles) over `layers` (mappings of column -> number)."""
    return sum(_count(l) * l["cycles"] for l in layers)


def network_utilisation(layers):
    """Cycle-weighted utilisation: sum(count * utilisation * cycles) / sum(count * cycles); None if no cycles."""
    total = network_cycles(layers)
    if total <= 0:
        return None
    return sum(_count(l) * l["utilisation"] * l["cycles"] for l in layers) / total


def network_tflops(layers):
    """sum(count * 2 * macs) / (sum(count * time_ns) * 1e-9) / 1e12; None without macs or time_ns."""
    layers = list(layers)
    if not layers or any(_macs(l) is None or "time_ns" not in l for l in layers):
        return None
    ns = sum(_count(l) * l["time_ns"] for l in layers)
    if ns <= 0:
        return None
    flops = sum(_count(l) * 2.0 * _macs(l) for l in layers)
    return flops / (ns * 1e-9) / 1e12


def network_peak_tflops(layers):
    """Time-weighted mean of peak_tflops; None when a layer lacks it or time_ns."""
    layers = list(layers)
    if not layers or any("peak_tflops" not in l or "time_ns" not in l for l in layers):
        return None
    ns = sum(_count(l) * l["time_ns"] for l in layers)
    if ns <= 0:
        return None
    return sum(_count(l) * l["peak_tflops"] * l["time_ns"] for l in layers) / ns


def network_stalls(layers, stall_cols):
    """{stall column: sum(count * value)} (an empty cell counts 0)."""
    return {c: sum(_count(l) * l.get(c, 0.0) for l in layers) for c in stall_cols}


def network_time_ns(layers):
    """sum(count * time_ns); None when a layer lacks time_ns."""
    layers = list(layers)
    if not layers or any("time_ns" not in l for l in layers):
        return None
    return sum(_count(l) * l["time_ns"] for l in layers)


def network_energy(layers):
    """{energy_pj, tops_per_w, edp_pj_s} of the network's layers run one after another, or None when a layer has no
    energy figure: energy = sum(count * energy_pj), TOPS/W = 2 * sum(count * macs) / energy (operations per pJ),
    EDP = energy x the network's seconds (summary.json's definitions)."""
    layers = list(layers)
    if not layers or any("energy_pj" not in l or "time_ns" not in l or _macs(l) is None for l in layers):
        return None
    pj = sum(_count(l) * l["energy_pj"] for l in layers)
    ns = sum(_count(l) * l["time_ns"] for l in layers)
    ops = sum(_count(l) * 2.0 * _macs(l) for l in layers)
    return {"energy_pj": pj, "tops_per_w": ops / pj if pj > 0 else None, "edp_pj_s": pj * ns * 1e-9}


def network_accounting(layers, acct_cols):
    """{share: fraction of the network's PE-cycles}: each layer's acct: shares weighted by count * cycles."""
    total = network_cycles(layers)
    if total <= 0 or not acct_cols:
        return {}
    return {c[len("acct:"):]: sum(_count(l) * l["cycles"] * l.get(c, 0.0) for l in layers) / total for c in acct_cols}


class Network:
    """One network point: a workload in one configuration."""

    def __init__(self, workload, config):
        self.workload = workload
        self.config = config
        self.rows = []  # every row, ok or not, CSV order

    @property
    def ok_rows(self):
        return [r for r in self.rows if r.status == "ok"]

    @property
    def complete(self):
        return all(r.status == "ok" for r in self.rows)

    def layers(self):
        return [r.num for r in self.ok_rows]

    def utilisation(self):
        return network_utilisation(self.layers())

    def cycles(self):
        return network_cycles(self.layers())

    def tflops(self):
        return network_tflops(self.layers())

    def peak_tflops(self):
        return network_peak_tflops(self.layers())

    def stalls(self, stall_cols):
        return network_stalls(self.layers(), stall_cols)


def networks(results):
    """{(workload, configuration tuple): Network}, in CSV order of first appearance."""
    out = {}
    for r in results.rows:
        key = (r.workload, results.config(r))
        if key not in out:
            out[key] = Network(*key)
        out[key].rows.append(r)
    return out


def network_table(results):
    """{(workload, configuration): {cycles, utilisation, tflops, peak_tflops, stalls, complete}}."""
    table = {}
    for key, net in networks(results).items():
        table[key] = {
            "complete": net.complete,
            "cycles": net.cycles(),
            "utilisation": net.utilisation(),
            "tflops": net.tflops(),
            "peak_tflops": net.peak_tflops(),
            "stalls": net.stalls(results.stall_cols),
            "time_ns": network_time_ns(net.layers()),
            "energy": network_energy(net.layers()),
            "accounting": network_accounting(net.layers(), results.acct_cols),
        }
    return table


# --------------------------------------------------------------------------------- SCALE-Sim report

def array_dims(results, row):
    """(R, C): PE rows and columns for `row`, from its columns or the generation's default."""
    gen = row.raw.get("gen", "").strip().upper()
    dims = list(GEN_ARRAY.get(gen, DEFAULT_ARRAY))
    for i, candidates in enumerate((ROW_COLUMNS, COL_COLUMNS)):
        for c in candidates:
            if c in results.fieldnames:
                v = parse_number(row.raw[c])
                if v is not None and v >= 1:
                    dims[i] = int(v)
                    break
    return dims[0], dims[1]


def mapping_efficiency(k, m, rows, cols):
    """k*m / (ceil(k/R)*R * ceil(m/C)*C): the share of the R x C array the layer's tiles occupy."""
    if k <= 0 or m <= 0:
        return 0.0
    return (k * m) / (math.ceil(k / rows) * rows * math.ceil(m / cols) * cols)


def _fmt_int_or_float(v):
    return str(int(v)) if float(v).is_integer() else repr(round(v, 6))


def _fmt_pct(v):
    return repr(round(v, 6))


LOST_SHARES = ("acct:not_streaming", "acct:waiting_for_data", "acct:short_stream", "acct:sbuf_bandwidth",
               "acct:throttle")


def report_stall_cycles(results, r):
    """COMPUTE_REPORT's Stall Cycles of an ok row (the module docstring defines it)."""
    if "scalesim_total_cycles" in r.num:
        return 0.0
    lost = [r.num[c] for c in LOST_SHARES if c in r.num]
    if lost:
        return float(round(r.num["cycles"] * sum(lost)))
    return sum(r.num.get(c, 0.0) for c in results.stall_cols)


def configuration_label(results, row):
    """The row's configuration as one field: NAME=VALUE of every configuration column, joined by ';' ("default" when
    nothing is swept), so a report's rows of one configuration can be told from another's."""
    return ";".join("%s=%s" % (_label_name(d), row.raw.get(d, "")) for d in results.dims) or "default"


def _report_field(text):
    """A COMPUTE_REPORT field: its fields are joined by ", " unquoted, as SCALE-Sim writes them, so no comma inside."""
    return text.replace(",", ";").strip()


def scalesim_rows(results):
    """The COMPUTE_REPORT.csv data rows: lists of the six fields as text, one per ok row."""
    out = []
    for r in results.ok:
        for c in ("m", "k"):
            if c not in r.num:
                raise InputError("%s:%d: status ok but %s is empty (%s/%s)"
                                 % (results.path, r.line, c, r.workload, r.layer))
        rows, cols = array_dims(results, r)
        stall = report_stall_cycles(results, r)
        util = r.num["utilisation"] * 100.0
        # Under timing.model=scalesim_ws the row carries SCALE-Sim's own figure: the last cycle's index.
        total = r.num.get("scalesim_total_cycles", r.num["cycles"])
        out.append([str(r.index), _fmt_int_or_float(total), _fmt_int_or_float(stall), _fmt_pct(util),
                    _fmt_pct(mapping_efficiency(r.num["k"], r.num["m"], rows, cols) * 100.0), _fmt_pct(util),
                    _report_field(configuration_label(results, r)), _report_field(r.workload),
                    _report_field(r.raw.get("key", ""))])
    return out


def write_scalesim(results, out_dir):
    path = os.path.join(out_dir, "COMPUTE_REPORT.csv")
    lines = [", ".join(SCALESIM_HEADER) + ",\n"]
    lines += [", ".join(fields) + ",\n" for fields in scalesim_rows(results)]
    try:
        with open(path, "w", newline="") as f:
            f.writelines(lines)
    except OSError as e:
        raise InputError("%s: cannot write: %s" % (path, e.strerror or e))
    if not results.stall_cols:
        print("note: no stall:* columns: Stall Cycles is 0")
    return [path]


# ------------------------------------------------------------------------------------------ baseline

class Baseline:
    """The configuration the speedups are against: `config` (a tuple over results.dims), `label`, and `why`."""

    def __init__(self, config, label, why):
        self.config = config
        self.label = label
        self.why = why


def _dim_of(results, name):
    """The configuration column a --baseline NAME means: p:NAME, NAME itself (p:..., gen, dtype)."""
    for c in ("p:" + name, name):
        if c in results.dims:
            return c
    return None


def _values_text(values):
    return ", ".join(values)


def parse_baseline_args(results, specs):
    """{dim: value} from --baseline NAME=VALUE arguments, checked against the CSV; InputError naming the key and the
    values it could take."""
    chosen = {}
    varying = [_label_name(d) for d in results.dims if len(results.distinct(d)) > 1]
    for text in specs:
        name, eq, value = text.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not name:
            raise InputError("--baseline %r: expected NAME=VALUE (a swept parameter and one of its values, e.g. "
                             "dtype=bf16)" % text)
        dim = _dim_of(results, name[2:] if name.startswith("p:") else name)
        if dim is None:
            raise InputError("--baseline %s: not a swept parameter of %s (swept: %s)"
                             % (name, results.path, _values_text(varying) or "none"))
        values = [v for v in results.distinct(dim) if v.strip()]
        if value not in values:
            num = parse_number(value)
            match = [v for v in values if num is not None and parse_number(v) == num]
            if not match:
                raise InputError("--baseline %s=%s: not a value of %s in %s (it takes: %s)"
                                 % (_label_name(dim), value, _label_name(dim), results.path, _values_text(values)))
            value = match[0]
        chosen[dim] = value
    return chosen


def choose_baseline(results, table, chosen):
    """The Baseline: the one configuration with the `chosen` values, or -- without any -- the first configuration in
    the CSV whose every workload is complete (else the first with any complete workload). InputError when `chosen`
    selects none or several configurations (naming the parameters still to give and their values)."""
    configs = list(dict.fromkeys(c for (_, c) in table))
    if chosen:
        idx = {d: results.dims.index(d) for d in chosen}
        match = [c for c in configs if all(c[idx[d]] == v for d, v in chosen.items())]
        given = ", ".join("%s=%s" % (_label_name(d), v) for d, v in chosen.items())
        if not match:
            raise InputError("--baseline %s: no configuration of %s has these values together" % (given, results.path))
        if len(match) > 1:
            open_dims = [d for d in results.dims if d not in chosen and len({c[results.dims.index(d)] for c in match}) > 1]
            raise InputError("--baseline %s: selects %d configurations; give also %s" % (
                given, len(match), "; ".join("%s (%s)" % (_label_name(d), _values_text(
                    list(dict.fromkeys(c[results.dims.index(d)] for c in match)))) for d in open_dims)))
        config = match[0]
        why = "named by the sweep's [plots] baseline (--baseline %s)" % given
    else:
        workloads = results.distinct("workload")
        complete = [c for c in configs
                    if all(table.get((w, c), {}).get("complete") and table[(w, c)]["time_ns"] for w in workloads)]
        partial = [c for c in configs if any(table.get((w, c), {}).get("complete") and table[(w, c)]["time_ns"]
                                             for w in workloads)]
        if not (complete or partial):
            return None
        config = (complete or partial)[0]
        why = ("the first configuration in the CSV%s; [plots] baseline = {...} in the spec (or --baseline NAME=VALUE) "
               "names another" % (" with every workload complete" if complete else " with a complete workload"))
    label = _combo_label([d for d in results.varying_dims()], [config[results.dims.index(d)]
                                                                for d in results.varying_dims()]) or "the only one"
    return Baseline(config, label, why)


def add_speedups(table, baseline):
    """table[...]["speedup"] = the workload's baseline time / its time (None without either)."""
    for (wl, config), row in table.items():
        row["time_ms"] = row["time_ns"] / 1e6 if row["complete"] and row["time_ns"] else None
        row["speedup"] = None
    if baseline is None:
        return
    for (wl, config), row in table.items():
        base = table.get((wl, baseline.config))
        if base and base["time_ms"] and row["time_ms"]:
            row["speedup"] = base["time_ms"] / row["time_ms"]


# --------------------------------------------------------------------------------------------- plots

def _label_name(dim):
    return dim[2:] if dim.startswith("p:") else dim


def _combo_label(dims, values):
    return ", ".join("%s=%s" % (_label_name(d), v) for d, v in zip(dims, values))


def _short_names(dims):
    """Display names for `dims`: the part after the last '.', unless two dims would then share one."""
    names = [_label_name(d) for d in dims]
    short = [n.rsplit(".", 1)[-1] for n in names]
    return short if len(set(short)) == len(short) else names


def _safe(name):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "x"


def _numeric_param(results, dim):
    """The param's values as floats if every non-empty one is a finite number, else None."""
    values = [v for v in results.distinct(dim) if v.strip()]
    nums = [parse_number(v) for v in values]
    if not values or any(n is None for n in nums):
        return None
    return nums


def _mpl():
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib import ticker
    return Figure, ticker


LINESTYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def _set_x_axis(ax, ticker, xs, labels, numeric):
    if numeric:
        pos = [x for x in xs if x > 0]
        if len(pos) == len(xs) and len(xs) > 2 and max(xs) / min(xs) >= 8 and \
                all(math.log2(x).is_integer() for x in xs):
            ax.set_xscale("log", base=2)
            ax.xaxis.set_minor_locator(ticker.NullLocator())
        ax.set_xticks(xs)
        ax.set_xticklabels(labels)
    else:
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels)
        ax.set_xlim(-0.5, len(labels) - 0.5)


def _line_plot(results, table, xdim, metric, ylabel, title, path, percent=False, peak=False, hline=None,
               logy=False):
    """Network-level `metric` against `xdim`; returns a note (or None) for stdout."""
    Figure, ticker = _mpl()
    # A parameter zipped with xdim moves with it: it is no other dimension of the plot.
    # So is one it determines (double_row zipped beside dtype): the x value already says it.
    others = [d for d in results.varying_dims() if d != xdim and not results.function_of(d, xdim)]
    workloads = results.distinct("workload")
    xvals = [v for v in results.distinct(xdim) if v.strip()]
    nums = _numeric_param(results, xdim)
    numeric = nums is not None
    if numeric:
        order = sorted(range(len(xvals)), key=lambda i: nums[i])
        xvals = [xvals[i] for i in order]
        xpos = {v: parse_number(v) for v in xvals}
    else:
        xpos = {v: i for i, v in enumerate(xvals)}
    di = results.dims.index(xdim)
    oi = [results.dims.index(d) for d in others]
    # A parameter set by the x value but not zipped one-to-one with it (double_row beside dtype) is named under it.
    shown = [q for q in results.varying_dims() if q != xdim and results.function_of(q, xdim)
             and not results.moves_with(q, xdim)]
    by_x = {r.raw.get(xdim, ""): r for r in results.rows}
    tick_labels = [v + "".join("\n%s=%s" % (_label_name(q), by_x[v].raw.get(q, "")) for q in shown) for v in xvals]

    # series: (workload, others' values) -> [(x, y, peak)]
    series = {}
    for (wl, config), row in table.items():
        if not row["complete"] or row[metric] is None:
            continue
        x = config[di]
        if x not in xpos:
            continue
        key = (wl, tuple(config[i] for i in oi))
        series.setdefault(key, []).append((xpos[x], row[metric], row["peak_tflops"] if peak else None))
    if not series:
        return None, "no complete network point has %s" % metric
    combos = []
    for _, c in series:
        if c not in combos:
            combos.append(c)
    wl_color = {w: "C%d" % (i % 10) for i, w in enumerate(workloads)}

    panels = [None] if len(series) <= MAX_LINES_ONE_AXES or not others else combos[:MAX_PANELS]
    note = None
    if panels != [None] and len(combos) > MAX_PANELS:
        note = "%s: %d combinations of %s, showing the first %d panels" % (
            os.path.basename(path), len(combos), ", ".join(_label_name(d) for d in others), MAX_PANELS)
    ncols = 1 if panels == [None] else min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig = Figure(figsize=(7.0 if ncols == 1 else 4.8 * ncols, 4.2 if nrows == 1 else 3.4 * nrows))
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
    ys = [p[1] for pts in series.values() for p in pts] + \
         [p[2] for pts in series.values() for p in pts if peak and p[2] is not None]
    ymax = max(ys) * 1.1 if ys and max(ys) > 0 else 1.0  # shared by the panels; room for the peak labels
    handles = {}
    for pi, panel in enumerate(panels):
        ax = axes[pi // ncols][pi % ncols]
        for (wl, combo), pts in sorted(series.items(),
                                       key=lambda kv: (workloads.index(kv[0][0]), combos.index(kv[0][1]))):
            if panel is not None and combo != panel:
                continue
            pts.sort(key=lambda p: p[0])
            ci = combos.index(combo)
            if panel is None:
                style, marker = LINESTYLES[ci % len(LINESTYLES)], MARKERS[ci % len(MARKERS)]
                label = wl if not others else "%s, %s" % (wl, _combo_label(others, combo))
            else:
                style, marker, label = "-", "o", wl
            h, = ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle=style, marker=marker,
                         color=wl_color[wl], label=label)
            handles.setdefault(label, h)
        if peak:
            _draw_peaks(ax, [(c, pts) for (_, c), pts in series.items() if panel is None or c == panel],
                        others if panel is None else [], handles)
        _set_x_axis(ax, ticker, [xpos[v] for v in xvals], tick_labels, numeric)
        ax.grid(True, alpha=0.3)
        if panel is not None:
            ax.set_title(_combo_label(others, panel), fontsize="small")
        if pi // ncols == nrows - 1:
            ax.set_xlabel(_label_name(xdim))
        if pi % ncols == 0:
            ax.set_ylabel(ylabel)
        if hline is not None:
            value, text = hline
            h = ax.axhline(value, linestyle="--", color="0.35", linewidth=1)
            handles.setdefault(text, h)
        if percent:
            ax.set_ylim(0, 1.05)
            ax.yaxis.set_major_formatter(ticker.PercentFormatter(xmax=1))
        elif logy:
            ax.set_yscale("log")
        else:
            ax.set_ylim(0, max(ymax, hline[0] * 1.1) if hline else ymax)
    for pi in range(len(panels), nrows * ncols):
        axes[pi // ncols][pi % ncols].set_visible(False)
    fig.suptitle(title)
    if PEAK_LABEL in handles:
        handles[PEAK_LABEL] = handles.pop(PEAK_LABEL)  # last in the legend
    if panels == [None]:
        axes[0][0].legend(list(handles.values()), list(handles), loc="center left", bbox_to_anchor=(1.02, 0.5),
                          fontsize="small")
    else:
        fig.legend(list(handles.values()), list(handles), loc="center left", bbox_to_anchor=(1.0, 0.5),
                   fontsize="small")
    _save(fig, path)
    return path, note


PEAK_LABEL = "peak_tflops (dotted)"


def _draw_peaks(ax, combo_points, others, handles):
    """Grey dotted peak_tflops: one horizontal line per distinct peak (labelled with the combinations that
    share it), or a curve where the peak changes along the x axis."""
    per_combo = {}
    for combo, pts in combo_points:
        for x, _, pk in pts:
            if pk is not None:
                per_combo.setdefault(combo, {})[x] = pk
    levels = {}
    for combo, by_x in per_combo.items():
        values = sorted(by_x.values())
        if values[-1] - values[0] <= 1e-9 * max(1.0, abs(values[-1])):
            levels.setdefault(round(values[0], 6), []).append(combo)
        else:
            xs = sorted(by_x)
            h, = ax.plot(xs, [by_x[x] for x in xs], linestyle=":", color="0.35", linewidth=1)
            handles.setdefault(PEAK_LABEL, h)
    for value, combos in sorted(levels.items()):
        h = ax.axhline(value, linestyle=":", color="0.35", linewidth=1)
        handles.setdefault(PEAK_LABEL, h)
        text = "peak %.4g" % value
        if others:
            text += " (%s)" % "; ".join(_combo_label(others, c) for c in combos)
        ax.text(0.99, value, text, transform=ax.get_yaxis_transform(), ha="right", va="bottom",
                fontsize="x-small", color="0.35", clip_on=True)


def _save(fig, path):
    try:
        fig.savefig(path, dpi=100, bbox_inches="tight")
    except OSError as e:
        raise InputError("%s: cannot write: %s" % (path, e.strerror or e))


def swept_axes(results):
    """The p: parameters with more than one value, one of each zipped group (the first): the plots' x axes. A string
    parameter (dtype, gen, a mode) is a categorical axis in the CSV's order, a numeric one a numeric axis."""
    varying = [p for p in results.params if len([v for v in results.distinct(p) if v.strip()]) > 1]
    axes = []
    for p in varying:
        if any(results.moves_with(q, p) for q in axes):
            continue  # zipped with an axis already chosen
        # A parameter another one determines (double_row zipped beside dtype) is drawn as part of that one's axis.
        if any(q != p and results.function_of(p, q) and not results.moves_with(p, q) for q in varying):
            continue
        axes.append(p)
    return axes


def _zipped_twins(results, p):
    """The other p: parameters that vary with `p` (zipped with it, or determined by it), for the axis label."""
    return [q for q in results.params if q != p and len(results.distinct(q)) > 1 and results.function_of(q, p)]


def _axis_plots(results, table, out_dir, emit, prefix, metric, ylabel, question, index, **kw):
    """One `prefix`_vs_<param>.png per swept axis: `metric` of every complete network against it."""
    axes = swept_axes(results)
    if not axes:
        why = "no p: column" if not results.params else \
            "no p: parameter with more than one value (p: columns: %s)" % ", ".join(results.params)
        emit("skip: %s_vs_<param>.png: %s" % (prefix, why))
        return
    for p in axes:
        for q in _zipped_twins(results, p):
            emit("skip: %s_vs_%s.png: %s varies with %s (%s): see its plot" % (
                prefix, _safe(_label_name(q)), q, p, "zipped" if results.moves_with(p, q) else "set by it"))
        name = _label_name(p)
        twins = _zipped_twins(results, p)
        if twins:
            name += " (with " + ", ".join(_label_name(q) for q in twins) + ")"
        path = os.path.join(out_dir, "%s_vs_%s.png" % (prefix, _safe(_label_name(p))))
        written, note = _line_plot(results, table, p, metric, ylabel, question % name, path, **kw)
        if written is None:
            emit("skip: %s: %s" % (os.path.basename(path), note))
            continue
        if note:
            emit("note: " + note)
        index.append((os.path.basename(written), question % name))
        emit(written)


def plot_utilisation(results, table, out_dir, emit, index):
    _axis_plots(results, table, out_dir, emit, "util", "utilisation",
                "network utilisation (useful PE-cycles / PE-cycles, %)",
                "How busy is the array as %s changes? (%% of PE-cycles useful; a busy small array is not a fast one: "
                "see time_vs)",
                index, percent=True)


def plot_time(results, table, out_dir, emit, index):
    if "time_ns" not in results.fieldnames:
        emit("skip: time_vs_<param>.png: no time_ns column")
        return
    spread = [r["time_ms"] for r in table.values() if r.get("time_ms")]
    logy = bool(spread) and max(spread) / min(spread) > 20
    _axis_plots(results, table, out_dir, emit, "time", "time_ms",
                "network time (ms, sum of count x time_ns%s)" % (", log scale" if logy else ""),
                "How long does each network take as %s changes? (ms, lower is faster)", index, logy=logy)


def plot_speedup(results, table, baseline, out_dir, emit, index):
    if baseline is None:
        emit("skip: speedup_vs_<param>.png: no baseline (no configuration with time_ns complete for a workload)")
        return
    label = baseline.label
    _axis_plots(results, table, out_dir, emit, "speedup", "speedup",
                "speedup (x, baseline time / time)",
                "How much faster than the baseline (" + label.replace("%", "%%") + ") as %s changes? (x)", index,
                hline=(1.0, "baseline (1x)"))


def plot_tflops(results, table, out_dir, emit, index):
    name = "tflops_vs_tile_n.png"
    if "p:tile_n" not in results.fieldnames:
        emit("skip: %s: no p:tile_n column" % name)
        return
    values = [v for v in results.distinct("p:tile_n") if v.strip()]
    if len(values) < 2:
        emit("skip: %s: p:tile_n has %s" % (name, "one value (%s)" % values[0] if values else "no values"))
        return
    missing = [c for c in ("time_ns",) if c not in results.fieldnames]
    if "macs" not in results.fieldnames and not results.has("m", "k", "n"):
        missing.append("macs (or m, k, n)")
    if missing:
        emit("skip: %s: no %s column" % (name, " or ".join(missing)))
        return
    peak = "peak_tflops" in results.fieldnames
    path = os.path.join(out_dir, name)
    question = "How close to the peak does each network run as tile_n changes? (TFLOPS)"
    written, note = _line_plot(results, table, "p:tile_n", "tflops", "network TFLOPS", question, path, peak=peak)
    if written is None:
        emit("skip: %s: %s" % (name, note))
        return
    if note:
        emit("note: " + note)
    index.append((name, question + ": achieved against each configuration's peak (dotted)"))
    emit(written)


BACKPRESSURE = ("stall:ififo_full",)


def plot_stalls(results, table, out_dir, emit, index):
    name = "stalls.png"
    if not results.stall_cols:
        emit("skip: %s: no stall:* columns" % name)
        return
    points = [(k, v) for k, v in table.items() if v["complete"]]
    if not points:
        emit("skip: %s: no complete network point" % name)
        return
    Figure, ticker = _mpl()
    varying = results.varying_dims()
    vi = [results.dims.index(d) for d in varying]
    short = _short_names(varying)
    # ififo_full counts cycles the SEQ could not push into a full IFIFO because the array was busy: back-pressure
    # from work being done, not a bottleneck. It is drawn apart (a hatched grey bar beside each stack).
    reasons = [c for c in results.stall_cols if c not in BACKPRESSURE and any(v["stalls"][c] for _, v in points)]
    pressure = [c for c in results.stall_cols if c in BACKPRESSURE and any(v["stalls"][c] for _, v in points)]
    workloads = [w for w in results.distinct("workload") if any(k[0] == w for k, _ in points)]
    if varying:
        # one panel per workload, one bar per configuration
        # incomplete points keep their slot (marked), so a configuration sits at the same x in every panel
        panels = [(w, [(k, v) for k, v in table.items() if k[0] == w]) for w in workloads]
        n_bars = max(len(bars) for _, bars in panels)
        compact = n_bars > 12
        if compact:  # values only, rotated; the axis label names the parameters
            def tick(key):
                return " / ".join(key[1][i] for i in vi)
            xlabel = " / ".join(short)
        else:
            def tick(key):
                return "\n".join("%s=%s" % (n, key[1][i]) for n, i in zip(short, vi))
            xlabel = "configuration"
    else:
        panels = [(None, points)]
        n_bars, compact = len(points), len(points) > 12

        def tick(key):
            return key[0]
        xlabel = "workload"
    longest = max(len(part) for _, bars in panels for k, _ in bars for part in tick(k).split("\n"))
    per_bar = 0.32 if compact else max(0.8, 0.075 * longest)
    width = min(40.0, max(6.0, n_bars * per_bar + 2.5))
    tall = 0.09 * longest if compact else 0.18 * ((len(short) if varying else 1) + 1)
    # The back-pressure gets a panel of its own on the right, on its own scale, so it neither stacks with the
    # bottlenecks nor flattens them.
    side = bool(pressure)
    fig = Figure(figsize=(width + (0.35 * width + 1.0 if side else 0.0), len(panels) * (3.0 + tall) + 0.6))
    axes = fig.subplots(len(panels), 2 if side else 1, squeeze=False,
                        gridspec_kw={"width_ratios": [3, 1]} if side else None)
    for pi, (wl, bars) in enumerate(panels):
        ax = axes[pi][0]
        xs = list(range(len(bars)))
        bottom = [0.0] * len(bars)
        for i, c in enumerate(reasons):
            hs = [v["stalls"][c] if v["complete"] else 0.0 for _, v in bars]
            ax.bar(xs, hs, bottom=bottom, label=c[len("stall:"):], color="C%d" % (i % 10), width=0.7)
            bottom = [b + h for b, h in zip(bottom, hs)]
        if side:
            bx = axes[pi][1]
            for c in pressure:
                hs = [v["stalls"][c] if v["complete"] else 0.0 for _, v in bars]
                bx.bar(xs, hs, width=0.7, color="0.8", hatch="//", edgecolor="0.5")
            bx.set_xticks(xs)
            bx.set_xticklabels([str(x + 1) for x in xs], fontsize="small")
            bx.set_xlabel("configuration (numbered as on the left)")
            bx.set_title("%s: back-pressure, not a bottleneck\n(the SEQ waiting on a full IFIFO: the array was busy)"
                         % ", ".join(c[len("stall:"):] for c in pressure), fontsize="small")
            bx.set_ylabel("cycles (sum of count x cycles)")
            bx.grid(True, axis="y", alpha=0.3)
        for x, (_, v) in zip(xs, bars):
            if not v["complete"]:
                ax.text(x, 0, "incomplete", rotation=90, ha="center", va="bottom", fontsize="x-small", color="red")
        if not reasons:
            ax.text(0.5, 0.5, "no stall cycles" + (" but back-pressure (right)" if pressure else ""),
                    transform=ax.transAxes, ha="center", va="center")
        ax.set_xticks(xs)
        ax.set_xticklabels([("%d: " % (x + 1) if compact else "[%d]\n" % (x + 1)) * side + tick(k)
                            for x, (k, _) in zip(xs, bars)], fontsize="small", rotation=90 if compact else 0)
        ax.set_xlim(-0.6, max(n_bars, 1) - 0.4)
        ax.set_ylabel("stall cycles\n(sum of count x cycles, per reason)")
        ax.grid(True, axis="y", alpha=0.3)
        if wl is not None:
            ax.set_title(wl, fontsize="medium")
        if pi == len(panels) - 1:
            ax.set_xlabel(xlabel)
    fig.suptitle("What held instructions back on each configuration? (instruction stall cycles; they overlap, so "
                 "the accounting, not their sum, is the time lost)")
    if reasons:
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small",
                   title="stall reason")
    fig.tight_layout()
    path = os.path.join(out_dir, name)
    _save(fig, path)
    index.append((name, "What held instructions back? The stall reasons stacked per configuration; ififo_full "
                        "(back-pressure from a busy array, not a bottleneck) in its own panel on the right"))
    emit(path)


def plot_layers(results, out_dir, emit, index, max_configs=None):
    """layers_<workload>.png: every layer's count x time (or cycles) on a log scale, one line per configuration."""
    nets = networks(results)
    workloads = results.distinct("workload")
    single = []
    used = set()
    varying = results.varying_dims()
    vi = [results.dims.index(d) for d in varying]
    timed = "time_ns" in results.fieldnames
    # The legend names each configuration once: a zipped twin (pe_cols beside pe_rows) says nothing more.
    varying = [d for i, d in enumerate(varying) if not any(results.moves_with(k, d) for k in varying[:i])]
    vi = [results.dims.index(d) for d in varying]
    for wl in workloads:
        wl_rows = [r for r in results.rows if r.workload == wl]
        layers = list(dict.fromkeys(r.layer for r in wl_rows))
        if len(layers) < 2:
            single.append(wl)
            continue
        configs = [c for (w, c) in nets if w == wl]
        shown = configs[:max_configs] if max_configs else configs
        Figure, ticker = _mpl()
        fig = Figure(figsize=(min(24.0, max(7.0, 0.22 * len(layers) + 3.0)), 5.0))
        ax = fig.subplots()
        from matplotlib import transforms
        bottom = transforms.blended_transform_factory(ax.transData, ax.transAxes)
        for ci, config in enumerate(shown):
            net = nets[(wl, config)]
            per_layer, failed = {}, set()
            for r in net.rows:
                if r.status == "ok":
                    value = r.num.get("time_ns", 0.0) / 1e3 if timed else r.num["cycles"]
                    per_layer[r.layer] = per_layer.get(r.layer, 0.0) + r.num.get("count", 1.0) * value
                else:
                    failed.add(r.layer)
            xs = [i for i, l in enumerate(layers) if per_layer.get(l, 0) > 0]
            label = _combo_label(varying, [config[i] for i in vi]) or None
            ax.plot(xs, [per_layer[layers[i]] for i in xs], color="C%d" % (ci % 10),
                    linestyle=LINESTYLES[(ci // 10) % len(LINESTYLES)], marker=MARKERS[ci % len(MARKERS)],
                    markersize=4, linewidth=1, label=label)
            for i, l in enumerate(layers):
                if l in failed and l not in per_layer:
                    ax.plot([i], [0.02], marker="x", color="red", transform=bottom, clip_on=False)
        ax.set_yscale("log")
        ax.set_xticks(range(len(layers)))
        ax.set_xticklabels(layers, rotation=0 if len(layers) <= 8 else 90, fontsize="small" if len(layers) <= 30
                           else "x-small")
        ax.set_xlim(-0.5, len(layers) - 0.5)
        ax.set_xlabel("layer (network order; red x: failed)")
        ax.set_ylabel("count x time per layer (us, log scale)" if timed else "count x cycles per layer (log scale)")
        more = " (first %d of %d configurations)" % (len(shown), len(configs)) if len(configs) > len(shown) else ""
        question = "Which layers of %s take the time on each configuration? (%s, log scale)%s" % (
            wl, "us" if timed else "cycles", more)
        ax.set_title(question)
        ax.grid(True, which="both", axis="y", alpha=0.3)
        if any(_combo_label(varying, [c[i] for i in vi]) for c in shown):
            ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize="small", title="configuration")
        base = "layers_%s" % _safe(wl)
        name, n = base, 2
        while name in used:
            name, n = "%s_%d" % (base, n), n + 1
        used.add(name)
        path = os.path.join(out_dir, name + ".png")
        if len(configs) > len(shown):
            emit("note: %s: %d configurations, showing the first %d (--max-configs)"
                 % (os.path.basename(path), len(configs), len(shown)))
        _save(fig, path)
        index.append((name + ".png", question + ": each layer's count x time, one line per configuration"))
        emit(path)
    if single:
        if len(single) == len(workloads):
            emit("skip: layers_<workload>.png: no workload has more than one layer")
        else:
            emit("skip: layers_<workload>.png for %d single-layer workload(s): %s" % (len(single), ", ".join(single)))


ACCT_ORDER = ("useful", "mapping", "short_stream", "sbuf_bandwidth", "throttle", "transpose", "fill_drain",
              "waiting_for_data", "not_streaming")
ACCT_MEANING = {
    "useful": "PE-cycles of MACs at their dtype's full rate",
    "mapping": "PEs a partial tile leaves idle (K or M below the array)",
    "short_stream": "streams shorter than the pipeline's initiation interval",
    "sbuf_bandwidth": "SBUF reads slower than the stream",
    "throttle": "a throttled XBUS",
    "transpose": "transposing data moves (no MACs)",
    "fill_drain": "filling and draining the array (SCALE-Sim preset)",
    "waiting_for_data": "the array idle, waiting for DMA (memory)",
    "not_streaming": "no stream: weight loads, dependencies, dispatch, fill/drain and commit",
}


def _config_labels(results, configs):
    varying = []
    for d in results.varying_dims():  # a zipped twin says nothing its partner does not (pe_cols beside pe_rows)
        if not any(results.moves_with(k, d) for k in varying):
            varying.append(d)
    short = _short_names(varying)
    vi = [results.dims.index(d) for d in varying]
    return ["\n".join("%s=%s" % (n, c[i]) for n, i in zip(short, vi)) or "-" for c in configs]


def _complete_configs(results, table):
    return list(dict.fromkeys(c for (_, c), v in table.items() if v["complete"]))


def plot_accounting(results, table, out_dir, emit, index):
    name = "accounting.png"
    if not results.acct_cols or "time_ns" not in results.fieldnames:
        emit("skip: %s: no %s column" % (name, "acct:*" if not results.acct_cols else "time_ns"))
        return
    configs = _complete_configs(results, table)
    workloads = [w for w in results.distinct("workload") if any((w, c) in table for c in configs)]
    if not configs or not workloads:
        emit("skip: %s: no complete network point" % name)
        return
    shares = [a for a in ACCT_ORDER if any(table.get((w, c), {}).get("accounting", {}).get(a, 0) > 0
                                           for w in workloads for c in configs)]
    shares += sorted({a for v in table.values() for a in v["accounting"] if a not in ACCT_ORDER and
                      any(t["accounting"].get(a, 0) > 0 for t in table.values())})
    labels = _config_labels(results, configs)
    Figure, ticker = _mpl()
    fig = Figure(figsize=(max(7.0, 0.9 * len(configs) + 3.5), 3.6 * len(workloads) + 0.8))
    axes = fig.subplots(len(workloads), 1, squeeze=False)
    colours = {"useful": "tab:green", "mapping": "tab:olive", "waiting_for_data": "tab:red",
               "not_streaming": "tab:gray", "short_stream": "tab:orange", "sbuf_bandwidth": "tab:purple",
               "throttle": "tab:brown", "transpose": "tab:pink", "fill_drain": "tab:cyan"}
    for wi, wl in enumerate(workloads):
        ax = axes[wi][0]
        xs = list(range(len(configs)))
        bottom = [0.0] * len(configs)
        for a in shares:
            hs = [(table[(wl, c)]["time_ms"] or 0.0) * table[(wl, c)]["accounting"].get(a, 0.0)
                  if (wl, c) in table and table[(wl, c)]["complete"] else 0.0 for c in configs]
            ax.bar(xs, hs, bottom=bottom, width=0.7, color=colours.get(a), label="%s: %s" % (a, ACCT_MEANING.get(a, a)))
            bottom = [b + h for b, h in zip(bottom, hs)]
        for x, c in zip(xs, configs):
            row = table.get((wl, c))
            if row and row["complete"] and row["time_ms"]:
                ax.text(x, bottom[x], "%.3g ms\n%.0f%% useful" % (row["time_ms"], 100 * row["accounting"].get("useful", 0)),
                        ha="center", va="bottom", fontsize="x-small")
        ax.set_xticks(xs)
        ax.set_xticklabels(labels, fontsize="small")
        ax.set_ylim(0, max(bottom) * 1.25 if max(bottom) > 0 else 1)
        ax.set_ylabel("network time (ms)")
        ax.set_title(wl, fontsize="medium")
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle("Where did each network's time go? (ms; each bar is split by the share of the array's PE-cycles\n"
                 "that went to each use: time x share)")
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small", title="PE-cycles")
    fig.tight_layout()
    path = os.path.join(out_dir, name)
    _save(fig, path)
    index.append((name, "Where did the time go? Each configuration's network time split by the array's PE-cycle "
                        "accounting: green is useful work, the rest is why a configuration is slower than its peak"))
    emit(path)


def plot_energy(results, table, out_dir, emit, index):
    name = "energy.png"
    if "energy_pj" not in results.fieldnames:
        emit("skip: %s: no energy_pj column" % name)
        return
    configs = [c for c in _complete_configs(results, table)]
    workloads = [w for w in results.distinct("workload")
                 if any(table.get((w, c), {}).get("energy") for c in configs)]
    if not workloads:
        emit("skip: %s: no complete network point with energy figures" % name)
        return
    labels = _config_labels(results, configs)
    metrics = (("energy_pj", 1e-9, "energy (mJ per run)", "lower is better"),
               ("tops_per_w", 1.0, "TOPS/W (2 x MACs / energy)", "higher is better"),
               ("edp_pj_s", 1e-9 * 1e3, "energy x delay (mJ x ms)", "lower is better"))
    Figure, ticker = _mpl()
    fig = Figure(figsize=(max(5.0, 1.15 * len(configs) + 2.0) * len(workloads), 9.5))
    axes = fig.subplots(len(metrics), len(workloads), squeeze=False)
    for wi, wl in enumerate(workloads):
        for mi, (metric, scale, ylabel, better) in enumerate(metrics):
            ax = axes[mi][wi]
            vals = []
            for c in configs:
                e = table.get((wl, c), {}).get("energy")
                vals.append(e[metric] * scale if e and e.get(metric) is not None else 0.0)
            best = (min if better.startswith("lower") else max)([v for v in vals if v > 0] or [0])
            ax.bar(range(len(configs)), vals, width=0.7,
                   color=["tab:green" if v == best and v > 0 else "tab:blue" for v in vals])
            for x, v in enumerate(vals):
                if v > 0:
                    ax.text(x, v, "%.3g" % v, ha="center", va="bottom", fontsize="x-small")
            ax.set_xticks(range(len(configs)))
            ax.set_xticklabels(labels if mi == len(metrics) - 1 else [""] * len(configs), fontsize="x-small")
            ax.set_ylabel(ylabel)
            ax.set_ylim(0, max(vals) * 1.2 if vals and max(vals) > 0 else 1)
            ax.grid(True, axis="y", alpha=0.3)
            ax.set_title("%s: %s (%s; best in green)" % (wl, ylabel.split(" (")[0], better), fontsize="small")
    fig.suptitle("Which configuration is the most efficient? (energy per network run in mJ, TOPS/W, energy-delay "
                 "product in mJ x ms)")
    fig.tight_layout()
    path = os.path.join(out_dir, name)
    _save(fig, path)
    index.append((name, "Which configuration is the most efficient? Energy per run (mJ), TOPS/W and energy x delay "
                        "(mJ x ms) per network, the best of each in green"))
    emit(path)


def roofline_ceilings(results):
    """{configuration: (peak_tflops, bandwidth_gbps)} from the rows' own figures: the dtype's peak on that array
    (peak_tflops, the largest of the configuration's rows) and the configured HBM bandwidth (mem:bandwidth_gbps)."""
    ceilings = {}
    for r in results.ok:
        pk, bw = r.num.get("peak_tflops"), r.num.get("mem:bandwidth_gbps")
        if pk is None or bw is None:
            continue
        c = results.config(r)
        old = ceilings.get(c, (0.0, bw))
        ceilings[c] = (max(old[0], pk), bw)
    return ceilings


def plot_roofline(results, table, out_dir, emit, index, report):
    name = "roofline.png"
    missing = [c for c in ("mem:intensity", "mem:bandwidth_gbps", "tflops", "peak_tflops")
               if c not in results.fieldnames]
    if missing:
        emit("skip: %s: no %s column (a sweep through device memory, data_path = dma, has them)"
             % (name, ", ".join(missing)))
        return
    ceilings = roofline_ceilings(results)
    configs = [c for c in dict.fromkeys(results.config(r) for r in results.ok) if c in ceilings]
    if not configs:
        emit("skip: %s: no ok row has mem:intensity, mem:bandwidth_gbps and peak_tflops" % name)
        return
    note = None
    if len(configs) > MAX_PANELS:
        note = "%s: %d configurations, showing the first %d panels" % (name, len(configs), MAX_PANELS)
        configs = configs[:MAX_PANELS]
    workloads = results.distinct("workload")
    Figure, ticker = _mpl()
    ncols = min(3, len(configs))
    nrows = math.ceil(len(configs) / ncols)
    fig = Figure(figsize=(4.8 * ncols + 2.5, 3.8 * nrows + 0.8))
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
    xs_all = [r.num["mem:intensity"] for r in results.ok if r.num.get("mem:intensity")]
    lo, hi = min(xs_all) / 2, max(xs_all) * 2
    peaks = [ceilings[c][0] for c in configs]
    ys_all = [r.num["tflops"] for r in results.ok if r.num.get("tflops")]
    ylo = min(ys_all + [min(peaks)]) / 3 if ys_all else min(peaks) / 100
    labels = _config_labels(results, configs)
    report["roofline"] = []
    handles = {}
    for ci, c in enumerate(configs):
        ax = axes[ci // ncols][ci % ncols]
        peak, bw = ceilings[c]
        ridge = peak * 1e3 / bw  # flop/byte where I x BW (GB/s) = peak (TFLOPS)
        report["roofline"].append({"configuration": labels[ci].replace("\n", ", "), "peak_tflops": peak,
                                   "bandwidth_gbps": bw, "ridge_flop_per_byte": ridge})
        xs = [lo, ridge, hi] if lo < ridge < hi else [lo, hi]
        h, = ax.plot(xs, [min(peak, x * bw / 1e3) for x in xs], color="black", linewidth=1.2)
        handles.setdefault("ceiling: min(peak, intensity x HBM bandwidth)", h)
        ax.text(hi, peak, "peak %.3g TFLOPS" % peak, ha="right", va="bottom", fontsize="x-small")
        ax.text(lo * 1.1, min(peak, lo * 1.1 * bw / 1e3), "HBM %.4g GB/s" % bw, ha="left", va="bottom",
                fontsize="x-small", rotation=30)
        for wi, wl in enumerate(workloads):
            pts = [(r.num["mem:intensity"], r.num["tflops"]) for r in results.ok
                   if r.workload == wl and results.config(r) == c and r.num.get("mem:intensity")
                   and r.num.get("tflops")]
            if pts:
                h = ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=14, color="C%d" % (wi % 10),
                               alpha=0.8, label=wl)
                handles.setdefault(wl, h)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(ylo, max(peaks) * 2)
        ax.set_title(labels[ci].replace("\n", ", "), fontsize="small")
        ax.grid(True, which="major", alpha=0.3)
        if ci // ncols == nrows - 1:
            ax.set_xlabel("arithmetic intensity (flop / byte of device memory)")
        if ci % ncols == 0:
            ax.set_ylabel("achieved TFLOPS")
    for pi in range(len(configs), nrows * ncols):
        axes[pi // ncols][pi % ncols].set_visible(False)
    fig.suptitle("Is each layer bound by compute or by memory? (achieved TFLOPS against flop/byte, one point per "
                 "layer; the line: the dtype's peak on the array, the HBM bandwidth)")
    fig.legend(list(handles.values()), list(handles), loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small")
    fig.tight_layout()
    path = os.path.join(out_dir, name)
    if note:
        emit("note: " + note)
    _save(fig, path)
    index.append((name, "Is each layer compute- or memory-bound? Each layer at its flop/byte against its achieved "
                        "TFLOPS, under the configuration's peak (dtype x array x clock) and HBM bandwidth ceilings; "
                        "points far below the line lose time on the array itself (see accounting.png)"))
    emit(path)


def fp8_rate_notes(results):
    """Notes for configurations that ran an fp8 dtype without double_row: one contraction row per partition, the bf16
    rate, so their figures equal bf16's. `pe-vp sweep`'s summary.json beside RESULTS_CSV has them from the plan (which
    knows a double_row fixed in [set], which no p: column shows); without it, one per fp8 dtype whose rows have no
    p:double_row = true."""
    summary = os.path.join(os.path.dirname(os.path.abspath(results.path)), "summary.json")
    try:
        with open(summary) as f:
            notes = json.load(f).get("notes")
        if isinstance(notes, list) and all(isinstance(n, str) for n in notes):
            return notes
    except (OSError, ValueError, AttributeError):
        pass  # no summary.json (a CSV on its own), or not pe-vp sweep's: the CSV's columns tell
    notes = []
    if "dtype" not in results.fieldnames:
        return notes
    by_dtype = {}
    for r in results.rows:
        dtype = r.raw.get("dtype", "").strip()
        double_row = r.raw.get("p:double_row", "").strip().lower() == "true"
        if dtype.lower().startswith("fp8") and not double_row:
            by_dtype.setdefault(dtype, set()).add(r.raw.get("gen", "").strip().upper())
    for dtype, gens in by_dtype.items():
        fix = ("MAVERICK has no fp8 double_row (an MX dtype pumps more rows)" if gens == {"MAVERICK"} else
               "set double_row = true in the spec ([set] or [grid]) to contract two fp8 rows per partition, twice "
               "the rate")
        notes.append("dtype %s ran without double_row, so at the bf16 rate (one contraction row per partition: the "
                     "same cycles and peak as bf16): %s" % (dtype, fix))
    return notes


def _fmt(v, unit=""):
    return ("%.3g" % v) + unit if v is not None else "n/a"


def answer(results, table, baseline):
    """The summary's answer per workload: {workload: {...}} with the fastest and the most efficient configuration and
    the figures that say why (peak x utilisation, the accounting)."""
    varying = results.varying_dims()
    vi = [results.dims.index(d) for d in varying]

    def label(c):
        return _combo_label(varying, [c[i] for i in vi]) or "the only configuration"

    out = {}
    for wl in results.distinct("workload"):
        rows = [(c, v) for (w, c), v in table.items() if w == wl and v["complete"] and v["time_ms"]]
        if not rows:
            continue
        fastest = min(rows, key=lambda cv: cv[1]["time_ms"])
        slowest = max(rows, key=lambda cv: cv[1]["time_ms"])
        busiest = max(rows, key=lambda cv: cv[1]["utilisation"] or 0)
        eff = [(c, v) for c, v in rows if v["energy"] and v["energy"]["tops_per_w"]]
        best_eff = max(eff, key=lambda cv: cv[1]["energy"]["tops_per_w"]) if eff else None

        def lost(v):
            items = sorted(((a, f) for a, f in v["accounting"].items() if a != "useful" and f >= 0.005),
                           key=lambda af: -af[1])
            return ", ".join("%s %.0f%%" % (a, 100 * f) for a, f in items[:3]) or "none"

        def entry(cv):
            c, v = cv
            e = {"configuration": label(c), "time_ms": v["time_ms"], "speedup": v["speedup"],
                 "utilisation": v["utilisation"], "peak_tflops": v["peak_tflops"], "tflops": v["tflops"],
                 "accounting": v["accounting"]}
            if v["energy"]:
                e.update(v["energy"])
            return e
        out[wl] = {"fastest": entry(fastest), "slowest": entry(slowest), "busiest": entry(busiest),
                   "most_efficient": entry(best_eff) if best_eff else None, "lost_fastest": lost(fastest[1]),
                   "lost_busiest": lost(busiest[1])}
    return out


def summary_lines(results, table, baseline, answers, notes):
    lines = []
    if baseline is not None:
        lines.append("Baseline for the speedups: %s (%s)." % (baseline.label, baseline.why))
        lines.append("")
    for wl, a in answers.items():
        f, s, b, e = a["fastest"], a["slowest"], a["busiest"], a["most_efficient"]
        lines.append("**%s**" % wl)
        lines.append("- Fastest: %s, %s ms%s; slowest: %s, %s ms." % (
            f["configuration"], _fmt(f["time_ms"]),
            " (%.2fx the baseline)" % f["speedup"] if f["speedup"] else "", s["configuration"], _fmt(s["time_ms"])))
        if e:
            lines.append("- Most efficient: %s, %s TOPS/W (%s mJ per run)%s." % (
                e["configuration"], _fmt(e["tops_per_w"]), _fmt(e["energy_pj"] * 1e-9),
                "" if e["configuration"] == f["configuration"] else "; the fastest runs at %s TOPS/W"
                % _fmt(f.get("tops_per_w"))))
        why = ("- Why: time = flops / (peak x utilisation). The fastest has a peak of %s TFLOPS at %.0f%% utilisation "
               "= %s TFLOPS achieved; its PE-cycles not useful: %s." % (
                   _fmt(f["peak_tflops"]), 100 * (f["utilisation"] or 0), _fmt(f["tflops"]), a["lost_fastest"]))
        if b["configuration"] != f["configuration"]:
            why += (" The busiest array, %s, is at %.0f%% utilisation but of a %s TFLOPS peak = %s TFLOPS (not useful:"
                    " %s)." % (b["configuration"], 100 * (b["utilisation"] or 0), _fmt(b["peak_tflops"]),
                               _fmt(b["tflops"]), a["lost_busiest"]))
        lines.append(why)
        lines.append("")
    for n in notes:
        lines.append("Note: " + n + ".")
    return lines


def write_index(out_dir, results, index, summary, report):
    """OUT_DIR/README.md (the plots, one line each, and the summary) and OUT_DIR/report.json (the same figures)."""
    text = ["# Sweep plots: %s" % os.path.basename(os.path.dirname(os.path.abspath(results.path))), "",
            "Made by scripts/sweep_plots.py from %s." % os.path.basename(results.path), "", "## Answer", ""]
    text += summary or ["(no complete network point with time_ns)"]
    text += ["", "## Plots", ""]
    text += ["- [%s](%s): %s" % (name, name, what) for name, what in index]
    text.append("")
    text.append("stall:ififo_full is back-pressure (the SEQ waiting to push into a full instruction FIFO while the "
                "array works): a sign of a busy array, not a bottleneck; stalls.png draws it in a panel of its own.")
    for name, content in (("README.md", "\n".join(text) + "\n"),
                          ("report.json", json.dumps(report, indent=1, sort_keys=True) + "\n")):
        path = os.path.join(out_dir, name)
        try:
            with open(path, "w") as f:
                f.write(content)
        except OSError as e:
            raise InputError("%s: cannot write: %s" % (path, e.strerror or e))
    return [os.path.join(out_dir, "README.md"), os.path.join(out_dir, "report.json")]


def make_plots(results, out_dir, emit, max_configs=None, baseline_args=()):
    table = network_table(results)
    chosen = parse_baseline_args(results, baseline_args)
    baseline = choose_baseline(results, table, chosen)
    add_speedups(table, baseline)
    if results.duplicate_layers:
        emit("note: a workload has the same layer more than once in one configuration: its rows are summed")
    for net in networks(results).values():
        if not net.complete:
            where = _combo_label(results.dims, net.config) or "the only configuration"
            emit("note: %s at %s is incomplete (%d of %d layer row(s) not ok): left out of the network-level plots"
                 % (net.workload, where, len(net.rows) - len(net.ok_rows), len(net.rows)))
    if baseline is not None and "time_ns" in results.fieldnames:
        emit("baseline: %s (%s)" % (baseline.label, baseline.why))
    notes = fp8_rate_notes(results)
    for n in notes:
        emit("note: " + n)
    index = []
    report = {"axes": [{"parameter": _label_name(a),
                        "kind": "numeric" if _numeric_param(results, a) is not None else "categorical",
                        "values": [v for v in results.distinct(a) if v.strip()]} for a in swept_axes(results)],
              "baseline": None if baseline is None else {
        "configuration": baseline.label, "why": baseline.why,
        "values": {_label_name(d): v for d, v in zip(results.dims, baseline.config)}}, "notes": notes}
    plot_time(results, table, out_dir, emit, index)
    plot_speedup(results, table, baseline, out_dir, emit, index)
    plot_utilisation(results, table, out_dir, emit, index)
    plot_tflops(results, table, out_dir, emit, index)
    plot_accounting(results, table, out_dir, emit, index)
    plot_energy(results, table, out_dir, emit, index)
    plot_roofline(results, table, out_dir, emit, index, report)
    plot_stalls(results, table, out_dir, emit, index)
    plot_layers(results, out_dir, emit, index, max_configs=max_configs)
    answers = answer(results, table, baseline)
    report["networks"] = [{"workload": w, "configuration": _combo_label(results.dims, c),
                           "values": {_label_name(d): x for d, x in zip(results.dims, c)},
                           "complete": v["complete"], "time_ms": v["time_ms"], "speedup": v["speedup"],
                           "utilisation": v["utilisation"], "tflops": v["tflops"], "peak_tflops": v["peak_tflops"],
                           "accounting": v["accounting"], "energy": v["energy"]}
                          for (w, c), v in table.items()]
    report["answer"] = answers
    if index or answers:
        for path in write_index(out_dir, results, index, summary_lines(results, table, baseline, answers, notes),
                                report):
            emit(path)


# ---------------------------------------------------------------------------------------------- main

def prepare_out_dir(out_dir):
    """Create OUT_DIR if needed and check a file can be written there; InputError if not."""
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise InputError("%s: output directory is an existing file" % out_dir)
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        raise InputError("%s: cannot create output directory: %s" % (out_dir, e.strerror or e))
    try:
        fd, probe = tempfile.mkstemp(prefix=".sweep_plots.", dir=out_dir)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise InputError("%s: output directory is not writable: %s" % (out_dir, e.strerror or e))


def build_parser():
    p = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", metavar="RESULTS_CSV", help="results CSV written by `pe-vp sweep`")
    p.add_argument("out_dir", metavar="OUT_DIR", help="output directory (created if missing)")
    p.add_argument("--format", choices=("png", "scalesim"), default="png",
                   help="png: the plots (default); scalesim: OUT_DIR/COMPUTE_REPORT.csv only")
    p.add_argument("--max-configs", type=int, default=None, metavar="N",
                   help="configurations drawn per per-layer plot (default: every one; N: the first N in CSV order)")
    p.add_argument("--baseline", action="append", default=[], metavar="NAME=VALUE",
                   help="the speedups' baseline configuration, by its swept values (repeat for each parameter; "
                        "default: the first complete configuration in the CSV)")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.max_configs is not None and args.max_configs < 1:
        print("%s: error: --max-configs must be at least 1" % PROG, file=sys.stderr)
        return EXIT_INPUT

    def emit(text):
        print(text, flush=True)

    try:
        results = read_results(args.results, REQUIRED_SCALESIM if args.format == "scalesim" else REQUIRED)
        prepare_out_dir(args.out_dir)
        for status, n in results.skipped.items():
            emit("skipped %d row(s) with status %s" % (n, status or "(empty)"))
        if args.format == "scalesim":
            for path in write_scalesim(results, args.out_dir):
                emit(path)
        else:
            if not results.ok:
                emit("note: no ok rows: nothing to plot")
            make_plots(results, args.out_dir, emit, max_configs=args.max_configs, baseline_args=args.baseline)
    except InputError as e:
        print("%s: error: %s" % (PROG, e), file=sys.stderr)
        return EXIT_INPUT
    return 0


if __name__ == "__main__":
    sys.exit(main())
