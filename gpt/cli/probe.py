"""The "thou" probe: top next characters after `thou`, `you`, `hou`, model beside corpus.

    tensorgrad-probe runs/small/best.npz
    tensorgrad-probe runs/large/best.npz --contexts thou you hou ou

(the same as python examples/probe.py and python -m gpt.cli.probe)
"""

from __future__ import annotations

import argparse

from ..checkpoint import load_model
from ..data import CharTokenizer, load_text
from ..probe import CONTEXTS, probe_table
from .common import (
    DATA_HELP,
    ArgumentParser,
    check_at_most_vocabulary,
    check_checkpoint,
    check_positive,
    check_same_vocabulary,
    check_text,
    command_line,
    device_of,
)


@command_line(out_of_memory="the checkpoint's model and --data's text do not fit in this machine's memory")
def main(argv=None):
    p = ArgumentParser(
        prog="tensorgrad-probe", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("checkpoint", help="a best.npz / last.npz written by tensorgrad-train")
    p.add_argument(
        "--contexts", nargs="+", default=list(CONTEXTS), help="the texts whose next character is shown, each at "
        "most the model's block size (a bigram model reads only their last character)"
    )  # fmt: skip
    p.add_argument("--top", type=int, default=5, help="how many characters to list (at most the vocabulary)")
    p.add_argument("--data", default=None, help="the corpus to compare with: " + DATA_HELP)
    p.add_argument("--backend", choices=["numpy", "cupy"], default="numpy")
    args = p.parse_args(argv)
    check_checkpoint(args.checkpoint)
    check_positive("--top", args.top)
    for c in args.contexts:
        if not c:
            check_text("--contexts", c, None)
    device = device_of(args.backend)
    model, tokenizer, _ = load_model(args.checkpoint, device=device)
    check_at_most_vocabulary("--top", args.top, tokenizer.vocab_size)
    # each context whole in the model's view, or its half of the table would be about a shorter text than
    # the corpus's half; a bigram model reads the last character alone, by design (its block size is 1)
    block_size = model.block_size if hasattr(model, "blocks") else None
    for c in args.contexts:
        check_text("--contexts", c, tokenizer, block_size=block_size)
    text = load_text(args.data)
    check_same_vocabulary(args.checkpoint, tokenizer, CharTokenizer.from_text(text))
    print(probe_table(model, tokenizer, text, args.contexts, args.top, device))


if __name__ == "__main__":
    main()
