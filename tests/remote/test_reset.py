"""The hard reset through `pe-vp serve` (docs/sdk.md "Reset", docs/protocol.md): the Python client's reset() drops
a program blocked on a semaphore and a fresh program gives the exact product; the C driver tests/capi/reset.c runs
its checks against a server; and `--reset-between-clients` hands the next client a VP at its power-on state --
checked against the same two clients on a server without it, where the first client's error stops the second's
program. Real servers on private Unix sockets.

Environment: PEVP_BIN (pe-vp), PEVP_RESET_DRIVER (capi_reset), PYTHONPATH with the pevp package. Run with
/usr/bin/python3 -m unittest (ctest: remote.reset)."""

import os
import subprocess
import unittest

import numpy as np

import pevp

PEVP_BIN = os.environ["PEVP_BIN"]
RESET_DRIVER = os.environ["PEVP_RESET_DRIVER"]

K, M, N, MV_OFFSET = 64, 32, 48, 0x1000
LDWEIGHTS = ("ldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF "
             "col_grp=0xF")
MATMUL = ("matmul src=sbuf[0]+0x1000:[1,48] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF "
          "col_grp=0xF psum_accumulate_flags=SINGLE dst=psum[0]:[1,48]")
PROGRAM = ".gen MARIANA\n" + LDWEIGHTS + "\n" + MATMUL + "\n"
# The same program held at its first instruction until semaphore 5 reaches 1, which nothing sets.
STUCK = (".gen MARIANA\n" + LDWEIGHTS + " events.wait_mode=WAIT_GE events.wait_sem=5 events.wait_value=1\n" +
         MATMUL + "\n")
UNKNOWN_OPCODE = 0xEE  # no generation's opcode: the SEQ stops on opcode.unknown
TIMEOUT_NS = 100_000


def operands():
    rng = np.random.default_rng(11)
    return (rng.integers(-3, 4, size=(K, M)).astype(np.float32), rng.integers(-2, 3, size=(K, N)).astype(np.float32))


