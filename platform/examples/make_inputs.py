#!/usr/bin/python3
"""Writes the input .npy files of the examples (standard library only).

Small integers in [-4, 4]: exact in bf16 and in every fp32 sum the examples make,
so an example's expected result is plain arithmetic (tests/platform/test_examples.cpp).
Run from this folder: /usr/bin/python3 make_inputs.py
"""
import struct


def write_npy(path, rows, cols, seed):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * pad + "\n"
    data = [float((i * 7 + seed) % 9 - 4) for i in range(rows * cols)]
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("ascii"))
        f.write(struct.pack("<%df" % len(data), *data))


INPUTS = {
    "single_matmul/st.npy": (64, 32, 1), "single_matmul/mv.npy": (64, 48, 2),
    "k_tiled_group/st0.npy": (64, 64, 3), "k_tiled_group/st1.npy": (64, 64, 4),
    "k_tiled_group/mv0.npy": (64, 128, 5), "k_tiled_group/mv1.npy": (64, 128, 6),
    "transpose/a.npy": (32, 64, 7), "transpose/b.npy": (64, 40, 8),
    "parallel_tiles/st0.npy": (64, 64, 1), "parallel_tiles/st1.npy": (64, 64, 2),
    "parallel_tiles/mv0.npy": (64, 32, 3), "parallel_tiles/mv1.npy": (64, 32, 4),
    "semaphore_handshake/st.npy": (32, 32, 5), "semaphore_handshake/mv.npy": (32, 32, 6),
}

if __name__ == "__main__":
    for path, (r, c, s) in INPUTS.items():
        write_npy(path, r, c, s)
