"""Sample text from a checkpoint.

    tensorgrad-generate runs/small/best.npz --prompt "ROMEO:" --seed 7 --tokens 300

(the same as python examples/generate.py and python -m gpt.cli.generate)
"""

from __future__ import annotations

import argparse

import tensorgrad as tg

from ..checkpoint import load_model
from .common import (
    ArgumentParser,
    check_at_most_vocabulary,
    check_checkpoint,
    check_sampling,
    check_seed,
    check_text,
    command_line,
    device_of,
)


@command_line(out_of_memory="the checkpoint's model and --tokens characters do not fit in this machine's memory")
def main(argv=None):
    p = ArgumentParser(
        prog="tensorgrad-generate", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("checkpoint", help="a best.npz / last.npz written by tensorgrad-train")
    p.add_argument("--prompt", default=None, help="the start of the text (default: a newline)")
    p.add_argument("--tokens", type=int, default=500, help="characters to generate")
    p.add_argument("--seed", type=int, default=1337, help="random seed, from -2**63 to 2**64 - 1 (default 1337)")
    p.add_argument(
        "--temperature", type=float, default=1.0, help="a finite number > 0; below 1 sharpens, above 1 flattens; "
        "towards 0, the most likely character every time (greedy, as --top-k 1: 1e-45 is that limit)"
    )  # fmt: skip
    p.add_argument("--top-k", type=int, default=None, help="sample among the k most likely characters only")
    p.add_argument("--backend", choices=["numpy", "cupy"], default="numpy")
    args = p.parse_args(argv)
    check_checkpoint(args.checkpoint)
    if args.prompt is not None and not args.prompt:
        check_text("--prompt", args.prompt, None)  # the empty prompt, before the checkpoint is read
    check_sampling(args.temperature, args.tokens)
    check_seed(args.seed)
    device = device_of(args.backend)
    model, tok, _ = load_model(args.checkpoint, device=device)
    check_at_most_vocabulary("--top-k", args.top_k, tok.vocab_size)  # the model's vocabulary, once it is read
    prompt = args.prompt if args.prompt is not None else ("\n" if "\n" in tok.stoi else tok.chars[0])
    check_text("--prompt", prompt, tok)
    tg.manual_seed(args.seed)
    idx = tg.tensor([tok.encode(prompt)], dtype=tg.long, device=device)
    out = model.generate(idx, args.tokens, temperature=args.temperature, top_k=args.top_k)
    print(tok.decode(out[0]))


if __name__ == "__main__":
    main()
