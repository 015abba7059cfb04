"""The VP as an MMIO server, tested through real `pe-vp serve` processes on real sockets: the C driver and the
Python client against a live server (results and simulated times equal to the in-process VP's), and every way a
client can misbehave -- malformed, oversized, unknown and wrong-version frames, a disconnect or a stall mid-frame,
floods, a second client, signals -- with the server still serving and the VP's state consistent afterwards.

Environment: PEVP_BIN (pe-vp), PEVP_C_DRIVER (the capi_c_driver binary), PYTHONPATH with the pevp package.
Run with /usr/bin/python3 -m unittest (ctest: remote.python)."""

import os
import random
import re
import sys
import signal
import socket
import stat
import struct
import subprocess
import tempfile
import time
import unittest

import numpy as np

import pevp
from pevp import client as proto

PEVP_BIN = os.environ["PEVP_BIN"]
C_DRIVER = os.environ["PEVP_C_DRIVER"]

K, M, N, MV_OFFSET = 64, 32, 48, 0x1000
PROGRAM = (
    ".gen MARIANA\n"
    "ldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF\n"
    "matmul src=sbuf[0]+0x1000:[1,48] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF "
    "psum_accumulate_flags=SINGLE dst=psum[0]:[1,48]\n")
MATMUL_COUNTER = "arr_seq_ififo_perf_matmul.tile_128x128_tile0_instr_cnt_lsb"


def operands(seed=0):
    """Small integers (exact in bf16 and in fp32 sums): st K x M, mv K x N."""
    rng = np.random.default_rng(seed)
    return (rng.integers(-3, 4, size=(K, M)).astype(np.float32), rng.integers(-2, 3, size=(K, N)).astype(np.float32))


def frame(op, payload=b"", version=1):
    return struct.pack("<IBB", len(payload) + 2, version, op) + payload


def read_reply(sock):
    """(kind, payload) of the next frame, or None when the server closed the connection."""
    header = b""
    while len(header) < 6:
        chunk = sock.recv(6 - len(header))
        if not chunk:
            return None
        header += chunk
    length, _, kind = struct.unpack("<IBB", header)
    body = b""
    while len(body) < length - 2:
        chunk = sock.recv(length - 2 - len(body))
        if not chunk:
            return None
        body += chunk
    return kind, body


def error_of(reply):
    kind, body = reply
    assert kind == proto.REPLY_ERROR, "expected an error reply, got kind 0x%02x" % kind
    status = body[0]
    (n,) = struct.unpack("<H", body[1:3])
    return status, body[3:3 + n].decode()


def raw_socket(endpoint):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(endpoint[len("unix:"):])
    return s


class Served(unittest.TestCase):
    """Each test gets its own server on a private Unix socket."""

    server_args = ()

    def setUp(self):
        self.server = pevp.serve(pe_vp=PEVP_BIN, args=self.server_args)
        self.addCleanup(self.stop_server)

    def stop_server(self):
        status = self.server.stop()
        self.assertEqual(status, 0, "the server ends cleanly on SIGTERM")

    def load_and_run(self, vp, seed=0):
        st, mv = operands(seed)
        vp.load_sbuf(st, dtype="bf16")
        vp.load_sbuf(mv, offset=MV_OFFSET, dtype="bf16")
        vp.submit(vp.assemble(PROGRAM))
        completion = vp.wait_idle()
        self.assertTrue(completion.done)
        self.assertFalse(completion.error)
        c = vp.read_psum(M, N)
        np.testing.assert_array_equal(c, st.T @ mv)
        vp.clear_done()
        return c


