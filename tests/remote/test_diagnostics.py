"""What a driver learns when something goes wrong, through real `pe-vp serve` processes: a fault's full record
(ErrorRecord.field and .message, Vp.raise_fault), an unprivileged access to the protected face (PevpError, kind
"privilege"), the face bases in Vp.map, nothing of the VP's on the server's stdout past its first line; the C driver
tests/capi/diagnostics.c against the server; and fp8 operands loaded with load_sbuf and multiplied by the VP.

The fp8 expectations are worked out by hand from docs/numerics.md's tables (each written out at its check); the
matmul multiplies the loaded values by a one-hot weight matrix, so PSUM holds exactly the values the VP decoded from
the bytes the client wrote.

The client's own fp8 and bf16 rounding is checked against the C API's (pevp/pevp_numerics.h, the VP's conversions)
on a sweep of fp32 values with every fp8 tie and its neighbours.

Environment: PEVP_BIN (pe-vp), PEVP_DIAG_DRIVER (the capi_diagnostics binary), PEVP_NUMERICS_TABLE (the
capi_numerics_table filter), PYTHONPATH with the pevp package.
Run with /usr/bin/python3 -m unittest (ctest: remote.diagnostics)."""

import os
import subprocess
import unittest

import numpy as np

import pevp

PEVP_BIN = os.environ["PEVP_BIN"]
DIAG_DRIVER = os.environ["PEVP_DIAG_DRIVER"]
NUMERICS_TABLE = os.environ["PEVP_NUMERICS_TABLE"]

UNDERFLOW = (".gen MARIANA\nldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=64 num_active_cols=32 "
             "row_grp=0xF col_grp=0xF events.update_mode=DECREMENT events.update_sem=0 events.update_value=1\n")


class Diagnostics(unittest.TestCase):
    def setUp(self):
        self.server = pevp.serve(pe_vp=PEVP_BIN)
        self.addCleanup(self.server.stop)

    def test_fault_record_has_the_field_and_the_sentence(self):
        with self.server.connect() as vp:
            vp.arm()
            self.assertIsNone(vp.raise_fault())
            vp.submit(vp.assemble(UNDERFLOW))
            self.assertTrue(vp.wait_idle().error)
            record = vp.error_record()
            self.assertEqual(record.rule, "seq.semaphore_underflow")
            self.assertEqual(record.field, "events.update_value")
            self.assertEqual(record.message, "instruction 0 (LDWEIGHTS): events.update_value = 1: semaphore 0 = 0 "
                             "would go below 0 [seq.semaphore_underflow]")
            with self.assertRaises(pevp.PevpError) as caught:
                vp.raise_fault()
            self.assertEqual(caught.exception.kind, "state")
            self.assertEqual(caught.exception.message, record.message)
            self.assertEqual(caught.exception.record, record)
            # The report is a diagnostics line, and the server's stdout has nothing past its first line.
            self.assertIn("Info: /pevp/seq: " + record.message, vp.diagnostics())
            vp.clear_error()
            self.assertIsNone(vp.error_record())
        self.assertEqual(len(self.server.stdout().splitlines()), 1, self.server.stdout())

    def test_unprivileged_protected_access_says_why(self):
        with self.server.connect() as vp:
            # Hand-written: the preset map's apb window at 0x3000000, faces 4 KiB apart.
            self.assertEqual((vp.map.top, vp.map.cluster, vp.map.protect, vp.map.vp_seq),
                             (0x3000000, 0x3001000, 0x3002000, 0x3003000))
            with self.assertRaises(pevp.PevpError) as caught:
                vp.write32(vp.map.protect, 0)
            self.assertEqual((caught.exception.status, caught.exception.kind), (11, "privilege"))
            self.assertIn("unprivileged write of 4 bytes at 0x3002000 (protected:arr_seq_protected_cfg.throttle_cfg",
                          caught.exception.message)
            self.assertIn("privileged accesses (PPROT[0] = 1", caught.exception.message)
            # Nothing was written: throttle_cfg.disable_throttle keeps its reset value 0x1ff.
            self.assertEqual(vp.read32(vp.map.protect, privileged=True) & 0x1FF, 0x1FF)

    def test_c_driver_against_the_server(self):
        run = subprocess.run([DIAG_DRIVER, self.server.endpoint], capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout, "")


