#!/usr/bin/python3
"""A stand-in for qemu-system-x86_64 that `pe-vp qemu-device` starts (test_command.py): it finds the two inherited
descriptors in the arguments pe-vp appended, reads the ivshmem-doorbell greeting as QEMU's ivshmem device does,
then speaks the mpqemu protocol as QEMU 7.2's x-pci-proxy-dev does (a config probe, BAR accesses at absolute
addresses) and exits with the status the test expects pe-vp to pass on. It prints one line per check; a failed check
exits 1."""
import os
import select
import socket
import struct
import sys

EXIT_STATUS = 7


def fail(what):
    print("fake_qemu: FAIL " + what, flush=True)
    sys.exit(1)


def arg_fd(prefix):
    for a in sys.argv[1:]:
        if a.startswith(prefix):
            return int(a.split("fd=")[1].split(",")[0])
    fail("no argument starting " + prefix)


proxy = socket.socket(fileno=arg_fd("x-pci-proxy-dev,id=pevp0,fd="))
doorbell = socket.socket(fileno=arg_fd("socket,id=pevpirq,fd="))
if "ivshmem-doorbell,chardev=pevpirq,vectors=2" not in sys.argv:
    fail("no ivshmem-doorbell device with 2 vectors")

# The greeting: version 0, our id, -1 with the shared memory, then our id with one eventfd per vector.
greeting = []
for _ in range(5):
    data, fds, _, _ = socket.recv_fds(doorbell, 8, 1)
    greeting.append((struct.unpack("<q", data)[0], fds[0] if fds else None))
values = [v for v, _ in greeting]
if values != [0, 0, -1, 0, 0] or greeting[2][1] is None or greeting[3][1] is None or greeting[4][1] is None:
    fail("greeting %r" % values)
vector_fd = [greeting[3][1], greeting[4][1]]
print("fake_qemu: greeting ok", flush=True)


def request(cmd, payload):
    proxy.sendall(struct.pack("<iIQ", cmd, 0, len(payload)) + payload)
    header = b""
    while len(header) < 16:
        chunk = proxy.recv(16 - len(header))
        if not chunk:
            fail("the device closed the link")
        header += chunk
    rcmd, _, size = struct.unpack("<iIQ", header)
    body = proxy.recv(size) if size else b""
    if rcmd != 1 or size != 8:
        fail("reply %d of %d bytes" % (rcmd, size))
    return struct.unpack("<Q", body)[0]


def cfg_read(addr, length):
    return request(3, struct.pack("<IIi", addr, 0, length))


def cfg_write(addr, value, length):
    return request(2, struct.pack("<IIi", addr, value, length))


def bar_read(addr, size=4):
    return request(5, struct.pack("<QQI?3x", addr, 0, size, True))


def bar_write(addr, value, size=4):
    return request(4, struct.pack("<QQI?3x", addr, value, size, True))


def expect(what, got, want):
    if got != want:
        fail("%s: 0x%x, expected 0x%x" % (what, got, want))
    print("fake_qemu: %s = 0x%x" % (what, got), flush=True)


expect("vendor", cfg_read(0, 2), 0x1234)
expect("device", cfg_read(2, 2), 0x7065)
cfg_write(0x10, 0xFFFFFFFF, 4)
expect("BAR0 size mask", cfg_read(0x10, 4), 0xFFE00000)
BAR0 = 0xFE000000
cfg_write(0x10, BAR0, 4)
cfg_write(0x04, 0x6, 2)
expect("dma_id", bar_read(BAR0 + 0x100000), 0x0001444D)
# SEQ: irq_enable.error, then an all-zero instruction (opcode 0) into the queue: the SEQ stops on it and raises
# its line, which the device turns into doorbell vector 0.
bar_write(BAR0 + 0x3000 + 0xC, 0x2)
for i in range(8):
    bar_write(BAR0 + 0x10000 + 8 * i, 0, 8)
ready, _, _ = select.select([vector_fd[0]], [], [], 10)
if not ready:
    fail("vector 0 was not signalled within 10 s")
expect("vector 0 signals", struct.unpack("<Q", os.read(vector_fd[0], 8))[0], 1)
if os.environ.get("FAKE_QEMU_WAIT"):
    # A guest that runs on: until a signal ends this process.
    print("fake_qemu: waiting", flush=True)
    while True:
        select.select([], [], [])
sys.exit(EXIT_STATUS)
