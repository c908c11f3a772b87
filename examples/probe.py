"""The "thou" probe: top next characters after `thou`, `you`, `hou`, model beside corpus.

    python examples/probe.py runs/small/best.npz

A thin wrapper: the program is gpt/cli/probe.py (installed as tensorgrad-probe).  Run from a checkout
without installing; `tensorgrad-probe --help` lists the flags.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout, without installing

from gpt.cli.probe import main  # noqa: E402

if __name__ == "__main__":
    main()
