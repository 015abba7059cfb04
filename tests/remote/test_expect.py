"""The scoreboard through `pe-vp serve` (docs/cosim-reference.md "Scoreboard", docs/protocol.md op expect): the C
driver tests/capi/expect.c runs its checks against a server, and the Python client's Vp.expect predicts a
hand-derived matmul -- its window, its data and its cycles against the micro-op log of the same server -- and names
the rule of an invalid instruction. Real servers on private Unix sockets.

Environment: PEVP_BIN (pe-vp), PEVP_EXPECT_DRIVER (capi_expect), PYTHONPATH with the pevp package. Run with
/usr/bin/python3 -m unittest (ctest: remote.expect)."""

import os
import subprocess
import unittest

import numpy as np

import pevp

PEVP_BIN = os.environ["PEVP_BIN"]
EXPECT_DRIVER = os.environ["PEVP_EXPECT_DRIVER"]

# st (K x M = 2 x 2) and mv (K x N = 2 x 3); C = st^T @ mv by hand:
#   partition 0: 1*1 + 3*0 = 1, 1*0 + 3*1 = 3, 1*2 + 3*1 = 5
#   partition 1: 2*1 + 4*0 = 2, 2*0 + 4*1 = 4, 2*2 + 4*1 = 8
ST = np.array([[1, 2], [3, 4]], dtype=np.float32)
MV = np.array([[1, 0, 2], [0, 1, 1]], dtype=np.float32)
PRODUCT = np.array([[1, 3, 5], [2, 4, 8]], dtype=np.float32)
PROGRAM = (".gen MARIANA\n"
           "ldweights src=sbuf[0]:[1,2] in_dtype=bf16 num_active_rows=2 num_active_cols=2 row_grp=0xF col_grp=0xF\n"
           "matmul src=sbuf[0]+0x1000:[1,3] in_dtype=bf16 num_active_rows=2 num_active_cols=2 row_grp=0xF "
           "col_grp=0xF psum_accumulate_flags=SINGLE dst=psum[3]+0x80:[1,3]\n")


class Expect(unittest.TestCase):
    def serve(self):
        server = pevp.serve(pe_vp=PEVP_BIN)
        self.addCleanup(server.stop)
        return server

    def test_the_c_driver_predicts_through_a_server(self):
        server = self.serve()
        run = subprocess.run([EXPECT_DRIVER, server.endpoint], capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("every check passed", run.stdout)

    def test_python_expect_gives_the_window_the_data_and_the_log_cycles(self):
        server = self.serve()
        with server.connect() as vp:
            vp.arm()
            vp.load_sbuf(ST)
            vp.load_sbuf(MV, offset=0x1000)
            load, matmul = (vp.assemble(PROGRAM)[i:i + 64] for i in (0, 64))
            vp.micro_op_log(True)
            e0 = vp.expect(load)
            self.assertEqual((e0.instruction, e0.partitions, e0.bytes, e0.data.size), (0, 0, 0, 0))
            e1 = vp.expect(matmul)
            self.assertEqual((e1.instruction, e1.first_partition, e1.partitions, e1.offset, e1.bytes, e1.element_bytes),
                             (1, 3, 2, 0x80, 12, 4))
            np.testing.assert_array_equal(e1.data, PRODUCT)
            np.testing.assert_array_equal(vp.read_psum(2, 3, partition=3, offset=0x80), PRODUCT)
            lines = [line for line in vp.micro_op_log_take() if line["instr"] == 1]
            self.assertEqual(len(lines), 1)
            self.assertEqual((lines[0]["start"], lines[0]["complete"], lines[0]["response"]),
                             (e1.start_cycle, e1.complete_cycle, e1.response_cycle))
            bad = bytes([0xEE]) + matmul[1:]
            with self.assertRaises(pevp.PevpError) as refused:
                vp.expect(bad)
            self.assertEqual(refused.exception.status, 1)
            self.assertIn("opcode.unknown", str(refused.exception))
            with self.assertRaises(pevp.PevpError) as short:
                vp.expect(matmul[:63])
            self.assertEqual(short.exception.status, 1)
            self.assertIn("not one 64-byte instruction", str(short.exception))


if __name__ == "__main__":
    unittest.main()
