"""Where a training step's time goes: tensorgrad's op-by-op profile (tg.profiler), beside
PyTorch's own profiler on the lecture's model, same preset, same batch, one process each.

    python benchmarks/profile_step.py --preset large
    python benchmarks/profile_step.py --preset small --steps 20 --path op-by-op   # the per-op parts of a step
    python benchmarks/profile_step.py --preset small --steps 20 --path reference
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/profile_step.py   # NumPy's native BLAS kernel

Paths: `kernels` (the default step: the fused GPT where it accepts the model, one FusedGPT row),
`op-by-op` (the lecture's code on the fused kernels, `--fused off`: where each op's time goes),
`reference` (the plain ops); `all` runs the three.
Each framework runs two warm-up steps, then `--steps` profiled steps; the figures are totals over
the profiled steps divided by their number (ms per step).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def profile_tensorgrad(preset, steps, path, device, limit):
    import tensorgrad as tg
    from benchmarks.bench import tensorgrad_training_step

    tg.kernels.use("reference" if path == "reference" else "kernels")
    step, _ = tensorgrad_training_step(preset, device, around_optimizer=lambda: tg.profiler.record("AdamW.step"),
                                       fused=path == "kernels")  # fmt: skip
    for _ in range(2):
        step()
    with tg.profiler.profile(device) as prof:
        for _ in range(steps):
            step()
    print(f"tensorgrad, {path} path, preset {preset}, {device}: ms per step over {steps} profiled steps")
    print(prof.table(limit, per=steps))


def profile_torch(preset, steps, device, limit, threads):
    import torch
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    from benchmarks.bench import torch_training_step

    torch.set_num_threads(threads)
    step, _ = torch_training_step(preset, device)
    for _ in range(2):
        step()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    t = time.perf_counter()
    with torch_profile(activities=activities) as prof:
        for _ in range(steps):
            step()
    wall = (time.perf_counter() - t) / steps
    key = "self_cuda_time_total" if device == "cuda" else "self_cpu_time_total"
    print(
        f"PyTorch {torch.__version__} ({threads} threads), preset {preset}, {device}: "
        f"ms per step over {steps} profiled steps (wall {1e3 * wall:.1f} ms with the profiler on)"
    )
    print(prof.key_averages().table(sort_by=key, row_limit=limit or 25))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", default="large")
    p.add_argument("--steps", type=int, default=1, help="profiled steps (after two warm-up steps)")
    p.add_argument("--path", choices=["kernels", "op-by-op", "reference", "all"], default="all")
    p.add_argument("--backend", choices=["numpy", "cupy"], default="numpy")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--limit", type=int, default=None, help="rows shown (default: all)")
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--worker", choices=["tensorgrad", "torch"], help=argparse.SUPPRESS)
    p.add_argument(
        "--system-malloc",
        action="store_true",
        help="CPU: leave glibc's malloc as it is (by default both processes call "
        "tg.host_memory.keep_freed_memory(), as the training programs do)",
    )
    args = p.parse_args()
    device = "cuda" if args.backend == "cupy" else "cpu"
    if device == "cpu" and not args.system_malloc:
        from tensorgrad import host_memory

        host_memory.keep_freed_memory()
    if args.worker == "tensorgrad":
        profile_tensorgrad(args.preset, args.steps, args.path, device, args.limit)
        return
    if args.worker == "torch":
        profile_torch(args.preset, args.steps, device, args.limit, args.threads)
        return

    import numpy  # noqa: F401  (loads the BLAS library that threadpoolctl names)
    from threadpoolctl import threadpool_info

    print(
        json.dumps(
            [
                {k: i.get(k) for k in ("internal_api", "version", "architecture", "num_threads")}
                for i in threadpool_info()
            ]
        )
    )
    base = [
        sys.executable,
        __file__,
        "--preset",
        args.preset,
        "--steps",
        str(args.steps),
        "--backend",
        args.backend,
        "--threads",
        str(args.threads),
    ]
    base += ["--system-malloc"] if args.system_malloc else []
    if args.limit:
        base += ["--limit", str(args.limit)]
    runs = [
        ["--worker", "tensorgrad", "--path", path]
        for path in (["kernels", "op-by-op", "reference"] if args.path == "all" else [args.path])
    ]
    if not args.no_torch:
        runs.append(["--worker", "torch"])
    failed = False
    for extra in runs:  # one process each: the frameworks' thread pools never compete
        print(flush=True)
        failed |= subprocess.run(base + extra).returncode != 0
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
