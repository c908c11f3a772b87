"""How many CPU threads a training run should use, chosen from the size of its matrix products.

A second thread speeds up a product only when the product is large enough to pay for waking it.
The `small` preset's biggest product, the FFN's (256 tokens x 32) @ (32 x 128), is 2 MFLOP, and its
step is mostly Python: there the BLAS and kernel threads only spin beside the main thread, and on
a machine with other work they take turns with it, which made the default run 2-4x slower
(docs/results.md, "Threads"). The `large` preset's products are 19 GFLOP each, and every core helps.
The evaluations of a model that runs as the fused GPT use every core (eval_threads_for), or run
beside the steps on a core they leave idle (evals_beside).
"""

from __future__ import annotations

import contextlib
import os

import tensorgrad as tg

from .config import GPTConfig

PARALLEL_FLOPS = 2**26  # a product below this many FLOPs (64M) runs on one thread faster than on many


def largest_product_flops(config: GPTConfig) -> int:
    """FLOPs of the step's largest matrix product: the FFN's first Linear, (B*T, C) @ (C, 4C), or
    the language-model head (B*T, C) @ (C, vocab), or the bigram's table lookup (none)."""
    tokens = config.batch_size * config.block_size
    if config.kind == "bigram":
        return 0
    width = {"none": config.n_embd, "single": config.n_embd, "mlp": 4 * config.n_embd}[config.ffn]
    return 2 * tokens * config.n_embd * max(width, config.vocab_size, 3 * config.n_embd)


def cpu_cores() -> int:
    """The CPU cores this process may run on (logical ones): os.process_cpu_count where Python has it
    (3.13), else the scheduler's affinity set (Linux: `taskset`, a container's cpuset), else
    os.cpu_count, every core of the machine, which a program limited to fewer would overfill."""
    counted = getattr(os, "process_cpu_count", None)
    if counted is not None:
        return counted() or 1
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        return len(affinity(0)) or 1
    return os.cpu_count() or 1


def threads_for(config: GPTConfig, cores: int | None = None) -> int:
    """1 for a model whose products are too small to split, else every core."""
    cores = cores or cpu_cores()
    return cores if largest_product_flops(config) >= PARALLEL_FLOPS else 1


def eval_threads_for(config: GPTConfig, fused: bool, cores: int | None = None) -> int:
    """The evaluations' threads: every core where the model runs as the fused GPT (`fused`, from
    gpt/fused.py's `takes`), else the step's (threads_for).  The fused op runs an evaluation's
    batches (gpt/evaluation.py's EVAL_CHUNK_TOKENS positions at once) in parts, a run of them per
    thread, handed out once per batch: the `small` model's evaluation took 0.17 s on one thread
    and 0.12 s on two (0.17-0.18 s on either beside another busy process: the steps' handoffs,
    one per step, are what made two threads slow there).  Op by op, the evaluation of the smaller stages
    was no faster on two threads: their products are split, their other ops are not."""
    cores = cores or cpu_cores()
    return cores if fused else threads_for(config, cores)


def evals_beside(config: GPTConfig, fused: bool, cores: int | None = None) -> bool:
    """Whether the evaluations run on a thread of their own beside the steps (gpt/train.py's
    eval_beside): where the model runs as the fused GPT (`fused`) and its steps leave a core idle
    (threads_for < cores).  An evaluation's compiled parts hold no lock, so it runs on the idle core
    while the steps go on: the `small` run's 11 evaluations stopped the steps for 0.12-0.13 s each
    on two threads.  Op by op, an evaluation is mostly Python, which runs one thread at a time:
    beside the steps it would slow them by what it saves."""
    cores = cores or cpu_cores()
    return fused and threads_for(config, cores) < cores


@contextlib.contextmanager
def using_threads(n: int | None):
    """tg.set_num_threads(n) inside the block, the count before it after; nothing for None."""
    if n is None:
        yield
        return
    before = tg.get_num_threads()
    tg.set_num_threads(n)
    try:
        yield
    finally:
        tg.set_num_threads(before)
