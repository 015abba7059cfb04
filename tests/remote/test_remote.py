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
import threading
import time
import unittest

import numpy as np

import pevp
from pevp import client as proto
from raw_frames import error_of, frame, read_reply

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


def raw_socket(endpoint):
    """A connected socket that speaks no protocol of its own (unix:PATH or tcp:HOST:PORT)."""
    if endpoint.startswith("tcp:"):
        host, port = endpoint[len("tcp:"):].rsplit(":", 1)
        s = socket.create_connection((host, int(port)), timeout=30)
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(30)
        s.connect(endpoint[len("unix:"):])
    return s


def auth_frame(token):
    return frame(proto.AUTH, struct.pack("<H", len(token)) + token)


def without_token_environment(home):
    """An environment whose client finds no token: no PEVP_TOKEN_FILE, and a home without a default token file."""
    env = dict(os.environ, HOME=home)
    env.pop("PEVP_TOKEN_FILE", None)
    return env


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
            with pevp.connect("tcp:127.0.0.1:" + port, token_file=server.token_file) as vp:
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

    def test_faults_are_the_clients_diagnostics_not_server_output(self):
        """Each fault is a diagnostics line for the client (docs/errors.md "Where the VP's messages go"), never a line
        on the server's stdout: far more of them than a pipe holds (64 KiB) are all kept for the client's next take,
        and the server keeps serving."""
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
            lines = vp.diagnostics()
            logged = server.stdout()
        self.assertEqual(len([l for l in lines if l.startswith("Info: /pevp/seq: instruction ")
                              and l.endswith("[opcode.unknown]")]), faults, lines[-3:])
        self.assertGreater(sum(len(l) + 1 for l in lines), 64 << 10)
        self.assertEqual(logged.splitlines()[1:], [], logged[-2000:])  # its first line only, while it serves

    def test_shutdown_request_and_idle_timeout(self):
        with pevp.serve(pe_vp=PEVP_BIN, args=["--idle-timeout-ms", "2000"]) as server:
            s = raw_socket(server.endpoint)
            self.assertIsNone(read_reply(s), "a silent client is dropped")
            s.close()
            vp = server.connect()
            vp.shutdown()
            self.assertEqual(server.process.wait(timeout=30), 0)
            self.assertIn("shut down by client", server.stdout())


