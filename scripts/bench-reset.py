#!/usr/bin/python3
"""The hard reset's wall time (docs/checkpoint.md "Hard reset"), through the Python client against a `pe-vp serve`
of BUILD/platform/pe-vp on a private Unix socket: the round trip of a request that does nothing (`time`), a reset
of an idle VP, and a reset of a VP holding a 100-instruction program stuck on a semaphore nothing sets. Prints the
mean of each in microseconds. The reset takes no simulated time; this is the host's cost.

  scripts/bench-reset.py [--build DIR] [--resets N]
"""
import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import pevp  # noqa: E402

STUCK = (".gen MARIANA\nldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=64 num_active_cols=32 "
         "row_grp=0xF col_grp=0xF events.wait_mode=WAIT_GE events.wait_sem=5 events.wait_value=1\n")


def mean_us(n, work):
    start = time.perf_counter()
    for _ in range(n):
        work()
    return (time.perf_counter() - start) / n * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--resets", type=int, default=200)
    args = parser.parse_args()
    with pevp.serve(pe_vp=os.path.join(args.build, "platform", "pe-vp")) as server, server.connect() as vp:
        vp.time_ps()
        round_trip = mean_us(args.resets, vp.time_ps)
        idle = mean_us(args.resets, vp.reset)
        program = vp.assemble(STUCK) * 100
        stuck_total = 0.0
        for _ in range(args.resets // 4):
            vp.arm()
            vp.submit(program)
            try:
                vp.wait_idle(10_000)
            except pevp.PevpError:
                pass  # stuck, as meant
            start = time.perf_counter()
            vp.reset()
            stuck_total += time.perf_counter() - start
        stuck = stuck_total / (args.resets // 4) * 1e6
    print("round trip of a request that does nothing: %.0f us" % round_trip)
    print("reset of an idle VP: %.0f us" % idle)
    print("reset of a VP with 100 instructions stuck on a semaphore: %.0f us" % stuck)


if __name__ == "__main__":
    main()
