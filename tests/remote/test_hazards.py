"""The hazard checks (checks.hazards, docs/sdk.md "What the VP checks for you") through real `pe-vp serve`
processes: one racy driver per hazard class from the Python client -- PevpError (kind "hazard") with checks.hazards =
error, one line of vp.diagnostics() with warn -- the C driver tests/capi/hazards.c against the server, and the
getting-started flow (docs/getting-started.md 5.4) raising nothing in either mode.

The expected reports are worked out by hand from the program's footprints (the same program as
tests/capi/hazards.c): Ldweights reads SBUF partitions 0..63, bytes 0..63; Matmul reads SBUF partitions 0..63,
bytes 0x1000..0x105F (48 bf16) and writes PSUM partitions 0..31, bytes 0..191 (48 fp32). Instruction indices count
every record submitted to the server's VP, from 0.

Environment: PEVP_BIN (pe-vp), PEVP_HAZARDS_DRIVER (the capi_hazards binary), PYTHONPATH with the pevp package.
Run with /usr/bin/python3 -m unittest (ctest: remote.hazards)."""

import os
import subprocess
import unittest

import numpy as np

import pevp

PEVP_BIN = os.environ["PEVP_BIN"]
HAZARDS_DRIVER = os.environ["PEVP_HAZARDS_DRIVER"]

LDWEIGHTS = "ldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF\n"
MATMUL = ("matmul src=sbuf[0]+0x1000:[1,48] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF "
          "col_grp=0xF %s psum_accumulate_flags=%s dst=psum[0]:[1,48]\n")
PROGRAM = ".gen MARIANA\n" + LDWEIGHTS + MATMUL % ("", "SINGLE")
OPEN_GROUP = ".gen MARIANA\n" + LDWEIGHTS + MATMUL % ("", "MULTI_START")
CLOSE_GROUP = ".gen MARIANA\n" + LDWEIGHTS + MATMUL % ("flags.accumulate_flag=ACCUMULATE", "MULTI_END")


def operands():
    """Small integers (exact in bf16 and in fp32 sums): st K x M, mv K x N."""
    rng = np.random.default_rng(7)
    return rng.integers(-3, 4, size=(64, 32)).astype(np.float32), rng.integers(-2, 3, size=(64, 48)).astype(np.float32)


