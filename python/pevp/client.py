"""The protocol client (docs/protocol.md) and a launcher for `pe-vp serve`.

Why pure Python and not pybind11 bindings of the C API: a client of the socket protocol needs no build step, runs
with any Python 3 and numpy, drives a VP in another process (so one simulation can outlive many scripts, and a
crash of the script never takes the VP with it), and goes through exactly the requests the C API's pevp_connect
sends, so both are tested by the same server.
"""

import collections
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time

import numpy as np

PROTOCOL_VERSION = 1
MAX_TRANSFER_BYTES = 64 << 20
INSTRUCTION_BYTES = 64

# Ops (docs/protocol.md).
HELLO, TIME, SHUTDOWN, CYCLES = 0x01, 0x02, 0x03, 0x04
READ32, WRITE32, READ, WRITE = 0x10, 0x11, 0x12, 0x13
READ_REG, WRITE_REG, COUNTER48 = 0x20, 0x21, 0x22
ARM, SUBMIT, WAIT_IDLE, WAIT_IRQ, CLEAR_DONE, ERROR_RECORD, CLEAR_ERROR = 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36
ASSEMBLE, STATS = 0x40, 0x50
SAVE_CHECKPOINT, RESTORE_CHECKPOINT = 0x60, 0x61
MICRO_OP_LOG, MICRO_OP_LOG_TAKE = 0x70, 0x71
REPLY_OK, REPLY_ERROR = 0x80, 0x81

STATUS_NAMES = {
    1: "argument",
    2: "state",
    3: "bus",
    4: "assembly",
    5: "timeout",
    6: "internal",
    7: "protocol",
    8: "connection",
}


class PevpError(Exception):
    """A request the VP refused, or a broken connection: `status` is pevp_status's number, `kind` its name."""

    def __init__(self, status, message):
        self.status = status
        self.kind = STATUS_NAMES.get(status, str(status))
        super().__init__("%s: %s" % (self.kind, message))


Map = collections.namedtuple(
    "Map", "sbuf psum apb iq sbuf_partition_bytes psum_partition_bytes partitions")
Completion = collections.namedtuple("Completion", "done error timed_out retired")
ErrorRecord = collections.namedtuple(
    "ErrorRecord", "index opcode field_offset rule_number value rule description")


class _Payload:
    """Reads a reply's payload, little-endian; a reply shorter or longer than its layout is a protocol error."""

    def __init__(self, data, what):
        self.data, self.pos, self.what = data, 0, what

    def take(self, n, field):
        if self.pos + n > len(self.data):
            raise PevpError(7, "%s: the reply ends inside '%s'" % (self.what, field))
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def unpack(self, fmt, field):
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt), field))

    def str(self, field):
        (n,) = self.unpack("H", field)
        return self.take(n, field).decode("utf-8", "replace")

    def lstr(self, field):
        (n,) = self.unpack("I", field)
        return self.take(n, field).decode("utf-8", "replace")

    def end(self):
        if self.pos != len(self.data):
            raise PevpError(7, "%s: %d bytes after the last field" % (self.what, len(self.data) - self.pos))


def _str(text):
    data = text.encode("utf-8")
    if len(data) > 0xFFFF:
        raise PevpError(1, "a name of %d bytes is longer than the protocol's 65535" % len(data))
    return struct.pack("<H", len(data)) + data


