#!/usr/bin/env python3
"""`pe-vp serve` given a checkpoint whose configuration section nests 100,000 levels (CRC recomputed) refuses that
one request with the place and the limit (D-NESTING-DEPTH) and carries on: the same client then restores the
server's own checkpoint. The server used to die with SIGSEGV at the request. PEVP_BIN names the binary."""
import os
import struct
import sys
import unittest
import zlib

from pevp.client import PevpError, Server

HOSTILE = 100000


def with_config_text(checkpoint, text):
    """The checkpoint with its 'config' section's text replaced and its length and CRC-32 made right
    (docs/checkpoint.md "Format": sections of name length u16, name, payload length u64, CRC u32, payload; the
    config payload is a u32 length and the JSON text)."""
    at = 16 + struct.unpack_from("<I", checkpoint, 12)[0]
    while at < len(checkpoint):
        name_len = struct.unpack_from("<H", checkpoint, at)[0]
        name = checkpoint[at + 2:at + 2 + name_len].decode()
        length = struct.unpack_from("<Q", checkpoint, at + 2 + name_len)[0]
        payload = at + 2 + name_len + 12
        if name == "config":
            new = struct.pack("<I", len(text)) + text
            head = bytearray(checkpoint[:payload])
            struct.pack_into("<Q", head, payload - 12, len(new))
            struct.pack_into("<I", head, payload - 4, zlib.crc32(new))
            return bytes(head) + new + checkpoint[payload + length:]
        at = payload + length
    raise AssertionError("no config section")


class DeepCheckpointConfig(unittest.TestCase):
    def test_the_request_is_refused_and_the_server_carries_on(self):
        server = Server(pe_vp=os.environ["PEVP_BIN"])
        try:
            vp = server.connect(timeout=60)
            good = vp.save_checkpoint()
            deep = with_config_text(good, b'{"seq": ' + b"[" * HOSTILE + b"]" * HOSTILE + b"}")
            with self.assertRaises(PevpError) as refused:
                vp.restore_checkpoint(deep)
            # '{' is level 1, the '['s start at offset 8: level 65 is at offset 71, column 72.
            self.assertIn("section 'config' is not a JSON object pe-vp reads: its text:1:72: JSON nested deeper than "
                          "64 levels (the limit for a document pe-vp reads; offset 71)", str(refused.exception))
            self.assertTrue(str(refused.exception).startswith("argument: "), str(refused.exception))
            vp.restore_checkpoint(good)
            self.assertEqual(vp.save_checkpoint(), good)
        finally:
            status = server.stop()
        self.assertEqual(status, 0, server.stderr())


if __name__ == "__main__":
    sys.exit(unittest.main())
