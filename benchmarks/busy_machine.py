"""The default training command on an idle machine and beside a CPU-bound process, with the
thread count the program chooses and with one thread per core (what it did before choosing).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/busy_machine.py
    python benchmarks/busy_machine.py --max-iters 2000     # a shorter run of each

Each row is one run of `python examples/train_shakespeare.py` (the README's command), timed from
start to exit. "busy" runs it beside one process that spins on a core for as long as the run takes.
The program's choice must keep the busy run within 1.5x of its idle run, and never slower than
the single-thread run (`--threads 1`) on the same busy machine.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def spin(stop):
    while not stop.is_set():
        for _ in range(100_000):
            pass


def run(threads: int | None, busy: bool, max_iters: int | None) -> float:
    cmd = [sys.executable, str(ROOT / "examples/train_shakespeare.py"), "--sample-tokens", "0"]
    if max_iters is not None:
        cmd += ["--max-iters", str(max_iters)]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    stop = multiprocessing.Event()
    hog = multiprocessing.Process(target=spin, args=(stop,), daemon=True) if busy else None
    if hog is not None:
        hog.start()
        time.sleep(0.5)
    try:
        t0 = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        seconds = time.perf_counter() - t0
    finally:
        if hog is not None:
            stop.set()
            hog.join()
    if out.returncode != 0:
        raise SystemExit(f"error: the run failed ({' '.join(cmd)}):\n{out.stderr[-2000:]}")
    chose = next((line for line in out.stdout.splitlines() if "CPU thread" in line), "")
    final = next((line for line in out.stdout.splitlines() if line.startswith("final val loss")), "")
    print(f"   {'busy' if busy else 'idle'} threads={threads or 'chosen'}: {seconds:.1f} s  [{chose}] {final}",
          flush=True)
    return seconds


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--max-iters", type=int, default=None, help="steps per run (default: the preset's 5000)")
    args = p.parse_args(argv)
    if args.max_iters is not None and args.max_iters < 1:
        p.error(f"--max-iters {args.max_iters}: must be an integer >= 1")
    cores = os.cpu_count() or 1
    rows = {}
    for busy in (False, True):
        for threads in (None, cores, 1):
            rows[(busy, threads)] = run(threads, busy, args.max_iters)
    print()
    print("| threads | idle s | busy s | busy / idle |")
    print("|---|---:|---:|---:|")
    for threads, name in ((None, "chosen by the program"), (cores, f"{cores} (one per core)"), (1, "1 (--threads 1)")):
        idle, busy = rows[(False, threads)], rows[(True, threads)]
        print(f"| {name} | {idle:.1f} | {busy:.1f} | {busy / idle:.2f} |")
    ok = rows[(True, None)] <= 1.5 * rows[(False, None)] and rows[(True, None)] <= rows[(True, 1)] * 1.05
    print(f"\nbusy run within 1.5x of idle and not slower than one thread (5% noise allowed): {'yes' if ok else 'NO'}")


if __name__ == "__main__":
    main()