class CDriver(unittest.TestCase):
    def test_the_same_c_driver_in_process_and_against_a_server(self):
        local = subprocess.run([C_DRIVER], capture_output=True, text=True, timeout=120)
        self.assertEqual(local.returncode, 0, local.stdout + local.stderr)
        with pevp.serve(pe_vp=PEVP_BIN, args=["--once"]) as server:
            remote = subprocess.run([C_DRIVER, server.endpoint], capture_output=True, text=True, timeout=120)
            self.assertEqual(remote.returncode, 0, remote.stdout + remote.stderr)
            self.assertEqual(server.process.wait(timeout=30), 0, "--once: the server ends with its client")
        time_of = lambda out: re.search(r"final time (\d+) ps", out).group(1)
        self.assertEqual(time_of(local.stdout), time_of(remote.stdout),
                         "simulated time at the end is the same in-process and over the socket")


class PythonClient(Served):
    def test_gemm_exact_counters_stats_and_time(self):
        with self.server.connect() as vp:
            self.assertEqual(vp.generation, "MARIANA")
            self.assertEqual(vp.map.partitions, 128)
            vp.arm()
            t0 = vp.time_ps()
            self.load_and_run(vp)
            self.assertGreater(vp.time_ps(), t0)
            self.assertEqual(vp.counter48("top", MATMUL_COUNTER), 1)
            self.assertEqual(vp.read_reg("vp", "retired_cnt_lsb"), 2)
            stats = vp.stats()
            self.assertGreater(stats["cycles"], 0)
            self.assertEqual(vp.read_reg("vp", "seq_status.error"), 0)

    def test_cycles_and_the_micro_op_log(self):
        with self.server.connect() as vp:
            vp.arm()
            vp.micro_op_log(True)
            self.load_and_run(vp)
            vp.micro_op_log(False)
            self.load_and_run(vp)  # not logged
            lines = vp.micro_op_log_take()
            self.assertEqual([(l["seq"], l["instr"], l["kind"]) for l in lines],
                             [(0, 0, "weight_load"), (1, 1, "matmul")])
            self.assertEqual(lines[1]["psum_banks"], [0])
            self.assertEqual(lines[1]["n"], N)
            self.assertLessEqual(lines[0]["ready"], lines[0]["issue"])
            self.assertLessEqual(lines[1]["start"], lines[1]["complete"])
            self.assertEqual(vp.micro_op_log_take(), [], "taken once")
            cycles = vp.cycles()
            self.assertEqual(cycles["clock_ghz"], 2.4)
            self.assertGreater(cycles["now"], cycles["last_complete"])
            self.assertGreaterEqual(cycles["last_complete"], lines[1]["complete"])
            self.assertEqual(cycles["first_start"], lines[0]["start"])

    def test_interrupt_wait(self):
        with self.server.connect() as vp:
            vp.arm()
            raised, t = vp.wait_irq(timeout_ns=1000)
            self.assertFalse(raised, "nothing ran: no interrupt")
            st, mv = operands()
            vp.load_sbuf(st)
            vp.load_sbuf(mv, offset=MV_OFFSET)
            vp.submit(vp.assemble(PROGRAM))
            raised, t_irq = vp.wait_irq()
            self.assertTrue(raised)
            self.assertGreater(t_irq, t)
            self.assertEqual(vp.read_reg("vp", "irq_status.done"), 1)

    def test_a_fault_its_record_and_recovery(self):
        with self.server.connect() as vp:
            vp.arm()
            self.load_and_run(vp)  # a stationary for the Matmul that runs after the fault is cleared
            records = bytearray(vp.assemble(PROGRAM))
            records[0] = 0xEE  # no generation has this opcode
            vp.submit(records)
            self.assertTrue(vp.wait_idle().error)
            record = vp.error_record()
            self.assertEqual(record.rule, "opcode.unknown")
            self.assertEqual(record.opcode, 0xEE)
            self.assertEqual(record.index, 2, "the third instruction submitted")
            vp.clear_error()
            self.assertIsNone(vp.error_record())
            vp.clear_done()
            self.load_and_run(vp)

    def test_refusals_name_what_is_wrong(self):
        with self.server.connect() as vp:
            with self.assertRaisesRegex(pevp.PevpError, "argument: .*no_such_register"):
                vp.read_reg("top", "no_such_register")
            with self.assertRaisesRegex(pevp.PevpError, "argument: .*does not fit"):
                vp.write_reg("top", "queue_cfg.fifo_size_sel", 2)
            with self.assertRaisesRegex(pevp.PevpError, "bus: "):
                vp.read32(0x7000000)
            with self.assertRaisesRegex(pevp.PevpError, "assembly: .*frobnicate"):
                vp.assemble("frobnicate x=1\n")
            with self.assertRaisesRegex(pevp.PevpError, "timeout: "):
                vp.wait_idle(timeout_ns=1000)
            # An expression at the assembler's nesting limit (64) parses on the server's request thread (an
            # overflow of its stack under ASan, found by fuzz_protocol); one level more is refused, not a crash.
            deep = lambda n: ".gen MARIANA\nldweights src=sbuf[0]+%s2%s:[1,32] in_dtype=bf16 num_active_rows=64 " \
                             "num_active_cols=32 row_grp=0xF col_grp=0xF\n" % ("(" * n, ")" * n)
            self.assertEqual(len(vp.assemble(deep(63))), 64)
            with self.assertRaisesRegex(pevp.PevpError, "assembly: .*nested too deeply"):
                vp.assemble(deep(64))
            # Every refusal left the connection usable.
            self.assertEqual(vp.read_reg("top", "queue_cfg.fifo_size_sel"), 0)

    def test_the_vp_keeps_its_state_from_client_to_client(self):
        with self.server.connect() as vp:
            vp.write_reg("cluster", "arr_cluster_cfg.inter_instr_dly_cnt", 37)
            t = vp.time_ps()
        with self.server.connect() as vp:
            self.assertEqual(vp.read_reg("cluster", "arr_cluster_cfg.inter_instr_dly_cnt"), 37)
            self.assertGreaterEqual(vp.time_ps(), t)

    def test_a_second_client_is_told_the_server_is_busy(self):
        with self.server.connect() as vp:
            with self.assertRaisesRegex(pevp.PevpError, "state: busy"):
                self.server.connect()
            self.assertEqual(vp.read_reg("top", "queue_cfg.fifo_size_sel"), 0)

    def test_runs_are_deterministic(self):
        def session(server):
            with server.connect() as vp:
                vp.arm()
                self.load_and_run(vp, seed=3)
                return vp.time_ps(), vp.stats()
        first = session(self.server)
        with pevp.serve(pe_vp=PEVP_BIN) as other:
            second = session(other)
        self.assertEqual(first, second, "the same requests give the same times and statistics")


