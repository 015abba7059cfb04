"""The requests a client can make a `pe-vp serve` process execute, with hostile arguments: writes into a full
instruction-queue window, waits with huge timeouts, a client that leaves in the middle of a long wait, a stop
signal during one, submits held behind a blocked SEQ. After each, the server must still answer (a newcomer, the
same client) and the VP must still run a program to the expected PSUM. Real servers on private Unix sockets.

Environment: PEVP_BIN (pe-vp), PYTHONPATH with the pevp package. Run with /usr/bin/python3 -m unittest
(ctest: remote.requests)."""

import os
import signal
import socket
import struct
import time
import unittest
import zlib

import numpy as np

import pevp
from pevp import client as proto
from raw_frames import error_of, frame, read_reply

PEVP_BIN = os.environ["PEVP_BIN"]

K, M, N, MV_OFFSET = 64, 32, 48, 0x1000
LDWEIGHTS = ("ldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF "
             "col_grp=0xF")
MATMUL = ("matmul src=sbuf[0]+0x1000:[1,48] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF "
          "col_grp=0xF psum_accumulate_flags=SINGLE dst=psum[0]:[1,48]")
PROGRAM = ".gen MARIANA\n" + LDWEIGHTS + "\n" + MATMUL + "\n"
# The same program held at its first instruction until the driver sets semaphore 1.
HELD = (".gen MARIANA\n" + LDWEIGHTS + " events.wait_mode=WAIT_GE events.wait_sem=1 events.wait_value=1\n" +
        MATMUL + "\n")
STATE, ARGUMENT, BUS = 2, 1, 3
OP_HELLO, OP_WRITE, OP_SUBMIT, OP_WAIT_IDLE = 0x01, 0x13, 0x31, 0x32
SECOND = 1_000_000_000  # ns
# A simulated timeout a blocked program would take far longer than any test to reach: the driver polls the SEQ
# every 100 ns of simulated time, about 2 s of wall time per simulated second.
LONG_WAIT_NS = 500 * SECOND
# What a cancelled request may take to end, in wall seconds (measured: tens of milliseconds).
PROMPT_SECONDS = 5


def sanitized():
    """Whether pe-vp is built with AddressSanitizer, whose allocator keeps freed memory for a while."""
    with open(PEVP_BIN, "rb") as f:
        return b"__asan_init" in f.read()


def operands():
    rng = np.random.default_rng(7)
    return (rng.integers(-3, 4, size=(K, M)).astype(np.float32), rng.integers(-2, 3, size=(K, N)).astype(np.float32))


def raw_socket(server, timeout=30):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(server.endpoint[len("unix:"):])
    return s


def later_checkpoint(image, time_ps):
    """`image` (docs/checkpoint.md, format 4) with its simulated time set to `time_ps` and the section's CRC fixed."""
    at = 8 + 4
    (n,) = struct.unpack_from("<I", image, at)
    at += 4 + n
    out = bytearray(image)
    while at < len(image):
        (name_length,) = struct.unpack_from("<H", image, at)
        name = image[at + 2:at + 2 + name_length]
        at += 2 + name_length
        length, _ = struct.unpack_from("<QI", image, at)
        payload_at = at + 12
        if name == b"time":
            payload = bytearray(image[payload_at:payload_at + length])
            struct.pack_into("<Q", payload, 8, time_ps)  # after the resolution in fs
            out[payload_at:payload_at + length] = payload
            struct.pack_into("<I", out, at + 8, zlib.crc32(payload))
            return bytes(out)
        at = payload_at + length
    raise AssertionError("no time section")


