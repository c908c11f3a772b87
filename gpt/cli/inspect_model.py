"""Look inside a model: gradient norms per parameter after one batch, and the attention
weights of each head for a prompt (as a text heat map).

    tensorgrad-inspect runs/small/best.npz --prompt "thou art"
    tensorgrad-inspect --preset small          # an untrained model

(the same as python examples/inspect_model.py and python -m gpt.cli.inspect_model)
"""

from __future__ import annotations

import argparse

import tensorgrad as tg

from ..checkpoint import load_model, read_config
from ..config import PRESETS, ConfigError, get_config
from ..data import ShakespeareData
from ..memory import available_bytes, estimate_step_bytes
from ..model import build_model, count_parameters
from .common import (
    DATA_HELP,
    ArgumentParser,
    check_checkpoint,
    check_positive,
    check_same_vocabulary,
    check_text,
    command_line,
)

SHADES = " .:-=+*#%@"


def gradient_report(model, data, batch_size=32):
    """The norm of every parameter's gradient after one training batch."""
    xb, yb = data.get_batch("train", model.block_size, batch_size)
    model.zero_grad()
    _, loss = model(xb, yb)
    loss.backward()
    print(f"loss {loss.item():.4f}; gradient norms:")
    for name, p in model.named_parameters():
        g = p.grad
        norm = (g * g).sum().sqrt().item() if g is not None else float("nan")
        pn = (p * p).sum().sqrt().item()
        print(f"  {name:<45} {str(tuple(p.shape)):<12} |grad| {norm:10.3e}   |grad|/|w| {norm / max(pn, 1e-12):.2e}")


@tg.no_grad()
def attention_maps(model, tokenizer, prompt):
    """Each head's (T, T) attention weights for `prompt`, recomputed from its weights."""
    model.eval()
    idx = tg.tensor([tokenizer.encode(prompt[-model.block_size :])], dtype=tg.long)
    T = idx.shape[1]
    x = model.token_embedding_table(idx) + model.position_embedding_table(tg.arange(T))  # (1, T, C)
    chars = [tokenizer.itos[i] for i in idx[0].tolist()]
    for li, block in enumerate(model.blocks):
        h_in = block.ln1(x) if block.ln1 is not None else x
        for hi, head in enumerate(block.sa.heads):
            k, q = head.key(h_in), head.query(h_in)  # (1, T, hs)
            wei = (q @ k.transpose(-2, -1) * head.scale(k.shape[-1], x.shape[-1])).masked_fill(
                head.tril[:T, :T] == 0, float("-inf")
            )
            wei = wei.softmax(-1)[0].numpy()  # (T, T)
            print(f"layer {li} head {hi}   (row: query position, column: key position)")
            print("      " + " ".join(repr(c)[1:-1].ljust(2) for c in chars))
            for t in range(T):
                row = " ".join(SHADES[min(int(w * len(SHADES)), len(SHADES) - 1)] * 2 for w in wei[t])
                print(f"  {repr(chars[t])[1:-1]:>3} {row}")
        x = block(x)


def check_batch_fits(config, batch_size: int, n_params: int):
    """ConfigError when the gradient report's batch would not fit in the memory available (a
    training step's estimate, gpt/memory.py: the operating system would kill it otherwise)."""
    need, available = estimate_step_bytes(config.replace(batch_size=batch_size), n_params), available_bytes()
    if available is not None and need > available:
        raise ConfigError(
            f"--batch-size {batch_size}: the gradient report's batch needs about {need / 2**30:.1f} GB of memory "
            f"(an estimate), and this machine has {available / 2**30:.1f} GB available; use a smaller --batch-size"
        )


@command_line(out_of_memory="use a smaller --batch-size")
def main(argv=None):
    p = ArgumentParser(
        prog="tensorgrad-inspect", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("checkpoint", nargs="?", default=None, help="a checkpoint (default: an untrained --preset)")
    p.add_argument(
        "--preset", choices=list(PRESETS), default=None, help="the untrained model to inspect when no checkpoint "
        "is given (default: small); a checkpoint's model is its own"
    )  # fmt: skip
    p.add_argument("--prompt", default="thou art", help="the text whose attention maps are drawn (at most the block)")
    p.add_argument("--batch-size", type=int, default=32, help="the batch of the gradient report")
    p.add_argument("--data", default=None, help=DATA_HELP)
    args = p.parse_args(argv)
    check_checkpoint(args.checkpoint)
    if args.checkpoint is not None and args.preset is not None:  # the model is read, not built from a preset
        raise ConfigError(
            f"--preset {args.preset}: the model is the checkpoint's ({args.checkpoint}), whatever its preset; give "
            "--preset without a checkpoint (an untrained model), or leave it out"
        )
    check_positive("--batch-size", args.batch_size)
    if not args.prompt:
        check_text("--prompt", args.prompt, None)
    if args.checkpoint is not None:
        model, tokenizer, ckpt = load_model(args.checkpoint)
        config = read_config(ckpt, args.checkpoint)
    data = ShakespeareData.load(args.data)
    if args.checkpoint is None:
        tg.manual_seed(0)
        config = get_config(args.preset or "small", vocab_size=data.tokenizer.vocab_size)
        model, tokenizer = build_model(config, vocab_size=config.vocab_size), data.tokenizer
    check_batch_fits(config, args.batch_size, count_parameters(model))
    maps = hasattr(model, "blocks")  # a bigram model has no attention to draw
    check_text("--prompt", args.prompt, tokenizer, block_size=model.block_size if maps else None)  # all of it drawn
    check_same_vocabulary(args.checkpoint, tokenizer, data.tokenizer)
    data.check_block_size(model.block_size)
    gradient_report(model, data, args.batch_size)
    if maps:
        attention_maps(model, tokenizer, args.prompt)


if __name__ == "__main__":
    main()