class Hazards(unittest.TestCase):
    mode = None  # set by the subclasses

    def setUp(self):
        self.server = pevp.serve(pe_vp=PEVP_BIN, settings=("checks.hazards=%s" % self.mode,))
        self.addCleanup(self.server.stop)
        self.vp = self.server.connect()
        self.addCleanup(self.vp.close)

    def racy(self, call, *parts):
        """Runs the racy `call`: the report, which must name each of `parts`, as the mode gives it."""
        if self.mode == "error":
            with self.assertRaises(pevp.PevpError) as caught:
                call()
            self.assertEqual(caught.exception.status, 10)
            self.assertEqual(caught.exception.kind, "hazard")
            text = caught.exception.message
            self.assertEqual(self.vp.diagnostics(), [], "an error is no warning")
        else:
            call()
            lines = self.vp.diagnostics()
            self.assertEqual(len(lines), 1, lines)
            text = lines[0]
        for part in parts:
            self.assertIn(part, text)
        return text

    def clean(self, call):
        result = call()
        self.assertEqual(self.vp.diagnostics(), [])
        return result

    def wait(self):
        c = self.clean(self.vp.wait_idle)
        self.assertTrue(c.done and not c.error, c)
        self.clean(self.vp.clear_done)

    def load(self):
        st, mv = operands()
        self.clean(lambda: self.vp.load_sbuf(st, dtype="bf16"))
        self.clean(lambda: self.vp.load_sbuf(mv, offset=0x1000, dtype="bf16"))
        return st, mv

    def test_unarmed_submit(self):
        self.load()
        text = self.racy(lambda: self.vp.submit(self.vp.assemble(PROGRAM)),
                         "hazard.unarmed_submit", "instruction 0 (LDWEIGHTS)", "top:queue_cfg")
        self.assertRegex(text, r"at \d+ ps")
        self.wait()  # it runs anyway: the check watches, it changes nothing
        self.clean(self.vp.arm)
        self.clean(lambda: self.vp.submit(self.vp.assemble(PROGRAM)))  # armed now: no second report
        self.wait()

    def test_read_in_flight(self):
        st, mv = self.load()
        self.clean(self.vp.arm)
        self.clean(lambda: self.vp.submit(self.vp.assemble(PROGRAM)))
        self.racy(lambda: self.vp.read_psum(partitions=1, elements=48),
                  "hazard.read_in_flight", "host read of PSUM 0x2000000..0x20000bf", "instruction 1 (MATMUL)",
                  "write PSUM partitions 0..31, bytes 0..191")
        self.wait()
        c = self.clean(lambda: self.vp.read_psum(partitions=32, elements=48))  # waited: clean, and right
        self.assertTrue((c == st.T @ mv).all())

    def test_write_in_flight(self):
        self.load()
        self.clean(self.vp.arm)
        self.clean(lambda: self.vp.submit(self.vp.assemble(PROGRAM)))
        # Partition 5's moving row, bytes 0x1000.. of SBUF partition 5 (the map's partitions are 0x40000 apart).
        address = self.vp.map.sbuf + 5 * self.vp.map.sbuf_partition_bytes + 0x1000
        self.racy(lambda: self.vp.write(address, bytes(96)),
                  "hazard.write_in_flight", "host write to SBUF", "(partition 5 byte 4096 .. partition 5 byte 4191)",
                  "instruction 1 (MATMUL)", "read SBUF partitions 0..63, bytes 4096..4191")
        self.wait()
        self.clean(lambda: self.vp.write(address, bytes(96)))  # nothing in flight any more

    def test_open_group_read(self):
        self.load()
        self.clean(self.vp.arm)
        self.clean(lambda: self.vp.submit(self.vp.assemble(OPEN_GROUP)))
        self.wait()
        # One report per access: one partition's read here (reading all 32 would make 32 reports, or stop at the first).
        self.racy(lambda: self.vp.read_psum(partitions=1, elements=48),
                  "hazard.open_group_read", "host read of PSUM 0x2000000..0x20000bf", "instruction 1 (MATMUL)", "PSUM partitions 0..31, bytes 0..191")
        self.clean(lambda: self.vp.submit(self.vp.assemble(CLOSE_GROUP)))
        self.wait()
        self.clean(lambda: self.vp.read_psum(partitions=32, elements=48))

    def test_dma_write_in_flight(self):
        """A DMA descriptor writing the Matmul's moving data (SBUF partition 0, 0x1000..0x105F) while a long program
        of Ldweights + Matmul pairs reading it is still queued: reported as the DMA engine's write (docs/dma.md "A
        driver's sequence" for the ring; the default address map: the DMA face at 0x3100000, device memory's window
        at 0x40000000, which the engines reach at 0x1_0000_0000)."""
        import struct
        self.load()
        self.clean(self.vp.arm)
        dma, window, hbm = 0x3100000, 0x40000000, 0x1_0000_0000
        descriptor = bytearray(64)
        descriptor[0] = 1  # COPY
        struct.pack_into("<QQIIIB", descriptor, 16, hbm + 0x2000, 0x1000, 96, 1, 1, 2)  # src, dst, row, rows, planes
        self.clean(lambda: self.vp.write(window + 0x1000, bytes(descriptor)))
        for offset, value in ((0x1C, 0), (0x40, 0x1000), (0x44, 1), (0x48, 4), (0x54, 1)):  # queue 0's ring
            self.clean(lambda: self.vp.write32(dma + offset, value))
        # 200 pairs take tens of microseconds; the descriptor completes after its 600 ns: the pairs still queued read
        # the bytes it writes.
        self.clean(lambda: self.vp.submit(self.vp.assemble(PROGRAM) * 200))
        self.clean(lambda: self.vp.write32(dma + 0x1000, 1))  # the doorbell: tail 1
        parts = ("hazard.write_in_flight", "DMA engine 0 queue 0 descriptor 0 write to SBUF 0x1000..0x105f",
                 "(MATMUL)", "read SBUF partitions 0..63, bytes 4096..4191")
        if self.mode == "error":  # the hazard is the error of the call during which the transfer completed
            self.racy(self.vp.wait_idle, *parts)
            c = self.clean(self.vp.wait_idle)
        else:
            waited = []
            self.racy(lambda: waited.append(self.vp.wait_idle()), *parts)
            c = waited[0]
        self.assertTrue(c.done and not c.error, c)
        self.assertEqual(self.vp.stats()["hazards"]["write_in_flight"], 1)

    def test_register_write(self):
        self.clean(self.vp.arm)
        self.racy(lambda: self.vp.write_reg("vp", "seq_status.busy", 1),
                  "hazard.register_write", "vp:seq_ctrl.seq_status", "read-only field busy")
        self.racy(lambda: self.vp.write32(self.vp.map.apb, 0x80000100),
                  "hazard.register_write", "top:", "queue_cfg", "sets reserved bits 0x80000000")
        self.clean(lambda: self.vp.write_reg("top", "queue_cfg.disable_dependency_check", 0))

    def test_statistics_count_by_class(self):
        self.load()
        self.racy(lambda: self.vp.submit(self.vp.assemble(PROGRAM)), "hazard.unarmed_submit")
        self.wait()
        self.clean(self.vp.arm)
        self.clean(lambda: self.vp.submit(self.vp.assemble(PROGRAM)))
        self.racy(lambda: self.vp.read_psum(partitions=1, elements=1), "hazard.read_in_flight")
        self.wait()
        h = self.vp.stats()["hazards"]
        self.assertEqual(h, {"mode": self.mode, "read_in_flight": 1, "write_in_flight": 0, "open_group_read": 0,
                             "unarmed_submit": 1, "register_write": 0})

    def test_getting_started_flow_is_clean(self):
        """docs/getting-started.md 5.4, as written: arm, load, submit, wait, read."""
        st, mv = operands()
        vp = self.vp
        self.clean(vp.arm)
        self.clean(lambda: vp.load_sbuf(st, dtype="bf16"))
        self.clean(lambda: vp.load_sbuf(mv, offset=0x1000, dtype="bf16"))
        self.clean(lambda: vp.submit(vp.assemble(PROGRAM)))
        self.assertTrue(self.clean(vp.wait_idle).done)
        c = self.clean(lambda: vp.read_psum(partitions=32, elements=48))
        self.assertTrue((c == st.T @ mv).all())
        self.clean(lambda: vp.counter48("top", "arr_seq_ififo_perf_matmul.tile_128x128_tile0_instr_cnt_lsb"))
        self.assertEqual(sum(v for k, v in vp.stats()["hazards"].items() if k != "mode"), 0)

    def test_c_driver_against_the_server(self):
        """tests/capi/hazards.c, the same checks as in-process, through this server."""
        self.vp.close()
        run = subprocess.run([HAZARDS_DRIVER, self.mode, self.server.endpoint], capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("all checks passed", run.stdout)


class HazardsAsErrors(Hazards):
    mode = "error"


class HazardsAsWarnings(Hazards):
    mode = "warn"


del Hazards  # only its two modes run

if __name__ == "__main__":
    unittest.main()