class Reset(unittest.TestCase):
    def serve(self, *args):
        server = pevp.serve(pe_vp=PEVP_BIN, args=args)
        self.addCleanup(server.stop)
        return server

    def load(self, vp):
        st, mv = operands()
        vp.load_sbuf(st)
        vp.load_sbuf(mv, offset=MV_OFFSET)
        return st, mv

    def run_program(self, vp):
        """Arms, loads and runs PROGRAM; its completion and the PSUM it left, against the product computed here."""
        vp.arm()
        st, mv = self.load(vp)
        vp.submit(vp.assemble(PROGRAM))
        completion = vp.wait_idle(TIMEOUT_NS)
        return completion, vp.read_psum(M, N), st.T @ mv

    def test_reset_drops_a_program_blocked_on_a_semaphore(self):
        server = self.serve()
        with server.connect() as vp:
            at_open = {name: vp.read_reg("vp", name) for name in ("irq_enable", "seq_status", "semaphore_5")}
            vp.arm()
            self.load(vp)
            vp.submit(vp.assemble(STUCK))
            with self.assertRaises(pevp.PevpError):  # the wait ends by its timeout: the program is stuck
                vp.wait_idle(TIMEOUT_NS)
            self.assertEqual(vp.read_reg("vp", "iq_status.level"), 2)
            before = vp.time_ps()
            vp.reset()
            self.assertEqual(vp.time_ps(), before)  # no simulated time
            self.assertEqual({name: vp.read_reg("vp", name) for name in at_open}, at_open)
            self.assertEqual(vp.read_reg("vp", "iq_status.level"), 0)
            self.assertEqual(vp.counter48("vp", "retired_cnt_lsb"), 0)
            self.assertFalse(vp.read(vp.map.sbuf + MV_OFFSET, 2 * N).strip(b"\0"))  # SBUF as at power-on
            # The dropped instruction is gone: its semaphore releases nothing.
            vp.write_reg("vp", "semaphore_5", 1)
            with self.assertRaises(pevp.PevpError):
                vp.wait_idle(TIMEOUT_NS)
            self.assertEqual(vp.counter48("vp", "retired_cnt_lsb"), 0)
            vp.write_reg("vp", "semaphore_5", 0)
            completion, psum, want = self.run_program(vp)
            self.assertTrue(completion.done and not completion.error, completion)
            self.assertEqual(completion.retired, 2)
            np.testing.assert_array_equal(psum, want)

    def test_reset_drops_records_still_waiting_for_room_in_the_queue(self):
        """400 stuck instructions: 256 fill the queue, the driver's feeder waits inside a queue write with the rest.
        The reset refuses that write and forgets the rest: nothing of the 400 runs afterwards, and no failure of the
        feeder surfaces in a later wait."""
        server = self.serve()
        with server.connect() as vp:
            vp.arm()
            stuck = vp.assemble(".gen MARIANA\n" + LDWEIGHTS +
                                " events.wait_mode=WAIT_GE events.wait_sem=5 events.wait_value=1\n")
            vp.submit(stuck * 400)
            with self.assertRaises(pevp.PevpError):
                vp.wait_idle(TIMEOUT_NS)
            self.assertEqual(vp.read_reg("vp", "iq_status.level"), 256)  # full, the feeder waits for room
            vp.reset()
            self.assertEqual(vp.read_reg("vp", "iq_status.level"), 0)
            vp.write_reg("vp", "semaphore_5", 1)
            with self.assertRaises(pevp.PevpError):  # nothing left to run: the wait times out
                vp.wait_idle(TIMEOUT_NS)
            self.assertEqual(vp.counter48("vp", "retired_cnt_lsb"), 0)
            self.assertEqual(vp.read_reg("vp", "iq_status.level"), 0)
            vp.write_reg("vp", "semaphore_5", 0)
            completion, psum, want = self.run_program(vp)
            self.assertTrue(completion.done and not completion.error, completion)
            self.assertEqual(completion.retired, 2)
            np.testing.assert_array_equal(psum, want)
            # The SEQ's warning: kept for the client (diagnostics) or printed by the server, as the VP routes reports.
            reports = "\n".join(vp.diagnostics())
        self.assertIn("reset while a queue write waited for room", reports + server.stderr() + server.stdout())

    def test_the_c_driver_resets_a_server_vp(self):
        server = self.serve()
        run = subprocess.run([RESET_DRIVER, server.endpoint], capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)

    def test_a_vp_without_a_power_on_state_refuses_the_reset_and_goes_on(self):
        """csrs.impl = rtl: the register RTL's flops cannot be restored (D-CSR-RTL-CKPT), so there is no power-on state
        to return to: the reset is refused with status 2 naming why, changes nothing, and the VP still runs."""
        server = pevp.serve(pe_vp=PEVP_BIN, settings=["csrs.impl=rtl"])
        self.addCleanup(server.stop)
        with server.connect() as vp:
            vp.write_reg("vp", "semaphore_5", 3)
            with self.assertRaises(pevp.PevpError) as refused:
                vp.reset()
            self.assertEqual(refused.exception.status, 2)
            self.assertIn("no power-on state", str(refused.exception))
            self.assertIn("csrs.impl = rtl", str(refused.exception))
            self.assertEqual(vp.read_reg("vp", "semaphore_5"), 3)
            completion, psum, want = self.run_program(vp)
            self.assertTrue(completion.done and not completion.error, completion)
            np.testing.assert_array_equal(psum, want)

    def test_a_reset_between_clients_that_fails_is_reported_and_the_server_goes_on(self):
        server = pevp.serve(pe_vp=PEVP_BIN, settings=["csrs.impl=rtl"], args=["--reset-between-clients"])
        self.addCleanup(server.stop)
        with server.connect() as vp:
            vp.write_reg("vp", "semaphore_5", 3)
        with server.connect() as vp:  # served, with the VP as the first client left it
            self.assertEqual(vp.read_reg("vp", "semaphore_5"), 3)
        self.assertIn("client 1 left; the reset before the next client failed: reset: no power-on state",
                      server.stderr())

    def leave_an_error(self, server):
        """The first client: its program faults (an unknown opcode) and it leaves without clearing the error."""
        with server.connect() as vp:
            vp.arm()
            records = bytearray(vp.assemble(PROGRAM))
            records[0] = UNKNOWN_OPCODE
            vp.submit(bytes(records))
            completion = vp.wait_idle(TIMEOUT_NS)
            self.assertTrue(completion.error)
            self.assertEqual(vp.error_record().rule, "opcode.unknown")

    def test_reset_between_clients_gives_the_next_client_a_power_on_vp(self):
        server = self.serve("--reset-between-clients")
        self.leave_an_error(server)
        with server.connect() as vp:
            self.assertIsNone(vp.error_record())
            self.assertEqual(vp.counter48("vp", "retired_cnt_lsb"), 0)
            completion, psum, want = self.run_program(vp)
            self.assertTrue(completion.done and not completion.error, completion)
            np.testing.assert_array_equal(psum, want)
        self.assertNotIn("failed", server.stderr())

    def test_without_the_option_the_next_client_inherits_the_error(self):
        server = self.serve()
        self.leave_an_error(server)
        with server.connect() as vp:
            self.assertEqual(vp.error_record().rule, "opcode.unknown")
            completion, psum, want = self.run_program(vp)
            self.assertTrue(completion.error)  # stopped by the error the first client left
            self.assertFalse(completion.done)
            self.assertFalse(np.array_equal(psum, want))


if __name__ == "__main__":
    unittest.main()
