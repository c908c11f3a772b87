"""How far a seed moves the reference's own final val loss: the preset's model in PyTorch
(`benchmarks/torch_gpt.py`, PyTorch's default initialisation, as the write-up's run), trained by the
write-up's loop (AdamW, random batches of the train split, `eval_iters` batches per split at every
`eval_interval` and at the last step), one process per seed, one PyTorch thread each.

    python benchmarks/torch_seeds.py                        # `small`, seeds 1337 and 1 to 6
    python benchmarks/torch_seeds.py --seeds 1337 1 2 --jobs 1

Its table sits beside tensorgrad's own seed table (docs/results.md): if the reference's one run lies
inside PyTorch's spread as well as ours, the distance at one seed is the seed's, not the engine's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def train(preset: str, seed: int, max_iters: int | None) -> tuple[int, float, float, float]:
    """One seed's run: (seed, final train loss, final val loss, seconds)."""
    import torch

    from benchmarks.torch_gpt import build_torch_model
    from gpt import get_config
    from gpt.data import CharTokenizer, load_text

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    c = get_config(preset)
    iters = max_iters or c.max_iters
    text = load_text(download=False)  # gpt.find_dataset's lookup
    data = torch.tensor(CharTokenizer.from_text(text).encode(text), dtype=torch.long)
    n = int(0.9 * len(data))
    splits = {"train": data[:n], "val": data[n:]}

    def batch(split):
        d = splits[split]
        ix = torch.randint(len(d) - c.block_size, (c.batch_size,))
        x = torch.stack([d[i : i + c.block_size] for i in ix])
        return x, torch.stack([d[i + 1 : i + c.block_size + 1] for i in ix])

    model = build_torch_model(c)
    opt = torch.optim.AdamW(model.parameters(), lr=c.learning_rate, weight_decay=c.weight_decay)

    @torch.no_grad()
    def estimate():
        model.eval()
        out = {s: torch.stack([model(*batch(s))[1] for _ in range(c.eval_iters)]).mean().item() for s in splits}
        model.train()
        return out

    start = time.perf_counter()
    for it in range(iters):
        if it % c.eval_interval == 0 or it == iters - 1:
            losses = estimate()
        _, loss = model(*batch("train"))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return seed, losses["train"], losses["val"], time.perf_counter() - start


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", default="small")
    p.add_argument("--seeds", type=int, nargs="+", default=[1337, 1, 2, 3, 4, 5, 6])
    p.add_argument("--jobs", type=int, default=2, help="seeds run at once (one process, one thread each)")
    p.add_argument("--max-iters", type=int, default=None)
    args = p.parse_args()
    from gpt.data import DataError, find_dataset

    try:
        find_dataset(download=False)
    except DataError as e:
        sys.exit(f"error: {e}")
    with ProcessPoolExecutor(args.jobs) as pool:
        runs = sorted(pool.map(train, [args.preset] * len(args.seeds), args.seeds, [args.max_iters] * len(args.seeds)),
                      key=lambda r: args.seeds.index(r[0]))  # fmt: skip
    vals = [v for _, _, v, _ in runs]
    print(f"PyTorch, preset {args.preset}: final losses by seed (the write-up's loop, PyTorch's default init)")
    print("| seed | " + " | ".join(str(s) for s, *_ in runs) + " | mean | sd |")
    print("|---|" + "---:|" * (len(runs) + 2))
    print("| train | " + " | ".join(f"{t:.4f}" for _, t, _, _ in runs) + " | | |")
    sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
    print("| val | " + " | ".join(f"{v:.4f}" for v in vals) + f" | {statistics.mean(vals):.4f} | {sd:.4f} |")
    print(f"seconds per run: {', '.join(f'{s:.0f}' for *_, s in runs)}")


if __name__ == "__main__":
    main()
