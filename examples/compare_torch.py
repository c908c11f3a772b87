"""Train tensorgrad and the lecture's PyTorch model side by side, step by step.

    python examples/compare_torch.py --preset small --max-iters 500
    python examples/compare_torch.py --preset small --max-iters 500 --dtype float64   # agree to ~1e-12

Both start from the same weights (tensorgrad's initialisation, copied into the PyTorch twin of
benchmarks/torch_gpt.py), see the same batches in the same order (drawn once, handed to both),
use AdamW with the same hyperparameters, and run with dropout off (the two libraries draw
different masks).  At each evaluation both models are scored on the same evaluation batches;
the script prints both losses and their difference, then the largest difference of the run
(training loss per step, evaluation losses, and the weights at the end), and draws both training
curves and their difference in one PNG.

Needs PyTorch (`pip install -e ".[torch]"`) and, for the PNG, matplotlib.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import tensorgrad as tg  # noqa: E402
from gpt import build_model, get_config  # noqa: E402
from gpt.cli.common import DATA_HELP, ArgumentParser, in_flags  # noqa: E402
from gpt.config import PRESETS  # noqa: E402
from gpt.data import DataError, ShakespeareData  # noqa: E402


def parse_args(argv=None):
    p = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", default="small", choices=list(PRESETS), help="a stage of the lecture (default small)")
    p.add_argument("--max-iters", type=int, default=500, help="training steps (default 500)")
    p.add_argument("--eval-interval", type=int, default=None, help="steps between evaluations (default max-iters/10)")
    p.add_argument("--eval-iters", type=int, default=20, help="batches per split in each evaluation (default 20)")
    p.add_argument("--batch-size", type=int, default=None, help="override the preset's batch size")
    p.add_argument("--dtype", default="float32", choices=["float32", "float64"], help="both models' dtype")
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--out", default="compare_torch.png", help="the PNG of both curves ('' for none)")
    p.add_argument("--torch-threads", type=int, default=1,
                   help="PyTorch's threads (default 1: its pool and tensorgrad's BLAS threads contend otherwise)")
    p.add_argument("--data", default=None, help=DATA_HELP)
    args = p.parse_args(argv)
    for flag in ("max_iters", "eval_iters", "eval_interval", "batch_size", "torch_threads"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            p.error(f"--{flag.replace('_', '-')} {value}: must be an integer >= 1")
    if args.out:
        args.out = plot_path(args.out)
        folder = Path(args.out).resolve().parent
        if not folder.is_dir() or not os.access(folder, os.W_OK):
            p.error(f"--out {args.out}: cannot write in {folder} (no such directory, or not writable)")
    return args


def plot_path(out: str) -> str:
    """The file the plot goes to: matplotlib adds ".png" to a name without a suffix, so say so."""
    return out if Path(out).suffix else out + ".png"


def evaluate(model, twin, batches, torch) -> tuple[float, float]:
    """The mean loss of both models over the same batches, in eval mode (dropout off)."""
    model.eval()
    twin.eval()
    ours, theirs = [], []
    with tg.no_grad(), torch.no_grad():
        for x, y in batches:
            ours.append(model(tg.tensor(x), tg.tensor(y))[1].item())
            theirs.append(twin(torch.from_numpy(x), torch.from_numpy(y))[1].item())
    model.train()
    twin.train()
    return float(np.mean(ours)), float(np.mean(theirs))


def run(args, torch, log=print) -> dict:
    from benchmarks.torch_gpt import build_torch_model, copy_weights_to_torch  # noqa: PLC0415

    data = ShakespeareData.load(args.data)
    overrides = {"dropout": 0.0, "vocab_size": data.tokenizer.vocab_size}
    if args.batch_size is not None:
        overrides["batch_size"] = args.batch_size
    config = get_config(args.preset, **overrides)
    data.check_block_size(config.block_size)  # a corpus too short for one block: one line, before any work
    interval = args.eval_interval or max(1, args.max_iters // 10)
    tg.manual_seed(args.seed)
    torch.manual_seed(args.seed)
    model = build_model(config, vocab_size=config.vocab_size)
    dtype = {"float32": (tg.float32, torch.float32), "float64": (tg.float64, torch.float64)}[args.dtype]
    twin = copy_weights_to_torch(model, build_torch_model(config), dtype=dtype[1])
    model.to(dtype[0])
    opt = tg.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    topt = torch.optim.AdamW(twin.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    n_params = sum(p.numel() for p in model.parameters())
    log(f"{args.preset}: {n_params:,} parameters, {args.dtype}, batch {config.batch_size} x {config.block_size}, "
        f"lr {config.learning_rate}, dropout off, {args.max_iters} steps")  # fmt: skip

    def batch(split, size):
        x, y = data.get_batch(split, config.block_size, size)
        return x.numpy(), y.numpy()

    steps, ours, theirs, evals = [], [], [], []
    t_ours = t_theirs = 0.0
    log(f"{'step':>6} {'split':>5} {'tensorgrad':>11} {'pytorch':>11} {'difference':>11}")
    for step in range(args.max_iters + 1):
        if step % interval == 0 or step == args.max_iters:
            row = {"step": step}
            for split in ("train", "val"):
                a, b = evaluate(model, twin, [batch(split, config.batch_size) for _ in range(args.eval_iters)], torch)
                row[split] = (a, b)
                log(f"{step:>6} {split:>5} {a:>11.6f} {b:>11.6f} {a - b:>+11.2e}")
            evals.append(row)
        if step == args.max_iters:
            break
        x, y = batch("train", config.batch_size)
        t = time.perf_counter()
        _, loss = model(tg.tensor(x), tg.tensor(y))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        t_ours += time.perf_counter() - t
        t = time.perf_counter()
        _, tloss = twin(torch.from_numpy(x), torch.from_numpy(y))
        topt.zero_grad(set_to_none=True)
        tloss.backward()
        topt.step()
        t_theirs += time.perf_counter() - t
        steps.append(step)
        ours.append(loss.item())
        theirs.append(tloss.item())
        if not (math.isfinite(ours[-1]) and math.isfinite(theirs[-1])):
            raise FloatingPointError(f"step {step}: a loss is not finite (tensorgrad {ours[-1]}, pytorch {theirs[-1]})")

    tw = dict(twin.named_parameters())
    weight_diff = max(float(np.max(np.abs(p.numpy() - tw[n].detach().numpy()))) for n, p in model.named_parameters())
    result = {
        "steps": steps, "ours": ours, "theirs": theirs, "evals": evals,
        "max_step_diff": max(abs(a - b) for a, b in zip(ours, theirs)),
        "max_eval_diff": max(abs(r[s][0] - r[s][1]) for r in evals for s in ("train", "val")),
        "max_weight_diff": weight_diff,
        "ms_per_step": (1000 * t_ours / len(steps), 1000 * t_theirs / len(steps)),
    }  # fmt: skip
    log(f"max |difference|: training loss {result['max_step_diff']:.2e} (per step), "
        f"evaluation loss {result['max_eval_diff']:.2e}, weights after the last step {weight_diff:.2e}")  # fmt: skip
    log(f"time per step: tensorgrad {result['ms_per_step'][0]:.1f} ms, "
        f"pytorch {result['ms_per_step'][1]:.1f} ms on {args.torch_threads} thread(s)")  # fmt: skip
    return result


def plot(result, path, title):
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True, height_ratios=(3, 1))
    top.plot(result["steps"], result["ours"], label="tensorgrad (train, per step)", lw=1)
    top.plot(result["steps"], result["theirs"], label="PyTorch (train, per step)", lw=1, ls="--")
    ev = result["evals"]
    top.plot([r["step"] for r in ev], [r["val"][0] for r in ev], "o-", ms=4, label="tensorgrad (val)")
    top.plot([r["step"] for r in ev], [r["val"][1] for r in ev], "x--", ms=6, label="PyTorch (val)")
    top.set_ylabel("loss")
    top.set_title(title)
    top.legend()
    diff = [abs(a - b) for a, b in zip(result["ours"], result["theirs"])]
    floor = min([d for d in diff if d > 0], default=1e-16) / 10  # equal losses are drawn here, on the axis
    bottom.semilogy(result["steps"], [max(d, floor) for d in diff], ".-", ms=3, lw=0.5, color="C3")
    bottom.set_ylim(bottom=floor / 2)
    bottom.set_ylabel("|train difference|")
    bottom.set_xlabel("step")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        print('error: this comparison needs PyTorch: pip install -e ".[torch]"', file=sys.stderr)
        return 2
    threads = torch.get_num_threads()
    torch.set_num_threads(args.torch_threads)
    try:
        result = run(args, torch)
    except (DataError, FloatingPointError, ValueError) as e:
        print(f"error: {in_flags(e)}", file=sys.stderr)  # the library's argument names as this script's flags
        return 2
    finally:
        torch.set_num_threads(threads)  # as it was (main may be called from other code)
    if args.out:
        try:
            plot(result, args.out, f"{args.preset}, {args.dtype}: tensorgrad and PyTorch from the same weights")
            print(f"drew {args.out}")
        except ImportError:
            print("(no plot: pip install matplotlib)", file=sys.stderr)
        except OSError as e:
            print(f"error: --out {args.out}: {e.strerror or e}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
