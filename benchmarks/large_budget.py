"""The `large` step's budget at 1.2x its GEMM floor: what its products and its attention take alone.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/large_budget.py
    python benchmarks/large_budget.py --repeats 3 --no-torch      # quicker, without PyTorch's attention

The bench's `large` target is a step within 1.2x its GEMM floor (the step's matmul FLOPs at the
rate NumPy runs the model's largest product, `benchmarks/bench.py`).  This script measures, in one
process and one hour, the pieces that budget must hold, each alone at the `large` preset's shapes
(batch 64 x 256 positions, 384 channels, 6 heads of 64, 6 layers, dropout 0.2, float32, every core):

- the floor and 1.2x it;
- the step's products: each `Linear` of a block (query-key-value 384 -> 1152, projection 384 -> 384
  with its bias, the feed-forward's 384 -> 1536 and 1536 -> 384 with theirs) forward and backward
  through `tg.nn.functional.linear` on the default kernels, times the 6 layers, and the head's;
- the attention: `tg.nn.functional.packed_self_attention` (the model's op: flash on the heads in
  place) forward and backward, times the 6 layers; and PyTorch's `scaled_dot_product_attention`,
  forward and backward, at the same shape, in its own process (`benchmarks/bench_attention.py`'s
  worker), times 6; each with the preset's dropout and without (PyTorch's CPU flash kernel takes
  no dropout: with it PyTorch runs its unfused path).

What is left of 1.2x the floor after the products is what the attention, the memory-bound passes
(layer norms, ReLU, dropout, residual adds), AdamW and the Python between ops would have to share.
Each piece is the median of `--repeats` runs after a warm-up.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _median_ms(fn, repeats):
    fn()  # warm-up (and compilation)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def _linear_ms(tg, n, fan_in, fan_out, bias, repeats):
    """One Linear's forward + backward on `n` positions, every input requiring grad (as in the step)."""
    x = tg.randn(n, fan_in, requires_grad=True)
    w = tg.randn(fan_out, fan_in, requires_grad=True)
    b = tg.randn(fan_out, requires_grad=True) if bias else None
    g = tg.randn(n, fan_out)

    def run():
        tg.nn.functional.linear(x, w, b).backward(g)
        x.grad = w.grad = None
        if b is not None:
            b.grad = None

    return _median_ms(run, repeats)


def _attention_ms(tg, config, dropout, repeats):
    """The model's packed attention, forward + backward, at the preset's shape."""
    B, T, C, H = config.batch_size, config.block_size, config.n_embd, config.n_head
    qkv = tg.randn(B, T, 3 * C, requires_grad=True)
    mask = tg.ones(T, T).tril() != 0
    g = tg.randn(B, T, C)

    def run():
        out = tg.nn.functional.packed_self_attention(qkv, H, attn_mask=mask, dropout_p=dropout, scale=(C // H) ** -0.5)
        out.backward(g)
        qkv.grad = None

    return _median_ms(run, repeats)


def _torch_attention_ms(config, dropout, threads, repeats):
    """PyTorch's scaled_dot_product_attention, forward + backward, in its own process."""
    B, T, C, H = config.batch_size, config.block_size, config.n_embd, config.n_head
    cmd = [sys.executable, str(ROOT / "benchmarks" / "bench_attention.py"), "--repeats", str(repeats), "--worker",
           "torch", str(B * H), str(T), str(C // H), str(dropout), str(threads)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if done.returncode:
        print(done.stderr[-2000:], file=sys.stderr)
        return float("nan")
    return json.loads(done.stdout.strip().splitlines()[-1])["ms"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--no-torch", action="store_true", help="leave out PyTorch's attention")
    args = p.parse_args()

    import tensorgrad as tg
    from benchmarks.bench import _cpu_gemm_rate, blas_report, step_flops
    from gpt import get_config

    tg.host_memory.keep_freed_memory()  # as the training programs and the bench
    config = get_config("large")
    threads = tg.get_num_threads()
    tg.set_num_threads(threads)  # every core, as the training programs choose for `large`
    tg.manual_seed(0)
    print(blas_report())
    N, C, L = config.batch_size * config.block_size, config.n_embd, config.n_layer
    floor = 1e3 * step_flops(config) / _cpu_gemm_rate()
    linears = {  # name: (fan_in, fan_out, bias, count per step)
        "query-key-value 384 -> 1152": (C, 3 * C, False, L),
        "projection 384 -> 384": (C, C, True, L),
        "feed-forward 384 -> 1536": (C, 4 * C, True, L),
        "feed-forward 1536 -> 384": (4 * C, C, True, L),
        "head 384 -> 65": (C, config.vocab_size, True, 1),
    }
    rows = []
    products = 0.0
    for name, (fan_in, fan_out, bias, count) in linears.items():
        ms = _linear_ms(tg, N, fan_in, fan_out, bias, args.repeats)
        rows.append((f"Linear {name}, forward + backward, x {count}", ms * count))
        products += ms * count
    dropouts = (config.dropout, 0.0)
    attention = {p: _attention_ms(tg, config, p, args.repeats) * L for p in dropouts}
    torch_attention = {} if args.no_torch else {p: _torch_attention_ms(config, p, threads, args.repeats) * L
                                                for p in dropouts}  # fmt: skip

    print(f"`large` step's pieces alone: batch {config.batch_size} x {config.block_size}, {threads} threads, "
          f"median of {args.repeats}, ms per step")  # fmt: skip
    print("| piece | ms per step | / GEMM floor |")
    print("|---|---:|---:|")
    for name, ms in [("GEMM floor (the step's matmul FLOPs at NumPy's rate)", floor), ("the target: 1.2x the floor",
                     1.2 * floor)] + rows + [("all the products", products)]:  # fmt: skip
        print(f"| {name} | {ms:,.0f} | {ms / floor:.2f} |")
    left = 1.2 * floor - products
    print(f"| left of the target after the products | {left:,.0f} | {left / floor:.2f} |")
    for who, times in (("tensorgrad (packed, flash)", attention), ("PyTorch's scaled_dot_product_attention",
                       torch_attention)):  # fmt: skip
        for p, ms in times.items():
            print(f"| attention alone, {who}, dropout {p}, x {L} | {ms:,.0f} | {ms / floor:.2f} |")


if __name__ == "__main__":
    main()
