"""Draw the autograd graph of one transformer Block, after backward, with gradient norms.

    python examples/draw_block.py                        # block.png (and the DOT text on stdout)
    python examples/draw_block.py --out block.svg --preset large --heads-loop

One Block of the chosen preset (the `small` stage by default: 4 heads, n_embd 32) on a
(2, 8, n_embd) input, the loss mean(out^2), backward kept (retain_graph=True) so the graph
can be drawn after it.  Parameters carry their names (ln1.weight, sa.qkv.weight, ...) and their
gradient norms; each op shows its output shape and the bytes it saved for backward.
`--heads-loop` uses the lecture's loop over Head modules instead of the batched attention op.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tensorgrad as tg  # noqa: E402
from gpt.config import get_config  # noqa: E402
from gpt.model import Block  # noqa: E402
from tensorgrad.viz import draw_graph  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="small", help="a GPT preset with blocks (head .. large); default small")
    ap.add_argument("--out", default="block.png", help="where to draw it: .png or .svg (default block.png)")
    ap.add_argument("--heads-loop", action="store_true", help="the lecture's per-head loop, not the batched op")
    args = ap.parse_args(argv)
    try:
        overrides = {"n_embd": 32, "n_head": 4, "block_size": 8} if args.preset == "large" else {}
        config = get_config(args.preset, dropout=0.0, **overrides)
        if args.heads_loop:
            config = get_config(config, fast_attention=False)
        if not config.n_embd or config.kind == "bigram":
            raise ValueError(f"preset {args.preset!r} has no transformer block; try small")
    except (ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    tg.manual_seed(0)
    block = Block(config)
    x = tg.randn(2, config.block_size, config.n_embd, requires_grad=True)
    loss = (block(x) ** 2).mean()
    loss.backward(retain_graph=True)  # keep the graph: it is drawn after backward, with gradient norms
    print(draw_graph(loss, args.out, params=dict(block.named_parameters())))
    print(f"drew {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
