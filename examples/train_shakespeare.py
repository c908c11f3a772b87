"""Train a GPT of "Let's build GPT" on Tiny Shakespeare with tensorgrad.

    python examples/train_shakespeare.py --backend cupy --preset large --out-dir runs/large

A thin wrapper: the program is gpt/cli/train.py (installed as tensorgrad-train).  Run from a checkout
without installing; `tensorgrad-train --help` lists the flags.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout, without installing

from gpt.cli.train import main  # noqa: E402

if __name__ == "__main__":
    main()