class Connections(unittest.TestCase):
    """The server's connections: newcomers refused without holding up the served client, a socket path shared with
    a newer server, and messages that quote what a client sent."""

    @staticmethod
    def requests_per_second(vp, seconds):
        count, end = 0, time.monotonic() + seconds
        while time.monotonic() < end:
            vp.time_ps()
            count += 1
        return count / seconds

    def test_refusing_newcomers_does_not_slow_the_served_client(self):
        """Newcomers that connect while a client is served and then say nothing are refused ("busy") on the
        server's only thread; the served client's throughput while they keep coming stays within a factor of 5 of
        its throughput alone, measured just before (with a 200 ms linger per refusal it fell to about 1 %; the
        factor leaves room for the newcomers' own cost on a loaded machine)."""
        with pevp.serve(pe_vp=PEVP_BIN) as server, server.connect(timeout=30) as vp:
            alone = self.requests_per_second(vp, 1.0)
            stop, silent, attempts = threading.Event(), [], [0]

            def newcomers():
                while not stop.is_set():
                    attempts[0] += 1
                    try:
                        silent.append(raw_socket(server.endpoint))  # connects, sends nothing, reads nothing
                    except OSError:
                        pass  # the listen backlog is full: the server is not taking newcomers as they come
                    time.sleep(0.02)

            crowd = threading.Thread(target=newcomers)
            crowd.start()
            try:
                crowded = self.requests_per_second(vp, 1.0)
            finally:
                stop.set()
                crowd.join()
            try:
                self.assertGreater(crowded, alone / 5,
                                   "%.0f requests/s alone, %.0f while %d newcomers came (%d connected)"
                                   % (alone, crowded, attempts[0], len(silent)))
                self.assertGreater(attempts[0], 20, "newcomers kept coming")
                self.assertEqual(len(silent), attempts[0], "every newcomer was taken off the backlog")
                for s in silent[:5]:
                    status, message = error_of(read_reply(s))
                    self.assertEqual(status, 2)
                    self.assertIn("busy", message)
                    self.assertIsNone(read_reply(s), "and closed")
            finally:
                for s in silent:
                    s.close()
            self.assertEqual(vp.read_reg("top", "queue_cfg"), 0)

    def test_a_stopping_server_leaves_a_newer_servers_socket(self):
        """The first server's socket file is removed from under it and a second server listens at the same path:
        the first one's end must not remove the second's socket (it would run on, unreachable)."""
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "vp.sock")
            first = pevp.serve(pe_vp=PEVP_BIN, endpoint="unix:" + path)
            try:
                os.unlink(path)
                with pevp.serve(pe_vp=PEVP_BIN, endpoint="unix:" + path) as second:
                    self.assertEqual(first.stop(), 0)
                    self.assertTrue(os.path.exists(path), "the newer server's socket is still there")
                    with second.connect(timeout=30) as vp:
                        self.assertEqual(vp.read_reg("top", "queue_cfg"), 0)
                self.assertFalse(os.path.exists(path), "each server removes its own socket")
            finally:
                first.stop()

    def test_error_messages_escape_what_the_client_sent(self):
        """A register name of invalid UTF-8, a terminal escape, a control, a C1 control and a backslash comes back
        in the error message as printable UTF-8, each such byte as \\xHH; a name with a NUL, which the message
        would have been cut at, is refused as a malformed str, naming where the NUL is."""
        with pevp.serve(pe_vp=PEVP_BIN) as server:
            s = raw_socket(server.endpoint)
            name = b"bad\xff\x1b[31mred\x01after\xc2\x9bx\\y\xc3\xa9"
            s.sendall(frame(proto.READ_REG, proto._str("top") + struct.pack("<H", len(name)) + name))
            kind, body = read_reply(s)
            self.assertEqual(kind, proto.REPLY_ERROR)
            (n,) = struct.unpack("<H", body[1:3])
            message = body[3:3 + n].decode("utf-8")  # strict: the field is UTF-8
            self.assertEqual(body[0], 1)
            self.assertIn(r"'bad\xff\x1b[31mred\x01after\xc2\x9bx\\y" + "\u00e9'", message)
            self.assertFalse([c for c in message if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0], message)
            with_nul = b"queue\x00cfg"
            s.sendall(frame(proto.READ_REG, proto._str("top") + struct.pack("<H", len(with_nul)) + with_nul))
            status, message = error_of(read_reply(s))
            self.assertEqual((status, message), (7, "read_reg: 'name' holds a NUL byte at offset 5 "
                                                    "(a str is text without NULs)"))
            s.sendall(frame(proto.TIME))
            self.assertEqual(read_reply(s)[0], proto.REPLY_OK, "the connection stays")
            s.close()


