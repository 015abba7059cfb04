"""The protocol client (docs/protocol.md) and a launcher for `pe-vp serve`.

Why pure Python and not pybind11 bindings of the C API: a client of the socket protocol needs no build step, runs
with any Python 3 and numpy, drives a VP in another process (so one simulation can outlive many scripts, and a
crash of the script never takes the VP with it), and goes through exactly the requests the C API's pevp_connect
sends, so both are tested by the same server.
"""

import collections
import json
import operator
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
HELLO, TIME, SHUTDOWN, CYCLES, AUTH = 0x01, 0x02, 0x03, 0x04, 0x05
READ32, WRITE32, READ, WRITE = 0x10, 0x11, 0x12, 0x13
READ_REG, WRITE_REG, COUNTER48 = 0x20, 0x21, 0x22
ARM, SUBMIT, WAIT_IDLE, WAIT_IRQ, CLEAR_DONE, ERROR_RECORD, CLEAR_ERROR = 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36
ASSEMBLE, STATS = 0x40, 0x50
SAVE_CHECKPOINT, RESTORE_CHECKPOINT = 0x60, 0x61
RESET = 0x62
MICRO_OP_LOG, MICRO_OP_LOG_TAKE, DIAGNOSTICS, EXPECT = 0x70, 0x71, 0x72, 0x73
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
    9: "auth",
    10: "hazard",
    11: "privilege",
}

# TCP's credential (docs/protocol.md "Authentication"): the environment variable naming the token file, and the
# file's size limit (as the C API's pevp/remote/credential.h).
TOKEN_FILE_VARIABLE = "PEVP_TOKEN_FILE"
MAX_TOKEN_FILE_BYTES = 4096


class PevpError(Exception):
    """A request the VP refused, or a broken connection: `status` is pevp_status's number, `kind` its name.
    Raised by Vp.raise_fault, `record` is the SEQ's ErrorRecord (else None)."""

    def __init__(self, status, message, record=None):
        self.status = status
        self.kind = STATUS_NAMES.get(status, str(status))
        self.message = message
        self.record = record
        super().__init__("%s: %s" % (self.kind, message))


# The bus map as pevp_map gives it: the windows, then each register face's bus base (the arr_seq faces lie at fixed
# offsets in the apb window, pevp/platform/address_map.h), so a generated register offset plus its face's base is
# the register's bus address.
Map = collections.namedtuple(
    "Map", "sbuf psum apb iq sbuf_partition_bytes psum_partition_bytes partitions top cluster protect vp_seq")
_FACE_OFFSETS = (0x0000, 0x1000, 0x2000, 0x3000)  # top, cluster, protect, vp_seq from apb
Completion = collections.namedtuple("Completion", "done error timed_out retired")
# `field` is the instruction field's name ("" for the instruction as a whole), `message` the VP's full sentence
# ("instruction 3 (MATMUL): in_dtype = 12: ... [mm.in_dtype]"); both "" from a VP that predates them.
# The scoreboard's expectation of one instruction (Vp.expect, docs/cosim-reference.md "Scoreboard"): its index, its
# micro-ops, its engine cycles, the PSUM window it writes and that window's contents as a numpy array of
# partitions x elements (float32, or uint16 bf16 bits for a BFLOAT16 output).
Expectation = collections.namedtuple(
    "Expectation", "instruction micro_ops issue_cycle start_cycle complete_cycle response_cycle first_partition "
                   "partitions offset bytes element_bytes data")
ErrorRecord = collections.namedtuple(
    "ErrorRecord", "index opcode field_offset rule_number value rule description field message")


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


# The encoders of request fields: a value that does not fit its field is PevpError (argument) naming the field,
# never a struct.error, TypeError or OverflowError from below, and never a silent conversion (bytes(123) would be
# 123 NUL bytes).

def _uint(value, bits, field):
    """`value` as an unsigned integer of `bits` bits (a Python or numpy integer, or a bool)."""
    try:
        number = operator.index(value)
    except TypeError:
        raise PevpError(1, "%s: %r is not an integer" % (field, value)) from None
    if not 0 <= number < 1 << bits:
        raise PevpError(1, "%s: %d is outside 0..%d" % (field, number, (1 << bits) - 1))
    return number


def _text(value, field):
    """`value` (a str) as UTF-8 bytes."""
    if not isinstance(value, str):
        raise PevpError(1, "%s: a str, not %s" % (field, type(value).__name__))
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise PevpError(1, "%s: not encodable as UTF-8 (%s)" % (field, e.reason)) from None


