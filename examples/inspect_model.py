"""Look inside a model: gradient norms per parameter after one batch, and the attention
weights of each head for a prompt (as a text heat map).

    python examples/inspect_model.py runs/small/best.npz --prompt "thou art"
    python examples/inspect_model.py --preset small          # an untrained model
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tensorgrad as tg  # noqa: E402
from gpt import ShakespeareData, build_model  # noqa: E402
from gpt.train import load_model  # noqa: E402

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


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", nargs="?", default=None)
    p.add_argument("--preset", default="small")
    p.add_argument("--prompt", default="thou art")
    p.add_argument("--data", default=None)
    args = p.parse_args(argv)
    data = ShakespeareData.load(args.data)
    if args.checkpoint:
        model, tokenizer, _ = load_model(args.checkpoint)
    else:
        tg.manual_seed(0)
        model, tokenizer = build_model(args.preset, vocab_size=data.tokenizer.vocab_size), data.tokenizer
    gradient_report(model, data)
    if hasattr(model, "blocks"):
        attention_maps(model, tokenizer, args.prompt)


if __name__ == "__main__":
    main()