class Authentication(unittest.TestCase):
    """TCP takes a client only with the token the server wrote to its owner-only token file."""

    def test_tcp_takes_only_a_client_with_the_token(self):
        with pevp.serve(pe_vp=PEVP_BIN, endpoint="tcp:0") as server:
            self.assertIsNotNone(server.token_file, server.stdout())
            self.assertEqual(stat.S_IMODE(os.stat(server.token_file).st_mode), 0o600)
            with open(server.token_file, "rb") as f:
                token = f.read().strip()
            self.assertRegex(token, rb"^[0-9a-f]{64}$")
            attempts = (
                (frame(proto.SHUTDOWN), "takes a token first"),
                (frame(proto.WRITE32, struct.pack("<QBI", 0x3002000, 1, 1)), "takes a token first"),
                (auth_frame(b"0" * 64), "not this server's"),
                (auth_frame(token[:-1]), "not this server's"),
                (auth_frame(token + b"0"), "not this server's"),
                (auth_frame(b""), "not this server's"),
                (frame(proto.AUTH, b"\x05"), "auth: the payload ends inside 'token'"),
            )
            for request, why in attempts:
                s = raw_socket(server.endpoint)
                s.sendall(request)
                status, message = error_of(read_reply(s))
                self.assertEqual(status, 9, message)
                self.assertIn(why, message)
                self.assertNotIn(token.decode(), message)
                self.assertIsNone(read_reply(s), "closed after the refusal")
                s.close()
            self.assertIsNone(server.process.poll(), "the shutdown without a token was refused")
            s = raw_socket(server.endpoint)
            s.sendall(auth_frame(token) + frame(proto.TIME) + auth_frame(b"again: nothing to check"))
            self.assertEqual(read_reply(s), (proto.REPLY_OK, b""))
            self.assertEqual(read_reply(s)[0], proto.REPLY_OK)
            self.assertEqual(read_reply(s), (proto.REPLY_OK, b""))
            s.close()
            with server.connect(timeout=30) as vp:
                self.assertEqual(vp.read_reg("top", "queue_cfg"), 0)
            with tempfile.TemporaryDirectory() as home:
                old = os.environ.copy()
                os.environ.clear()
                os.environ.update(without_token_environment(home))
                try:
                    with self.assertRaisesRegex(pevp.PevpError, "auth: .*takes a token first.*no token"):
                        pevp.connect(server.endpoint, timeout=30)
                finally:
                    os.environ.clear()
                    os.environ.update(old)
                wrong = os.path.join(home, "wrong")
                with open(wrong, "w") as f:
                    f.write("1" * 64 + "\n")
                with self.assertRaisesRegex(pevp.PevpError, "auth: .*not this server's.*token from " + wrong):
                    pevp.connect(server.endpoint, timeout=30, token_file=wrong)
                with self.assertRaisesRegex(pevp.PevpError, "argument: token file .*missing"):
                    pevp.connect(server.endpoint, timeout=30, token_file=os.path.join(home, "missing"))
            token_file = server.token_file
        self.assertFalse(os.path.exists(token_file), "the token file goes with its server")

    def test_the_c_driver_over_tcp_reads_its_token_file(self):
        with tempfile.TemporaryDirectory() as home:
            env = without_token_environment(home)
            with pevp.serve(pe_vp=PEVP_BIN, endpoint="tcp:0") as server:
                refused = subprocess.run([C_DRIVER, server.endpoint], capture_output=True, text=True, timeout=120,
                                         env=env)
                self.assertNotEqual(refused.returncode, 0)
                self.assertIn("takes a token first", refused.stdout)
                env["PEVP_TOKEN_FILE"] = server.token_file
                taken = subprocess.run([C_DRIVER, server.endpoint], capture_output=True, text=True, timeout=120,
                                       env=env)
                self.assertEqual(taken.returncode, 0, taken.stdout + taken.stderr)

    def test_the_default_token_file_is_in_the_home_directory(self):
        with tempfile.TemporaryDirectory() as home:
            env = without_token_environment(home)
            out_path = os.path.join(home, "out")
            with open(out_path, "wb") as out:
                server = subprocess.Popen([PEVP_BIN, "serve", "--listen", "tcp:0"], stdout=out,
                                          stderr=subprocess.DEVNULL, env=env)
            try:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    with open(out_path) as f:
                        text = f.read()
                    if "\n" in text:
                        break
                    time.sleep(0.05)
                line = text.split("\n")[0]
                endpoint = line.split("listening on ")[1].split(" ")[0]
                port = endpoint.rsplit(":", 1)[1]
                path = os.path.join(home, ".pe-vp", "tcp-127.0.0.1-%s.token" % port)
                self.assertIn(", token in " + path, line)
                self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
                self.assertEqual(stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode), 0o700)
                driver = subprocess.run([C_DRIVER, "tcp:" + port], capture_output=True, text=True, timeout=120,
                                        env=env)
                self.assertEqual(driver.returncode, 0, driver.stdout + driver.stderr)
            finally:
                server.terminate()
                self.assertEqual(server.wait(timeout=30), 0)
            self.assertFalse(os.path.exists(path), "removed when the server ends")

    def test_a_stopping_server_leaves_a_newer_servers_token_file(self):
        with tempfile.TemporaryDirectory() as d:
            token = os.path.join(d, "token")
            first = pevp.serve(pe_vp=PEVP_BIN, endpoint="tcp:0", args=["--token-file", token])
            try:
                with pevp.serve(pe_vp=PEVP_BIN, endpoint="tcp:0", args=["--token-file", token]) as second:
                    self.assertEqual(first.stop(), 0)
                    self.assertTrue(os.path.exists(token), "the newer server's token file is still there")
                    with second.connect(timeout=30) as vp:
                        self.assertEqual(vp.read_reg("top", "queue_cfg"), 0)
            finally:
                first.stop()

    def test_the_explicit_opt_out(self):
        with pevp.serve(pe_vp=PEVP_BIN, endpoint="tcp:0", args=["--insecure-no-auth"]) as server:
            self.assertIsNone(server.token_file)
            s = raw_socket(server.endpoint)
            s.sendall(frame(proto.TIME) + auth_frame(b"anything"))
            self.assertEqual(read_reply(s)[0], proto.REPLY_OK)
            self.assertEqual(read_reply(s), (proto.REPLY_OK, b""), "an auth frame: nothing to check")
            s.close()
        self.assertIn("--insecure-no-auth: any user", server.stderr())

    def test_token_options_are_for_tcp(self):
        with tempfile.TemporaryDirectory() as d:
            for args in (["--listen", "unix:" + os.path.join(d, "s"), "--token-file", os.path.join(d, "t")],
                         ["--listen", "unix:" + os.path.join(d, "s"), "--insecure-no-auth"],
                         ["--listen", "tcp:0", "--token-file", os.path.join(d, "t"), "--insecure-no-auth"],
                         ["--listen", "tcp:0", "--token-file", os.path.join(d, "no", "such", "folder", "t")]):
                r = subprocess.run([PEVP_BIN, "serve", *args], capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 2, args)
                self.assertRegex(r.stderr, "apply to TCP|exclude each other|token file .*folder", args)
            self.assertEqual(os.listdir(d), [], "nothing left behind")


