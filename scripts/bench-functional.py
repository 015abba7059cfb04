#!/usr/bin/python3
"""The functional-speed benchmark of docs/performance.md, in one run.

For back-to-back 128 x 128 x 512 matmuls (a GEMM of M 128, K 16384, N 512: 128 K-tiles accumulating in one PSUM
bank) and for a 4096^3 GEMM, at 1 thread and at every CPU this process may use: the fast kernel alone on the
platform's own matmuls, the whole platform (functional mode), and OpenBLAS sgemm of the same shape at the same
thread count, each as a MAC rate and as ratios. Then how the platform's wall time grows with the work: cubic GEMMs
from 256^3 to 8192^3 in functional and timing-only mode, against MACs and against instructions.

Each point is its own process of build/tests/bench/functional_bench (SystemC runs one simulation per process);
the platform and the kernel run with OPENBLAS_NUM_THREADS=1 (so no idle OpenBLAS pool spins beside them) and
OpenBLAS in a process of its own. Set OPENBLAS_CORETYPE to force OpenBLAS's kernel (Debian's 0.3.21 falls back to
an older one on CPUs it does not know; the table names the one used).

  scripts/bench-functional.py [--build DIR] [--quick] [--json FILE]
"""
import argparse
import json
import os
import subprocess
import sys


def run(bench, args, blas_threads):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(blas_threads))
    p = subprocess.run([bench] + args, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"bench-functional: {' '.join([bench] + args)} failed ({p.returncode}):\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def shape_args(m, k, n):
    return ["--m", str(m), "--k", str(k), "--n", str(n)]


def point(bench, m, k, n, threads, repeat):
    """Platform + kernel in one process, OpenBLAS in another; returns the merged figures."""
    r = run(bench, shape_args(m, k, n) + ["--threads", str(threads), "--repeat", str(repeat), "--no-openblas"], 1)
    b = run(bench, shape_args(m, k, n) + ["--threads", str(threads), "--repeat", str(repeat), "--no-platform",
                                          "--no-kernel"], threads)
    r.update({key: b[key] for key in ("openblas_s", "openblas_macs_per_s", "openblas_core") if key in b})
    if "openblas_s" in r:
        r["platform_vs_openblas"] = r["openblas_s"] / r["platform_s"]
        r["kernel_vs_openblas"] = r["openblas_s"] / r["kernel_s"]
    return r


def g(rate):
    return f"{rate / 1e9:.1f} G"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.environ.get("PEVP_BUILD_DIR", "build"))
    ap.add_argument("--quick", action="store_true", help="smaller shapes, one repetition (a smoke run)")
    ap.add_argument("--json", help="also write every point as JSON lines here")
    o = ap.parse_args()
    bench = os.path.join(o.build, "tests", "bench", "functional_bench")
    if not os.access(bench, os.X_OK):
        sys.exit(f"bench-functional: {bench} not built (scripts/build.sh)")
    cores = len(os.sched_getaffinity(0))
    thread_counts = sorted({1, cores})
    repeat = 1 if o.quick else 3
    big = 1024 if o.quick else 4096
    points = []

    print(f"# functional speed, {cores} CPU(s)")
    print()
    print("| workload | threads | kernel alone | platform | OpenBLAS sgemm | platform / kernel | platform / OpenBLAS "
          "| kernel / OpenBLAS |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (m, k, n) in (("back-to-back 128x128x512 (M 128, K 16384, N 512)", (128, 16384, 512)),
                            (f"{big}^3 GEMM", (big, big, big))):
        per_threads = {}
        for t in thread_counts:
            r = point(bench, m, k, n, t, repeat)
            points.append(dict(r, workload=name))
            per_threads[t] = r
            blas = (g(r["openblas_macs_per_s"]) + f" ({r['openblas_core']})") if "openblas_s" in r else "--"
            print(f"| {name} | {t} | {g(r['kernel_macs_per_s'])} ({r['kernel_target']}) | "
                  f"{g(r['platform_macs_per_s'])} | {blas} | {r['platform_vs_kernel']:.2f} | "
                  f"{r.get('platform_vs_openblas', float('nan')):.2f} | {r.get('kernel_vs_openblas', float('nan')):.2f} |")
        if len(thread_counts) > 1:
            one, many = per_threads[1], per_threads[thread_counts[-1]]
            print(f"| {name}: {thread_counts[-1]} threads over 1 | | "
                  f"{one['kernel_s'] / many['kernel_s']:.2f}x | {one['platform_s'] / many['platform_s']:.2f}x | "
                  + (f"{one['openblas_s'] / many['openblas_s']:.2f}x" if "openblas_s" in one else "--")
                  + " | | | |")
    print()
    print(f"# wall time against work ({cores} thread(s))")
    print()
    print("| GEMM | mode | MACs | instructions | platform wall | G MACs per s | us per instruction |")
    print("|---|---|---|---|---|---|---|")
    sides = (256, 512, 1024) if o.quick else (256, 512, 1024, 2048, 4096, 8192)
    for mode in ("functional", "timing"):
        for s in sides:
            r = run(bench, shape_args(s, s, s) + ["--threads", str(cores), "--mode", mode, "--platform-only"], 1)
            points.append(dict(r, workload=f"{s}^3 {mode}"))
            print(f"| {s}^3 | {mode} | {r['macs']:.3g} | {r['instructions']} | {r['platform_s']:.3f} s | "
                  f"{r['platform_macs_per_s'] / 1e9:.1f} | {1e6 * r['platform_s'] / r['instructions']:.1f} |")
    if o.json:
        with open(o.json, "w") as f:
            for p in points:
                f.write(json.dumps(p) + "\n")


if __name__ == "__main__":
    main()
