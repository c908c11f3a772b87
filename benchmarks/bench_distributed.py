"""Data-parallel speed on this machine: all-reduce time per step against the step time.

    python benchmarks/bench_distributed.py                  # small and large, 2 ranks vs 1 process
    python benchmarks/bench_distributed.py --presets small --steps 30

For each preset, alternating, several times: 2 ranks under `mpiexec -n 2` with one thread each
(TENSORGRAD_THREADS=1, one BLAS thread), each on half the batch, against 1 process with two
threads on the whole batch: the same effective batch, so the same work per step.  Per step it
times forward + backward, `sync_gradients()` (the all-reduce, plus any wait for the slower rank)
and the optimizer step; then the all-reduce of the same flat buffer alone, after a barrier.
Reported: medians per run, and the median over runs.  The machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def worker(preset, batch, steps, distributed):
    import tensorgrad as tg
    import tensorgrad.distributed as dist
    from gpt.data import ShakespeareData
    from gpt.model import build_model, count_parameters
    from tensorgrad.nn.parallel import DistributedDataParallel

    rank, world = 0, 1
    if distributed:
        dist.init_process_group("mpi")
        rank, world = dist.get_rank(), dist.get_world_size()
    tg.manual_seed(1337 + rank)
    data = ShakespeareData.load(download=False)
    model = build_model(preset, vocab_size=data.tokenizer.vocab_size)
    config = model.config if hasattr(model, "config") else None
    block = config.block_size
    batch = batch or config.batch_size
    per_rank = batch // world
    if distributed:
        model = DistributedDataParallel(model)
    opt = tg.optim.AdamW(model.parameters(), lr=1e-3)
    fb, sync, step_t, total = [], [], [], []
    for i in range(steps + 2):  # 2 warm-up steps
        t0 = time.perf_counter()
        x, y = data.get_batch("train", block, per_rank)
        _, loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        t1 = time.perf_counter()
        if distributed:
            model.sync_gradients()
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        if i >= 2:
            fb.append(t1 - t0), sync.append(t2 - t1), step_t.append(t3 - t2), total.append(t3 - t0)
    alone = []
    if distributed:
        flat = model._grad_flats[0].buffer
        group = dist.process_group.group()
        for _ in range(10):
            dist.barrier()
            t = time.perf_counter()
            group.all_reduce(flat, "sum")
            alone.append(time.perf_counter() - t)
    n_params = count_parameters(model.module if distributed else model)
    if rank == 0:
        ms = lambda xs: round(1e3 * statistics.median(xs), 2) if xs else None
        print(json.dumps(dict(preset=preset, world=world, batch=batch, block=block, params=n_params,
                              fwd_bwd=ms(fb), sync=ms(sync), opt=ms(step_t), step=ms(total),
                              allreduce_alone=ms(alone))))  # fmt: skip
    if distributed:
        dist.destroy_process_group()


def run(preset, batch, steps, distributed):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    env["PYTHONPATH"] = str(ROOT)
    args = [sys.executable, __file__, "--worker", preset, "--batch", str(batch), "--steps", str(steps)]
    if distributed:
        env.update(TENSORGRAD_THREADS="1", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
        args = [shutil.which("mpiexec"), "-n", "2", *args, "--distributed"]
    else:
        env.update(TENSORGRAD_THREADS="2", OPENBLAS_NUM_THREADS="2", OMP_NUM_THREADS="2")
    out = subprocess.run(args, capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--presets", nargs="+", default=["small", "large"])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=0, help="effective batch (0: the preset's)")
    p.add_argument("--large-batch", type=int, default=16, help="effective batch for large (memory: ~1.4 GB per rank)")
    p.add_argument("--large-steps", type=int, default=3)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--worker")
    p.add_argument("--distributed", action="store_true")
    a = p.parse_args()
    if a.worker:
        return worker(a.worker, a.batch, a.steps, a.distributed)
    for preset in a.presets:
        batch, steps = (a.large_batch, a.large_steps) if preset == "large" else (a.batch, a.steps)
        runs = {True: [], False: []}
        for _ in range(a.repeats):
            for distributed in (True, False):
                r = run(preset, batch, steps, distributed)
                runs[distributed].append(r)
                print(json.dumps(r), flush=True)
        for distributed in (True, False):
            med = {k: statistics.median(r[k] for r in runs[distributed]) for k in ("fwd_bwd", "sync", "opt", "step")}
            label = "2 ranks x 1 thread" if distributed else "1 process x 2 threads"
            extra = ""
            if distributed:
                alone = statistics.median(r["allreduce_alone"] for r in runs[True])
                extra = f", all-reduce alone {alone:.2f} ms ({100 * alone / med['step']:.1f}% of the step)"
            print(f"{preset} (batch {runs[distributed][0]['batch']} x {runs[distributed][0]['block']}), {label}: "
                  f"step {med['step']:.2f} ms = fwd+bwd {med['fwd_bwd']:.2f} + sync {med['sync']:.2f} "
                  f"+ AdamW {med['opt']:.2f}{extra}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