def _str(value, field="name"):
    """A str field: UTF-8 without NULs (as a C client's strings), at most 65535 bytes."""
    data = _text(value, field)
    if b"\0" in data:
        raise PevpError(1, "%s: holds a NUL at offset %d (a str is text without NULs)" % (field, data.index(b"\0")))
    if len(data) > 0xFFFF:
        raise PevpError(1, "%s: %d bytes, longer than the protocol's 65535" % (field, len(data)))
    return struct.pack("<H", len(data)) + data


def _bytes(data, field):
    """A bytes-like object's bytes (bytes, bytearray, memoryview, a numpy array); an int, a str or anything else
    without a buffer is refused."""
    try:
        return memoryview(data).tobytes()
    except (TypeError, ValueError) as e:
        raise PevpError(1, "%s: bytes-like data, not %s (%s)" % (field, type(data).__name__, e)) from None


def _endpoint_parts(endpoint):
    """("unix", path) or ("tcp", (host, port)) for an endpoint's text, as the C API parses it."""
    if not isinstance(endpoint, str):
        raise PevpError(1, "endpoint: a str, not %s" % type(endpoint).__name__)
    if endpoint.startswith("unix:"):
        if not endpoint[5:]:
            raise PevpError(1, "%r: a socket path has 1 to 107 bytes" % endpoint)
        return "unix", endpoint[5:]
    if endpoint.startswith("tcp:"):
        host, _, port = endpoint[4:].rpartition(":")
        if not port.isdigit() or len(port) > 5 or int(port) > 65535:
            raise PevpError(1, "%r: the port must be a number in 0..65535" % endpoint)
        host = host or "127.0.0.1"
        host = "127.0.0.1" if host == "localhost" else host
        try:
            socket.inet_pton(socket.AF_INET, host)
        except OSError:
            raise PevpError(1, "%r: %s is not a numeric IPv4 address (or localhost)" % (endpoint, host)) from None
        return "tcp", (host, int(port))
    raise PevpError(1, "%r: an endpoint is unix:PATH, tcp:PORT or tcp:HOST:PORT" % (endpoint,))


def default_token_path(endpoint):
    """Where a `pe-vp serve` on the TCP `endpoint` writes its token unless given --token-file:
    ~/.pe-vp/tcp-HOST-PORT.token (HOST numeric)."""
    kind, where = _endpoint_parts(endpoint)
    if kind != "tcp":
        raise PevpError(1, "%s: a Unix socket takes no token" % endpoint)
    return os.path.join(os.path.expanduser("~"), ".pe-vp", "tcp-%s-%d.token" % where)


def _client_token_file(endpoint, given):
    """The token file presented to `endpoint`: `given`, else $PEVP_TOKEN_FILE, else the default one when it is
    there; None for a Unix socket or when there is none (the C API's rule)."""
    if _endpoint_parts(endpoint)[0] != "tcp":
        return None
    if given:
        if not isinstance(given, (str, os.PathLike)):
            raise PevpError(1, "token_file: a path, not %s" % type(given).__name__)
        return os.fspath(given)
    if os.environ.get(TOKEN_FILE_VARIABLE):
        return os.environ[TOKEN_FILE_VARIABLE]
    default = default_token_path(endpoint)
    return default if os.path.exists(default) else None


def _read_token(path):
    try:
        with open(path, "rb") as f:
            text = f.read(MAX_TOKEN_FILE_BYTES + 1)
    except OSError as e:
        raise PevpError(1, "token file %s: %s" % (path, e.strerror or e)) from None
    if len(text) > MAX_TOKEN_FILE_BYTES:
        raise PevpError(1, "token file %s: longer than a token file's %d bytes" % (path, MAX_TOKEN_FILE_BYTES))
    token = text.strip(b" \t\r\n")
    if not token:
        raise PevpError(1, "token file %s: empty" % path)
    return token


def to_bf16_bits(values):
    """fp32 values -> bf16 bit patterns (uint16), rounded to nearest even; NaN -> the canonical 0x7FC0, whatever its
    sign and payload (as the VP's numerics, docs/numerics.md)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = ((bits.astype(np.uint64) + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(values, dtype=np.float32))
    return np.where(nan, np.uint16(0x7FC0), rounded)


def from_bf16_bits(bits):
    """bf16 bit patterns -> fp32 values, exact."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