def to_bf16_bits(values):
    """fp32 values -> bf16 bit patterns (uint16), rounded to nearest even, NaN kept quiet (as the VP's numerics)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = ((bits.astype(np.uint64) + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(values, dtype=np.float32))
    return np.where(nan, ((bits >> 16) | 0x0040).astype(np.uint16), rounded)


_ELEMENT = {
    "bf16": (np.uint16, to_bf16_bits),
    "fp16": (np.float16, lambda a: np.asarray(a, dtype=np.float16)),
    "fp32": (np.float32, lambda a: np.asarray(a, dtype=np.float32)),
}


class Vp:
    """One connection to a `pe-vp serve` VP. Methods mirror the C API (pevp/pevp.h); errors raise PevpError."""

    def __init__(self, endpoint, timeout=None):
        self.endpoint = endpoint
        self._sock = _connect(endpoint, timeout)
        try:
            self._hello()
        except BaseException:
            self.close()
            raise

    def _hello(self):
        reply = _Payload(self._call(HELLO), "hello reply")
        (version,) = reply.unpack("B", "version")
        if version != PROTOCOL_VERSION:
            raise PevpError(7, "the VP speaks protocol version %d, this client %d" % (version, PROTOCOL_VERSION))
        self.generation = reply.str("generation")
        self.map = Map(*reply.unpack("QQQQIII", "map"))
        self.version = reply.str("pe-vp version")
        reply.end()

    # ---- plumbing --------------------------------------------------------------------------------------
    def _call(self, op, payload=b""):
        if self._sock is None:
            raise PevpError(8, "the connection to %s is closed" % self.endpoint)
        frame = struct.pack("<IBB", len(payload) + 2, PROTOCOL_VERSION, op) + payload
        try:
            try:
                self._sock.sendall(frame)
            except OSError:
                # A server that refused or dropped this client may have closed before the request arrived: its last
                # frame, which says why, is still worth reading.
                pass
            header = self._recv_exact(6)
        except OSError as e:
            self.close()
            raise PevpError(8, "%s: %s" % (self.endpoint, e)) from None
        length, version, kind = struct.unpack("<IBB", header)
        if version != PROTOCOL_VERSION or length < 2:
            self.close()
            raise PevpError(7, "a reply frame with version %d and length %d" % (version, length))
        body = self._recv_exact(length - 2)
        if kind == REPLY_OK:
            return body
        if kind == REPLY_ERROR:
            reply = _Payload(body, "error reply")
            (status,) = reply.unpack("B", "status")
            raise PevpError(status, reply.str("message"))
        self.close()
        raise PevpError(7, "a reply of kind 0x%02x" % kind)

    def _recv_exact(self, n):
        chunks, left = [], n
        while left:
            chunk = self._sock.recv(min(left, 1 << 20))
            if not chunk:
                self.close()
                raise PevpError(8, "%s closed the connection" % self.endpoint)
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def close(self):
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- the bus ---------------------------------------------------------------------------------------
    def time_ps(self):
        """Simulated time now, in picoseconds."""
        reply = _Payload(self._call(TIME), "time reply")
        (ps,) = reply.unpack("Q", "ps")
        reply.end()
        return ps

    def read32(self, address, privileged=False):
        reply = _Payload(self._call(READ32, struct.pack("<QB", address, bool(privileged))), "read32 reply")
        (value,) = reply.unpack("I", "value")
        reply.end()
        return value

    def write32(self, address, value, privileged=False):
        self._call(WRITE32, struct.pack("<QBI", address, bool(privileged), value))

    def read(self, address, size):
        """`size` bytes from the bus (SBUF, PSUM), in frames of at most 64 MiB."""
        out = bytearray()
        while len(out) < size:
            n = min(size - len(out), MAX_TRANSFER_BYTES)
            out += self._call(READ, struct.pack("<QI", address + len(out), n))
        return bytes(out)

    def write(self, address, data):
        data = memoryview(bytes(data))
        for start in range(0, max(len(data), 1), MAX_TRANSFER_BYTES):
            self._call(WRITE, struct.pack("<Q", address + start) + bytes(data[start:start + MAX_TRANSFER_BYTES]))

    # ---- registers by name -----------------------------------------------------------------------------
    def read_reg(self, face, name):
        """A register or field by its generated name (`pe-vp regs` lists them): face top, cluster, protected, vp."""
        reply = _Payload(self._call(READ_REG, _str(face) + _str(name)), "read_reg reply")
        (value,) = reply.unpack("I", "value")
        reply.end()
        return value

    def write_reg(self, face, name, value):
        self._call(WRITE_REG, _str(face) + _str(name) + struct.pack("<I", value))

    def counter48(self, face, lsb_name):
        reply = _Payload(self._call(COUNTER48, _str(face) + _str(lsb_name)), "counter48 reply")
        (value,) = reply.unpack("Q", "value")
        reply.end()
        return value

    # ---- the engine ------------------------------------------------------------------------------------
    def arm(self, serialized=False, single_entry=False, reg_immediate=False):
        """Spec 003 section 6: queue_cfg, the counters reset and enabled, the interrupt enables."""
        self._call(ARM, struct.pack("<BBB", bool(serialized), bool(single_entry), bool(reg_immediate)))

    def assemble(self, source):
        """Assembly text (docs/assembly.md) -> 64-byte records (bytes), for this VP's generation and geometry."""
        data = source.encode("utf-8")
        return self._call(ASSEMBLE, struct.pack("<I", len(data)) + data)

    def submit(self, records):
        records = bytes(records)
        if len(records) % INSTRUCTION_BYTES:
            raise PevpError(1, "%d bytes are not whole 64-byte records" % len(records))
        step = MAX_TRANSFER_BYTES - MAX_TRANSFER_BYTES % INSTRUCTION_BYTES
        for start in range(0, max(len(records), 1), step):
            self._call(SUBMIT, records[start:start + step])

    def wait_idle(self, timeout_ns=1_000_000_000):
        """Waits for done or an error, at most `timeout_ns` of simulated time; a timeout raises PevpError (timeout)."""
        reply = _Payload(self._call(WAIT_IDLE, struct.pack("<Q", timeout_ns)), "wait_idle reply")
        c = Completion(*reply.unpack("BBBQ", "completion"))
        reply.end()
        if c.timed_out:
            raise PevpError(5, "the SEQ did not settle in %d ns" % timeout_ns)
        return Completion(bool(c.done), bool(c.error), False, c.retired)

    def wait_irq(self, timeout_ns=1_000_000_000):
        """Waits for the interrupt line, at most `timeout_ns`: (raised, simulated ps when seen or at the timeout)."""
        reply = _Payload(self._call(WAIT_IRQ, struct.pack("<Q", timeout_ns)), "wait_irq reply")
        raised, ps = reply.unpack("BQ", "irq")
        reply.end()
        return bool(raised), ps

    def clear_done(self):
        self._call(CLEAR_DONE)

    def clear_error(self):
        self._call(CLEAR_ERROR)

    def error_record(self):
        """The SEQ's error record, or None."""
        reply = _Payload(self._call(ERROR_RECORD), "error_record reply")
        valid, index, opcode, field, rule_number, value = reply.unpack("BIBBHq", "record")
        rule, description = reply.str("rule"), reply.str("description")
        reply.end()
        return ErrorRecord(index, opcode, field, rule_number, value, rule, description) if valid else None

    def stats(self):
        """The run statistics (docs/timing.md): cycles, utilisation, TFLOPS, stalls, instructions by opcode."""
        reply = _Payload(self._call(STATS), "stats reply")
        text = reply.lstr("json")
        reply.end()
        return json.loads(text)

    def cycles(self):
        """The tensor engine's clock (docs/cosim-reference.md): a dict of now, busy, first_start and last_complete
        (engine cycles) and clock_ghz."""
        reply = _Payload(self._call(CYCLES), "cycles reply")
        now, busy, first_start, last_complete = reply.unpack("QQQQ", "cycles")
        (clock_ghz,) = reply.unpack("d", "clock_ghz")
        reply.end()
        return {"now": now, "busy": busy, "first_start": first_start, "last_complete": last_complete,
                "clock_ghz": clock_ghz}

    def micro_op_log(self, on=True):
        """Starts (or stops) keeping a JSON line per micro-op issued from now on (docs/cosim-reference.md)."""
        self._call(MICRO_OP_LOG, struct.pack("<B", bool(on)))

    def micro_op_log_take(self):
        """The lines kept since the last take, parsed (a list of dicts, in issue order); they are gone from the VP."""
        text = ""
        while True:
            reply = _Payload(self._call(MICRO_OP_LOG_TAKE), "micro_op_log_take reply")
            part = reply.lstr("lines")
            reply.end()
            if not part:
                return [json.loads(line) for line in text.splitlines()]
            text += part

    def save_checkpoint(self, path=None):
        """The whole VP state at an idle point (docs/checkpoint.md), as bytes; also written to `path` when given."""
        data = self._call(SAVE_CHECKPOINT)
        if path is not None:
            with open(path, "wb") as f:
                f.write(data)
        return data

    def restore_checkpoint(self, checkpoint):
        """Restores a checkpoint (bytes, or a path to its file) into this VP; a bad one raises PevpError (argument)
        and changes nothing."""
        if isinstance(checkpoint, (str, os.PathLike)):
            with open(checkpoint, "rb") as f:
                checkpoint = f.read()
        self._call(RESTORE_CHECKPOINT, bytes(checkpoint))

    def shutdown(self):
        """Ends the server (after its reply); the connection closes."""
        try:
            self._call(SHUTDOWN)
        finally:
            self.close()

    # ---- numpy -----------------------------------------------------------------------------------------
    def load_sbuf(self, array, partition=0, offset=0, dtype="bf16"):
        """Row r of the 2-D `array` into SBUF partition `partition` + r at byte `offset`, as `dtype`
        (bf16, fp16 or fp32; bf16 rounds to nearest even)."""
        array = np.asarray(array)
        if array.ndim != 2:
            raise PevpError(1, "load_sbuf takes a 2-D array, not %d-D" % array.ndim)
        if dtype not in _ELEMENT:
            raise PevpError(1, "dtype %r: bf16, fp16 or fp32" % (dtype,))
        _, convert = _ELEMENT[dtype]
        rows = np.ascontiguousarray(convert(array))
        if partition + rows.shape[0] > self.map.partitions:
            raise PevpError(1, "%d rows from partition %d pass the last of %d partitions"
                            % (rows.shape[0], partition, self.map.partitions))
        if offset + rows[0].nbytes > self.map.sbuf_partition_bytes:
            raise PevpError(1, "a row of %d bytes at offset %d passes the partition's %d bytes"
                            % (rows[0].nbytes, offset, self.map.sbuf_partition_bytes))
        for r, row in enumerate(rows):
            self.write(self.map.sbuf + (partition + r) * self.map.sbuf_partition_bytes + offset, row.tobytes())

    def read_psum(self, partitions, elements, partition=0, offset=0, dtype=np.float32):
        """`partitions` x `elements` of PSUM from partition `partition`, byte `offset`, as a numpy array."""
        dtype = np.dtype(dtype)
        out = np.empty((partitions, elements), dtype=dtype)
        for r in range(partitions):
            address = self.map.psum + (partition + r) * self.map.psum_partition_bytes + offset
            out[r] = np.frombuffer(self.read(address, elements * dtype.itemsize), dtype=dtype)
        return out


