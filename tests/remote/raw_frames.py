"""Frames written and read byte by byte, as a hostile or broken client would, beside the Python client
(docs/protocol.md): shared by the remote tests."""

import struct

from pevp import client as proto


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
    """(status, message) of an error reply."""
    kind, body = reply
    assert kind == proto.REPLY_ERROR, "expected an error reply, got kind 0x%02x" % kind
    status = body[0]
    (n,) = struct.unpack("<H", body[1:3])
    return status, body[3:3 + n].decode()
