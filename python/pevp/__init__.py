"""pevp: drive a pe-vp virtual platform from Python over its MMIO protocol (docs/protocol.md).

A pure-Python client of the protocol `pe-vp serve` speaks, on the standard library and numpy only::

    import numpy as np, pevp
    with pevp.serve(gen="MARIANA") as server, server.connect() as vp:
        vp.arm()
        vp.load_sbuf(st, dtype="bf16")                 # rows of a 2-D array into consecutive partitions
        vp.submit(vp.assemble(program_text))
        vp.wait_idle()
        c = vp.read_psum(partitions=32, elements=48)   # fp32 numpy array
        print(vp.stats()["cycles"])

load_sbuf and read_sbuf take dtype "bf16", "fp16", "fp32" or an fp8 format of FP8_FORMATS ("fp8_e4m3fn" is
FP8_EXP4 from MARIANA on, "fp8_e4m3" on CAYMAN, "fp8_e5m2" FP8_EXP5), rounded as the VP rounds (to_fp8_bits).
docs/getting-started.md has a walk-through; docs/protocol.md the frames this module sends.
"""

from .client import (
    FP8_FORMATS,
    Completion,
    ErrorRecord,
    Expectation,
    Map,
    PevpError,
    Server,
    Vp,
    connect,
    default_token_path,
    from_bf16_bits,
    from_fp8_bits,
    serve,
    to_bf16_bits,
    to_fp8_bits,
)

__all__ = [
    "FP8_FORMATS",
    "Completion",
    "ErrorRecord",
    "Expectation",
    "Map",
    "PevpError",
    "Server",
    "Vp",
    "connect",
    "default_token_path",
    "from_bf16_bits",
    "from_fp8_bits",
    "serve",
    "to_bf16_bits",
    "to_fp8_bits",
]