class Checkpoints(unittest.TestCase):
    """A checkpoint saved by one server and restored into a fresh one continues bit- and cycle-identically."""

    PART_B = (".gen MARIANA\n"
              "matmul src=sbuf[0]+0x1000:[1,48] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF "
              "col_grp=0xF psum_accumulate_flags=SINGLE dst=psum[0]+0x800:[1,48]\n")

    def part_b(self, vp):
        """A Matmul on the stationary part A loaded: it only works if the stationary survived."""
        vp.submit(vp.assemble(self.PART_B))
        self.assertFalse(vp.wait_idle().error)
        return (vp.read_psum(M, N, offset=0x800).tobytes(), vp.read_psum(M, N).tobytes(), vp.time_ps(),
                vp.counter48("top", MATMUL_COUNTER), vp.read_reg("vp", "retired_cnt_lsb"),
                vp.read_reg("cluster", "arr_cluster_cfg"), vp.stats())

    def test_restored_in_a_fresh_server_it_continues_identically(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "a.ckpt")
            with pevp.serve(pe_vp=PEVP_BIN) as first, first.connect() as vp:
                vp.arm()
                vp.write_reg("cluster", "arr_cluster_cfg.inter_instr_dly_cnt", 9)
                st, mv = operands(5)
                vp.load_sbuf(st)
                vp.load_sbuf(mv, offset=MV_OFFSET)
                vp.submit(vp.assemble(PROGRAM))
                vp.wait_idle()
                vp.clear_done()
                saved = vp.save_checkpoint(path)
                with open(path, "rb") as f:
                    self.assertEqual(f.read(), saved)
                uninterrupted = self.part_b(vp)
            with pevp.serve(pe_vp=PEVP_BIN) as second, second.connect() as vp:
                vp.restore_checkpoint(path)
                restored = self.part_b(vp)
        np.testing.assert_array_equal(np.frombuffer(uninterrupted[0], np.float32).reshape(M, N), st.T @ mv)
        self.assertEqual(uninterrupted, restored, "PSUM, time, counters, registers and statistics all equal")

    def test_bad_checkpoints_are_refused_and_change_nothing(self):
        with pevp.serve(pe_vp=PEVP_BIN) as first, first.connect() as vp:
            vp.arm()
            good = vp.save_checkpoint()
            with pevp.serve(pe_vp=PEVP_BIN, gen="CAYMAN") as other, other.connect() as cayman:
                with self.assertRaisesRegex(pevp.PevpError, "argument: .*CAYMAN"):
                    cayman.restore_checkpoint(good)
            st, _ = operands()
            vp.load_sbuf(st)
            t = vp.time_ps()
            for bad, why in ((good[:100], "truncated"), (b"", ""), (b"NOTACKPT" + good[8:], "")):
                with self.assertRaises(pevp.PevpError) as refused:
                    vp.restore_checkpoint(bad)
                self.assertEqual(refused.exception.kind, "argument")
                self.assertIn(why, str(refused.exception))
            flipped = bytearray(good)
            flipped[len(flipped) // 2] ^= 0xFF
            with self.assertRaisesRegex(pevp.PevpError, "argument: "):
                vp.restore_checkpoint(bytes(flipped))
            with self.assertRaisesRegex(pevp.PevpError, "argument: .*already at"):
                vp.restore_checkpoint(good)  # this VP's time has moved on since
            self.assertEqual(vp.time_ps(), t, "nothing applied")
            np.testing.assert_array_equal(
                np.frombuffer(vp.read(vp.map.sbuf, M * 2), np.uint16), pevp.to_bf16_bits(st[0]))
            vp.submit(vp.assemble(PROGRAM.split("\n", 2)[0] + "\n" + PROGRAM.split("\n")[1] + "\n"))
            with self.assertRaisesRegex(pevp.PevpError, "state: .*idle"):
                vp.save_checkpoint()  # a weight load in flight
            vp.wait_idle()


class Misbehaving(Served):
    """Raw frames: whatever a client sends, the server answers or drops it, and the VP stays consistent."""

    server_args = ("--frame-timeout-ms", "2000")

    def mark(self):
        """Leaves a known value in a register, to check later that nothing half-applied changed the VP."""
        with self.server.connect() as vp:
            vp.write_reg("cluster", "arr_cluster_cfg.inter_instr_dly_cnt", 21)
            return vp.time_ps()

    def assert_intact(self):
        with self.server.connect() as vp:
            self.assertEqual(vp.read_reg("cluster", "arr_cluster_cfg.inter_instr_dly_cnt"), 21)
            vp.arm()
            self.load_and_run(vp)

    def test_an_oversized_frame_gets_an_error_and_is_dropped(self):
        self.mark()
        s = raw_socket(self.server.endpoint)
        s.sendall(struct.pack("<IBB", 0x7FFFFFFF, 1, proto.WRITE))
        status, message = error_of(read_reply(s))
        self.assertEqual(status, 7)
        self.assertIn("exceeds the limit", message)
        self.assertIsNone(read_reply(s), "the connection is closed after it")
        s.close()
        self.assert_intact()

    def test_a_malformed_payload_names_the_op_and_field_and_the_connection_stays(self):
        self.mark()
        s = raw_socket(self.server.endpoint)
        s.sendall(frame(proto.READ32, b"\x00\x01\x02"))
        status, message = error_of(read_reply(s))
        self.assertEqual(status, 7)
        self.assertIn("read32", message)
        self.assertIn("address", message)
        s.sendall(frame(proto.READ32, struct.pack("<QB", 0, 7)))
        status, message = error_of(read_reply(s))
        self.assertIn("privileged", message)
        s.sendall(frame(proto.TIME, b"extra"))
        self.assertIn("after the last field", error_of(read_reply(s))[1])
        s.sendall(frame(0x7F))
        self.assertIn("unknown op", error_of(read_reply(s))[1])
        s.sendall(frame(proto.SUBMIT, b"\x00" * 65))
        self.assertIn("whole 64-byte records", error_of(read_reply(s))[1])
        s.sendall(frame(proto.READ, struct.pack("<QI", 0, 0xFFFFFFFF)))
        self.assertIn("transfer limit", error_of(read_reply(s))[1])
        s.sendall(frame(proto.TIME))
        kind, body = read_reply(s)
        self.assertEqual(kind, proto.REPLY_OK)
        self.assertEqual(len(body), 8)
        s.close()
        self.assert_intact()

    def test_a_wrong_version_is_refused(self):
        s = raw_socket(self.server.endpoint)
        s.sendall(frame(proto.TIME, version=9))
        status, message = error_of(read_reply(s))
        self.assertEqual(status, 7)
        self.assertIn("protocol version 9", message)
        s.close()

    def test_a_disconnect_mid_frame_applies_nothing(self):
        self.mark()
        s = raw_socket(self.server.endpoint)
        whole = frame(proto.WRITE_REG, proto._str("cluster") + proto._str("arr_cluster_cfg.inter_instr_dly_cnt")
                      + struct.pack("<I", 99))
        s.sendall(whole[:-3])
        s.close()
        self.assert_intact()

    def test_a_stall_mid_frame_is_dropped_after_the_frame_timeout(self):
        self.mark()
        s = raw_socket(self.server.endpoint)
        s.sendall(frame(proto.WRITE32, b"\x00" * 13)[:8])
        start = time.monotonic()
        self.assertIsNone(read_reply(s), "dropped")
        self.assertLess(time.monotonic() - start, 10)
        s.close()
        self.assert_intact()

    def test_a_flood_of_pipelined_requests_is_answered_in_order(self):
        s = raw_socket(self.server.endpoint)
        count = 5000
        payload = b"".join(frame(proto.READ_REG, proto._str("top") + proto._str("queue_cfg")) for _ in range(count))
        s.sendall(payload)
        for _ in range(count):
            kind, body = read_reply(s)
            self.assertEqual(kind, proto.REPLY_OK)
            self.assertEqual(body, struct.pack("<I", 0))
        s.close()

    def test_a_client_that_floods_and_leaves_without_reading(self):
        self.mark()
        for _ in range(3):
            s = raw_socket(self.server.endpoint)
            try:
                s.sendall(frame(proto.READ, struct.pack("<QI", 0, 1 << 20)) * 64)
            except OSError:
                pass
            s.close()
        self.assert_intact()

    def test_garbage_bytes(self):
        self.mark()
        rng = np.random.default_rng(7)
        for _ in range(20):
            s = raw_socket(self.server.endpoint)
            s.sendall(rng.integers(0, 256, size=int(rng.integers(1, 200)), dtype=np.uint8).tobytes())
            s.shutdown(socket.SHUT_WR)
            while read_reply(s) is not None:
                pass
            s.close()
        self.assert_intact()


class ProtocolFuzzing(unittest.TestCase):
    """Bounded mutation fuzzing of a live server over its socket: valid frames of every op, mutated (bytes flipped,
    cut, extended, spliced, length fields and op bytes changed), sent in bursts on fresh connections. The server
    must never die or hang, and the VP must stay consistent. Seed and length: PEVP_PROTOCOL_FUZZ_SEED and
    PEVP_PROTOCOL_FUZZ_CONNECTIONS (default 5000), so a run is the same bursts on a fast machine and under the
    sanitizers; PEVP_PROTOCOL_FUZZ_SECONDS (default 300, about ten times what the sanitizer build needs) bounds its
    wall time, and a run cut short by it fails. All three are printed, so a failure reproduces. The libFuzzer harness
    fuzz_protocol (docs/reliability.md) goes deeper on the in-process side."""

    def valid_frames(self):
        prog = PROGRAM.encode()
        reg = lambda face, name: proto._str(face) + proto._str(name)
        return [
            frame(proto.HELLO), frame(proto.TIME),
            frame(proto.READ32, struct.pack("<QB", 0x3000000, 0)),
            frame(proto.WRITE32, struct.pack("<QBI", 0x3001000, 0, 3)),
            frame(proto.READ32, struct.pack("<QB", 0x3002000, 1)),
            frame(proto.READ, struct.pack("<QI", 0x2000000, 256)),
            frame(proto.WRITE, struct.pack("<Q", 0x1000) + bytes(range(128))),
            frame(proto.READ_REG, reg("top", "queue_cfg")),
            frame(proto.WRITE_REG, reg("cluster", "arr_cluster_cfg.inter_instr_dly_cnt") + struct.pack("<I", 4)),
            frame(proto.COUNTER48, reg("vp", "retired_cnt_lsb")),
            frame(proto.ARM, b"\0\0\0"),
            frame(proto.ASSEMBLE, struct.pack("<I", len(prog)) + prog),
            frame(proto.SUBMIT, bytes([0x02]) + bytes(63)),
            frame(proto.WAIT_IDLE, struct.pack("<Q", 2000)),
            frame(proto.WAIT_IRQ, struct.pack("<Q", 2000)),
            frame(proto.CLEAR_DONE), frame(proto.ERROR_RECORD), frame(proto.CLEAR_ERROR), frame(proto.STATS),
        ]

    def mutate(self, rng, frames):
        f = bytearray(rng.choice(frames))
        for _ in range(rng.randint(1, 4)):
            choice = rng.randrange(7)
            if choice == 0 and len(f) > 6:
                f[rng.randrange(6, len(f))] ^= 1 << rng.randrange(8)
            elif choice == 1:
                f = f[:rng.randrange(len(f) + 1)]
            elif choice == 2:
                f += bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
            elif choice == 3 and len(f) >= 4:
                f[0:4] = struct.pack("<I", rng.choice([0, 1, 2, len(f), len(f) + 100, 0xFFFFFFFF, rng.randrange(1 << 27)]))
            elif choice == 4 and len(f) >= 6:
                f[5] = rng.randrange(256)
            elif choice == 5 and len(f) >= 5:
                f[4] = rng.choice([0, 1, 2, 255])
            else:
                f += rng.choice(frames)
        return bytes(f)

    @staticmethod
    def bound(burst):
        """Frames the burst as the server will (the frames of one mutated frame shift the next ones), then defuses
        the requests the server must honour but that would end the run or wait long: shutdown becomes time, and a
        wait's timeout is cut to 10 us (it is simulated time; with interrupts off the driver polls every 100 ns, so
        a wait for a program that never finishes costs wall time in proportion)."""
        f, at = bytearray(burst), 0
        while at + 6 <= len(f):
            length = struct.unpack_from("<I", f, at)[0]
            if length < 2 or length > proto.MAX_TRANSFER_BYTES + 4096 or f[at + 4] != 1:
                break  # the server ends the connection here
            if f[at + 5] == proto.SHUTDOWN:
                f[at + 5] = proto.TIME
            if f[at + 5] in (proto.WAIT_IDLE, proto.WAIT_IRQ) and length == 10 and at + 14 <= len(f):
                struct.pack_into("<Q", f, at + 6, struct.unpack_from("<Q", f, at + 6)[0] % 10000)
            at += 4 + length
        return bytes(f)

    def test_mutated_frames_against_a_live_server(self):
        seed = int(os.environ.get("PEVP_PROTOCOL_FUZZ_SEED", "20261202"))
        seconds = float(os.environ.get("PEVP_PROTOCOL_FUZZ_SECONDS", "300"))
        wanted = int(os.environ.get("PEVP_PROTOCOL_FUZZ_CONNECTIONS", "5000"))
        rng = random.Random(seed)
        frames = self.valid_frames()
        sent = connections = 0
        with pevp.serve(pe_vp=PEVP_BIN, args=["--frame-timeout-ms", "200"]) as server:
            start = time.monotonic()
            deadline = start + seconds
            while connections < wanted and time.monotonic() < deadline:
                s = raw_socket(server.endpoint)
                burst = self.bound(b"".join(self.mutate(rng, frames) for _ in range(rng.randint(1, 8))))
                try:
                    s.sendall(burst)
                    s.shutdown(socket.SHUT_WR)
                    while read_reply(s) is not None:
                        pass
                except OSError:
                    pass  # dropped mid-burst: allowed
                s.close()
                sent += len(burst)
                connections += 1
                self.assertIsNone(server.process.poll(), "the server died (seed %d)" % seed)
            print("protocol fuzzing: seed %d, %d of %d connections in %.1f s (limit %.0f s), %d bytes"
                  % (seed, connections, wanted, time.monotonic() - start, seconds, sent), file=sys.stderr)
            with server.connect(timeout=30) as vp:
                # Consistent: the error status and the record agree, the queue within its depth, time monotonic,
                # and a register write reads back.
                error = vp.read_reg("vp", "seq_status.error")
                self.assertEqual(error == 1, vp.error_record() is not None)
                self.assertLessEqual(vp.read_reg("vp", "iq_status.level"), 256)
                t = vp.time_ps()
                vp.write_reg("cluster", "arr_cluster_cfg.inter_instr_dly_cnt", 11)
                self.assertEqual(vp.read_reg("cluster", "arr_cluster_cfg.inter_instr_dly_cnt"), 11)
                self.assertGreaterEqual(vp.time_ps(), t)
        self.assertEqual(connections, wanted, "the run was cut short by its %.0f s bound (seed %d)" % (seconds, seed))


class Listening(unittest.TestCase):
    def test_unix_socket_is_owner_only_and_removed_at_exit(self):
        with pevp.serve(pe_vp=PEVP_BIN) as server:
            path = server.endpoint[len("unix:"):]
            mode = os.stat(path).st_mode
            self.assertTrue(stat.S_ISSOCK(mode))
            self.assertEqual(stat.S_IMODE(mode), 0o600)
            server.process.send_signal(signal.SIGTERM)
            self.assertEqual(server.process.wait(timeout=30), 0)
            self.assertFalse(os.path.exists(path))

    def test_a_stop_signal_the_moment_it_listens_ends_it(self):
        """SIGTERM sent as soon as the listening line appears lands between the server's stop check and its first
        wait; it must still end the server (a signal handled just before a plain poll() left it waiting forever)."""
        for signum in [signal.SIGTERM, signal.SIGINT] * 10:
            with pevp.serve(pe_vp=PEVP_BIN) as server:
                server.process.send_signal(signum)
                self.assertEqual(server.process.wait(timeout=30), 0, signal.Signals(signum).name)
                self.assertIn("pe-vp serve: stopped", server.stdout())

    def test_a_path_in_use_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            plain = os.path.join(d, "file")
            open(plain, "w").close()
            r = subprocess.run([PEVP_BIN, "serve", "--listen", "unix:" + plain], capture_output=True, text=True,
                               timeout=60)
            self.assertEqual(r.returncode, 2)
            self.assertIn("not a socket", r.stderr)
            with pevp.serve(pe_vp=PEVP_BIN, endpoint="unix:" + os.path.join(d, "s")) as server:
                r = subprocess.run([PEVP_BIN, "serve", "--listen", server.endpoint], capture_output=True, text=True,
                                   timeout=60)
                self.assertEqual(r.returncode, 2)
                self.assertIn("already listening", r.stderr)

    def test_tcp_on_loopback_with_a_port_the_system_picks(self):
        with pevp.serve(pe_vp=PEVP_BIN, endpoint="tcp:0") as server:
            self.assertRegex(server.endpoint, r"^tcp:127\.0\.0\.1:\d+$")
            self.assertNotEqual(server.endpoint, "tcp:127.0.0.1:0")
            with server.connect() as vp:
                self.assertEqual(vp.read_reg("top", "queue_cfg"), 0)

    def test_a_non_loopback_address_is_warned_about(self):
        with pevp.serve(pe_vp=PEVP_BIN, endpoint="tcp:0.0.0.0:0", args=["--once"]) as server:
            port = server.endpoint.rsplit(":", 1)[1]
            with pevp.connect("tcp:127.0.0.1:" + port) as vp:
                vp.time_ps()
            server.process.wait(timeout=30)
            self.assertIn("not a loopback address", server.stderr())

    def test_bad_listen_arguments(self):
        for endpoint, message in (("tcp:99999", "port"), ("udp:1", "an endpoint is"), ("tcp:host.example:1", "IPv4")):
            r = subprocess.run([PEVP_BIN, "serve", "--listen", endpoint], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 2, endpoint)
            self.assertIn(message, r.stderr)

    def test_log_firmware_goes_to_stderr(self):
        with pevp.serve(pe_vp=PEVP_BIN, args=["--log-firmware"]) as server:
            with server.connect() as vp:
                vp.arm()
                Served.load_and_run(self, vp)
            log = server.stderr()
        self.assertRegex(log, r"fw \[ *[0-9.]+ us\] instr 0: S: Ldweights")
        self.assertRegex(log, r"fw \[ *[0-9.]+ us\] instr 1: S: Matmul")
        self.assertRegex(log, r"matmul tile rows 0-127 cols 0-127: start [0-9.]+ us")

    def test_a_server_that_logs_more_than_a_pipe_holds_keeps_serving(self):
        """Each fault is an Info line on the server's stdout; far more of them than a pipe holds (64 KiB) must not
        stop the server mid-request, as they did when the launcher read only its first line from a pipe."""
        faults = 600
        with pevp.serve(pe_vp=PEVP_BIN) as server, server.connect(timeout=60) as vp:
            vp.arm()
            bad = bytearray(vp.assemble(PROGRAM)[:64])
            bad[0] = 0xEE  # no generation has this opcode
            for _ in range(faults):
                vp.submit(bytes(bad))
                self.assertTrue(vp.wait_idle().error)
                vp.clear_error()
                vp.clear_done()
            self.assertEqual(vp.read_reg("vp", "seq_status.error"), 0)
            logged = server.stdout()
        self.assertEqual(len([l for l in logged.splitlines() if l.endswith("[opcode.unknown]")]), faults,
                         logged[-2000:])
        self.assertGreater(len(logged), 64 << 10)

    def test_shutdown_request_and_idle_timeout(self):
        with pevp.serve(pe_vp=PEVP_BIN, args=["--idle-timeout-ms", "2000"]) as server:
            s = raw_socket(server.endpoint)
            self.assertIsNone(read_reply(s), "a silent client is dropped")
            s.close()
            vp = server.connect()
            vp.shutdown()
            self.assertEqual(server.process.wait(timeout=30), 0)
            self.assertIn("shut down by client", server.stdout())


if __name__ == "__main__":
    unittest.main()
