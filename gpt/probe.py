"""The "thou" probe: the model's next-character distribution after a context string (alone,
at the start of the sequence) beside what follows that string in the whole corpus."""

from __future__ import annotations

from collections import Counter

import tensorgrad as tg
from tensorgrad.nn import functional as F

CONTEXTS = ("thou", "you", "hou")


def corpus_next_chars(text: str, context: str) -> tuple[int, dict]:
    """(occurrences, {char: frequency}) of text[i + len(context)] over every i where context starts."""
    counts, i = Counter(), text.find(context)
    while i != -1:
        j = i + len(context)
        if j < len(text):
            counts[text[j]] += 1
        i = text.find(context, i + 1)
    n = sum(counts.values())
    return n, {c: k / n for c, k in counts.most_common()} if n else {}


@tg.no_grad()
def model_next_chars(model, tokenizer, context: str, device="cpu") -> dict:
    """{char: probability} of the model's next character after `context`, most likely first."""
    model.eval()
    idx = tg.tensor([tokenizer.encode(context[-model.block_size :])], dtype=tg.long, device=device)  # (1, T)
    logits, _ = model(idx)  # (1, T, V)
    probs = F.softmax(logits[0, -1], dim=-1).numpy()  # (V,)
    order = probs.argsort()[::-1]
    return {tokenizer.itos[int(i)]: float(probs[i]) for i in order}


def probe_table(model, tokenizer, text, contexts=CONTEXTS, top=5, device="cpu") -> str:
    """A printable table: for each context, the model's top characters and the corpus's."""
    lines = []
    for ctx in contexts:
        n, corpus = corpus_next_chars(text, ctx)
        ours = model_next_chars(model, tokenizer, ctx, device)
        lines.append(f"{ctx!r} ({n:,} times in the corpus)")
        lines.append(f"  {'model':<28} {'corpus':<28}")
        mine, theirs = list(ours.items())[:top], list(corpus.items())[:top]
        for k in range(min(top, max(len(mine), len(theirs)))):  # no empty rows past the vocabulary
            a = f"{mine[k][0]!r:>6} {mine[k][1]:.3f}" if k < len(mine) else ""
            b = f"{theirs[k][0]!r:>6} {theirs[k][1]:.3f}" if k < len(theirs) else ""
            lines.append(f"  {a:<28} {b:<28}")
        lines.append(f"  'r': model {ours.get('r', 0.0):.3f}, corpus {corpus.get('r', 0.0):.3f}")
    return "\n".join(lines)