class Requests(unittest.TestCase):
    def setUp(self):
        self.server = pevp.serve(pe_vp=PEVP_BIN)
        self.addCleanup(self.server.stop)

    def run_program(self, vp):
        """The VP is usable: the program gives the exact product (armed first, as spec 003 section 6 asks: the VP
        reports a submit to an engine never armed, checks.hazards)."""
        vp.arm()
        st, mv = operands()
        vp.load_sbuf(st)
        vp.load_sbuf(mv, offset=MV_OFFSET)
        vp.submit(vp.assemble(PROGRAM))
        completion = vp.wait_idle()
        self.assertTrue(completion.done)
        self.assertFalse(completion.error)
        np.testing.assert_array_equal(vp.read_psum(M, N), st.T @ mv)
        vp.clear_done()

    def start_held_program(self, vp):
        vp.arm()
        vp.submit(vp.assemble(HELD))

    def release(self, vp):
        vp.write_reg("vp", "semaphore_1", 1)
        completion = vp.wait_idle()
        self.assertTrue(completion.done, completion)
        vp.clear_done()
        vp.write_reg("vp", "semaphore_1", 0)

    def test_queue_window_writes_past_a_full_queue_are_refused_and_the_vp_goes_on(self):
        """A program holds the queue's head on a semaphore; 64-record writes into the window fill the 256-deep
        queue: the one that does not fit is refused whole, naming the room, and the VP goes on (it was left
        deadlocked for good: every later request "start a new process")."""
        with self.server.connect() as vp:
            self.start_held_program(vp)  # the ldweights waits at the head; the matmul is queued behind it
            record = vp.assemble(".gen MARIANA\n" + LDWEIGHTS + "\n")
            burst = record * 64
            for _ in range(3):
                vp.write(vp.map.iq, burst)
            self.assertEqual(vp.read_reg("vp", "iq_status.level"), 2 + 3 * 64)
            with self.assertRaises(pevp.PevpError) as refused:
                vp.write(vp.map.iq, burst)
            self.assertEqual(refused.exception.status, BUS)
            message = str(refused.exception)
            self.assertIn("64 records into the instruction queue", message)
            self.assertIn("room for 62", message)
            self.assertIn("none taken", message)
            self.assertEqual(vp.read_reg("vp", "iq_status.level"), 2 + 3 * 64, "nothing of the refused write queued")
            self.release(vp)
            self.assertEqual(vp.read_reg("vp", "iq_status.level"), 0)
            self.run_program(vp)
        with self.server.connect() as vp:
            self.run_program(vp)

    def test_huge_timeouts_are_refused_naming_the_limit(self):
        with self.server.connect() as vp:
            t0 = vp.time_ps()
            for wait in (vp.wait_irq, vp.wait_idle):
                for timeout in (2**64 - 1, 2**62, 10**12 + 1):
                    with self.assertRaises(pevp.PevpError) as refused:
                        wait(timeout_ns=timeout)
                    self.assertEqual(refused.exception.status, ARGUMENT)
                    self.assertIn("limit of 1000 s (10^15 ps, D-SIM-TIME-LIMIT)", str(refused.exception))
            self.assertEqual(vp.time_ps(), t0, "a refused wait takes no time")
            # Up to the limit: the wait goes to its end, then only what takes no simulated time is served.
            raised, at = vp.wait_irq(timeout_ns=(10**15 - vp.time_ps()) // 1000)
            self.assertFalse(raised)
            self.assertLessEqual(at, 10**15)
            # The wait ends within a nanosecond of the limit; a bus access or two passes it, and then none runs.
            for _ in range(3):
                try:
                    vp.read_reg("vp", "iq_status.level")
                except pevp.PevpError as refused:
                    self.assertEqual(refused.status, STATE)
                    self.assertIn("reached its limit of 1000 s", str(refused))
                    break
            else:
                self.fail("requests that take simulated time are served past the limit")
            self.assertLess(vp.time_ps(), 10**15 + 10**6)
            self.assertEqual(vp.generation, "MARIANA")

    def test_a_checkpoint_past_the_time_limit_is_refused(self):
        """Restoring waits until the checkpoint's simulated time: one past the limit (CRC made right) is refused
        naming it, and nothing is applied (it pushed simulated time there)."""
        with self.server.connect() as vp:
            image = later_checkpoint(vp.save_checkpoint(), 2 * 10**15)
            t0 = vp.time_ps()
            with self.assertRaises(pevp.PevpError) as refused:
                vp.restore_checkpoint(image)
            self.assertEqual(refused.exception.status, ARGUMENT)
            self.assertIn("the simulated time 2000000000000000 ps is past the latest this pe-vp supports, 1000 s",
                          str(refused.exception))
            self.assertEqual(vp.time_ps(), t0)
            self.run_program(vp)

    def test_a_client_that_leaves_during_a_long_wait_is_cancelled_promptly(self):
        """The client's wait_idle is cancelled once it is gone: a newcomer is answered at once (it waited out the
        whole simulated timeout, unanswered), and the program held before goes on when released."""
        with self.server.connect() as vp:
            self.start_held_program(vp)
        s = raw_socket(self.server)
        s.sendall(frame(OP_WAIT_IDLE, struct.pack("<Q", LONG_WAIT_NS)))
        time.sleep(0.3)  # the request is being executed
        s.close()
        start = time.monotonic()
        with self.server.connect(timeout=PROMPT_SECONDS) as vp:
            elapsed = time.monotonic() - start
            self.assertLess(elapsed, PROMPT_SECONDS)
            self.release(vp)
            self.run_program(vp)
        self.assertIn("left during its wait_idle request: cancelled", self.server.stderr())

    def test_a_stop_signal_during_a_long_wait_ends_the_server_promptly(self):
        """SIGTERM while a client's wait_idle runs: the client is told its request was cancelled and the server
        exits cleanly, within PROMPT_SECONDS (it ignored the signal until the simulated timeout). An idle wait of
        100 s of simulated time before (cheap, nothing happens) must not leave the next request's slices long."""
        with self.server.connect() as vp:
            self.assertEqual(vp.wait_irq(timeout_ns=100 * SECOND)[0], False)
            self.start_held_program(vp)
        s = raw_socket(self.server)
        s.sendall(frame(OP_WAIT_IDLE, struct.pack("<Q", LONG_WAIT_NS)))
        time.sleep(0.3)
        start = time.monotonic()
        self.server.process.send_signal(signal.SIGTERM)
        s.settimeout(PROMPT_SECONDS)
        reply = read_reply(s)
        self.assertIsNotNone(reply, "the client is answered before the server ends")
        status, message = error_of(reply)
        self.assertEqual(status, STATE)
        self.assertRegex(message, r"^wait_idle: cancelled at \d+ ps: the server is stopping")
        self.assertEqual(self.server.process.wait(timeout=PROMPT_SECONDS), 0)
        elapsed = time.monotonic() - start
        self.assertLess(elapsed, PROMPT_SECONDS)
        s.close()

    def test_held_submits_are_bounded(self):
        """Behind a blocked SEQ, submits are held by the server: past one frame's worth (2^20 records) a submit is
        refused whole with the counts, and the server's memory does not grow with further ones."""
        with self.server.connect() as vp:
            self.start_held_program(vp)
            rss_before = self.rss_kb()
            records = bytes(64) * (1 << 18)  # 16 MiB; never dispatched while the head waits
            held = 0
            refusals = 0
            for _ in range(12):
                try:
                    vp.submit(records)
                    held += 1 << 18
                except pevp.PevpError as e:
                    refusals += 1
                    self.assertEqual(e.status, STATE)
                    self.assertIn("would pass the 1048576 the driver holds; none queued", str(e))
            self.assertLessEqual(held, 1 << 20)
            self.assertEqual(refusals, 12 - held // (1 << 18))
            # 2^20 records held, 64 MiB and the deque's overhead; twelve submits grew the server by 249 MB.
            growth_mb = (self.rss_kb() - rss_before) / 1024
            print("\nheld submits: %d refused of 12, the server grew by %.0f MB" % (refusals, growth_mb))
            if not sanitized():  # AddressSanitizer's quarantine keeps up to 256 MB of freed buffers resident
                self.assertLess(growth_mb, 200)
            self.assertGreaterEqual(vp.time_ps(), 0)  # still answering

    def rss_kb(self):
        with open("/proc/%d/status" % self.server.process.pid) as f:
            return int(next(line for line in f if line.startswith("VmRSS:")).split()[1])

    def test_micro_op_lines_kept_between_takes_are_bounded(self):
        """A client that keeps the micro-op log on and never takes it cannot make the server hold more than one
        take's worth (64 MiB): the lines past it are counted, the next take says how many were not kept, and the
        kept ones follow, whole."""
        with self.server.connect() as vp:
            vp.arm()
            vp.micro_op_log(True)
            vp.submit(vp.assemble(PROGRAM) * 60000)  # 120,000 micro-ops of about 650 bytes a line: 78 MB
            completion = vp.wait_idle()
            self.assertTrue(completion.done)
            with self.assertRaises(pevp.PevpError) as refused:
                vp._call(proto.MICRO_OP_LOG_TAKE)
            self.assertEqual(refused.exception.status, STATE)
            self.assertRegex(str(refused.exception), r"micro_op_log_take: \d+ micro-op lines from line \d+ on were not "
                             r"kept: the VP keeps at most 67108864 bytes of lines between takes")
            lines = vp.micro_op_log_take()
            self.assertGreater(len(lines), 90000)
            self.assertLess(len(lines), 120000)
            self.assertEqual([line["seq"] for line in lines[:3]], [0, 1, 2])
            self.assertEqual(vp.micro_op_log_take(), [], "nothing more, and no further report")
            vp.micro_op_log(False)
            vp.clear_done()
            self.run_program(vp)

    def test_zero_length_bursts_are_empty_transfers(self):
        """Bursts are "any length": zero bytes read and write nothing and take no time (it was a bus error)."""
        with self.server.connect() as vp:
            t0 = vp.time_ps()
            vp.write(vp.map.sbuf, b"")
            self.assertEqual(vp.read(vp.map.sbuf, 0), b"")
            self.assertEqual(vp.time_ps(), t0)


if __name__ == "__main__":
    unittest.main()