# The 8-bit float formats of docs/numerics.md: exponent bits, mantissa bits, bias, whether the top exponent holds
# Inf and NaN (IEEE-like) or the format has no Inf and one NaN pattern S.1..1 and saturates (e4m3fn), and the code
# a NaN encodes to. FP8_EXP4 is e4m3 on CAYMAN and e4m3fn from MARIANA on; FP8_EXP5 is e5m2.
_Fp8 = collections.namedtuple("_Fp8", "exponent_bits mantissa_bits bias ieee_like nan_code")
FP8_FORMATS = {
    "fp8_e4m3": _Fp8(4, 3, 7, True, 0x7C),
    "fp8_e4m3fn": _Fp8(4, 3, 7, False, 0x7F),
    "fp8_e5m2": _Fp8(5, 2, 15, True, 0x7E),
    "fp8_e3m4": _Fp8(3, 4, 3, True, 0x78),
    "fp8_e2m5": _Fp8(2, 5, 1, True, 0x70),
}


def _fp8_format(name):
    if not isinstance(name, str) or name not in FP8_FORMATS:
        raise PevpError(1, "fp8 format %r: %s" % (name, ", ".join(FP8_FORMATS)))
    return FP8_FORMATS[name]


def _fp8_max(f):
    top = (1 << f.exponent_bits) - 1  # the exponent field's all-ones value
    if f.ieee_like:  # the largest finite has the exponent below all-ones and a full mantissa
        return (2.0 - 2.0 ** -f.mantissa_bits) * 2.0 ** (top - 1 - f.bias)
    return (2.0 - 2.0 ** (1 - f.mantissa_bits)) * 2.0 ** (top - f.bias)  # all-ones, mantissa one below NaN's


def from_fp8_bits(codes, fmt):
    """8-bit codes of `fmt` ("fp8_e4m3", "fp8_e4m3fn", "fp8_e5m2", "fp8_e3m4", "fp8_e2m5") -> fp32 values, exact (NaN
    codes decode to NaN, Inf codes to +-Inf)."""
    f = _fp8_format(fmt)
    c = np.asarray(codes, dtype=np.uint8).astype(np.int64)
    sign = np.where(c & 0x80, -1.0, 1.0)
    exponent = (c >> f.mantissa_bits) & ((1 << f.exponent_bits) - 1)
    mantissa = c & ((1 << f.mantissa_bits) - 1)
    top = (1 << f.exponent_bits) - 1
    scale = 2.0 ** -f.mantissa_bits
    value = np.where(exponent == 0, mantissa * scale * 2.0 ** (1 - f.bias),
                     (1.0 + mantissa * scale) * np.exp2(exponent.astype(np.float64) - f.bias))
    if f.ieee_like:
        value = np.where(exponent == top, np.where(mantissa == 0, np.inf, np.nan), value)
    else:
        value = np.where((exponent == top) & (mantissa == (1 << f.mantissa_bits) - 1), np.nan, value)
    return (sign * value).astype(np.float32)


def to_fp8_bits(values, fmt):
    """fp32 values -> 8-bit codes of `fmt`, as the VP converts (docs/numerics.md): rounded to nearest, ties to even,
    subnormals and the sign of zero kept; NaN -> the format's canonical NaN; IEEE-like formats overflow to +-Inf at
    max + half an ulp, e4m3fn saturates overflow and +-Inf to +-448. The values are fp32 first (as for bf16)."""
    f = _fp8_format(fmt)
    x = np.asarray(np.asarray(values, dtype=np.float32), dtype=np.float64)
    negative = np.signbit(x)
    a = np.abs(x)
    min_exponent = 1 - f.bias
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        _, e = np.frexp(a)  # a = m * 2^e, m in [0.5, 1): the binade's exponent is e - 1
        binade = np.maximum(e.astype(np.int64) - 1, min_exponent)
        quantum = np.exp2((binade - f.mantissa_bits).astype(np.float64))
        rounded = np.rint(a / quantum) * quantum  # exact scaling by powers of two; rint rounds ties to even
    biggest = _fp8_max(f)
    if f.ieee_like:  # a result of 2^(emax+1) or more is Inf (IEEE 754 overflow)
        overflow = rounded > biggest
    else:
        overflow = np.zeros_like(a, dtype=bool)
        rounded = np.minimum(rounded, biggest)  # saturate, Inf included
    finite = np.where(np.isfinite(rounded) & ~overflow, rounded, 0.0)
    _, e = np.frexp(finite)
    binade = e.astype(np.int64) - 1
    subnormal = (finite == 0) | (binade < min_exponent)
    with np.errstate(invalid="ignore"):
        exponent = np.where(subnormal, 0, binade + f.bias)
        mantissa = np.where(subnormal, finite / 2.0 ** (min_exponent - f.mantissa_bits),
                            finite / np.exp2((binade - f.mantissa_bits).astype(np.float64)) - (1 << f.mantissa_bits))
    code = (exponent << f.mantissa_bits) | mantissa.astype(np.int64)
    if f.ieee_like:
        code = np.where(overflow | np.isinf(a), ((1 << f.exponent_bits) - 1) << f.mantissa_bits, code)
    code = code | np.where(negative, 0x80, 0)
    code = np.where(np.isnan(x), f.nan_code, code)
    return code.astype(np.uint8)


