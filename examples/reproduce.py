"""Train every CPU-sized stage of the lecture and print our val loss beside the reference run's.

    python examples/reproduce.py --stages ffn small

A thin wrapper: the program is gpt/cli/reproduce.py (installed as tensorgrad-reproduce).  Run from a checkout
without installing; `tensorgrad-reproduce --help` lists the flags.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout, without installing

from gpt.cli.reproduce import main  # noqa: E402

if __name__ == "__main__":
    main()
