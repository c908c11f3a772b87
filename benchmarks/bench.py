"""Speed of tensorgrad against PyTorch, side by side, in one run.

    python benchmarks/bench.py                         # small and large training steps, ops, generation
    python benchmarks/bench.py --presets small --steps 50
    python benchmarks/bench.py --backend cupy          # on an NVIDIA GPU (timed with CUDA events)
    python benchmarks/bench.py --no-torch              # our figures only
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench.py   # NumPy's native BLAS kernel

tensorgrad is measured on each of its paths: the fused GPT (one compiled op per step on the CPU,
gpt/fused.py, where it accepts the model; the default), the lecture's code op by op on the fused
kernels (tensorgrad/kernels/; `--fused off`), and the reference ops (TENSORGRAD_KERNELS=reference).
The BLAS library and the kernel it runs (threadpoolctl's "architecture") are printed first:
OPENBLAS_CORETYPE forces another kernel.

Each training-step measurement runs in its own process (same model, same batch, same float32
weights, same thread count for both), so the two frameworks' thread pools never compete and
the peak memory (max RSS) of each is its own.  The thread count is the one the training programs
choose for the preset (gpt/threads.py: one thread for a model whose products are too small to
split, `small`; every core for `large`), for both frameworks; `--threads N` sets it for both.
Reported: the median of the timed steps.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def step_flops(config) -> float:
    """Forward + backward FLOPs of one training step: 6 per weight per token for the matmuls
    (2 forward, 4 backward), plus the attention products q k^T and P v."""
    B, T, C, L = config.batch_size, config.block_size, config.n_embd, config.n_layer
    if config.kind == "bigram":
        return 0.0
    weights = L * (3 * C * C + (C * C if config.proj else 0) + (8 * C * C if config.ffn == "mlp" else C * C))
    weights += C * config.vocab_size
    return 6 * weights * B * T + 6 * 2 * L * B * T * T * C


# ----------------------------------------------------------------------------- workers
def _sync(backend_name):
    if backend_name == "cupy":
        import cupy

        cupy.cuda.Device().synchronize()


def _clock(framework, device):
    """time_ms(fn): how long fn() takes.  On the CPU: wall time.  On a GPU ("cuda"): CUDA events
    of `framework` ("tensorgrad": CuPy's, "torch": PyTorch's) recorded on the stream before and
    after fn, read once the second one is done, so the figure is the device's time from start to
    end (host dispatch included where the device waits for it), not the host's."""
    if device == "cpu":

        def time_ms(fn):
            t = time.perf_counter()
            fn()
            return 1000 * (time.perf_counter() - t)

        return time_ms
    if framework == "tensorgrad":
        import cupy

        def events():
            return cupy.cuda.Event(), cupy.cuda.Event()

        def elapsed(start, end):
            return cupy.cuda.get_elapsed_time(start, end)
    else:
        import torch

        def events():
            return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

        def elapsed(start, end):
            return start.elapsed_time(end)

    def time_ms(fn):
        start, end = events()
        start.record()
        fn()
        end.record()
        end.synchronize()
        return elapsed(start, end)

    return time_ms


def keep_freed_memory(backend_name, system_malloc):
    """What the training programs do on the CPU (tg.host_memory.keep_freed_memory), in every
    process of the bench, PyTorch's too, unless --system-malloc."""
    if backend_name == "numpy" and not system_malloc:
        from tensorgrad import host_memory

        host_memory.keep_freed_memory()


def tensorgrad_training_step(preset, device, around_optimizer=contextlib.nullcontext, fused=True):
    """The training step the benches time, on tensorgrad: the preset's model (seed 0), AdamW and
    one fixed batch; the optimizer step runs inside `around_optimizer()`; `fused=False` runs the
    model op by op (as `--fused off`).  -> (step, config)"""
    import tensorgrad as tg
    from gpt import build_model, get_config

    config = get_config(preset)
    tg.manual_seed(0)
    model = build_model(config).to(device)
    model.fused = fused
    opt = tg.optim.AdamW(model.parameters(), lr=config.learning_rate)
    x = tg.randint(65, (config.batch_size, config.block_size), device=device)
    y = tg.randint(65, (config.batch_size, config.block_size), device=device)

    def step():
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        with around_optimizer():
            opt.step()

    return step, config