# (value, code) pairs worked out from docs/numerics.md: RNE with ties to the even code, each format's overflow rule.
FP8_CASES = {
    # e4m3fn (MARIANA's FP8_EXP4): max 448 = 0x7E; 1.0 = 0x38; 1.0625 ties 1.0 / 1.125 -> 1.0 (0x38, even);
    # 1.1875 ties 1.125 (0x39) / 1.25 (0x3A) -> 0x3A; 500 and Inf saturate to 448; 2^-9 is the smallest subnormal
    # (0x01); -2.5 = 0xC2.
    "fp8_e4m3fn": [(1.0, 0x38), (1.0625, 0x38), (1.1875, 0x3A), (500.0, 0x7E), (np.inf, 0x7E), (2.0 ** -9, 0x01),
                   (-2.5, 0xC2), (448.0, 0x7E)],
    # e5m2: 1.0 = 0x3C; 1.125 ties 1.0 / 1.25 -> 0x3C; 1.375 ties 1.25 (0x3D) / 1.5 (0x3E) -> 0x3E; 57344 = 0x7B;
    # 61440 ties max with Inf -> Inf (0x7C); 2^-16 = 0x01.
    "fp8_e5m2": [(1.0, 0x3C), (1.125, 0x3C), (1.375, 0x3E), (57344.0, 0x7B), (61440.0, 0x7C), (2.0 ** -16, 0x01),
                 (-3.0, 0xC2), (-0.0, 0x80)],
    # e4m3 (CAYMAN's FP8_EXP4): max 240 = 0x77; 248 ties 240 with Inf -> Inf (0x78); NaN -> 0x7C.
    "fp8_e4m3": [(1.0, 0x38), (240.0, 0x77), (247.0, 0x77), (248.0, 0x78), (np.nan, 0x7C), (-1.1875, 0xBA)],
}