def _connect(endpoint, timeout):
    if endpoint.startswith("unix:"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        target = endpoint[5:]
    elif endpoint.startswith("tcp:"):
        host, _, port = endpoint[4:].rpartition(":")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        target = (host or "127.0.0.1", int(port))
    else:
        raise PevpError(1, "%r: an endpoint is unix:PATH, tcp:PORT or tcp:HOST:PORT" % (endpoint,))
    sock.settimeout(timeout)
    try:
        sock.connect(target)
    except OSError as e:
        sock.close()
        raise PevpError(8, "%s: %s" % (endpoint, e)) from None
    return sock


def connect(endpoint, timeout=None):
    """A Vp over `endpoint` ("unix:PATH", "tcp:PORT", "tcp:HOST:PORT"); `timeout` in wall seconds per socket call."""
    return Vp(endpoint, timeout)


class Server:
    """A `pe-vp serve` process on a private Unix socket, ended with the context (or stop()).

    The server's stdout and stderr go to files in a private directory, opened for appending: after its first line
    the server keeps writing (an Info line per fault on stdout, --log-firmware on stderr), and a pipe nobody drains
    would fill and stop it mid-request. stdout() and stderr() read them, also after stop()."""

    START_SECONDS = 60

    def __init__(self, pe_vp=None, gen="MARIANA", settings=(), endpoint=None, args=()):
        binary = pe_vp or os.environ.get("PEVP_BIN") or shutil.which("pe-vp")
        if not binary:
            raise PevpError(1, "no pe-vp: pass pe_vp=, set PEVP_BIN or put pe-vp on PATH")
        self._dir = tempfile.mkdtemp(prefix="pevp-")
        self._logs = {"stdout": os.path.join(self._dir, "stdout"), "stderr": os.path.join(self._dir, "stderr")}
        self._kept = None  # the logs' text, kept when stop() removes the directory
        if endpoint is None:
            endpoint = "unix:" + os.path.join(self._dir, "vp.sock")
        command = [binary, "serve", "--gen", gen, "--listen", endpoint, *args]
        for s in settings:
            command += ["--set", s]
        # O_APPEND: the server's writes always land at the end, whatever this process reads meanwhile.
        with open(self._logs["stdout"], "ab") as out, open(self._logs["stderr"], "ab") as err:
            self.process = subprocess.Popen(command, stdout=out, stderr=err)
        line = self._first_line()
        if "listening on " not in line:
            why = "pe-vp serve did not start: %s%s" % (line, self.stderr())
            self.stop()
            raise PevpError(6, why)
        self.endpoint = line.split("listening on ", 1)[1].split(" ")[0].strip()

    def _first_line(self):
        """The server's first stdout line, once written; what it wrote if it ended first or was too slow to start."""
        deadline = time.monotonic() + self.START_SECONDS
        while True:
            ended = self.process.poll() is not None
            text = self.stdout()
            if "\n" in text or ended:
                return text.split("\n", 1)[0]
            if time.monotonic() > deadline:
                return "(no line on stdout within %d s) " % self.START_SECONDS
            time.sleep(0.01)

    def connect(self, timeout=None):
        return connect(self.endpoint, timeout)

    def _log(self, name):
        if self._kept is not None:
            return self._kept[name]
        with open(self._logs[name], "r", errors="replace") as f:
            return f.read()

    def stdout(self):
        """What the server wrote on stdout so far: its listening line, then a line per fault and its exit line."""
        return self._log("stdout")

    def stderr(self):
        """What the server wrote on stderr so far: dropped clients, warnings, --log-firmware."""
        return self._log("stderr")

    def stop(self, timeout=10):
        """Ends the server (SIGTERM) and returns its exit status. Its output stays readable."""
        if self.process.poll() is None:
            self.process.terminate()
        try:
            status = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            status = self.process.wait()
        if self._kept is None:
            self._kept = {name: self._log(name) for name in self._logs}
            shutil.rmtree(self._dir, ignore_errors=True)
        return status

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def serve(pe_vp=None, gen="MARIANA", settings=(), endpoint=None, args=()):
    """Starts `pe-vp serve` (see Server) and returns it once it listens."""
    return Server(pe_vp, gen, settings, endpoint, args)
