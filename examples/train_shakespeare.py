"""Train a GPT of "Let's build GPT" on Tiny Shakespeare with tensorgrad.

    python examples/train_shakespeare.py                       # preset small, NumPy, minutes on a CPU
    python examples/train_shakespeare.py --backend cupy --preset large
    python examples/train_shakespeare.py --preset ffn --max-iters 2000 --lr 3e-3
    python examples/train_shakespeare.py --out-dir runs/small --resume

Prints the parameter count, `step N: train loss X, val loss Y` at each evaluation, a progress
line with ETA and tokens/s, and at the end the val loss beside the reference run's, and a sample.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

import tensorgrad as tg  # noqa: E402
from gpt import PRESETS, ShakespeareData, get_config  # noqa: E402
from gpt.data import DataError  # noqa: E402
from gpt.train import TrainingDiverged, train  # noqa: E402

OVERRIDES = {  # flag -> config field
    "batch_size": int, "block_size": int, "n_embd": int, "n_head": int, "n_layer": int, "dropout": float,
    "max_iters": int, "lr": float, "eval_interval": int, "eval_iters": int, "weight_decay": float,
}  # fmt: skip


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=["numpy", "cupy"], default="numpy", help="numpy (CPU) or cupy (NVIDIA GPU)")
    p.add_argument("--preset", choices=list(PRESETS), default="small", help="the lecture's stage (default: small)")
    for name, typ in OVERRIDES.items():
        p.add_argument("--" + name.replace("_", "-"), type=typ, default=None, help=f"override {name}")
    p.add_argument(
        "--attn-scale",
        choices=["head_size", "n_embd"],
        default=None,
        help="scale attention by head_size ** -0.5 (default) or the video's n_embd ** -0.5",
    )
    p.add_argument("--slow-attention", action="store_true", help="the lecture's loop over heads (for study)")
    p.add_argument("--tf32", action="store_true", help="GPU only: TF32 tensor cores for float32 matmuls (faster)")
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--data", default=None, help="path of input.txt (default: data/tinyshakespeare/input.txt)")
    p.add_argument("--out-dir", default=None, help="where to write checkpoints, log.jsonl and curves.png")
    p.add_argument("--resume", action="store_true", help="continue from OUT_DIR/last.npz")
    p.add_argument("--sample-tokens", type=int, default=500, help="characters to generate at the end")
    p.add_argument("--prompt", default="\n", help="the start of the generated sample")
    return p.parse_args(argv)


def config_from_args(args):
    changes = {}
    for name in OVERRIDES:
        value = getattr(args, name)
        if value is not None:
            changes["learning_rate" if name == "lr" else name] = value
    if args.attn_scale:
        changes["attn_scale"] = args.attn_scale
    if args.slow_attention:
        changes["fast_attention"] = False
    return get_config(args.preset, **changes)


def plot_curves(history, reference, path):
    """train/val curves beside the reference run's logged points; skipped without matplotlib."""
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        print("(matplotlib is not installed: no curves.png; pip install matplotlib)")
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    steps = [h["step"] for h in history]
    ax.plot(steps, [h["train"] for h in history], label="train (tensorgrad)")
    ax.plot(steps, [h["val"] for h in history], label="val (tensorgrad)")
    curve = reference.get("curve") or {}
    if curve:
        ref_steps = sorted(curve)
        # the write-up logs only a few steps: markers, not a line implying a curve between them
        ax.plot(ref_steps, [curve[s][0] for s in ref_steps], "o", label="train (reference run)")
        ax.plot(ref_steps, [curve[s][1] for s in ref_steps], "s", label="val (reference run)")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"curves: {path}")


def main(argv=None):
    args = parse_args(argv)
    device = "cuda" if args.backend == "cupy" else "cpu"
    if args.tf32:
        tg.cuda.allow_tf32()
    config = config_from_args(args)
    try:
        data = ShakespeareData.load(args.data, device=device)
        print(
            f"preset {args.preset} on {args.backend} ({device}); "
            f"{len(data.train):,} train / {len(data.val):,} val characters, vocab {data.tokenizer.vocab_size}"
        )
        result = train(config, data, device=device, seed=args.seed, out_dir=args.out_dir, resume=args.resume)
    except (DataError, tg.DeviceError, TrainingDiverged, FileNotFoundError) as e:
        sys.exit(f"error: {e}")

    ref = config.reference
    final = result.final
    print(f"done in {result.seconds:.1f} s ({result.ms_per_step:.2f} ms/step of training)")
    if final:
        line = f"final val loss {final['val']:.4f}"
        if ref.get("val") is not None:
            line += f"   reference {ref['val']:.4f}   difference {final['val'] - ref['val']:+.4f}"
        print(line)
        print(f"best val loss {result.best_val:.4f} at step {result.best_step}")
    if args.out_dir:
        out = Path(args.out_dir)
        (out / "summary.json").write_text(json.dumps({
            "preset": args.preset, "config": {k: v for k, v in dataclasses.asdict(config).items() if k != "reference"},
            "params": result.params, "final": final, "best_val": result.best_val, "best_step": result.best_step,
            "seconds": result.seconds, "ms_per_step": result.ms_per_step, "reference_val": ref.get("val"),
        }, indent=2))  # fmt: skip
        plot_curves(result.history, ref, out / "curves.png")
    if args.sample_tokens > 0:
        tok = data.tokenizer
        context = tg.tensor([tok.encode(args.prompt)], dtype=tg.long, device=device)
        sample = result.model.generate(context, max_new_tokens=args.sample_tokens)[0]
        print("-" * 60)
        print(tok.decode(sample))


if __name__ == "__main__":
    main()