def torch_training_step(preset, device):
    """The same step on the lecture's PyTorch model (benchmarks/torch_gpt.py).  -> (step, config)"""
    import torch

    from benchmarks.torch_gpt import build_torch_model
    from gpt import get_config

    config = get_config(preset)
    torch.manual_seed(0)
    model = build_torch_model(config).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=config.learning_rate)
    x = torch.randint(65, (config.batch_size, config.block_size), device=device)
    y = torch.randint(65, (config.batch_size, config.block_size), device=device)

    def step():
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step, config


def worker_tensorgrad(preset, steps, backend_name, threads=None, tf32=False, path="kernels"):
    import tensorgrad as tg

    tg.kernels.use("reference" if path == "reference" else "kernels")
    if threads:  # the BLAS library's threads and the kernels', as the programs set them (process-wide)
        tg.set_num_threads(threads)
    device = "cuda" if backend_name == "cupy" else "cpu"
    if device == "cuda":
        tg.cuda.allow_tf32(tf32)
    step, config = tensorgrad_training_step(preset, device, fused=path == "kernels")
    result = _time_steps(step, steps, _clock("tensorgrad", device))
    if device == "cpu":
        result["floor_ms"] = 1000 * step_flops(config) / _cpu_gemm_rate()
    else:  # the GPU's own figures, not the host's (see _gpu_gemm_rate, _cupy_peak_mb)
        result["gemm_tflops"] = _gpu_gemm_rate() / 1e12
        result["floor_ms"] = 1000 * step_flops(config) / (1e12 * result["gemm_tflops"])
        result["peak_mb"] = _cupy_peak_mb(step)
    return result


def _cpu_gemm_rate():
    """NumPy's float32 GEMM rate (FLOP/s) here, now: the median of five of the large model's
    largest products, (16384, 384) @ (384, 1536)."""
    import numpy as np

    a, b = np.full((16384, 384), 0.5, np.float32), np.full((384, 1536), 0.5, np.float32)
    return 2 * a.shape[0] * a.shape[1] * b.shape[1] / (_median_ms(lambda: a @ b, _clock("tensorgrad", "cpu")) / 1000)


def _gpu_gemm_rate(n=4096):
    """This GPU's float32 GEMM rate (FLOP/s) as CuPy runs it now (TF32 or not): the median of
    five n x n x n products timed with CUDA events."""
    import cupy

    a = cupy.full((n, n), 0.5, dtype=cupy.float32)  # (the values do not change a GEMM's speed)
    return 2 * n**3 / (_median_ms(lambda: a @ a, _clock("tensorgrad", "cuda")) / 1000)


def _cupy_peak_mb(step):
    """The peak of CuPy's memory pool's bytes in use over one more (untimed) step, through a
    memory hook (a Python call per allocation, so it is kept out of the timed steps)."""
    import cupy

    pool = cupy.get_default_memory_pool()

    class Peak(cupy.cuda.MemoryHook):
        name = "tensorgrad_bench_peak"
        peak = pool.used_bytes()

        def malloc_postprocess(self, **kwargs):
            self.peak = max(self.peak, pool.used_bytes())

    with Peak() as hook:
        step()
        cupy.cuda.Device().synchronize()
    return hook.peak / 2**20


def worker_torch(preset, steps, backend_name, threads, tf32=False):
    import torch

    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.set_num_threads(threads)
    device = "cuda" if backend_name == "cupy" else "cpu"
    step, _ = torch_training_step(preset, device)
    result = _time_steps(step, steps, _clock("torch", device))
    if device == "cuda":  # the caching allocator's peak of bytes in use, over all the steps
        result["peak_mb"] = torch.cuda.max_memory_allocated() / 2**20
    return result


