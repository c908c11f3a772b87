"""Sample text from a checkpoint.

python examples/generate.py runs/small/best.npz --prompt "ROMEO:" --seed 7 --tokens 300
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tensorgrad as tg  # noqa: E402
from gpt.train import load_model  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint")
    p.add_argument("--prompt", default="\n")
    p.add_argument("--tokens", type=int, default=500)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--top-k", type=int, default=None)
    p.add_argument("--backend", choices=["numpy", "cupy"], default="numpy")
    args = p.parse_args(argv)
    device = "cuda" if args.backend == "cupy" else "cpu"
    model, tok, _ = load_model(args.checkpoint, device=device)
    tg.manual_seed(args.seed)
    idx = tg.tensor([tok.encode(args.prompt)], dtype=tg.long, device=device)
    out = model.generate(idx, args.tokens, temperature=args.temperature, top_k=args.top_k)
    print(tok.decode(out[0]))


if __name__ == "__main__":
    main()
