"""The "thou" probe: top next characters after `thou`, `you`, `hou`, model beside corpus.

python examples/probe.py runs/small/best.npz
python examples/probe.py runs/large/best.npz --contexts thou you hou ou
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpt.data import load_text  # noqa: E402
from gpt.probe import CONTEXTS, probe_table  # noqa: E402
from gpt.train import load_model  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", help="a best.npz / last.npz written by train_shakespeare.py")
    p.add_argument("--contexts", nargs="+", default=list(CONTEXTS))
    p.add_argument("--top", type=int, default=5)
    p.add_argument("--data", default=None, help="path of input.txt")
    p.add_argument("--backend", choices=["numpy", "cupy"], default="numpy")
    args = p.parse_args(argv)
    device = "cuda" if args.backend == "cupy" else "cpu"
    model, tokenizer, _ = load_model(args.checkpoint, device=device)
    print(probe_table(model, tokenizer, load_text(args.data), args.contexts, args.top, device))


if __name__ == "__main__":
    main()
