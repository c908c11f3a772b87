"""Attention forward + backward on the CPU: tensorgrad's kernel path, the flash kernels, PyTorch.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_attention.py
    python benchmarks/bench_attention.py --rows 48 --repeats 3        # a quicker, smaller check

At the `large` preset's attention by default: rows = batch 64 x 6 heads, T = 256, head size 64,
causal, float32, with and without dropout (p = 0.2).  One forward + backward is timed for:

- `tensorgrad kernels`: `tg.nn.functional.scaled_dot_product_attention` under the default kernels
  (kernels/functions.py's ScaledDotProductAttention: GEMMs and the fused softmax over query blocks);
- `cpu_flash`: kernels/cpu_flash.py called directly (the dropout keep mask drawn as the kernel
  path draws it, by `kernels.keep_mask`, inside the timing);
- `torch`: `torch.nn.functional.scaled_dot_product_attention` (its CPU flash kernel).

Each at 1 thread and at every core, each case in its own process (no two thread pools compete);
the median of `--repeats` runs after a warm-up, as wall time and as the process's CPU time.  The
ratios are against PyTorch: wall time at its faster thread count, and CPU time at one thread (on a
machine other programs are using, the wall times move by tens of percent; one thread's CPU time
moves less, but the caches are still shared: read every ratio as rough).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

IMPLS = ("tensorgrad kernels", "cpu_flash", "torch")


def _inputs(rows, T, d, dtype):
    import numpy as np  # noqa: PLC0415

    rng = np.random.default_rng(0)
    return [rng.standard_normal((rows, T, d)).astype(dtype) for _ in range(4)]  # q, k, v, dout


def _case(impl, rows, T, d, dropout, threads):
    """time_fn() running one forward + backward of `impl`."""
    import numpy as np  # noqa: PLC0415

    q, k, v, g = _inputs(rows, T, d, np.float32)
    heads = 6 if rows % 6 == 0 else 1
    shape = (rows // heads, heads, T, d)
    if impl == "torch":
        import torch  # noqa: PLC0415

        torch.set_num_threads(threads)
        tq, tk, tv = (torch.tensor(a.reshape(shape), requires_grad=True) for a in (q, k, v))
        tg_ = torch.tensor(g.reshape(shape))

        def run():
            out = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, dropout_p=dropout, is_causal=True)
            out.backward(tg_)

        return run
    import tensorgrad as tg  # noqa: PLC0415

    tg.set_num_threads(threads)
    if impl == "tensorgrad kernels":
        xq, xk, xv = (tg.tensor(a.reshape(shape), requires_grad=True) for a in (q, k, v))
        xg = tg.tensor(g.reshape(shape))

        def run():
            out = tg.nn.functional.scaled_dot_product_attention(xq, xk, xv, dropout_p=dropout, is_causal=True)
            out.backward(xg)

        return run
    from tensorgrad import backend  # noqa: PLC0415
    from tensorgrad.kernels import cpu, cpu_flash  # noqa: PLC0415

    mask = np.tri(T, T, dtype=np.bool_)
    scale = d**-0.5

    def run():
        keep = cpu.keep_mask(backend.rng("cpu"), (rows, T, T), dropout) if dropout else None
        out, lse = cpu_flash.attention_forward(q, k, v, mask, keep, 1 - dropout, scale)
        cpu_flash.attention_backward(q, k, v, out, lse, g, mask, keep, 1 - dropout, scale)

    return run


def worker(impl, rows, T, d, dropout, threads, repeats):
    run = _case(impl, rows, T, d, dropout, threads)
    run()  # warm-up (and compilation)
    times, cpu_times = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        run()
        times.append(time.perf_counter() - t0)
        cpu_times.append(time.process_time() - c0)
    print(json.dumps({"ms": 1e3 * statistics.median(times), "cpu_ms": 1e3 * statistics.median(cpu_times)}))


def blas_report() -> str:
    from benchmarks.bench import blas_report as report  # noqa: PLC0415

    return report()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=64 * 6, help="(batch, head) rows (default: the large preset's 384)")
    p.add_argument("--T", type=int, default=256)
    p.add_argument("--d", type=int, default=64)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, nargs="+", default=None, help="thread counts (default: 1 and every core)")
    p.add_argument("--impls", nargs="+", default=list(IMPLS), choices=IMPLS)
    p.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        impl, rows, T, d, dropout, threads = args.worker
        worker(impl, int(rows), int(T), int(d), float(dropout), int(threads), args.repeats)
        return
    cores = os.cpu_count() or 1
    threads = args.threads or sorted({1, cores})
    print(blas_report())
    print(f"attention forward + backward: rows {args.rows}, T {args.T}, head size {args.d}, causal, float32; "
          f"median of {args.repeats}; {cores} cores")  # fmt: skip
    for dropout in (0.0, 0.2):
        results = {}
        for impl in args.impls:
            for n in threads:
                cmd = [sys.executable, __file__, "--repeats", str(args.repeats), "--worker", impl, str(args.rows),
                       str(args.T), str(args.d), str(dropout), str(n)]  # fmt: skip
                done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
                if done.returncode:
                    print(done.stderr[-2000:], file=sys.stderr)
                    results[impl, n] = {"ms": float("nan"), "cpu_ms": float("nan")}
                else:
                    results[impl, n] = json.loads(done.stdout.strip().splitlines()[-1])
        torch_best = min((results[i, n]["ms"] for i, n in results if i == "torch"), default=float("nan"))
        torch_one = results.get(("torch", 1), {}).get("cpu_ms", float("nan"))
        print(f"\ndropout {dropout}: wall ms (CPU ms of the process, all its threads)")
        print(f"| {'path':<20} | " + " | ".join(f"{n} thread{'s' * (n > 1)}" for n in threads)
              + " | best wall / torch's best | 1-thread CPU / torch's |")  # fmt: skip
        print("|" + "---|" * (len(threads) + 3))
        for impl in args.impls:
            row = [results[impl, n] for n in threads]
            best = min(r["ms"] for r in row)
            one = results.get((impl, 1), {}).get("cpu_ms", float("nan"))
            print(f"| {impl:<20} | " + " | ".join(f"{r['ms']:.1f} ({r['cpu_ms']:.1f})" for r in row)
                  + f" | {best / torch_best:.2f} | {one / torch_one:.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()