class ClientArguments(Served):
    """The Python client refuses what does not fit a request with PevpError (argument) naming the field, before
    anything is sent; read_psum refuses what pevp_read_psum refuses."""

    def test_read_psum_stays_inside_psum_as_the_c_api_does(self):
        with self.server.connect(timeout=30) as vp:
            m = vp.map
            vp.write(m.sbuf, b"\xAB" * 64)  # what a read that slipped out of PSUM into SBUF would find
            last = m.psum_partition_bytes - 4
            vp.write(m.psum + 127 * m.psum_partition_bytes + last, struct.pack("<f", 2.5))
            self.assertEqual(vp.read_psum(1, 1, partition=127, offset=last)[0, 0], 2.5, "the last element reads")
            refusals = (
                (dict(partitions=1, elements=1, partition=-1), "partition: -1 is outside"),
                (dict(partitions=1, elements=1, offset=-4), "offset: -4 is outside"),
                (dict(partitions=1, elements=2, offset=last), "PSUM partition 0 bytes %d \\+ 8: past the partition's %d"
                 % (last, m.psum_partition_bytes)),
                (dict(partitions=2, elements=1, partition=127), "PSUM partition 128: the VP has 128"),
                (dict(partitions=1, elements=0, partition=128), "PSUM partition 128: the VP has 128"),
                (dict(partitions=1, elements=1, offset=m.psum_partition_bytes + 4), "past the partition's"),
                (dict(partitions=-1, elements=1), "partitions: -1 is outside"),
                (dict(partitions=1, elements=1.5), "elements: 1.5 is not an integer"),
                (dict(partitions=1, elements=1, dtype=np.complex64), "dtype complex64"),
                (dict(partitions=1, elements=1, dtype="no such type"), "dtype 'no such type'"),
            )
            for kwargs, why in refusals:
                with self.assertRaisesRegex(pevp.PevpError, "argument: .*" + why, msg=str(kwargs)):
                    vp.read_psum(**kwargs)

    def test_every_bad_argument_is_a_pevp_error(self):
        with self.server.connect(timeout=30) as vp:
            refusals = (
                (lambda: vp.read32(-1), "address: -1 is outside"),
                (lambda: vp.read32("0x10"), "address: '0x10' is not an integer"),
                (lambda: vp.write32(0x3000000, 1 << 32), "value: 4294967296 is outside"),
                (lambda: vp.read(vp.map.sbuf, -1), "size: -1 is outside"),
                (lambda: vp.write(1 << 64, b"x"), "address: .* is outside"),
                (lambda: vp.write(vp.map.sbuf, 64), "data: bytes-like data, not int"),
                (lambda: vp.write(vp.map.sbuf, "text"), "data: bytes-like data, not str"),
                (lambda: vp.write_reg("top", "queue_cfg", -1), "value: -1 is outside"),
                (lambda: vp.read_reg(None, "queue_cfg"), "face: a str, not NoneType"),
                (lambda: vp.read_reg("top", "\ud800"), "name: not encodable as UTF-8"),
                (lambda: vp.read_reg("top", "queue\0cfg"), "name: holds a NUL at offset 5"),
                (lambda: vp.counter48("top", 5), "lsb_name: a str, not int"),
                (lambda: vp.assemble(b"nop"), "source: a str, not bytes"),
                (lambda: vp.submit(64), "records: bytes-like data, not int"),
                (lambda: vp.wait_idle(timeout_ns=-1), "timeout_ns: -1 is outside"),
                (lambda: vp.wait_irq(timeout_ns=None), "timeout_ns: None is not an integer"),
                (lambda: vp.restore_checkpoint(123), "checkpoint: bytes-like data, not int"),
                (lambda: vp.restore_checkpoint(os.path.join(tempfile.gettempdir(), "no-such-pevp.ckpt")),
                 "checkpoint .*no-such-pevp.ckpt: No such file"),
                (lambda: vp.save_checkpoint(os.path.join(tempfile.gettempdir(), "no-such-dir", "c")),
                 "checkpoint .*no-such-dir"),
                (lambda: vp.load_sbuf(np.ones((2, 2), dtype=np.complex64)), "an array of complex64"),
                (lambda: vp.load_sbuf(np.array([[1.0, "a"]], dtype=object)), "an array of object"),
                (lambda: vp.load_sbuf(np.array([["1", "2"]])), "an array of <U1"),
                (lambda: vp.load_sbuf(np.ones((2, 2)), partition=-1), "partition: -1 is outside"),
                (lambda: vp.load_sbuf(np.ones((2, 2)), offset=-2), "offset: -2 is outside"),
                (lambda: vp.load_sbuf(np.ones((2, 2)), dtype=["bf16"]), "dtype \\['bf16'\\]"),
            )
            for call, why in refusals:
                with self.assertRaisesRegex(pevp.PevpError, "argument: .*" + why):
                    call()
            vp.load_sbuf(np.ones((0, 4)))  # no rows: nothing to write, no error
            self.assertEqual(vp.read(vp.map.sbuf, 0), b"")
            self.assertEqual(vp.read_reg("top", "queue_cfg"), 0, "the connection is intact")
        for endpoint, why in ((123, "endpoint: a str, not int"), ("tcp:port", "the port must be a number"),
                              ("tcp:70000", "the port must be a number"), ("unix:", "a socket path"),
                              ("udp:1", "an endpoint is"), ("tcp:host.example:1", "not a numeric IPv4")):
            with self.assertRaisesRegex(pevp.PevpError, "argument: .*" + why):
                pevp.connect(endpoint)
        with self.assertRaisesRegex(pevp.PevpError, "argument: timeout"):
            pevp.connect(self.server.endpoint, timeout="soon")

    def test_serve_with_a_binary_that_is_not_there(self):
        # A temporary folder of the test's own: other tests' servers make and remove theirs in the shared one meanwhile.
        with tempfile.TemporaryDirectory() as private:
            shared, tempfile.tempdir = tempfile.tempdir, private
            try:
                for binary in ("/nonexistent/pe-vp", private):
                    with self.assertRaisesRegex(pevp.PevpError, "argument: cannot start '%s'" % binary):
                        pevp.serve(pe_vp=binary)
            finally:
                tempfile.tempdir = shared
            self.assertEqual(os.listdir(private), [], "no temporary folder left behind")


if __name__ == "__main__":
    unittest.main()
