#!/usr/bin/python3
"""Tests of scripts/regfile_gen.py (standard library only).

    test_regfile_gen.py [unittest args, e.g. CensusTest -v]

Environment: PEVP_SOURCE_DIR (default: two levels up from this file) and, optionally,
PEVP_REGFILE_GEN_DIR (the build's generated files, compared with a fresh generation).
Exit status 77 (ctest SKIP_RETURN_CODE) when only VerilatorLintTest was selected and
verilator is not installed.
"""

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("PEVP_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
GENERATOR = os.path.join(ROOT, "scripts", "regfile_gen.py")
SCHEMA_DIR = os.path.join(ROOT, "models", "regfile", "schemas")
BUILD_GEN_DIR = os.environ.get("PEVP_REGFILE_GEN_DIR", "")
SCHEMAS = ["tpb_arr_seq_top_host_visible", "tpb_arr_seq_top_protected",
           "tpb_arr_seq_cluster_host_visible", "vp_seq", "dma"]
VP_SCHEMAS = ["vp_seq", "dma"]  # the model's own faces (VpDefined), not the spec's
TOP = "tpb_arr_seq_top_host_visible"


def outputs(name):
    return [f"{name}_regs.h", f"{name}_regs_c.h", f"{name}_table.cpp", f"{name}.v", f"{name}_rtl.h", f"{name}.md"]


def run_generator(schema_path, out_dir):
    return subprocess.run([sys.executable, "-B", GENERATOR, schema_path, "--out-dir", out_dir],
                          capture_output=True, text=True, check=False)


def schema_path(name):
    return os.path.join(SCHEMA_DIR, f"{name}.json")


def load_schema(name):
    with open(schema_path(name), encoding="utf-8") as fh:
        return json.load(fh)


def read_bytes(path):
    with open(path, "rb") as fh:
        return fh.read()


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="regfile_gen_test.")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def generate(self, name, sub="out"):
        out = os.path.join(self.tmp, sub)
        res = run_generator(schema_path(name), out)
        self.assertEqual(res.returncode, 0, f"{name}: {res.stderr}")
        self.assertEqual(res.stderr, "")
        return out


# ---------------------------------------------------------------------------
class GenerateTest(TempDirTest):
    """The real schemas generate their files each."""

    def test_all_schemas_generate(self):
        for name in SCHEMAS:
            with self.subTest(schema=name):
                out = self.generate(name, sub=name)
                self.assertEqual(sorted(os.listdir(out)), sorted(outputs(name)))
                for f in outputs(name):
                    self.assertGreater(os.path.getsize(os.path.join(out, f)), 0, f)

    def test_outputs_name_the_schema_not_a_path_or_time(self):
        out = self.generate(TOP)
        for f in outputs(TOP):
            with open(os.path.join(out, f), encoding="utf-8") as fh:
                text = fh.read()
            self.assertIn(f"{TOP}.json", text, f)
            self.assertNotIn(ROOT, text, f"{f} embeds an absolute path")
            self.assertNotIn(self.tmp, text, f)

    def test_build_outputs_are_current(self):
        if not BUILD_GEN_DIR:
            self.skipTest("PEVP_REGFILE_GEN_DIR not set")
        for name in SCHEMAS:
            out = self.generate(name, sub=name)
            for f in outputs(name):
                with self.subTest(file=f):
                    self.assertEqual(read_bytes(os.path.join(BUILD_GEN_DIR, f)),
                                     read_bytes(os.path.join(out, f)),
                                     f"build's {f} differs from a fresh generation")

    def test_vp_schema_is_marked(self):
        for name in SCHEMAS:
            if name not in VP_SCHEMAS:
                self.assertNotIn("VpDefined", load_schema(name))
        for name in VP_SCHEMAS:
            with self.subTest(schema=name):
                self.assertIs(load_schema(name).get("VpDefined"), True)
                out = self.generate(name, sub=name)
                with open(os.path.join(out, f"{name}_regs.h"), encoding="utf-8") as fh:
                    self.assertIn("kVpDefined = true", fh.read())
                with open(os.path.join(out, f"{name}.md"), encoding="utf-8") as fh:
                    self.assertIn("VP-defined", fh.read())


# ---------------------------------------------------------------------------
class DeterminismTest(TempDirTest):
    def test_two_runs_are_byte_identical(self):
        for name in SCHEMAS:
            with self.subTest(schema=name):
                a = self.generate(name, sub=f"{name}.a")
                b = self.generate(name, sub=f"{name}.b")
                for f in outputs(name):
                    self.assertEqual(read_bytes(os.path.join(a, f)), read_bytes(os.path.join(b, f)), f)

    def test_regenerating_in_place_is_byte_identical(self):
        out = self.generate(TOP)
        before = {f: read_bytes(os.path.join(out, f)) for f in outputs(TOP)}
        self.generate(TOP)
        for f in outputs(TOP):
            self.assertEqual(before[f], read_bytes(os.path.join(out, f)), f)
        self.assertEqual(sorted(os.listdir(out)), sorted(outputs(TOP)), "temporary files left behind")


