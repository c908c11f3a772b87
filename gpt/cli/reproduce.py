"""Train every CPU-sized stage of the lecture (bigram .. small) with its preset and print
our val loss beside the reference run's.

    tensorgrad-reproduce                            # all CPU stages, a few minutes
    tensorgrad-reproduce --stages ffn small --seed 1

(the same as python examples/reproduce.py and python -m gpt.cli.reproduce)
"""

from __future__ import annotations

import argparse
import time

import tensorgrad as tg

from ..config import CPU_STAGES, get_config
from ..data import DataError, ShakespeareData
from ..fused import takes as runs_fused
from ..threads import eval_threads_for, evals_beside, threads_for
from ..train import train
from .common import DATA_HELP, ArgumentParser, check_seed, command_line, device_of, in_flags


def check_blocks_fit(data, configs):
    """DataError before any stage trains unless both splits of the text hold a window of each
    (stage, config)'s block size + 1 (the stage's preset sets it: this program has no --block-size)."""
    for stage, config in configs:
        for name, split in (("train", data.train), ("val", data.val)):
            if len(split) < config.block_size + 1:
                raise DataError(
                    f"the {name} split of {data.path} has {len(split):,} characters; stage {stage} (block size "
                    f"{config.block_size}) needs at least {config.block_size + 1}: use a longer text, or leave {stage} "
                    "out of --stages"
                )


@command_line(out_of_memory="leave the larger stages out of --stages")
def main(argv=None):
    p = ArgumentParser(
        prog="tensorgrad-reproduce", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--stages", nargs="+", default=list(CPU_STAGES), choices=list(CPU_STAGES) + ["large"])
    p.add_argument("--seed", type=int, default=1337, help="random seed, from -2**63 to 2**64 - 1 (default 1337)")
    p.add_argument("--backend", choices=["numpy", "cupy"], default="numpy")
    p.add_argument("--data", default=None, help=DATA_HELP)
    p.add_argument("--max-iters", type=int, default=None, help="override every stage's steps (a quick look)")
    args = p.parse_args(argv)
    check_seed(args.seed)
    changes = {} if args.max_iters is None else {"max_iters": args.max_iters}
    configs = [(stage, get_config(stage, **changes)) for stage in args.stages]
    device = device_of(args.backend)
    if device == "cpu":
        tg.host_memory.keep_freed_memory()  # process-wide, so made here and not by the library: see its docstring
    data = ShakespeareData.load(args.data, device=device)
    check_blocks_fit(data, configs)

    rows = []
    for stage, config in configs:
        threads, eval_threads = threads_for(config), eval_threads_for(config, fused=runs_fused(config))
        beside = device == "cpu" and evals_beside(config, fused=runs_fused(config))
        evals = f", {eval_threads} for the evaluations" if eval_threads != threads else ""
        if beside:
            evals = f", the evaluations on a second one beside the steps, the last on {eval_threads}"
        on_cpu = f" ({threads} CPU thread{'s' if threads > 1 else ''}{evals})" if device == "cpu" else ""
        print(f"== {stage}{on_cpu}", flush=True)
        if device == "cpu":
            tg.set_num_threads(threads)  # process-wide: this program's choice by the stage's products (gpt/threads.py)
        t0 = time.perf_counter()
        result = train(config, data, device=device, seed=args.seed, log=lambda s: print("   ", in_flags(s), flush=True),
                       eval_threads=eval_threads if device == "cpu" else None, eval_beside=beside)  # fmt: skip
        ref = config.reference
        rows.append((stage, result.params, result.final["train"], result.final["val"], ref.get("val"),
                     time.perf_counter() - t0, result.ms_per_step))  # fmt: skip

    print()
    print("| stage | params | train | val | reference val | difference | time | ms/step |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for stage, params, tr, va, ref, secs, ms in rows:
        ref_s = f"{ref:.4f}" if ref is not None else "-"
        diff = f"{va - ref:+.4f}" if ref is not None else "-"
        print(f"| {stage} | {params:,} | {tr:.4f} | {va:.4f} | {ref_s} | {diff} | {secs:.1f} s | {ms:.2f} |")


if __name__ == "__main__":
    main()