class Fp8(unittest.TestCase):
    def test_codes_by_hand(self):
        for fmt, cases in FP8_CASES.items():
            values = np.array([v for v, _ in cases], dtype=np.float32)
            np.testing.assert_array_equal(pevp.to_fp8_bits(values, fmt), [c for _, c in cases], fmt)

    def test_every_code_round_trips(self):
        for fmt in pevp.FP8_FORMATS:
            codes = np.arange(256, dtype=np.uint8)
            values = pevp.from_fp8_bits(codes, fmt)
            back = pevp.to_fp8_bits(values, fmt)
            keep = ~np.isnan(values)
            np.testing.assert_array_equal(back[keep], codes[keep], fmt)

    def test_rounding_is_the_c_apis(self):
        """Every fp8 code's value, each tie between neighbouring codes (and past the largest) with the fp32 values
        either side of it, both signs, specials, and a stride through all fp32 patterns: the client's codes are the
        C API's, which are the VP's own conversions."""
        values = [np.arange(0, 1 << 32, 65521, dtype=np.uint64).astype(np.uint32).view(np.float32)]
        for fmt in pevp.FP8_FORMATS:
            decoded = pevp.from_fp8_bits(np.arange(128, dtype=np.uint8), fmt).astype(np.float64)
            finite = np.sort(decoded[np.isfinite(decoded)])
            ties = (finite[:-1] + finite[1:]) / 2
            ties = np.append(ties, finite[-1] + (finite[-1] - finite[-2]) / 2).astype(np.float32)
            values += [finite.astype(np.float32), ties, np.nextafter(ties, np.float32(0)),
                       np.nextafter(ties, np.float32(np.inf))]
        values.append(np.array([0.0, np.inf, np.nan, 1e30, 2.0 ** -149], dtype=np.float32))
        x = np.concatenate(values)
        x = np.concatenate([x, -x])
        run = subprocess.run([NUMERICS_TABLE], input=x.astype("<f4").tobytes(), capture_output=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        table = np.frombuffer(run.stdout, dtype=np.uint8).reshape(len(x), 9)
        for column, fmt in enumerate(("fp8_e4m3", "fp8_e4m3fn", "fp8_e5m2", "fp8_e3m4", "fp8_e2m5")):
            mine = pevp.to_fp8_bits(x, fmt)
            differ = np.nonzero(mine != table[:, column])[0]
            self.assertEqual(len(differ), 0, "%s: %d values differ, first %r: client 0x%02x, C API 0x%02x" % (
                fmt, len(differ), *(x[differ[:1]].tolist() or [None]), *(mine[differ[:1]].tolist() or [0]),
                *(table[differ[:1], column].tolist() or [0])))
        bf16 = table[:, 5].astype(np.uint16) | table[:, 6].astype(np.uint16) << 8
        np.testing.assert_array_equal(pevp.to_bf16_bits(x), bf16)

    def test_unknown_format(self):
        with self.assertRaises(pevp.PevpError) as caught:
            pevp.to_fp8_bits([1.0], "fp8_e6m1")
        self.assertEqual(caught.exception.kind, "argument")

    def matmul(self, gen, fmt, dtype_name, mv):
        """PSUM of st^T @ mv with st one-hot (64 x 32, st[k][k] = 1): rows 0..31 of mv, as the VP decoded them."""
        st = np.zeros((64, 32), dtype=np.float32)
        st[np.arange(32), np.arange(32)] = 1.0
        program = (".gen %s\nldweights src=sbuf[0]:[1,32] in_dtype=%s num_active_rows=64 num_active_cols=32 "
                   "row_grp=0xF col_grp=0xF\nmatmul src=sbuf[0]+0x1000:[1,48] in_dtype=%s num_active_rows=64 "
                   "num_active_cols=32 row_grp=0xF col_grp=0xF psum_accumulate_flags=SINGLE dst=psum[0]:[1,48]\n"
                   % (gen, dtype_name, dtype_name))
        server = pevp.serve(pe_vp=PEVP_BIN, gen=gen)
        self.addCleanup(server.stop)
        with server.connect() as vp:
            vp.arm()
            vp.load_sbuf(st, dtype=fmt)
            vp.load_sbuf(mv, offset=0x1000, dtype=fmt)
            np.testing.assert_array_equal(vp.read_sbuf(64, 48, offset=0x1000, dtype=fmt),
                                          pevp.from_fp8_bits(pevp.to_fp8_bits(mv, fmt), fmt))
            vp.submit(vp.assemble(program))
            c = vp.wait_idle()
            self.assertTrue(c.done and not c.error, vp.error_record())
            return vp.read_psum(32, 48)

    def operands(self, fmt):
        """64 x 48 values: the hand-worked cases that encode to finite codes first in row 0 (an Inf operand would
        make NaN of the one-hot's zeros), then random ones around the format's range."""
        rng = np.random.default_rng(11)
        mv = (rng.standard_normal((64, 48)) * 4).astype(np.float32)
        finite = [v for v, c in FP8_CASES[fmt] if np.isfinite(pevp.from_fp8_bits([c], fmt)[0])]
        mv[0, :len(finite)] = finite
        return mv, finite

    def check_format(self, gen, fmt, dtype_name):
        mv, finite = self.operands(fmt)
        psum = self.matmul(gen, fmt, dtype_name, mv)
        expected = pevp.from_fp8_bits(pevp.to_fp8_bits(mv[:32], fmt), fmt)
        np.testing.assert_array_equal(psum, expected)
        codes = dict(FP8_CASES[fmt])
        for i, v in enumerate(finite):  # the hand-worked codes, as the VP read them
            self.assertEqual(psum[0, i], pevp.from_fp8_bits([codes[v]], fmt)[0], (fmt, v))

    def test_e4m3fn_through_the_vp(self):
        self.check_format("MARIANA", "fp8_e4m3fn", "fp8_e4m3")

    def test_e5m2_through_the_vp(self):
        self.check_format("MARIANA", "fp8_e5m2", "fp8_e5m2")

    def test_e4m3_through_the_vp(self):
        self.check_format("CAYMAN", "fp8_e4m3", "fp8_e4m3")


if __name__ == "__main__":
    unittest.main()