# ---------------------------------------------------------------------------
class SchemaErrorTest(TempDirTest):
    """One broken copy per error class: non-zero exit, a message naming the file and the
    bundle / register / field, and nothing written."""

    def run_broken(self, name, mutate=None, text=None):
        doc = copy.deepcopy(load_schema(name))
        if mutate is not None:
            mutate(doc["RegFile"])
        path = os.path.join(self.tmp, f"{name}.json")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text if text is not None else json.dumps(doc, indent=2))
        out = os.path.join(self.tmp, "out")
        res = run_generator(path, out)
        self.assertNotEqual(res.returncode, 0, "a broken schema was accepted")
        self.assertFalse(os.path.exists(out) and os.listdir(out), f"files written: {os.listdir(out) if os.path.exists(out) else ''}")
        self.assertIn(path, res.stderr)
        self.assertIn("nothing written", res.stderr)
        return res.stderr

    @staticmethod
    def bundle(rf, name):
        return next(b for b in rf["RegistersBundleArrays"] if b["name"] == name)

    @staticmethod
    def register(rf, bundle, name):
        return next(r for r in SchemaErrorTest.bundle(rf, bundle)["Registers"] if r["name"] == name)

    @staticmethod
    def field(rf, bundle, reg, name):
        return next(f for f in SchemaErrorTest.register(rf, bundle, reg)["BitFields"] if f["name"] == name)

    def assertNames(self, err, bundle=None, register=None, field=None):
        for kind, value in (("bundle", bundle), ("register", register), ("field", field)):
            if value is not None:
                self.assertIn(f"{kind} '{value}'", err)

    def test_overlapping_registers(self):
        def mutate(rf):
            self.register(rf, "arr_seq_cfg", "spare_register1")["AddressOffset"] = "0x8"
        err = self.run_broken(TOP, mutate)
        self.assertNames(err, "arr_seq_cfg", "spare_register1")
        self.assertIn("overlaps bundle 'arr_seq_cfg' register 'spare_register0'", err)

    def test_overlapping_registers_after_array_expansion(self):
        def mutate(rf):
            # 3 registers (12 bytes) per queue instance; a 0x8 stride folds instance 1 onto instance 0.
            self.bundle(rf, "arr_seq_queue_debug")["BundleSizeInBytes"] = "0x8"
        err = self.run_broken(TOP, mutate)
        self.assertNames(err, "arr_seq_queue_debug", "queue_debug_vector_0")
        self.assertIn("instance 1 at 0x708 overlaps bundle 'arr_seq_queue_debug' register 'queue_debug_vector_2' instance 0", err)

    def test_overlapping_bundles(self):
        def mutate(rf):
            self.bundle(rf, "arr_seq_top_debug")["AddressOffset"] = "0x820"
        err = self.run_broken(TOP, mutate)
        self.assertNames(err, "arr_seq_top_debug", "arr_seq_debug_vector")
        self.assertIn("overlaps", err)

    def test_register_outside_size(self):
        def mutate(rf):
            self.bundle(rf, "seq_semaphore")["AddressOffset"] = "0xf84"
        err = self.run_broken("vp_seq", mutate)
        self.assertNames(err, "seq_semaphore", "semaphore")
        self.assertIn("instance 31 at 0x1000 is outside SizeInBytes 0x1000", err)

    def test_register_outside_bundle(self):
        def mutate(rf):
            self.register(rf, "arr_seq_cfg", "spare_register3")["AddressOffset"] = "0x40"
        err = self.run_broken(TOP, mutate)
        self.assertNames(err, "arr_seq_cfg", "spare_register3")
        self.assertIn("outside its bundle", err)

    def test_misaligned_register(self):
        def mutate(rf):
            self.register(rf, "arr_seq_cluster_cfg", "spare_register0")["AddressOffset"] = "0x2a"
        err = self.run_broken("tpb_arr_seq_cluster_host_visible", mutate)
        self.assertNames(err, "arr_seq_cluster_cfg", "spare_register0")
        self.assertIn("misaligned", err)

    def test_field_outside_32_bits(self):
        def mutate(rf):
            self.field(rf, "arr_seq_cluster_cfg", "arr_cluster_cfg", "wl_last_active_col")["Position"] = "[32:25]"
        err = self.run_broken("tpb_arr_seq_cluster_host_visible", mutate)
        self.assertNames(err, "arr_seq_cluster_cfg", "arr_cluster_cfg", "wl_last_active_col")
        self.assertIn("field outside 32 bits", err)

    def test_overlapping_fields(self):
        def mutate(rf):
            self.field(rf, "arr_seq_cluster_cfg", "arr_cluster_cfg", "p2fifo_af")["Position"] = "[4:0]"
        err = self.run_broken("tpb_arr_seq_cluster_host_visible", mutate)
        self.assertNames(err, "arr_seq_cluster_cfg", "arr_cluster_cfg", "flush_p2f_fifos")
        self.assertIn("overlaps field 'p2fifo_af' [4:0]", err)

    def test_reset_wider_than_field(self):
        def mutate(rf):
            self.field(rf, "arr_seq_cluster_cfg", "arr_cluster_cfg", "inter_instr_dly_cnt")["ResetValue"] = "0x40"
        err = self.run_broken("tpb_arr_seq_cluster_host_visible", mutate)
        self.assertNames(err, "arr_seq_cluster_cfg", "arr_cluster_cfg", "inter_instr_dly_cnt")
        self.assertIn("reset value 0x40 is wider than the 6-bit field [21:16]", err)

    def test_pulse_with_nonzero_reset(self):
        def mutate(rf):
            self.field(rf, "arr_seq_cfg", "perf_cntr_cfg", "cntr_rst")["ResetValue"] = "0x1"
        err = self.run_broken(TOP, mutate)
        self.assertNames(err, "arr_seq_cfg", "perf_cntr_cfg", "cntr_rst")
        self.assertIn("PulseOnW", err)

    def test_duplicate_register_name(self):
        def mutate(rf):
            self.register(rf, "arr_seq_cfg", "spare_register1")["name"] = "spare_register0"
        err = self.run_broken(TOP, mutate)
        self.assertNames(err, "arr_seq_cfg", "spare_register0")
        self.assertIn("duplicate register name", err)

    def test_duplicate_field_name(self):
        def mutate(rf):
            self.field(rf, "arr_seq_cfg", "queue_cfg", "bypass_peregwrite_instr")["name"] = "fifo_size_sel"
        err = self.run_broken(TOP, mutate)
        self.assertNames(err, "arr_seq_cfg", "queue_cfg", "fifo_size_sel")
        self.assertIn("duplicate field name", err)

    def test_duplicate_bundle_name(self):
        def mutate(rf):
            self.bundle(rf, "arr_seq_ififo_perf_matmul")["name"] = "arr_seq_ififo_perf_weight_load"
        err = self.run_broken(TOP, mutate)
        self.assertNames(err, "arr_seq_ififo_perf_weight_load")
        self.assertIn("duplicate bundle name", err)

    def test_duplicate_flat_name(self):
        # bundle 'arr_seq' + register 'cfg_queue_cfg' and bundle 'arr_seq_cfg' + register 'queue_cfg'
        # would both be offsets::arr_seq_cfg_queue_cfg in the driver header.
        def mutate(rf):
            rf["RegistersBundleArrays"].append({
                "name": "arr_seq", "AddressOffset": "0x900", "BundleSizeInBytes": "0x4", "ArraySize": 1,
                "Registers": [{"name": "cfg_queue_cfg", "AddressOffset": "0x0", "BitFields": [
                    {"name": "value", "Position": "[31:0]", "Access": "RO", "ResetValue": "0x0"}]}]})
        err = self.run_broken(TOP, mutate)
        self.assertNames(err, "arr_seq", "cfg_queue_cfg")
        self.assertIn("duplicate name: the flat name 'arr_seq_cfg_queue_cfg'", err)

    def test_unknown_access_type(self):
        def mutate(rf):
            self.field(rf, "arr_seq_protected_cfg", "throttle_cfg", "disable_throttle")["Access"] = "WO"
        err = self.run_broken("tpb_arr_seq_top_protected", mutate)
        self.assertNames(err, "arr_seq_protected_cfg", "throttle_cfg", "disable_throttle")
        self.assertIn("unknown access type 'WO'", err)

    def test_bad_position_strings(self):
        for bad in ("[15-0]", "[0:15]", "bit 8", "", "[8:]"):
            with self.subTest(position=bad):
                def mutate(rf, bad=bad):
                    self.field(rf, "arr_seq_protected_cfg", "throttle_cfg", "hw_only_en_transfer_cnt_upd")["Position"] = bad
                err = self.run_broken("tpb_arr_seq_top_protected", mutate)
                self.assertNames(err, "arr_seq_protected_cfg", "throttle_cfg", "hw_only_en_transfer_cnt_upd")
                self.assertIn("bad Position", err)

    def test_bad_number(self):
        def mutate(rf):
            self.field(rf, "arr_seq_protected_cfg", "throttle_cfg", "disable_throttle")["ResetValue"] = "0x1fg"
        err = self.run_broken("tpb_arr_seq_top_protected", mutate)
        self.assertNames(err, "arr_seq_protected_cfg", "throttle_cfg", "disable_throttle")
        self.assertIn("is not a number", err)

    def test_bad_name(self):
        def mutate(rf):
            self.field(rf, "arr_seq_protected_cfg", "throttle_cfg", "disable_throttle")["name"] = "Disable-Throttle"
        err = self.run_broken("tpb_arr_seq_top_protected", mutate)
        self.assertNames(err, "arr_seq_protected_cfg", "throttle_cfg")
        self.assertIn("bad field name 'Disable-Throttle'", err)

    def test_keyword_name(self):
        def mutate(rf):
            self.register(rf, "arr_seq_protected_cfg", "throttle_cfg")["name"] = "register"
        err = self.run_broken("tpb_arr_seq_top_protected", mutate)
        self.assertIn("bad register name 'register'", err)

    def test_name_must_match_file(self):
        def mutate(rf):
            rf["Name"] = "tpb_arr_seq_top_protected2"
        err = self.run_broken("tpb_arr_seq_top_protected", mutate)
        self.assertIn("does not match the file name 'tpb_arr_seq_top_protected.json'", err)

    def test_unknown_key(self):
        def mutate(rf):
            self.field(rf, "arr_seq_protected_cfg", "throttle_cfg", "disable_throttle")["Acess"] = "RW"
        err = self.run_broken("tpb_arr_seq_top_protected", mutate)
        self.assertNames(err, "arr_seq_protected_cfg", "throttle_cfg")
        self.assertIn("unknown key 'Acess'", err)

    def test_missing_key(self):
        def mutate(rf):
            del self.field(rf, "arr_seq_protected_cfg", "throttle_cfg", "disable_throttle")["Position"]
        err = self.run_broken("tpb_arr_seq_top_protected", mutate)
        self.assertNames(err, "arr_seq_protected_cfg", "throttle_cfg")
        self.assertIn("missing key 'Position'", err)

    def test_malformed_json_reports_line_and_column(self):
        with open(schema_path("tpb_arr_seq_top_protected"), encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        # Drop the comma that ends the "Name" line: the next key is then unexpected.
        idx = next(i for i, l in enumerate(lines) if l.strip().startswith('"Name"'))
        self.assertTrue(lines[idx].endswith(","))
        lines[idx] = lines[idx][:-1]
        err = self.run_broken("tpb_arr_seq_top_protected", text="\n".join(lines))
        m = re.search(r"tpb_arr_seq_top_protected\.json:(\d+):(\d+): malformed JSON", err)
        self.assertIsNotNone(m, err)
        self.assertEqual(int(m.group(1)), idx + 2, err)  # the error is at the next line (1-based)

    def test_duplicate_json_key(self):
        with open(schema_path("tpb_arr_seq_top_protected"), encoding="utf-8") as fh:
            text = fh.read()
        text = text.replace('"AddrWidth": 12,', '"AddrWidth": 12, "AddrWidth": 13,', 1)
        err = self.run_broken("tpb_arr_seq_top_protected", text=text)
        self.assertIn("duplicate key 'AddrWidth'", err)

    def test_existing_outputs_are_left_alone(self):
        out = self.generate("tpb_arr_seq_top_protected")
        before = {f: read_bytes(os.path.join(out, f)) for f in outputs("tpb_arr_seq_top_protected")}
        doc = load_schema("tpb_arr_seq_top_protected")
        doc["RegFile"]["RegistersBundleArrays"][0]["Registers"][0]["BitFields"][0]["ResetValue"] = "0x200"
        path = os.path.join(self.tmp, "tpb_arr_seq_top_protected.json")
        with open(path, "w") as fh:
            json.dump(doc, fh)
        res = run_generator(path, out)
        self.assertNotEqual(res.returncode, 0)
        for f, data in before.items():
            self.assertEqual(read_bytes(os.path.join(out, f)), data, f)
        self.assertEqual(sorted(os.listdir(out)), sorted(before))


# ---------------------------------------------------------------------------
FIELD_RE = re.compile(r'^    \{"(\w+)", (\d+), (\d+), Access::(\w+), 0x([0-9a-f]+)u, "(.*)"\},$')
FIELDS_HEAD_RE = re.compile(r"^constexpr FieldDesc kFields(\d+)\[\] = \{  // (\w+)\.(\w+)$")
REG_RE = re.compile(r'^    \{"(\w+)", "(\w+)", "(\w+)", (\d+)u, 0x([0-9a-f]+)u, (\d+)u, "(.*)", kFields(\d+), '
                    r'std::size\(kFields(\d+)\)\},$')


def parse_table(path):
    """The generated _table.cpp back into Python: {definition: (bundle, name, [fields])}, [registers]."""
    defs, regs, current = {}, [], None
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            m = FIELDS_HEAD_RE.match(line)
            if m:
                current = int(m.group(1))
                defs[current] = (m.group(2), m.group(3), [])
                continue
            m = FIELD_RE.match(line)
            if m and current is not None:
                defs[current][2].append({"name": m.group(1), "lsb": int(m.group(2)), "width": int(m.group(3)),
                                         "access": m.group(4), "reset": int(m.group(5), 16),
                                         "description": m.group(6)})
                continue
            if line == "};":
                current = None
            m = REG_RE.match(line)
            if m:
                regs.append({"name": m.group(1), "def_name": m.group(2), "bundle": m.group(3),
                             "instance": int(m.group(4)), "offset": int(m.group(5), 16),
                             "definition": int(m.group(6)), "description": m.group(7),
                             "fields": int(m.group(8))})
    return defs, regs


SHAPES = [(r, c) for r in (128, 64, 32) for c in (128, 64, 32)]


def tile_indices(r, c):
    return sorted(qr * 4 + qc for qr in range(0, 4, r // 32) for qc in range(0, 4, c // 32))


class CensusTest(TempDirTest):
    """The top schema's numbers (003 section 2), read back from the GENERATED table and header."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="regfile_gen_census.")
        res = run_generator(schema_path(TOP), cls.dir)
        assert res.returncode == 0, res.stderr
        cls.defs, cls.regs = parse_table(os.path.join(cls.dir, f"{TOP}_table.cpp"))
        with open(os.path.join(cls.dir, f"{TOP}_regs.h"), encoding="utf-8") as fh:
            cls.header = fh.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_counts(self):
        self.assertEqual(len(self.defs), 305)
        self.assertEqual(sum(len(d[2]) for d in self.defs.values()), 308)
        self.assertEqual(len(self.regs), 358)
        self.assertEqual(len({r["definition"] for r in self.regs}), 305)
        for reg in self.regs:
            self.assertEqual(reg["fields"], reg["definition"])
        self.assertIn("kNumRegisters = 358;", self.header)
        self.assertIn("kNumDefinitions = 305;", self.header)
        self.assertIn("kNumFieldDefinitions = 308;", self.header)
        per_bundle = {}
        for d in self.defs.values():
            per_bundle[d[0]] = per_bundle.get(d[0], 0) + 1
        self.assertEqual(list(per_bundle.values()), [6, 98, 98, 98, 3, 1, 1])

    def test_offsets(self):
        offsets = [r["offset"] for r in self.regs]
        self.assertEqual(offsets, sorted(offsets))
        self.assertEqual(len(set(offsets)), 358)
        self.assertEqual(min(offsets), 0x000)
        self.assertEqual(max(offsets), 0x840)
        self.assertTrue(all(o % 4 == 0 and o + 3 <= 0x843 for o in offsets))
        flat = re.findall(r"^inline constexpr std::uint32_t (\w+) = (0x[0-9a-f]+);$",
                          self.header.split("namespace offsets {")[1], re.M)
        self.assertEqual(len(flat), 358)
        self.assertEqual(sorted(int(v, 16) for _, v in flat), offsets)

    def test_access_census(self):
        ro = [d for d in self.defs.values() if all(f["access"] == "RO" for f in d[2])]
        rw = [d for d in self.defs.values() if d not in ro]
        self.assertEqual(len(ro), 299)
        self.assertEqual(len(rw), 6)
        self.assertTrue(all(d[0] == "arr_seq_cfg" for d in rw))
        pulses = [(d[1], f["name"]) for d in self.defs.values() for f in d[2] if f["access"] == "PulseOnW"]
        self.assertEqual(pulses, [("perf_cntr_cfg", "cntr_rst")])

    def test_resets(self):
        nonzero = [(d[1], f["name"], f["reset"]) for d in self.defs.values() for f in d[2] if f["reset"]]
        self.assertEqual(nonzero, [("spare_register2", "spare_register2", 0xffffffff),
                                   ("spare_register3", "spare_register3", 0xffffffff)])
        zero = sum(1 for d in self.defs.values() for f in d[2] if f["reset"] == 0)
        self.assertEqual(zero, 306)

    def test_arr_seq_cfg(self):
        by_name = {r["name"]: r for r in self.regs if r["bundle"] == "arr_seq_cfg"}
        self.assertEqual({k: v["offset"] for k, v in by_name.items()},
                         {"queue_cfg": 0x0, "perf_cntr_cfg": 0x4, "spare_register0": 0x8,
                          "spare_register1": 0xc, "spare_register2": 0x10, "spare_register3": 0x14})
        fields = {(d[1], f["name"]): (f["lsb"], f["width"], f["access"])
                  for d in self.defs.values() if d[0] == "arr_seq_cfg" for f in d[2]}
        self.assertEqual(fields[("queue_cfg", "fifo_size_sel")], (0, 1, "RW"))
        self.assertEqual(fields[("queue_cfg", "bypass_peregwrite_instr")], (4, 1, "RW"))
        self.assertEqual(fields[("queue_cfg", "disable_dependency_check")], (8, 1, "RW"))
        self.assertEqual(fields[("perf_cntr_cfg", "cntr_en")], (0, 1, "RW"))
        self.assertEqual(fields[("perf_cntr_cfg", "cntr_rst")], (4, 1, "PulseOnW"))
        self.assertEqual(len(fields), 9)

    def test_perf_banks(self):
        """49 counters x (lsb, msb) per bank, the quadrant tile indices of 003 4.1, the rebuilt
        offset map (8-byte gap after every shape group), identical across the three banks."""
        expected = []
        rel = 0
        for r, c in SHAPES:
            for t in tile_indices(r, c):
                expected.append((rel, f"tile_{r}x{c}_tile{t}_instr_cnt_lsb", "cntr_lsb", 0, 32))
                expected.append((rel + 4, f"tile_{r}x{c}_tile{t}_instr_cnt_msb", "cntr_msb", 0, 16))
                rel += 8
            rel += 8
        self.assertEqual(len(expected), 98)
        self.assertEqual(expected[-1][0], 0x1c4)
        bank_lists = {}
        for bank, base in (("weight_load", 0x100), ("matmul", 0x300), ("pe_regwrite", 0x500)):
            bundle = f"arr_seq_ififo_perf_{bank}"
            regs = [r for r in self.regs if r["bundle"] == bundle]
            got = []
            for r in regs:
                f = self.defs[r["definition"]][2]
                self.assertEqual(len(f), 1)
                self.assertEqual(f[0]["access"], "RO")
                self.assertEqual(r["description"], "", "A2: per-bank register descriptions are empty")
                got.append((r["offset"] - base, r["name"], f[0]["name"], f[0]["lsb"], f[0]["width"]))
            self.assertEqual(got, expected, bundle)
            self.assertTrue(all(base <= r["offset"] < base + 0x200 for r in regs))
            bank_lists[bank] = [(o, n, self.defs[r["definition"]][2][0]["description"])
                                for (o, n, *_), r in zip(got, regs)]
        self.assertEqual(bank_lists["weight_load"], bank_lists["matmul"])
        self.assertEqual(bank_lists["weight_load"], bank_lists["pe_regwrite"])
        # The documented gaps of 003 4.2 hold no register.
        occupied = {o for o, *_ in expected}
        for lo, hi in ((0x008, 0x00f), (0x048, 0x04f), (0x060, 0x067), (0x088, 0x08f), (0x0d0, 0x0d7),
                       (0x140, 0x147), (0x1c8, 0x1ff)):
            self.assertFalse(any(lo <= o <= hi for o in occupied), hex(lo))

    def test_description_anomalies_kept(self):
        desc = {}
        for r in self.regs:
            if r["bundle"].startswith("arr_seq_ififo_perf_"):
                desc[(r["bundle"], r["name"])] = self.defs[r["definition"]][2][0]["description"]
        for bank in ("weight_load", "matmul", "pe_regwrite"):
            b = f"arr_seq_ififo_perf_{bank}"
            # A1: the 128x32 tile 2 pair describes "tile 3"; 64x32 tile 10 msb describes "tile 11".
            self.assertIn("128x32, tile 3:", desc[(b, "tile_128x32_tile2_instr_cnt_lsb")])
            self.assertIn("128x32, tile 3:", desc[(b, "tile_128x32_tile2_instr_cnt_msb")])
            self.assertIn("64x32, tile 10:", desc[(b, "tile_64x32_tile10_instr_cnt_lsb")])
            self.assertIn("64x32, tile 11:", desc[(b, "tile_64x32_tile10_instr_cnt_msb")])
            # A2: no description names the instruction class.
            for (bb, _), text in desc.items():
                if bb == b:
                    for word in ("weight", "matmul", "regwrite", "LdWeight", "Matmul"):
                        self.assertNotIn(word, text)
            wrong = [n for (bb, n), t in desc.items() if bb == b and
                     not re.search(rf"{n.split('_')[1]}, tile {n.split('_')[2][4:]}:", t)]
            self.assertEqual(sorted(wrong), ["tile_128x32_tile2_instr_cnt_lsb", "tile_128x32_tile2_instr_cnt_msb",
                                             "tile_64x32_tile10_instr_cnt_msb"])

    def test_debug_bundles(self):
        dbg = [r for r in self.regs if r["offset"] >= 0x700]
        self.assertEqual(len(dbg), 58)
        counts = {}
        for r in dbg:
            d = self.defs[r["definition"]]
            self.assertEqual(len(d[2]), 1)
            f = d[2][0]
            self.assertEqual((f["access"], f["reset"], f["lsb"], f["width"]), ("RO", 0, 0, 32))
            self.assertRegex(f["name"], r"^debug_vector_\d+$")
            counts[r["bundle"]] = counts.get(r["bundle"], 0) + 1
        self.assertEqual(counts, {"arr_seq_queue_debug": 48, "arr_seq_sbuf_rd_req_debug": 9, "arr_seq_top_debug": 1})
        queue_instances = {r["instance"] for r in dbg if r["bundle"] == "arr_seq_queue_debug"}
        self.assertEqual(queue_instances, set(range(16)))


# ---------------------------------------------------------------------------
class VerilatorLintTest(TempDirTest):
    def test_lint_generated_verilog(self):
        verilator = shutil.which("verilator")
        if verilator is None:
            self.skipTest("verilator is not installed")
        for name in SCHEMAS:
            with self.subTest(schema=name):
                out = self.generate(name, sub=name)
                res = subprocess.run([verilator, "--lint-only", "-Wall", os.path.join(out, f"{name}.v")],
                                     capture_output=True, text=True, cwd=out, check=False)
                self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
                self.assertEqual((res.stdout + res.stderr).strip(), "", "verilator printed warnings")



# ---------------------------------------------------------------------------
def parse_number(v):
    return v if isinstance(v, int) else int(v, 0)


def parse_pos(p):
    m = re.match(r"^\[(\d+):(\d+)\]$", p)
    if m:
        return int(m.group(1)), int(m.group(2))
    m = re.match(r"^\[?(\d+)\]?$", p)
    return int(m.group(1)), int(m.group(1))


def expand(doc):
    """The schema expanded straight from the JSON (independently of the generator):
    a list of per-instance dicts with the masks and ports the testbench needs."""
    rf = doc["RegFile"]
    regs = []
    for b in rf["RegistersBundleArrays"]:
        base, size, count = parse_number(b["AddressOffset"]), parse_number(b["BundleSizeInBytes"]), b["ArraySize"]
        for i in range(count):
            for r in b["Registers"]:
                inst = {"offset": base + i * size + parse_number(r["AddressOffset"]), "index": i, "count": count,
                        "bundle": b["name"], "name": r["name"], "fields": [], "rw": [], "ro": [], "pulse": []}
                for f in r["BitFields"]:
                    msb, lsb = parse_pos(f["Position"])
                    inst["fields"].append({"name": f["name"], "lsb": lsb, "width": msb - lsb + 1})
                    kind = {"RW": "rw", "RO": "ro", "PulseOnW": "pulse"}[f["Access"]]
                    suffix = {"rw": "_o", "ro": "_i", "pulse": "_pulse_o"}[kind]
                    inst[kind].append({"port": f"{b['name']}_{r['name']}_{f['name']}{suffix}", "lsb": lsb,
                                       "width": msb - lsb + 1, "reset": parse_number(f["ResetValue"])})
                regs.append(inst)
    # 48-bit counters: an RO pair <name>_lsb {cntr_lsb [31:0]} + <name>_msb {cntr_msb [15:0]} of one bundle
    # instance. The RTL keeps the count: no _i port; the pair reads the count, which starts at its reset.
    by_name = {(r["bundle"], r["index"], r["name"]): r for r in regs}
    for r in regs:
        msb = by_name.get((r["bundle"], r["index"], r["name"][:-4] + "_msb")) if r["name"].endswith("_lsb") else None
        if (msb and [(f["name"], f["lsb"], f["width"]) for f in r["fields"]] == [("cntr_lsb", 0, 32)] and
                [(f["name"], f["lsb"], f["width"]) for f in msb["fields"]] == [("cntr_msb", 0, 16)] and
                r["ro"] and msb["ro"]):
            base = r["name"][:-4] + (f"_{r['index']}" if r["count"] > 1 else "")
            for half, inst in (("lsb", r), ("msb", msb)):
                inst["counter"] = (f"{r['bundle']}_{base}", half)
                inst["counter_reset"] = inst["ro"][0]["reset"]
                inst["ro"] = []
    return rf, sorted(regs, key=lambda r: r["offset"])


def ro_pattern(offset, lsb):
    return ((offset + 1) * 0x9E3779B1 + lsb * 0x1F123BB5) & 0xffffffff


def write_pattern(offset):
    return ((offset ^ 0x5A5) * 0x85EBCA6B + 0xC2B2AE35) & 0xffffffff


def fmask(f):
    return ((1 << f["width"]) - 1) << f["lsb"]


def make_testbench(doc):
    """(module tb_<name> Verilog, {memory file: text}) testing the schema's generated APB slave.
    The module sets `done` when finished and prints "RESULT <name> PASS" or "... FAIL <n>"."""
    rf, regs = expand(doc)
    name, aw = rf["Name"], rf["AddrWidth"]
    size = parse_number(rf["SizeInBytes"])
    n = len(regs)
    ro_value, reset_value, written, wdata = {}, {}, {}, {}
    for r in regs:
        o = r["offset"]
        ro_value[o] = sum(ro_pattern(o, f["lsb"]) & fmask(f) for f in r["ro"]) + r.get("counter_reset", 0)
        reset_value[o] = sum(f["reset"] << f["lsb"] for f in r["rw"]) | ro_value[o]
        wdata[o] = write_pattern(o) | sum(fmask(f) for f in r["pulse"])   # every pulse bit written as 1
        written[o] = (wdata[o] & sum(fmask(f) for f in r["rw"])) | ro_value[o]
    ports = {}
    for r in regs:
        for kind in ("rw", "ro", "pulse"):
            for f in r[kind]:
                p = ports.setdefault(f["port"], {"kind": kind, "width": f["width"], "count": r["count"], "slices": {}})
                p["slices"][r["index"]] = (r["offset"], f)
    mapped = {r["offset"] for r in regs}
    unmapped = [o for o in range(0, size, 4) if o not in mapped][:3]
    if size - 4 not in mapped:
        unmapped.append(size - 4)
    unmapped += [regs[0]["offset"] + 1, regs[-1]["offset"] + 2]   # misaligned

    mem = {
        f"{name}.offsets.mem": "".join(f"{r['offset']:x}\n" for r in regs),
        f"{name}.reset.mem": "".join(f"{reset_value[r['offset']]:08x}\n" for r in regs),
        f"{name}.wdata.mem": "".join(f"{wdata[r['offset']]:08x}\n" for r in regs),
        f"{name}.written.mem": "".join(f"{written[r['offset']]:08x}\n" for r in regs),
    }

    def const(width, value):
        return f"{width}'h{value:x}"

    L = []
    w = L.append
    w(f"module tb_{name};")
    w("  reg done = 1'b0;")
    w("  reg PCLK = 1'b0;")
    w("  reg PRESETn = 1'b0;")
    w("  reg PSEL = 1'b0, PENABLE = 1'b0, PWRITE = 1'b0;")
    w(f"  reg [{aw - 1}:0] PADDR = {aw}'h0;")
    w("  reg [31:0] PWDATA = 32'h0;")
    w("  wire [31:0] PRDATA;")
    w("  wire PREADY, PSLVERR;")
    w("  integer errors = 0;")
    w("  integer i;")
    w("  reg [31:0] got;")
    w("  reg got_err;")
    w(f"  reg [{aw - 1}:0] offs [0:{n - 1}];")
    w(f"  reg [31:0] rst_val [0:{n - 1}];")
    w(f"  reg [31:0] wdata [0:{n - 1}];")
    w(f"  reg [31:0] written [0:{n - 1}];")
    for pname, p in ports.items():
        total = p["width"] * p["count"]
        w(f"  wire [{total - 1}:0] {pname};")
        if p["kind"] == "ro":
            value = 0
            for idx, (o, f) in p["slices"].items():
                value |= ((ro_pattern(o, f["lsb"]) >> f["lsb"]) & ((1 << f["width"]) - 1)) << (idx * f["width"])
            w(f"  assign {pname} = {const(total, value)};")
    counters = sorted({r["counter"][0] for r in regs if "counter" in r})
    counter_ports = []
    if counters:
        w("  reg counters_clear_i = 1'b0;")
        counter_ports.append("counters_clear_i")
    for c in counters:
        w(f"  reg [31:0] {c}_inc_i = 32'h0;")
        w(f"  wire [47:0] {c}_cnt_o;")
        counter_ports += [f"{c}_inc_i", f"{c}_cnt_o"]
    w("  wire [3:0] PSTRB = 4'hf;")
    w("  wire [2:0] PPROT = 3'b010;")
    w("  always #5 PCLK = ~PCLK;")
    conns = ["PCLK", "PRESETn", "PSEL", "PENABLE", "PWRITE", "PADDR", "PWDATA", "PSTRB", "PPROT", "PRDATA", "PREADY",
             "PSLVERR"] + list(ports) + counter_ports
    w(f"  {name} dut (" + ", ".join(f".{c}({c})" for c in conns) + ");")
    w(f"  task apb(input wr, input [{aw - 1}:0] a, input [31:0] d);")
    w("    begin")
    w("      @(negedge PCLK); PSEL = 1'b1; PENABLE = 1'b0; PWRITE = wr; PADDR = a; PWDATA = d;")
    w("      @(negedge PCLK); PENABLE = 1'b1;")
    w("      #1; got = PRDATA; got_err = PSLVERR;")
    w("      if (PREADY !== 1'b1) begin errors = errors + 1; $display(\"FAIL PREADY low at %h\", a); end")
    w("      @(posedge PCLK); #1; PSEL = 1'b0; PENABLE = 1'b0; PWRITE = 1'b0;")
    w("    end")
    w("  endtask")
    w(f"  task check_read(input [{aw - 1}:0] a, input [31:0] exp, input exp_err);")
    w("    begin")
    w("      apb(1'b0, a, 32'h0);")
    w("      if (got !== exp || got_err !== exp_err) begin")
    w("        errors = errors + 1;")
    w("        $display(\"FAIL read %h: PRDATA %h PSLVERR %b, expected %h %b\", a, got, got_err, exp, exp_err);")
    w("      end")
    w("    end")
    w("  endtask")
    w(f"  task check_write(input [{aw - 1}:0] a, input [31:0] d, input exp_err);")
    w("    begin")
    w("      apb(1'b1, a, d);")
    w("      if (got_err !== exp_err) begin")
    w("        errors = errors + 1; $display(\"FAIL write %h: PSLVERR %b, expected %b\", a, got_err, exp_err);")
    w("      end")
    w("    end")
    w("  endtask")
    w("  task expect_value(input [8*64-1:0] what, input [31:0] value, input [31:0] exp);")
    w("    begin")
    w("      if (value !== exp) begin")
    w("        errors = errors + 1; $display(\"FAIL %0s = %h, expected %h\", what, value, exp);")
    w("      end")
    w("    end")
    w("  endtask")

    def slices(pname, p):
        total = p["width"] * p["count"]
        for k in range(0, total, 32):
            hi = min(k + 32, total) - 1
            yield f"{pname}[{hi}:{k}]", k, hi - k + 1

    def check_pulses(active):
        for pname, p in ports.items():
            if p["kind"] != "pulse":
                continue
            exp = 0
            if pname in active:
                idx, val = active[pname]
                exp = val << (idx * p["width"])
            for sl, lo, width in slices(pname, p):
                w(f"    expect_value(\"{sl}\", {{{32 - width}'h0, {sl}}}, 32'h{(exp >> lo) & ((1 << width) - 1):x});"
                  if width < 32 else f"    expect_value(\"{sl}\", {sl}, 32'h{(exp >> lo) & 0xffffffff:x});")

    def check_rw_ports(state):
        for pname, p in ports.items():
            if p["kind"] != "rw":
                continue
            exp = 0
            for idx, (o, f) in p["slices"].items():
                exp |= ((state[o] >> f["lsb"]) & ((1 << f["width"]) - 1)) << (idx * f["width"])
            for sl, lo, width in slices(pname, p):
                w(f"    expect_value(\"{sl}\", {{{32 - width}'h0, {sl}}}, 32'h{(exp >> lo) & ((1 << width) - 1):x});"
                  if width < 32 else f"    expect_value(\"{sl}\", {sl}, 32'h{(exp >> lo) & 0xffffffff:x});")

    w("  initial begin")
    w(f'    $readmemh("{name}.offsets.mem", offs);')
    w(f'    $readmemh("{name}.reset.mem", rst_val);')
    w(f'    $readmemh("{name}.wdata.mem", wdata);')
    w(f'    $readmemh("{name}.written.mem", written);')
    w("    repeat (3) @(posedge PCLK);")
    w("    #1 PRESETn = 1'b1;")
    w("    // 1. reset values (RW) and hardware inputs (RO)")
    check_pulses({})
    check_rw_ports(reset_value)
    w(f"    for (i = 0; i < {n}; i = i + 1) check_read(offs[i], rst_val[i], 1'b0);")
    w("    // 2. unmapped and misaligned offsets: PSLVERR, read 0, writes change nothing")
    for o in unmapped:
        w(f"    check_read({const(aw, o)}, 32'h0, 1'b1);")
        w(f"    check_write({const(aw, o)}, 32'hffffffff, 1'b1);")
    check_pulses({})
    w(f"    for (i = 0; i < {n}; i = i + 1) check_read(offs[i], rst_val[i], 1'b0);")
    w("    // 3. write every register: RW bits store, RO bits ignore the write, pulses fire once")
    pulse_regs = [r for r in regs if r["pulse"]]
    w(f"    for (i = 0; i < {n}; i = i + 1) begin")
    w("      check_write(offs[i], wdata[i], 1'b0);")
    if pulse_regs:
        w("      case (offs[i])")
        for r in pulse_regs:
            o = r["offset"]
            d = wdata[o]
            w(f"        {const(aw, o)}: begin")
            check_pulses({f["port"]: (r["index"], (d >> f["lsb"]) & ((1 << f["width"]) - 1)) for f in r["pulse"]})
            w("        end")
        w("        default: begin")
        check_pulses({})
        w("        end")
        w("      endcase")
        w("      @(posedge PCLK); #1;")
        check_pulses({})
    w("    end")
    w(f"    for (i = 0; i < {n}; i = i + 1) check_read(offs[i], written[i], 1'b0);")
    check_rw_ports(written)
    check_pulses({})
    w("    // 4. reset again restores the reset values")
    w("    @(negedge PCLK); PRESETn = 1'b0; @(negedge PCLK); PRESETn = 1'b1;")
    w(f"    for (i = 0; i < {n}; i = i + 1) check_read(offs[i], rst_val[i], 1'b0);")
    w(f"    if (errors == 0) $display(\"RESULT {name} PASS\");")
    w(f"    else $display(\"RESULT {name} FAIL %0d\", errors);")
    w("    done = 1'b1;")
    w("  end")
    w("endmodule")
    return "\n".join(L) + "\n", mem


def make_semantics_testbench(doc):
    """Module tb_sem: the APB4 semantics of the generated slave beyond read/write -- PSTRB lanes, the
    PRIVILEGED_ONLY and UNMAPPED_ERROR parameters and the 48-bit counters -- on three instances of the schema's
    slave (defaults; PRIVILEGED_ONLY = 1; UNMAPPED_ERROR = 0) that share every input, each checked against values
    derived here by hand from the JSON. Prints "RESULT sem PASS" or "RESULT sem FAIL <n>"."""
    rf, regs = expand(doc)
    name, aw = rf["Name"], rf["AddrWidth"]
    size = parse_number(rf["SizeInBytes"])
    # A register with 32 RW bits (every lane has bits to store), an aligned offset with no register, a counter.
    rw = next(r for r in regs if sum(fmask(f) for f in r["rw"]) == 0xffffffff)
    mapped = {r["offset"] for r in regs}
    hole = next(o for o in range(0, size, 4) if o not in mapped)
    lsb_reg = next(r for r in regs if r.get("counter", ("", ""))[1] == "lsb")
    msb_reg = next(r for r in regs if r.get("counter") == (lsb_reg["counter"][0], "msb"))
    cnt = lsb_reg["counter"][0]
    ports = {}
    for r in regs:
        for kind in ("rw", "ro", "pulse"):
            for f in r[kind]:
                p = ports.setdefault(f["port"], {"kind": kind, "width": f["width"], "count": r["count"]})
    counters = sorted({r["counter"][0] for r in regs if "counter" in r})
    insts = (("a", ""), ("p", "#(.PRIVILEGED_ONLY(1)) "), ("u", "#(.UNMAPPED_ERROR(0)) "))
    L = []
    w = L.append
    w("module tb_sem;")
    w("  reg done = 1'b0;")
    w("  reg PCLK = 1'b0;")
    w("  reg PRESETn = 1'b0;")
    w("  reg PSEL = 1'b0, PENABLE = 1'b0, PWRITE = 1'b0;")
    w(f"  reg [{aw - 1}:0] PADDR = {aw}'h0;")
    w("  reg [31:0] PWDATA = 32'h0;")
    w("  reg [3:0] PSTRB = 4'h0;")
    w("  reg [2:0] PPROT = 3'b010;")
    w("  reg counters_clear_i = 1'b0;")
    w("  integer errors = 0;")
    for c in counters:
        w(f"  reg [31:0] {c}_inc_i = 32'h0;")
    for pname, p in ports.items():
        total = p["width"] * p["count"]
        if p["kind"] == "ro":
            w(f"  wire [{total - 1}:0] {pname} = {total}'h0;")
    got = {}
    for sfx, params in insts:
        w(f"  wire [31:0] PRDATA_{sfx};")
        w(f"  wire PREADY_{sfx}, PSLVERR_{sfx};")
        conns = [f".{c}({c})" for c in ("PCLK", "PRESETn", "PSEL", "PENABLE", "PWRITE", "PADDR", "PWDATA", "PSTRB",
                                        "PPROT", "counters_clear_i")]
        conns += [f".PRDATA(PRDATA_{sfx})", f".PREADY(PREADY_{sfx})", f".PSLVERR(PSLVERR_{sfx})"]
        for pname, p in ports.items():
            if p["kind"] == "ro":
                conns.append(f".{pname}({pname})")
            else:
                w(f"  wire [{p['width'] * p['count'] - 1}:0] {pname}_{sfx};")
                conns.append(f".{pname}({pname}_{sfx})")
        for c in counters:
            w(f"  wire [47:0] {c}_cnt_o_{sfx};")
            conns += [f".{c}_inc_i({c}_inc_i)", f".{c}_cnt_o({c}_cnt_o_{sfx})"]
        w(f"  {name} {params}dut_{sfx} (" + ", ".join(conns) + ");")
        w(f"  reg [31:0] got_{sfx};")
        w(f"  reg err_{sfx};")
        got[sfx] = (f"got_{sfx}", f"err_{sfx}")
    w("  always #5 PCLK = ~PCLK;")
    w(f"  task apb(input wr, input [{aw - 1}:0] a, input [31:0] d, input [3:0] strb, input [2:0] prot);")
    w("    begin")
    w("      @(negedge PCLK); PSEL = 1'b1; PENABLE = 1'b0; PWRITE = wr; PADDR = a; PWDATA = d; PSTRB = strb;")
    w("      PPROT = prot;")
    w("      @(negedge PCLK); PENABLE = 1'b1;")
    w("      #1; " + " ".join(f"got_{x} = PRDATA_{x}; err_{x} = PSLVERR_{x};" for x, _ in insts))
    w("      @(posedge PCLK); #1; PSEL = 1'b0; PENABLE = 1'b0; PWRITE = 1'b0; PSTRB = 4'h0;")
    w("    end")
    w("  endtask")
    w("  task check(input [8*72-1:0] what, input [47:0] value, input [47:0] exp);")
    w("    begin")
    w("      if (value !== exp) begin")
    w("        errors = errors + 1; $display(\"FAIL %0s = %h, expected %h\", what, value, exp);")
    w("      end")
    w("    end")
    w("  endtask")
    unpriv, priv = 0b010, 0b011
    o = rw["offset"]
    m = sum(fmask(f) for f in rw["rw"])
    reset = sum(f["reset"] << f["lsb"] for f in rw["rw"])

    def rd(sfx, a, exp, exp_err, prot=unpriv, label=""):
        w(f"    apb(1'b0, {aw}'h{a:x}, 32'h0, 4'h0, 3'b{prot:03b});")
        w(f"    check(\"{label} {sfx} read {a:#x} PRDATA\", {{16'h0, got_{sfx}}}, 48'h{exp:x});")
        w(f"    check(\"{label} {sfx} read {a:#x} PSLVERR\", {{47'h0, err_{sfx}}}, 48'h{exp_err:x});")

    def wr(a, d, strb, prot=unpriv):
        w(f"    apb(1'b1, {aw}'h{a:x}, 32'h{d:x}, 4'h{strb:x}, 3'b{prot:03b});")

    lanes = lambda strb: sum(0xff << (8 * i) for i in range(4) if strb >> i & 1)
    w("  initial begin")
    w("    repeat (3) @(posedge PCLK);")
    w("    #1 PRESETn = 1'b1;")
    # 1. PSTRB: a write changes only its strobed lanes; PSTRB = 0 changes nothing and is no error.
    w("    // 1. PSTRB lanes")
    wr(o, 0xffffffff, 0xf)
    v = (0xffffffff & m) | (reset & ~m)
    rd("a", o, v, 0, label="full write")
    d, strb = 0x12345678, 0b0101
    wr(o, d, strb)
    v = (v & ~(m & lanes(strb))) | (d & m & lanes(strb))  # 0xff34ff78 for a 32-bit RW register
    w(f"    check(\"error of the partial write\", {{47'h0, err_a}}, 48'h0);")
    rd("a", o, v, 0, label="PSTRB 0101")
    wr(o, 0, 0x0)
    w(f"    check(\"error of the PSTRB 0 write\", {{47'h0, err_a}}, 48'h0);")
    rd("a", o, v, 0, label="PSTRB 0")
    # 2. PRIVILEGED_ONLY = 1: without PPROT[0], PSLVERR, PRDATA 0 and nothing written; with it, an answer.
    w("    // 2. PRIVILEGED_ONLY")
    wr(o, 0x0badf00d, 0xf, prot=priv)  # every instance stores it (the others answer any PPROT)
    v = (0x0badf00d & m) | (reset & ~m)
    w(f"    check(\"privileged write p PSLVERR\", {{47'h0, err_p}}, 48'h0);")
    rd("p", o, 0, 1, prot=unpriv, label="unprivileged")
    rd("p", o, v, 0, prot=priv, label="privileged")
    wr(o, 0xa5a5a5a5, 0xf, prot=unpriv)
    w(f"    check(\"unprivileged write p PSLVERR\", {{47'h0, err_p}}, 48'h1);")
    w(f"    check(\"unprivileged write a PSLVERR\", {{47'h0, err_a}}, 48'h0);")
    rd("p", o, v, 0, prot=priv, label="after the unprivileged write")
    rd("a", o, 0xa5a5a5a5 & m | (v & ~m), 0, prot=unpriv, label="the default instance took it")
    # 3. UNMAPPED_ERROR = 0: an aligned hole reads 0 without PSLVERR; misaligned is PSLVERR whatever the parameter.
    w("    // 3. UNMAPPED_ERROR")
    rd("u", hole, 0, 0, label="unmapped")
    w(f"    check(\"unmapped a PSLVERR\", {{47'h0, err_a}}, 48'h1);")
    wr(hole, 0xffffffff, 0xf)
    w(f"    check(\"unmapped write u PSLVERR\", {{47'h0, err_u}}, 48'h0);")
    rd("u", o + 1, 0, 1, label="misaligned")
    rd("u", o + 2, 0, 1, label="misaligned")
    wr(o + 1, 0, 0xf)
    w(f"    check(\"misaligned write u PSLVERR\", {{47'h0, err_u}}, 48'h1);")
    # 4. Counters: + the input at every edge, modulo 2^48; clear.
    w("    // 4. counters")
    start = lsb_reg["counter_reset"] | (msb_reg["counter_reset"] << 32)
    w(f"    check(\"{cnt} at reset\", {cnt}_cnt_o_a, 48'h{start:x});")
    w(f"    @(negedge PCLK); counters_clear_i = 1'b1; @(negedge PCLK); counters_clear_i = 1'b0;")
    w(f"    check(\"{cnt} cleared\", {cnt}_cnt_o_a, 48'h0);")
    w(f"    @(negedge PCLK); {cnt}_inc_i = 32'd5; repeat (3) @(posedge PCLK); #1 {cnt}_inc_i = 32'h0;")
    w(f"    check(\"{cnt} after 3 edges of 5\", {cnt}_cnt_o_a, 48'd15);")
    rd("a", lsb_reg["offset"], 15, 0, label="counter lsb")
    wr(lsb_reg["offset"], 0, 0xf)
    w(f"    check(\"a write to a counter: PSLVERR\", {{47'h0, err_a}}, 48'h0);")
    rd("a", lsb_reg["offset"], 15, 0, label="counter lsb after a write")
    w(f"    @(negedge PCLK); counters_clear_i = 1'b1; {cnt}_inc_i = 32'd7; @(negedge PCLK); counters_clear_i = 1'b0;")
    w(f"    {cnt}_inc_i = 32'h0;")
    w(f"    check(\"{cnt} cleared (the edge's increment dropped)\", {cnt}_cnt_o_a, 48'h0);")
    # 65537 x (2^32 - 1) = 2^48 + 2^32 - 65537: modulo 2^48, 0x0000_FFFE_FFFF.
    w(f"    @(negedge PCLK); {cnt}_inc_i = 32'hffffffff; repeat (65537) @(posedge PCLK); #1 {cnt}_inc_i = 32'h0;")
    w(f"    check(\"{cnt} after 65537 edges of 0xffffffff\", {cnt}_cnt_o_a, 48'h0000fffeffff);")
    rd("a", lsb_reg["offset"], 0xfffeffff, 0, label="wrapped lsb")
    rd("a", msb_reg["offset"], 0, 0, label="wrapped msb")
    w(f"    @(negedge PCLK); counters_clear_i = 1'b1; @(negedge PCLK); counters_clear_i = 1'b0;")
    rd("a", lsb_reg["offset"], 0, 0, label="cleared lsb")
    w("    if (errors == 0) $display(\"RESULT sem PASS\");")
    w("    else $display(\"RESULT sem FAIL %0d\", errors);")
    w("    done = 1'b1;")
    w("  end")
    w("endmodule")
    return "\n".join(L) + "\n"


class VerilatorSimTest(TempDirTest):
    """Simulates each generated APB slave with a testbench built from the JSON: reset values,
    RO inputs, RW write/read-back and outputs, one-cycle PulseOnW pulses reading 0, PSLVERR
    (and no state change) on unmapped and misaligned offsets, reset restoring the values; and, on the
    top file, the APB4 semantics (tb_sem): partial PSTRB, PRIVILEGED_ONLY, UNMAPPED_ERROR, counters."""

    def test_simulate_generated_verilog(self):
        verilator = shutil.which("verilator")
        if verilator is None:
            self.skipTest("verilator is not installed")
        # One Verilator build for every register file (the runtime compiles once).
        tops, sources = [], []
        for name in SCHEMAS:
            self.generate(name, sub="sim")
            text, mems = make_testbench(load_schema(name))
            for fname, data in [(f"tb_{name}.v", text)] + list(mems.items()):
                with open(os.path.join(self.tmp, "sim", fname), "w", encoding="utf-8") as fh:
                    fh.write(data)
            tops.append(name)
            sources += [f"tb_{name}.v", f"{name}.v"]
        with open(os.path.join(self.tmp, "sim", "tb_sem.v"), "w", encoding="utf-8") as fh:
            fh.write(make_semantics_testbench(load_schema(TOP)))
        sources.append("tb_sem.v")
        top = ["`timescale 1ns/1ps", "module tb;"] + [f"  tb_{n} u_{n}();" for n in tops] + ["  tb_sem u_sem();"] + [
            "  initial begin",
            "    wait (" + " && ".join(f"u_{n}.done" for n in tops + ["sem"]) + ");",
            "    $finish;",
            "  end",
            "endmodule", ""]
        sim = os.path.join(self.tmp, "sim")
        with open(os.path.join(sim, "tb.v"), "w", encoding="utf-8") as fh:
            fh.write("\n".join(top))
        build = subprocess.run(
            [verilator, "--binary", "-j", "0", "--top-module", "tb", "-Mdir", "obj", "--timescale", "1ns/1ps",
             "-Wno-fatal", "-Wno-lint", "-Wno-style", "-MAKEFLAGS", "OPT_FAST=-O0 OPT_SLOW=-O0 OPT_GLOBAL=-O0",
             "tb.v"] + sources,
            capture_output=True, text=True, cwd=sim, check=False)
        self.assertEqual(build.returncode, 0, (build.stdout + build.stderr)[-4000:])
        run = subprocess.run([os.path.join(sim, "obj", "Vtb")], capture_output=True, text=True, cwd=sim,
                             check=False, timeout=300)
        for name in tops + ["sem"]:
            with self.subTest(schema=name):
                self.assertIn(f"RESULT {name} PASS", run.stdout, run.stdout[-3000:] + run.stderr[-2000:])

# ---------------------------------------------------------------------------
class CHeaderTest(TempDirTest):
    """The C99 headers: every register's offset, reset and masks and every field's shift, width, mask, reset and
    accessors equal what the JSON says (expanded here, independently of the generator), checked by a C program
    that includes every header in one translation unit and compiles with gcc -std=c99 -Wall -Wextra
    -pedantic -Werror."""

    def test_every_constant_matches_the_schema_in_c99(self):
        cc = shutil.which("gcc") or shutil.which("cc")
        if cc is None:
            self.skipTest("no C compiler")
        gen = os.path.join(self.tmp, "gen")
        for name in SCHEMAS:
            self.generate(name, "gen")
        lines = ["#include <stdio.h>", ""]
        lines += [f'#include "{name}_regs_c.h"' for name in SCHEMAS]
        lines += ["", "static int failures;",
                  "static void expect(const char* what, unsigned long got, unsigned long want) {",
                  "  if (got != want) { printf(\"%s = 0x%lx, the schema says 0x%lx\\n\", what, got, want); ++failures; }",
                  "}", "", "int main(void) {"]
        checks = 0
        for name in SCHEMAS:
            rf = load_schema(name)["RegFile"]
            top = f"PEVP_{name.upper()}"
            for b in rf["RegistersBundleArrays"]:
                base, size = parse_number(b["AddressOffset"]), parse_number(b["BundleSizeInBytes"])
                for r in b["Registers"]:
                    rp = f"{top}_{b['name'].upper()}_{r['name'].upper()}"
                    first = base + parse_number(r["AddressOffset"])
                    want = {"OFFSET": first, "RW_MASK": 0, "RO_MASK": 0, "PULSE_MASK": 0, "RESET": 0}
                    if b["ArraySize"] > 1:
                        last = b["ArraySize"] - 1
                        lines.append(f'  expect("{rp}_OFFSET_AT({last})", {rp}_OFFSET_AT({last}), {first + last * size}ul);')
                        lines.append(f'  expect("{rp}_COUNT", {rp}_COUNT, {b["ArraySize"]}ul);')
                        checks += 2
                    for f in r["BitFields"]:
                        msb, lsb = parse_pos(f["Position"])
                        width, reset = msb - lsb + 1, parse_number(f["ResetValue"])
                        mask = ((1 << width) - 1) << lsb
                        key = {"RW": "RW_MASK", "RO": "RO_MASK", "PulseOnW": "PULSE_MASK"}[f["Access"]]
                        want[key] |= mask
                        if f["Access"] != "PulseOnW":
                            want["RESET"] |= reset << lsb
                        fp = f"{rp}_{f['name'].upper()}"
                        fn = f"pevp_{name}_{b['name']}_{r['name']}_{f['name']}".lower()
                        for what, value in (("SHIFT", lsb), ("WIDTH", width), ("MASK", mask), ("RESET", reset)):
                            lines.append(f'  expect("{fp}_{what}", {fp}_{what}, {value}ul);')
                        # The accessors: set writes only the field (all ones elsewhere kept), get reads it back.
                        lines.append(f'  expect("{fn}_set", {fn}_set(0xffffffffu, 0u), {0xffffffff & ~mask}ul);')
                        lines.append(f'  expect("{fn}_get", {fn}_get({fn}_set(0u, 0xffffffffu)), {(1 << width) - 1}ul);')
                        checks += 6
                    for what, value in want.items():
                        lines.append(f'  expect("{rp}_{what}", {rp}_{what}, {value}ul);')
                        checks += 1
        lines += ['  if (failures == 0) printf("OK %d checks\\n", ' + str(checks) + ');', "  return failures != 0;", "}"]
        src = os.path.join(self.tmp, "c_headers.c")
        with open(src, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
        exe = os.path.join(self.tmp, "c_headers")
        build = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-I", gen, src, "-o", exe],
                               capture_output=True, text=True, check=False)
        self.assertEqual(build.returncode, 0, build.stderr[-4000:])
        run = subprocess.run([exe], capture_output=True, text=True, check=False)
        self.assertEqual(run.returncode, 0, run.stdout[-4000:])
        self.assertEqual(run.stdout, f"OK {checks} checks\n")
        self.assertGreater(checks, 500)


def main():
    args = sys.argv[1:]
    selected = [a for a in args if not a.startswith("-")]
    if selected and all(a.startswith("Verilator") for a in selected) and shutil.which("verilator") is None:
        print("SKIP: verilator is not installed; the generated Verilog was not linted or simulated")
        return 77
    prog = unittest.main(module=__name__, argv=[sys.argv[0]] + args, exit=False, verbosity=2)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
