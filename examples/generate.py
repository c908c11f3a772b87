"""Sample text from a checkpoint.

    python examples/generate.py runs/small/best.npz --prompt "ROMEO:" --seed 7

A thin wrapper: the program is gpt/cli/generate.py (installed as tensorgrad-generate).  Run from a checkout
without installing; `tensorgrad-generate --help` lists the flags.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout, without installing

from gpt.cli.generate import main  # noqa: E402

if __name__ == "__main__":
    main()
