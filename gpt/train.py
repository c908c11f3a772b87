"""The training loop of the lecture, with what a real run needs around it: evaluation,
best/last checkpoints that resume exactly, a JSON-lines log, a progress line, a NaN stop."""

from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import tensorgrad as tg
from tensorgrad import backend

from .config import GPTConfig
from .model import build_model, count_parameters


class TrainingDiverged(RuntimeError):
    """The loss became NaN or infinite."""


# At most this many tokens go through the model at once when evaluating.
EVAL_CHUNK_TOKENS = 16384


@tg.no_grad()
def estimate_loss(model, data, config: GPTConfig) -> dict:
    """The lecture's estimate_loss: the mean loss over eval_iters random batches of each split,
    in eval mode (dropout off).

    Batches are drawn exactly as get_batch draws them, but up to EVAL_CHUNK_TOKENS tokens of them
    go through the model as one larger batch: the mean of equal-sized batches' mean losses is
    the mean over their union, and one forward of 32 batches costs far less than 32 forwards
    for a small model.  Losses are summed on the device and read back once per split."""
    out = {}
    model.eval()
    per_chunk = max(1, EVAL_CHUNK_TOKENS // (config.batch_size * config.block_size))
    for split in ("train", "val"):
        total, done = None, 0
        while done < config.eval_iters:
            k = min(per_chunk, config.eval_iters - done)
            xb, yb = data.get_batch(split, config.block_size, config.batch_size * k)
            _, loss = model(xb, yb)
            loss = loss * k  # weight by the number of batches it stands for
            total = loss if total is None else total + loss
            done += k
        out[split] = total.item() / config.eval_iters
    model.train()
    return out


@dataclass
class TrainResult:
    config: GPTConfig
    params: int
    history: list = field(default_factory=list)  # [{"step", "train", "val", "time"}]
    seconds: float = 0.0
    train_seconds: float = 0.0  # excluding evaluation
    steps: int = 0
    best_val: float = math.inf
    best_step: int = -1
    model: object = None

    @property
    def final(self) -> dict:
        return self.history[-1] if self.history else {}

    @property
    def ms_per_step(self) -> float:
        return 1000 * self.train_seconds / max(self.steps, 1)


class Progress:
    """One self-rewriting status line on a terminal (nothing when output is not a terminal)."""

    def __init__(self, total, tokens_per_step, stream=sys.stderr, enabled=None):
        self.total, self.tokens_per_step, self.stream = total, tokens_per_step, stream
        self.enabled = stream.isatty() if enabled is None else enabled
        self.last = 0.0

    def update(self, step, seconds, steps_done, loss=None):
        now = time.perf_counter()
        if not self.enabled or now - self.last < 0.25 or steps_done == 0:
            return
        self.last = now
        per_step = seconds / steps_done
        eta = per_step * (self.total - step)
        width = 24
        filled = int(width * step / self.total)
        bar = "#" * filled + "." * (width - filled)
        tok_s = self.tokens_per_step / per_step
        text = f"\r  [{bar}] {step}/{self.total}  {1000 * per_step:.1f} ms/step  {tok_s / 1000:.1f}k tok/s"
        text += f"  ETA {_fmt(eta)}"
        if loss is not None:
            text += f"  loss {loss:.4f}"
        self.stream.write(text + "   ")
        self.stream.flush()

    def clear(self):
        if self.enabled:
            self.stream.write("\r" + " " * 100 + "\r")
            self.stream.flush()


def _fmt(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m}m{s:02d}s" if m else f"{s}s"


def _checkpoint(model, optimizer, config, step, best_val, tokenizer, device):
    rng_state = json.dumps(backend.rng(device).get_state())  # on a GPU too: a resume is exact there as well
    cfg = config.to_dict()
    cfg.pop("reference", None)
    return {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "config": json.dumps(cfg),
        "step": step,  # the next step to run; its evaluation is already done
        "best_val": best_val,
        "vocab": "".join(tokenizer.chars),
        "rng": rng_state,
    }


def load_model(path, device="cpu"):
    """A model and its tokenizer from a checkpoint written by `train`."""
    from .data import CharTokenizer  # noqa: PLC0415

    ckpt = tg.load(path, device=device)
    config = GPTConfig(**json.loads(ckpt["config"]))
    model = build_model(config, vocab_size=config.vocab_size).to(device)
    model.load_state_dict(ckpt["model"])
    return model, CharTokenizer(ckpt["vocab"]), ckpt


def train(config: GPTConfig, data, device="cpu", seed=1337, out_dir=None, resume=False,
          log=print, progress=None) -> TrainResult:  # fmt: skip
    """Train `config` on `data` (a ShakespeareData on `device`).

    With out_dir: writes best.npz (lowest val loss), last.npz (every eval) and log.jsonl.
    With resume=True: continues from out_dir/last.npz on the same trajectory.
    """
    tg.manual_seed(seed)
    config = config.replace(vocab_size=data.tokenizer.vocab_size)
    model = build_model(config, vocab_size=config.vocab_size).to(device)
    optimizer = tg.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    result = TrainResult(config=config, params=count_parameters(model), model=model)
    log(f"{result.params / 1e6:.4f} M parameters ({result.params:,})")

    out = Path(out_dir) if out_dir else None
    start, skip_eval = 0, False
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        if resume:
            ckpt = tg.load(out / "last.npz", device=device)
            model.load_state_dict(ckpt["model"])
            optimizer.load_state_dict(ckpt["optimizer"])
            start, skip_eval = int(ckpt["step"]), True
            result.best_val = float(ckpt["best_val"])
            if ckpt.get("rng"):
                backend.rng(device).set_state(json.loads(ckpt["rng"]))
            else:
                tg.manual_seed(seed + start)
            log(f"resumed from {out / 'last.npz'} at step {start}")
        elif (out / "log.jsonl").exists():
            (out / "log.jsonl").unlink()

    tokens_per_step = config.batch_size * config.block_size
    bar = progress if progress is not None else Progress(config.max_iters, tokens_per_step)
    check_every = 1 if device == "cpu" else 50  # reading the loss back syncs a GPU
    t0 = time.perf_counter()
    train_time, train_steps = 0.0, 0
    model.train()
    for step in range(start, config.max_iters):
        if (step % config.eval_interval == 0 or step == config.max_iters - 1) and not (skip_eval and step == start):
            bar.clear()
            losses = estimate_loss(model, data, config)
            if not all(math.isfinite(v) for v in losses.values()):
                raise TrainingDiverged(f"step {step}: the eval loss is {losses}; the last good checkpoint is kept")
            entry = {"step": step, "train": losses["train"], "val": losses["val"], "time": time.perf_counter() - t0}
            result.history.append(entry)
            log(f"step {step}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
            improved = losses["val"] < result.best_val
            if improved:
                result.best_val, result.best_step = losses["val"], step
            if out is not None:
                ckpt = _checkpoint(model, optimizer, config, step, result.best_val, data.tokenizer, device)
                if improved:
                    tg.save(ckpt, out / "best.npz")
                tg.save(ckpt, out / "last.npz")
                with open(out / "log.jsonl", "a") as f:
                    f.write(json.dumps(entry) + "\n")

        ts = time.perf_counter()
        xb, yb = data.get_batch("train", config.block_size, config.batch_size)
        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % check_every == 0:
            value = loss.item()
            if not math.isfinite(value):
                bar.clear()
                raise TrainingDiverged(
                    f"step {step}: the training loss is {value}; stopping. "
                    + (f"The last good checkpoint is {out / 'last.npz'}." if out else "")
                )
        train_time += time.perf_counter() - ts
        train_steps += 1
        bar.update(step + 1, train_time, train_steps)
    bar.clear()
    result.seconds = time.perf_counter() - t0
    result.train_seconds, result.steps = train_time, train_steps
    return result