def _time_steps(step, steps, clock):
    """The median of `steps` timed steps after a tenth as many (at least 3) untimed: the steady state
    a training run spends its steps in (the first tens of a process's steps can run a tenth slower:
    the allocator, BLAS threads, caches; in some processes more)."""
    for _ in range(max(3, steps // 10)):
        step()
    times = [clock(step) for _ in range(steps)]
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"ms": statistics.median(times), "min_ms": min(times), "peak_mb": rss_mb}


_failed = []  # the step measurements whose worker failed: the run then exits with status 1


def run_worker(framework, preset, steps, backend_name, threads, tf32=False, path="kernels", system_malloc=False):
    """One measurement in a fresh process; returns its JSON result (or None if it failed)."""
    cmd = [sys.executable, __file__, "--worker", framework, "--presets", preset, "--steps", str(steps),
           "--backend", backend_name, "--threads", str(threads), "--path", path]  # fmt: skip
    cmd += ["--tf32"] if tf32 else []
    cmd += ["--system-malloc"] if system_malloc else []
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        print(f"  ({framework} {preset} failed: {proc.stderr.strip().splitlines()[-1:]})", file=sys.stderr)
        _failed.append(f"{framework} {preset}")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _version(package):
    from importlib.metadata import version

    return version(package)


def threads_of(preset, args) -> int:
    """The CPU threads of both frameworks' workers for `preset`: --threads, else the training
    programs' choice (gpt/threads.py); on a GPU, every core (the host's threads hardly matter)."""
    if args.threads:
        return args.threads
    if args.backend != "numpy":
        return os.cpu_count() or 1
    from gpt import get_config
    from gpt.threads import threads_for

    return threads_for(get_config(preset))


def torch_thread_counts(preset, args) -> list:
    """PyTorch's thread counts to try: --threads alone if given; else the programs' choice and, on
    the CPU, the other end (1 or every core), so PyTorch is reported at its faster count."""
    chosen = threads_of(preset, args)
    if args.threads or args.backend != "numpy":
        return [chosen]
    return sorted({chosen, 1, os.cpu_count() or 1})


def _alternate(preset, steps, repeats, args, with_torch):
    """Measure every path `repeats` times, alternating, and keep each one's median run: the speed
    of a shared machine drifts, and alternating exposes all to the same drift.  PyTorch runs at each
    of torch_thread_counts; its faster count's median is kept (and the count recorded)."""
    ours, op_by_op, reference = [], [], []
    theirs = {n: [] for n in torch_thread_counts(preset, args)}
    common = (preset, steps, args.backend, threads_of(preset, args), args.tf32)
    for _ in range(repeats):
        ours.append(run_worker("tensorgrad", *common, system_malloc=args.system_malloc))
        if args.op_by_op:
            op_by_op.append(run_worker("tensorgrad", *common, path="op-by-op", system_malloc=args.system_malloc))
        if args.reference:
            reference.append(run_worker("tensorgrad", *common, path="reference", system_malloc=args.system_malloc))
        if with_torch:
            for n in theirs:
                theirs[n].append(run_worker("torch", preset, steps, args.backend, n, args.tf32,
                                            system_malloc=args.system_malloc))  # fmt: skip

    def median_run(runs):
        runs = sorted((r for r in runs if r), key=lambda r: r["ms"])
        return runs[len(runs) // 2] if runs else None

    torch_runs = [dict(run, threads=n) for n, runs in theirs.items() if (run := median_run(runs))]
    fastest_torch = min(torch_runs, key=lambda r: r["ms"]) if torch_runs else None
    return median_run(ours), median_run(op_by_op), median_run(reference), fastest_torch


# ----------------------------------------------------------------------------- per-op timings
def _median_ms(fn, clock, repeats=5):
    """Median time of fn() in ms (by `clock`), after one warm-up call."""
    clock(fn)
    return statistics.median(clock(fn) for _ in range(repeats))


def op_table(backend_name, with_torch, repeats, reference=True):
    """Forward and backward of the big ops at the large model's sizes, ours (kernels, then the
    reference ops) against PyTorch's."""
    import numpy as np

    import tensorgrad as tg
    from tensorgrad.nn import functional as F

    device = "cuda" if backend_name == "cupy" else "cpu"
    B, T, C, H, V = 64, 256, 384, 6, 65
    rng = np.random.default_rng(0)

    def arr(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    x, w, b = arr(B, T, C), arr(4 * C, C) * 0.05, arr(4 * C)
    q, k, v = arr(B, H, T, C // H), arr(B, H, T, C // H), arr(B, H, T, C // H)
    logits, targets = arr(B * T, V), rng.integers(0, V, B * T)
    lnw, lnb = arr(C), arr(C)
    mask = np.tril(np.ones((T, T), dtype=bool))
    cases = {
        "linear 384->1536": (lambda t: F.linear(t[0], t[1], t[2]), [x, w, b]),
        "attention (sdpa)": (lambda t: F.scaled_dot_product_attention(t[0], t[1], t[2], attn_mask=t[3]),
                             [q, k, v, mask]),
        "softmax (B,H,T,T)": (lambda t: F.softmax(t[0], dim=-1), [arr(B, H, T, T)]),
        "layernorm": (lambda t: F.layer_norm(t[0], (C,), t[1], t[2]), [x, lnw, lnb]),
        "cross-entropy": (lambda t: F.cross_entropy(t[0], t[1]), [logits, targets]),
    }  # fmt: skip

    rows = []
    for name, (fn, inputs) in cases.items():
        ours = [tg.tensor(a, device=device, requires_grad=a.dtype == np.float32) for a in inputs]
        out = fn(ours)
        g = tg.tensor(np.ones(out.shape, np.float32) / out.numel(), device=device)
        clock = _clock("tensorgrad", device)
        row = [name]
        for path in ("kernels", "reference") if reference else ("kernels",):
            with tg.kernels.reference() if path == "reference" else contextlib.nullcontext():
                fwd = _median_ms(lambda: fn(ours), clock, repeats)
                both = _median_ms(lambda: fn(ours).backward(g), clock, repeats)
            row += [fwd, both - fwd]
        if with_torch:
            import torch
            import torch.nn.functional as TF

            tdev = "cuda" if device == "cuda" else "cpu"
            tfns = {
                "linear 384->1536": lambda t: TF.linear(t[0], t[1], t[2]),
                "attention (sdpa)": lambda t: TF.scaled_dot_product_attention(t[0], t[1], t[2], attn_mask=t[3]),
                "softmax (B,H,T,T)": lambda t: TF.softmax(t[0], dim=-1),
                "layernorm": lambda t: TF.layer_norm(t[0], (C,), t[1], t[2]),
                "cross-entropy": lambda t: TF.cross_entropy(t[0], t[1]),
            }
            theirs = [torch.tensor(a, device=tdev, requires_grad=a.dtype == np.float32) for a in inputs]
            tg_out = tfns[name](theirs)
            tgrad = torch.ones_like(tg_out) / tg_out.numel()
            tclock = _clock("torch", tdev)
            tfwd = _median_ms(lambda: tfns[name](theirs), tclock, repeats)
            tboth = _median_ms(lambda: tfns[name](theirs).backward(tgrad), tclock, repeats)
            row += [tfwd, tboth - tfwd]
        rows.append(row)
    return rows


def adamw_row(backend_name, with_torch, repeats, reference=True):
    """One AdamW step over the large model's 10.8M parameters (kernel, reference)."""
    import tensorgrad as tg
    from gpt import build_model

    device = "cuda" if backend_name == "cupy" else "cpu"
    model = build_model("large").to(device)
    for p in model.parameters():
        p.grad = tg.ones_like(p) * 1e-3
    opt = tg.optim.AdamW(model.parameters(), lr=3e-4)

    clock = _clock("tensorgrad", device)
    row = ["AdamW step (10.8M params)", _median_ms(opt.step, clock, repeats), 0.0]
    if reference:
        with tg.kernels.reference():
            row += [_median_ms(opt.step, clock, repeats), 0.0]
    if with_torch:
        import torch

        from benchmarks.torch_gpt import build_torch_model
        from gpt import get_config

        tdev = "cuda" if device == "cuda" else "cpu"
        tm = build_torch_model(get_config("large")).to(tdev)
        for p in tm.parameters():
            p.grad = torch.full_like(p, 1e-3)
        topt = torch.optim.AdamW(tm.parameters(), lr=3e-4)
        row += [_median_ms(topt.step, _clock("torch", tdev), repeats), 0.0]
    return row


# ----------------------------------------------------------------------------- the engine's own cost
def engine_row(backend_name, with_torch, ops=40, chains=500, repeats=5):
    """What the engine costs per op, apart from the math: forward and backward of a chain of `ops`
    multiplies of 4 x 4 tensors (each by its own leaf), in microseconds per op.  The arrays are too
    small for the math to count, so this is the Python (tensorgrad) or C++ (PyTorch) around each op:
    the call, the graph node, the backward walk and the gradients' accumulation."""
    device = "cuda" if backend_name == "cupy" else "cpu"

    def per_op_us(lib, sync):
        weights = [lib.randn(4, 4, device=device, requires_grad=True) for _ in range(ops)]
        x0 = lib.randn(4, 4, device=device)

        def chains_run():
            for _ in range(chains):
                x = x0
                for w in weights:
                    x = x * w
                x.sum().backward()
                for w in weights:
                    w.grad = None
            sync()

        chains_run()  # warm-up
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            chains_run()
            times.append(time.perf_counter() - t)
        return 1e6 * statistics.median(times) / (chains * ops)

    import tensorgrad as tg

    row = [per_op_us(tg, lambda: tg.cuda.synchronize() if device == "cuda" else None)]
    if with_torch:
        import torch

        row.append(per_op_us(torch, lambda: torch.cuda.synchronize() if device == "cuda" else None))
    return row


def _ms(ms: float) -> str:
    """A step's milliseconds: two decimals under 10 ms (a tenth of `small`'s 1.6 ms is 6%), else one."""
    return f"{ms:.2f}" if ms < 10 else f"{ms:.1f}"


# ----------------------------------------------------------------------------- generation
def generation_row(preset, backend_name, with_torch, tokens):
    import tensorgrad as tg
    from gpt import build_model, get_config

    device = "cuda" if backend_name == "cupy" else "cpu"
    tg.manual_seed(0)
    model = build_model(preset).to(device)
    idx = tg.zeros(1, 1, dtype=tg.long, device=device)
    t = time.perf_counter()
    model.generate(idx, tokens)
    _sync(backend_name)
    ours = time.perf_counter() - t
    row = [f"generate {tokens} tokens ({preset})", 1000 * ours]
    if with_torch:
        import torch
        from torch.nn import functional as TF

        from benchmarks.torch_gpt import build_torch_model

        tdev = "cuda" if device == "cuda" else "cpu"
        config = get_config(preset)
        tm = build_torch_model(config).to(tdev).eval()
        tidx = torch.zeros(1, 1, dtype=torch.long, device=tdev)
        t = time.perf_counter()
        with torch.no_grad():
            for _ in range(tokens):
                logits, _ = tm(tidx[:, -config.block_size :])
                probs = TF.softmax(logits[:, -1, :], dim=-1)
                tidx = torch.cat((tidx, torch.multinomial(probs, 1)), dim=1)
        if tdev == "cuda":
            torch.cuda.synchronize()
        row.append(1000 * (time.perf_counter() - t))
    return row


def blas_report() -> str:
    """Which BLAS NumPy loaded and which of its kernels runs (threadpoolctl), and the variables that
    force another kernel (OPENBLAS_CORETYPE makes OpenBLAS run e.g. its Haswell kernel on AVX-512)."""
    import numpy  # noqa: F401  (loads the BLAS library)

    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "BLAS: (threadpoolctl not installed: pip install threadpoolctl to name the BLAS kernel)"
    libs = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    found = ", ".join(
        f"{i.get('internal_api')} {i.get('version')} kernel {i.get('architecture')} ({i.get('num_threads')} threads)"
        for i in libs
    )
    forced = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}
    return f"BLAS: {found or 'none found'}" + (f"; forced by {forced}" if forced else "")


# ----------------------------------------------------------------------------- main
def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--presets", nargs="+", default=["small", "large"])
    p.add_argument("--steps", type=int, default=None, help="timed steps (default: 200 small, 5 large)")
    p.add_argument("--backend", choices=["numpy", "cupy"], default="numpy")
    p.add_argument("--repeats", type=int, default=None, help="alternating runs per preset (default: 5, large 1)")
    p.add_argument("--threads", type=int, default=None,
                   help="CPU threads of both frameworks (default: the training programs' choice per preset)")
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--skip", nargs="*", default=[], choices=["steps", "ops", "engine", "generate"])
    p.add_argument("--gen-tokens", type=int, default=500)
    p.add_argument("--tf32", action="store_true", help="GPU: TF32 matmuls in both frameworks")
    p.add_argument("--no-reference", dest="reference", action="store_false",
                   help="skip tensorgrad's reference path (TENSORGRAD_KERNELS=reference)")
    p.add_argument("--no-op-by-op", dest="op_by_op", action="store_false",
                   help="skip the op-by-op path (the model's code on the fused kernels, --fused off)")
    p.add_argument("--system-malloc", action="store_true",
                   help="CPU: leave glibc's malloc as it is (the training programs call "
                        "tg.host_memory.keep_freed_memory(); by default every bench process does too)")
    p.add_argument("--worker", choices=["tensorgrad", "torch"], help=argparse.SUPPRESS)
    p.add_argument("--path", choices=["kernels", "op-by-op", "reference"], default="kernels", help=argparse.SUPPRESS)
    args = p.parse_args()
    keep_freed_memory(args.backend, args.system_malloc)

    if args.worker:
        preset = args.presets[0]
        if args.worker == "tensorgrad":
            out = worker_tensorgrad(preset, args.steps, args.backend, args.threads, args.tf32, args.path)
        else:
            out = worker_torch(preset, args.steps, args.backend, args.threads, args.tf32)
        print(json.dumps(out))
        return

    # Not imported here: the step workers are forked from this process and a child's max RSS
    # starts at its parent's (Linux keeps ru_maxrss across exec), so this process stays small.
    with_torch = not args.no_torch and importlib.util.find_spec("torch") is not None
    if not args.no_torch and not with_torch:
        print("(PyTorch is not installed: printing tensorgrad's figures only)")

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, NumPy {_version('numpy')}"
          + (f", PyTorch {_version('torch')}" if with_torch else "")
          + f"; backend {args.backend}")  # fmt: skip
    print(blas_report())
    if args.backend == "numpy":
        print("host memory: " + ("glibc's default malloc (--system-malloc)" if args.system_malloc else
              "freed blocks kept for reuse in every process, PyTorch's too (tg.host_memory.keep_freed_memory(), "
              "as the training programs do)"))

    if "steps" not in args.skip:
        print("\nTraining step (forward + backward + AdamW), float32, median ms/step")
        if args.backend == "cupy":  # what each GPU figure measures
            print(f"On the GPU{' with TF32 matmuls in both' if args.tf32 else ''}: times from CUDA events; PyTorch "
                  "runs the lecture's model (one Head module per head); GEMM floor: the step's matmul FLOPs at "
                  "this GPU's measured 4096^3 GEMM rate; peak MB: CuPy's memory pool's peak in use over a step, "
                  "and torch.cuda.max_memory_allocated()")  # fmt: skip
        else:
            print("GEMM floor: the step's matmul FLOPs at NumPy's GEMM rate measured in the worker, on the large "
                  "model's biggest product; peak MB: each process's max RSS")  # fmt: skip
        print("tensorgrad: the default path (the fused GPT where it accepts the model); op by op: the lecture's "
              "code on the fused kernels (--fused off); PyTorch at its faster thread count (threads column: ours / "
              "PyTorch's)")  # fmt: skip
        print("| preset | threads | tensorgrad ms/step | PyTorch ms/step | ratio | GEMM floor ms | step / floor "
              "| tensorgrad peak MB | PyTorch peak MB | op by op ms/step | op by op / tensorgrad "
              "| reference ops ms/step | reference / tensorgrad |")  # fmt: skip
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        rates = []  # the GPU's measured GEMM rate, per preset's worker
        for preset in args.presets:
            steps = args.steps or (200 if preset != "large" else 5)
            repeats = args.repeats or (5 if preset != "large" else 1)
            ours, op_by_op, reference, theirs = _alternate(preset, steps, repeats, args, with_torch)
            if ours is None:
                continue
            r_ms = _ms(reference["ms"]) if reference else "-"
            r_ratio = f"{reference['ms'] / ours['ms']:.2f}" if reference else "-"
            o_ms = _ms(op_by_op["ms"]) if op_by_op else "-"
            o_ratio = f"{op_by_op['ms'] / ours['ms']:.2f}" if op_by_op else "-"
            floor = ours["floor_ms"]
            rates.append(ours.get("gemm_tflops"))
            t_ms = _ms(theirs["ms"]) if theirs else "-"
            ratio = f"{ours['ms'] / theirs['ms']:.3f}" if theirs else "-"  # (three digits: the targets are 0.2x ...)
            t_mb = f"{theirs['peak_mb']:.0f}" if theirs else "-"
            threads = f"{threads_of(preset, args)}" + (f" / {theirs['threads']}" if theirs else "")
            print(f"| {preset} | {threads} | {_ms(ours['ms'])} | {t_ms} | {ratio} | {_ms(floor)} "
                  f"| {ours['ms'] / floor:.2f} "
                  f"| {ours['peak_mb']:.0f} | {t_mb} | {o_ms} | {o_ratio} "
                  f"| {r_ms} | {r_ratio} |", flush=True)  # fmt: skip
        if any(rates):
            print(f"(GEMM rate measured on this GPU: {max(r for r in rates if r):.1f} TFLOP/s)")

    if args.backend == "cupy" and args.tf32 and ("ops" not in args.skip or "generate" not in args.skip):
        import tensorgrad as tg  # the ops and generation run in this process: TF32 here too, in both

        tg.cuda.allow_tf32()
        if with_torch:
            import torch

            torch.backends.cuda.matmul.allow_tf32 = True

    if "ops" not in args.skip:
        print("\nOps at the large model's sizes (B=64, T=256, C=384, 6 heads), median ms")
        head = "| op | tensorgrad fwd | tensorgrad bwd |"
        head += " reference fwd | reference bwd |" if args.reference else ""
        head += " PyTorch fwd | PyTorch bwd |" if with_torch else ""
        print(head)
        print("|---" * (head.count("|") - 1) + "|")
        rows = op_table(args.backend, with_torch, 5, args.reference)
        rows.append(adamw_row(args.backend, with_torch, 5, args.reference))
        for row in rows:
            print("| " + row[0] + " | " + " | ".join(f"{v:.1f}" for v in row[1:]) + " |", flush=True)

    if "engine" not in args.skip:
        print("\nThe engine's cost per op: forward + backward of a chain of 40 multiplies of 4 x 4 tensors, "
              "median us per op")
        print("| tensorgrad |" + (" PyTorch |" if with_torch else ""))
        print("|---:|" + ("---:|" if with_torch else ""))
        print("| " + " | ".join(f"{v:.1f}" for v in engine_row(args.backend, with_torch)) + " |", flush=True)

    if "generate" not in args.skip:
        print(f"\nGeneration, {args.gen_tokens} tokens, batch 1, ms")
        print("| what | tensorgrad |" + (" PyTorch |" if with_torch else ""))
        print("|---|---:|" + ("---:|" if with_torch else ""))
        for preset in args.presets:
            row = generation_row(preset, args.backend, with_torch, args.gen_tokens)
            print("| " + row[0] + " | " + " | ".join(f"{v:.0f}" for v in row[1:]) + " |", flush=True)


if __name__ == "__main__":
    main()
    if _failed:
        sys.exit(f"failed: {', '.join(_failed)}")
