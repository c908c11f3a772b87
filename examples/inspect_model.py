"""Gradient norms per parameter and attention heat maps of a model.

    python examples/inspect_model.py runs/small/best.npz --prompt "thou art"

A thin wrapper: the program is gpt/cli/inspect_model.py (installed as tensorgrad-inspect).  Run from a checkout
without installing; `tensorgrad-inspect --help` lists the flags.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout, without installing

from gpt.cli.inspect_model import main  # noqa: E402

if __name__ == "__main__":
    main()