# dtype -> (the element's numpy type in SBUF, fp32 -> elements, elements -> fp32)
_ELEMENT = {
    "bf16": (np.uint16, to_bf16_bits, from_bf16_bits),
    "fp16": (np.float16, lambda a: np.asarray(a, dtype=np.float16), lambda a: a.astype(np.float32)),
    "fp32": (np.float32, lambda a: np.asarray(a, dtype=np.float32), lambda a: a),
}
for _name in FP8_FORMATS:
    _ELEMENT[_name] = (np.uint8, lambda a, n=_name: to_fp8_bits(a, n), lambda c, n=_name: from_fp8_bits(c, n))
_DTYPES = ", ".join(_ELEMENT)


class Vp:
    """One connection to a `pe-vp serve` VP. Methods mirror the C API (pevp/pevp.h); errors raise PevpError."""

    def __init__(self, endpoint, timeout=None, token_file=None):
        self.endpoint = endpoint
        self._sock = None
        # The token is read before connecting: a file that is not there is the caller's mistake, whatever the server.
        self.token_file = _client_token_file(endpoint, token_file)
        token = _read_token(self.token_file) if self.token_file else None
        self._sock = _connect(endpoint, timeout)
        try:
            if token is not None:
                self._authenticate(token)
            try:
                self._hello()
            except PevpError as e:
                if e.status == 9 and token is None:
                    raise PevpError(9, "%s (this client has no token: %s is unset and the default token file is "
                                       "not there)" % (e.message, TOKEN_FILE_VARIABLE)) from None
                raise
        except BaseException:
            self.close()
            raise

    def _authenticate(self, token):
        try:
            self._call(AUTH, struct.pack("<H", len(token)) + token)
        except PevpError as e:
            raise PevpError(e.status, "%s [token from %s]" % (e.message, self.token_file)) from None

    def _hello(self):
        reply = _Payload(self._call(HELLO), "hello reply")
        (version,) = reply.unpack("B", "version")
        if version != PROTOCOL_VERSION:
            raise PevpError(7, "the VP speaks protocol version %d, this client %d" % (version, PROTOCOL_VERSION))
        self.generation = reply.str("generation")
        windows = reply.unpack("QQQQIII", "map")
        self.map = Map(*windows, *(windows[2] + offset for offset in _FACE_OFFSETS))
        self.version = reply.str("pe-vp version")
        reply.end()

    # ---- plumbing --------------------------------------------------------------------------------------
    def _call(self, op, payload=b""):
        if self._sock is None:
            raise PevpError(8, "the connection to %s is closed" % self.endpoint)
        if len(payload) + 2 > MAX_TRANSFER_BYTES + 4096:
            raise PevpError(1, "a request of %d bytes exceeds the frame limit" % (len(payload) + 2))
        frame = struct.pack("<IBB", len(payload) + 2, PROTOCOL_VERSION, op) + payload
        try:
            try:
                self._sock.sendall(frame)
            except OSError:
                # A server that refused or dropped this client may have closed before the request arrived: its last
                # frame, which says why, is still worth reading.
                pass
            header = self._recv_exact(6)
            length, version, kind = struct.unpack("<IBB", header)
            if version != PROTOCOL_VERSION or length < 2 or length > MAX_TRANSFER_BYTES + 4096:
                self.close()
                raise PevpError(7, "a reply frame with version %d and length %d" % (version, length))
            body = self._recv_exact(length - 2)
        except OSError as e:
            self.close()
            raise PevpError(8, "%s: %s" % (self.endpoint, e)) from None
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
        request = struct.pack("<QB", _uint(address, 64, "address"), bool(privileged))
        reply = _Payload(self._call(READ32, request), "read32 reply")
        (value,) = reply.unpack("I", "value")
        reply.end()
        return value

    def write32(self, address, value, privileged=False):
        self._call(WRITE32, struct.pack("<QBI", _uint(address, 64, "address"), bool(privileged),
                                        _uint(value, 32, "value")))

    def read(self, address, size):
        """`size` bytes from the bus (SBUF, PSUM), in frames of at most 64 MiB."""
        address, size = _uint(address, 64, "address"), _uint(size, 64, "size")
        out = bytearray()
        while len(out) < size:
            n = min(size - len(out), MAX_TRANSFER_BYTES)
            out += self._call(READ, struct.pack("<QI", _uint(address + len(out), 64, "address"), n))
        return bytes(out)

    def write(self, address, data):
        address, data = _uint(address, 64, "address"), memoryview(_bytes(data, "data"))
        for start in range(0, max(len(data), 1), MAX_TRANSFER_BYTES):
            self._call(WRITE, struct.pack("<Q", _uint(address + start, 64, "address"))
                       + bytes(data[start:start + MAX_TRANSFER_BYTES]))

    # ---- registers by name -----------------------------------------------------------------------------
    def read_reg(self, face, name):
        """A register or field by its generated name (`pe-vp regs` lists them): face top, cluster, protected, vp."""
        reply = _Payload(self._call(READ_REG, _str(face, "face") + _str(name)), "read_reg reply")
        (value,) = reply.unpack("I", "value")
        reply.end()
        return value

    def write_reg(self, face, name, value):
        self._call(WRITE_REG, _str(face, "face") + _str(name) + struct.pack("<I", _uint(value, 32, "value")))

    def counter48(self, face, lsb_name):
        reply = _Payload(self._call(COUNTER48, _str(face, "face") + _str(lsb_name, "lsb_name")), "counter48 reply")
        (value,) = reply.unpack("Q", "value")
        reply.end()
        return value

    # ---- the engine ------------------------------------------------------------------------------------
    def arm(self, serialized=False, single_entry=False, reg_immediate=False):
        """Spec 003 section 6: queue_cfg, the counters reset and enabled, the interrupt enables."""
        self._call(ARM, struct.pack("<BBB", bool(serialized), bool(single_entry), bool(reg_immediate)))

    def assemble(self, source):
        """Assembly text (docs/assembly.md) -> 64-byte records (bytes), for this VP's generation and geometry."""
        data = _text(source, "source")
        if len(data) > MAX_TRANSFER_BYTES:
            raise PevpError(1, "source: %d bytes exceed the transfer limit of %d" % (len(data), MAX_TRANSFER_BYTES))
        return self._call(ASSEMBLE, struct.pack("<I", len(data)) + data)

    def submit(self, records):
        records = _bytes(records, "records")
        if len(records) % INSTRUCTION_BYTES:
            raise PevpError(1, "%d bytes are not whole 64-byte records" % len(records))
        step = MAX_TRANSFER_BYTES - MAX_TRANSFER_BYTES % INSTRUCTION_BYTES
        for start in range(0, max(len(records), 1), step):
            self._call(SUBMIT, records[start:start + step])

    def expect(self, record):
        """Executes one 64-byte instruction on the armed, idle VP and returns its Expectation: what it wrote to PSUM
        and its issue, start, complete (the completion) and response cycles. An invalid instruction raises PevpError
        (argument) naming the rule; one the VP refused at execution PevpError (state), the SEQ stopped on its
        record."""
        record = _bytes(record, "record")
        if len(record) != INSTRUCTION_BYTES:
            raise PevpError(1, "record: %d bytes, not one 64-byte instruction" % len(record))
        reply = _Payload(self._call(EXPECT, record), "expect reply")
        instruction, micro_ops, issue, start, complete, response = reply.unpack("QIQQQQ", "cycles")
        first, partitions, offset, nbytes, element = reply.unpack("IIIIB", "window")
        raw = reply.take(partitions * nbytes, "window data")
        reply.end()
        dtype = np.dtype("<f4") if element == 4 else np.dtype("<u2")
        data = np.frombuffer(raw, dtype=dtype).reshape(partitions, nbytes // element) if partitions else \
            np.zeros((0, 0), dtype=dtype)
        return Expectation(instruction, micro_ops, issue, start, complete, response, first, partitions, offset, nbytes,
                           element, data)

    def wait_idle(self, timeout_ns=1_000_000_000):
        """Waits for done or an error, at most `timeout_ns` of simulated time; a timeout raises PevpError (timeout)."""
        request = struct.pack("<Q", _uint(timeout_ns, 64, "timeout_ns"))
        reply = _Payload(self._call(WAIT_IDLE, request), "wait_idle reply")
        c = Completion(*reply.unpack("BBBQ", "completion"))
        reply.end()
        if c.timed_out:
            raise PevpError(5, "the SEQ did not settle in %d ns" % timeout_ns)
        return Completion(bool(c.done), bool(c.error), False, c.retired)

    def wait_irq(self, timeout_ns=1_000_000_000):
        """Waits for the interrupt line, at most `timeout_ns`: (raised, simulated ps when seen or at the timeout)."""
        request = struct.pack("<Q", _uint(timeout_ns, 64, "timeout_ns"))
        reply = _Payload(self._call(WAIT_IRQ, request), "wait_irq reply")
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
        # A VP that predates the field's name and the sentence ends its reply here (docs/protocol.md).
        name, message = ("", "") if reply.pos == len(reply.data) else (reply.str("field"), reply.str("message"))
        reply.end()
        return ErrorRecord(index, opcode, field, rule_number, value, rule, description, name, message) \
            if valid else None

    def raise_fault(self):
        """Raises PevpError (state) with the VP's sentence for the SEQ's recorded fault and the record as its
        `record`; returns None when there is none."""
        record = self.error_record()
        if record is not None:
            raise PevpError(2, record.message or record.description, record)

    def stats(self):
        """The run statistics (docs/timing.md): cycles, utilisation, TFLOPS, stalls, instructions by opcode."""
        reply = _Payload(self._call(STATS), "stats reply")
        text = reply.lstr("json")
        reply.end()
        return _json(text, "stats reply")

    def cycles(self):
        """The tensor engine's clock (docs/cosim-reference.md): a dict of now, busy, first_start and last_complete
        (engine cycles) and clock_ghz."""
        reply = _Payload(self._call(CYCLES), "cycles reply")
        now, busy, first_start, last_complete = reply.unpack("QQQQ", "cycles")
        (clock_ghz,) = reply.unpack("d", "clock_ghz")
        reply.end()
        return {"now": now, "busy": busy, "first_start": first_start, "last_complete": last_complete,
                "clock_ghz": clock_ghz}

    def diagnostics(self):
        """The VP's warnings since the last take (the hazards found with checks.hazards = warn, docs/sdk.md "What the
        VP checks for you"), a list of lines; they are gone from the VP."""
        reply = _Payload(self._call(DIAGNOSTICS), "diagnostics reply")
        text = reply.lstr("lines")
        reply.end()
        return text.splitlines()

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
                return [_json(line, "micro_op_log_take reply") for line in text.splitlines()]
            text += part

    def save_checkpoint(self, path=None):
        """The whole VP state at an idle point (docs/checkpoint.md), as bytes; also written to `path` when given."""
        data = self._call(SAVE_CHECKPOINT)
        if path is not None:
            try:
                with open(path, "wb") as f:
                    f.write(data)
            except (OSError, TypeError) as e:
                raise PevpError(1, "checkpoint %r: %s" % (path, e)) from None
        return data

    def restore_checkpoint(self, checkpoint):
        """Restores a checkpoint (bytes, or a path to its file) into this VP; a bad one raises PevpError (argument)
        and changes nothing."""
        if isinstance(checkpoint, (str, os.PathLike)):
            try:
                with open(checkpoint, "rb") as f:
                    checkpoint = f.read(MAX_TRANSFER_BYTES + 1)
            except OSError as e:
                raise PevpError(1, "checkpoint %s: %s" % (os.fspath(checkpoint), e.strerror or e)) from None
        data = _bytes(checkpoint, "checkpoint")
        if len(data) > MAX_TRANSFER_BYTES:
            raise PevpError(1, "checkpoint: more than the %d bytes a frame carries" % MAX_TRANSFER_BYTES)
        self._call(RESTORE_CHECKPOINT, data)

    def reset(self):
        """The hard reset (docs/sdk.md "Reset"): the VP as at power-on, at once, whatever it was doing -- a program
        queued or blocked on a semaphore, DMA queues, an error record -- dropped; every register, counter, semaphore,
        SBUF, PSUM and device memory as at power-on, in no simulated time. Arm again before the next program."""
        self._call(RESET)

    def shutdown(self):
        """Ends the server (after its reply); the connection closes."""
        try:
            self._call(SHUTDOWN)
        finally:
            self.close()

    # ---- numpy -----------------------------------------------------------------------------------------
    def load_sbuf(self, array, partition=0, offset=0, dtype="bf16"):
        """Row r of the 2-D `array` into SBUF partition `partition` + r at byte `offset`, as `dtype`
        (bf16, fp16, fp32 or an fp8 format of FP8_FORMATS; each rounds to nearest even as the VP converts)."""
        partition, offset = _uint(partition, 32, "partition"), _uint(offset, 32, "offset")
        try:
            array = np.asarray(array)
        except (TypeError, ValueError) as e:
            raise PevpError(1, "load_sbuf: not an array (%s)" % e) from None
        if array.ndim != 2:
            raise PevpError(1, "load_sbuf takes a 2-D array, not %d-D" % array.ndim)
        if array.dtype.kind not in _LOADABLE_KINDS:
            raise PevpError(1, "load_sbuf: an array of %s; it takes real numbers (bool, integer or floating point)"
                            % array.dtype)
        if not isinstance(dtype, str) or dtype not in _ELEMENT:
            raise PevpError(1, "dtype %r: %s" % (dtype, _DTYPES))
        _, convert, _ = _ELEMENT[dtype]
        rows = np.ascontiguousarray(convert(array))
        if rows.shape[0] == 0:
            return
        if partition + rows.shape[0] > self.map.partitions:
            raise PevpError(1, "%d rows from partition %d pass the last of %d partitions"
                            % (rows.shape[0], partition, self.map.partitions))
        if offset + rows[0].nbytes > self.map.sbuf_partition_bytes:
            raise PevpError(1, "a row of %d bytes at offset %d passes the partition's %d bytes"
                            % (rows[0].nbytes, offset, self.map.sbuf_partition_bytes))
        for r, row in enumerate(rows):
            self.write(self.map.sbuf + (partition + r) * self.map.sbuf_partition_bytes + offset, row.tobytes())

    def read_sbuf(self, partitions, elements, partition=0, offset=0, dtype="bf16"):
        """`partitions` x `elements` elements of `dtype` (as load_sbuf takes) from SBUF partition `partition` on, at
        byte `offset` of each, as fp32 values (exact). A range past the partitions is PevpError (argument)."""
        partitions, elements = _uint(partitions, 32, "partitions"), _uint(elements, 32, "elements")
        partition, offset = _uint(partition, 32, "partition"), _uint(offset, 32, "offset")
        if not isinstance(dtype, str) or dtype not in _ELEMENT:
            raise PevpError(1, "dtype %r: %s" % (dtype, _DTYPES))
        element, _, widen = _ELEMENT[dtype]
        m = self.map
        if partition + partitions > m.partitions:
            raise PevpError(1, "%d partitions from partition %d pass the last of %d" % (partitions, partition,
                                                                                       m.partitions))
        size = elements * np.dtype(element).itemsize
        if offset > m.sbuf_partition_bytes or size > m.sbuf_partition_bytes - offset:
            raise PevpError(1, "SBUF bytes %d + %d: past the partition's %d" % (offset, size, m.sbuf_partition_bytes))
        out = np.empty((partitions, elements), dtype=np.float32)
        for r in range(partitions):
            raw = np.frombuffer(self.read(m.sbuf + (partition + r) * m.sbuf_partition_bytes + offset, size),
                                dtype=element)
            out[r] = widen(raw)
        return out

    def read_psum(self, partitions, elements, partition=0, offset=0, dtype=np.float32):
        """`partitions` x `elements` of PSUM from partition `partition`, byte `offset`, as a numpy array. Every row
        must lie in its partition, as pevp_read_psum checks: a partition past the map's, or a range past a
        partition's end, is PevpError (argument) before anything is read."""
        partitions, elements = _uint(partitions, 32, "partitions"), _uint(elements, 32, "elements")
        partition, offset = _uint(partition, 32, "partition"), _uint(offset, 32, "offset")
        try:
            dtype = np.dtype(dtype)
        except TypeError as e:
            raise PevpError(1, "read_psum: dtype %r (%s)" % (dtype, e)) from None
        if dtype.kind not in _READABLE_KINDS:
            raise PevpError(1, "read_psum: dtype %s; it reads integers or floating point" % dtype)
        m = self.map
        last = partition + max(partitions, 1) - 1  # pevp_read_psum judges the partition even for no bytes
        if last >= m.partitions:
            raise PevpError(1, "PSUM partition %d: the VP has %d (0..%d)" % (last, m.partitions, m.partitions - 1))
        size = elements * dtype.itemsize
        if offset > m.psum_partition_bytes or size > m.psum_partition_bytes - offset:
            raise PevpError(1, "PSUM partition %d bytes %d + %d: past the partition's %d"
                            % (partition, offset, size, m.psum_partition_bytes))
        out = np.empty((partitions, elements), dtype=dtype)
        for r in range(partitions):
            address = self.map.psum + (partition + r) * self.map.psum_partition_bytes + offset
            out[r] = np.frombuffer(self.read(address, elements * dtype.itemsize), dtype=dtype)
        return out


def _json(text, what):
    try:
        return json.loads(text)
    except ValueError as e:
        raise PevpError(7, "%s: not JSON (%s)" % (what, e)) from None


_LOADABLE_KINDS = "biuf"  # numpy kinds load_sbuf converts: bool, signed, unsigned, floating point
_READABLE_KINDS = "iuf"   # numpy kinds read_psum views PSUM's bytes as


def _connect(endpoint, timeout):
    kind, target = _endpoint_parts(endpoint)
    if timeout is not None:
        try:
            timeout = float(timeout)
        except (TypeError, ValueError):
            raise PevpError(1, "timeout: %r is not a number of seconds" % (timeout,)) from None
        if not timeout > 0:
            raise PevpError(1, "timeout: %r; a timeout is a positive number of seconds (None: none)" % timeout)
    if kind == "unix":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    else:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(timeout)
    try:
        sock.connect(target)
    except OSError as e:
        sock.close()
        raise PevpError(8, "%s: %s" % (endpoint, e)) from None
    return sock


def connect(endpoint, timeout=None, token_file=None):
    """A Vp over `endpoint` ("unix:PATH", "tcp:PORT", "tcp:HOST:PORT"); `timeout` in wall seconds per socket call.
    Over TCP the token in `token_file` is presented, else the one in the file $PEVP_TOKEN_FILE names, else the one
    in the server's default token file when it is there (docs/protocol.md, Authentication)."""
    return Vp(endpoint, timeout, token_file)


class Server:
    """A `pe-vp serve` process on a private Unix socket, ended with the context (or stop()).

    The server's stdout and stderr go to files in a private directory, opened for appending: after its first line
    the server may keep writing (--log-firmware on stderr; the VP's own reports are diagnostics lines), and a pipe
    nobody drains would fill and stop it mid-request. stdout() and stderr() read them, also after stop()."""

    START_SECONDS = 60

    def __init__(self, pe_vp=None, gen="MARIANA", settings=(), endpoint=None, args=()):
        binary = pe_vp or os.environ.get("PEVP_BIN") or shutil.which("pe-vp")
        if not binary:
            raise PevpError(1, "no pe-vp: pass pe_vp=, set PEVP_BIN or put pe-vp on PATH")
        if isinstance(args, (str, bytes)) or not all(isinstance(a, (str, os.PathLike)) for a in args):
            raise PevpError(1, "args: a sequence of str arguments, not %r" % (args,))
        args = [os.fspath(a) for a in args]
        self.process = None
        self._dir = tempfile.mkdtemp(prefix="pevp-")
        self._logs = {"stdout": os.path.join(self._dir, "stdout"), "stderr": os.path.join(self._dir, "stderr")}
        self._kept = None  # the logs' text, kept when stop() removes the directory
        if endpoint is None:
            endpoint = "unix:" + os.path.join(self._dir, "vp.sock")
        command = [binary, "serve", "--gen", gen, "--listen", endpoint, *args]
        # TCP: the token in this server's private folder unless the caller chose (the user's default token file
        # would serve as well, but tests and scripts should leave the home directory alone).
        chosen = any(a.split("=", 1)[0] in ("--token-file", "--insecure-no-auth") for a in args)
        if str(endpoint).startswith("tcp:") and not chosen:
            command += ["--token-file", os.path.join(self._dir, "token")]
        for s in settings:
            command += ["--set", s]
        try:
            # O_APPEND: the server's writes always land at the end, whatever this process reads meanwhile.
            with open(self._logs["stdout"], "ab") as out, open(self._logs["stderr"], "ab") as err:
                self.process = subprocess.Popen(command, stdout=out, stderr=err)
        except (OSError, TypeError, ValueError) as e:
            shutil.rmtree(self._dir, ignore_errors=True)
            raise PevpError(1, "cannot start %r: %s" % (binary, e)) from None
        line = self._first_line()
        if "listening on " not in line:
            why = "pe-vp serve did not start: %s%s" % (line, self.stderr())
            self.stop()
            raise PevpError(6, why)
        self.endpoint = line.split("listening on ", 1)[1].split(" ")[0].strip()
        # ", token in PATH" on TCP (None: the server takes no token).
        self.token_file = line.split(", token in ", 1)[1].strip() if ", token in " in line else None

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
        return connect(self.endpoint, timeout, self.token_file)

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
