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

from .config import MODEL_FIELDS, GPTConfig, flag, preset_of, validate
from .model import build_model, count_parameters
from .rundir import RunDir, RunDirError, atomic_write, holds_run


class TrainingDiverged(RuntimeError):
    """The loss became NaN or infinite."""


class ResumeError(RuntimeError):
    """A resume that cannot continue the run as asked (conflicting settings, other data, finished)."""


class TrainingInterrupted(RuntimeError):
    """Ctrl-C during training; the message says where it stopped and how to resume."""

    def __init__(self, message, step, checkpoint=None):
        super().__init__(message)
        self.step, self.checkpoint = step, checkpoint


# On resume these take the new value (said in the log); every other field must be unchanged.
RESUMABLE = ("max_iters", "eval_interval", "eval_iters", "learning_rate", "weight_decay", "fast_attention")


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
    seed: int = 1337
    resumed_from: int | None = None  # the step a resume started at
    changes: dict = field(default_factory=dict)  # {field: [old, new]} a resume applied

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


def _checkpoint(model, optimizer, config, step, result, tokenizer, device, seed, elapsed, evaluated):
    rng_state = json.dumps(backend.rng(device).get_state())  # on a GPU too: a resume is exact there as well
    cfg = config.to_dict()
    cfg.pop("reference", None)
    return {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "config": json.dumps(cfg),
        "preset": preset_of(config),  # None for a custom shape
        "step": step,  # the next step to run
        "evaluated": evaluated,  # whether step `step`'s evaluation is done (and in "eval")
        "eval": json.dumps(result.history[-1] if evaluated else None),
        "best_val": result.best_val,
        "best_step": result.best_step,
        "vocab": "".join(tokenizer.chars),
        "seed": seed,
        "elapsed": elapsed,  # seconds since the run started, over every resume
        "rng": rng_state,
    }


def read_config(ckpt, path="checkpoint") -> GPTConfig:
    """The GPTConfig stored in a checkpoint written by `train` (CheckpointError if there is none)."""
    from tensorgrad.serialization import CheckpointError  # noqa: PLC0415

    if not isinstance(ckpt, dict) or "config" not in ckpt or "model" not in ckpt:
        raise CheckpointError(f"{path}: not a training checkpoint (no 'config' and 'model' entries)")
    try:
        return GPTConfig(**json.loads(ckpt["config"]))
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{path}: its config cannot be read ({e})") from None


def _build_from(ckpt, config, device, path):
    from tensorgrad.serialization import CheckpointError  # noqa: PLC0415

    model = build_model(config, vocab_size=config.vocab_size).to(device)
    try:
        model.load_state_dict(ckpt["model"])
    except (KeyError, ValueError, RuntimeError, TypeError) as e:
        first = str(e).splitlines()[0][:200]
        raise CheckpointError(f"{path}: its weights do not fit its own config ({first})") from None
    return model


def load_model(path, device="cpu"):
    """A model and its tokenizer from a checkpoint written by `train`."""
    from .data import CharTokenizer  # noqa: PLC0415

    ckpt = tg.load(path, device=device)
    config = read_config(ckpt, path)
    model = _build_from(ckpt, config, device, path)
    return model, CharTokenizer(ckpt["vocab"]), ckpt


def resume_config(stored: GPTConfig, requested: GPTConfig, where="the run") -> tuple[GPTConfig, dict]:
    """The config a resume continues with, and the {field: [old, new]} it changes.

    RESUMABLE fields take the requested value; any other difference is a ResumeError naming
    the flag and both values (the model's shape, the batch, the data cannot change mid-run)."""
    diffs = [f for f in stored.to_dict() if f not in RESUMABLE and f != "reference"
             and getattr(stored, f) != getattr(requested, f)]  # fmt: skip
    if diffs:
        old_p, new_p = preset_of(stored), preset_of(requested)
        both = ", ".join(f"{f} {getattr(stored, f)!r} there, {getattr(requested, f)!r} here" for f in diffs)
        if any(f in MODEL_FIELDS for f in diffs) and old_p != new_p and new_p is not None:
            raise ResumeError(
                f"--preset {new_p} conflicts with {where}, whose checkpoint is preset {old_p or 'custom'} "
                f"({both}); resume without --preset, or start a new --out-dir"
            )
        named = ", ".join(f"{flag(f)} {getattr(requested, f)!r}" for f in diffs)
        raise ResumeError(
            f"{named} conflicts with {where} ({both}); a resume keeps the model, the batch and the data: "
            "drop the flag, or start a new --out-dir"
        )
    changes = {f: [getattr(stored, f), getattr(requested, f)] for f in RESUMABLE
               if getattr(stored, f) != getattr(requested, f)}  # fmt: skip
    return stored.replace(**{f: new for f, (_, new) in changes.items()}), changes


def _read_log(path: Path, before: int) -> list:
    """The evaluations in log.jsonl before step `before` (a line cut by a kill is dropped)."""
    entries = []
    if path.exists():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if isinstance(e, dict) and isinstance(e.get("step"), int) and e["step"] < before:
                entries.append(e)
    return entries


def _log_line(entry) -> str:
    return json.dumps(entry) + "\n"


def train(config: GPTConfig, data, device="cpu", seed=1337, out_dir=None, resume=False, overwrite=False,
          log=print, progress=None, ranks=None) -> TrainResult:  # fmt: skip
    """Train `config` on `data` (a ShakespeareData on `device`).

    With out_dir: writes best.npz (lowest val loss), last.npz (after every evaluation and at the
    end) and log.jsonl, under a lock (gpt/rundir.py).  A directory that holds a run raises
    RunDirError unless resume=True (continue it) or overwrite=True (start over).
    With resume=True: continues from out_dir/last.npz on the same trajectory; `config` may change
    only the RESUMABLE fields (applied and logged), anything else raises ResumeError.
    With ranks (a gpt.distributed.Ranks): data-parallel over them, each on its own batches of
    config.batch_size; only rank 0 logs and writes out_dir (it holds the lock; the others only
    read last.npz on resume, so out_dir must be the same directory on every rank).
    """
    config = validate(config.replace(vocab_size=data.tokenizer.vocab_size))
    data.check_block_size(config.block_size)
    out = Path(out_dir) if out_dir else None
    if out is None:
        if resume:
            raise ResumeError("--resume needs --out-dir (the run directory to continue)")
        return _train(config, data, device, seed, None, None, log, progress, ranks)
    if ranks is not None and not ranks.is_main:  # rank 0 guards and clears the directory
        ckpt = _load_resume(out, device) if resume else None
        return _train(config, data, device, seed, out, ckpt, log, progress, ranks)
    if resume and overwrite:
        raise ResumeError("--resume and --overwrite exclude each other: continue the run, or start it over")
    with RunDir(out) as run:
        if not resume and holds_run(out):
            if not overwrite:
                raise RunDirError(
                    f"--out-dir {out} already holds a run; pass --resume to continue it, --overwrite to "
                    "start over (its checkpoints and log are deleted), or choose another --out-dir"
                )
            run.clear()
        ckpt = _load_resume(out, device) if resume else None
        return _train(config, data, device, seed, out, ckpt, log, progress, ranks)


def _load_resume(out: Path, device):
    path = out / "last.npz"
    if not path.exists():
        raise ResumeError(f"--resume: there is no {path} to continue from (a run stopped before its first "
            "checkpoint): start over with --overwrite")
    return tg.load(path, device=device)


def _train(config, data, device, seed, out, ckpt, log, progress, ranks=None) -> TrainResult:
    start, skip_eval, elapsed0, history, changes = 0, False, 0.0, [], {}
    main = ranks is None or ranks.is_main
    if not main:
        log = lambda *args, **kwargs: None  # noqa: E731  (only rank 0 prints)
    if ckpt is not None:
        stored = read_config(ckpt, out / "last.npz")
        vocab = ckpt.get("vocab")
        if vocab != "".join(data.tokenizer.chars):
            gone = sorted(set(vocab or "") - set(data.tokenizer.chars))
            new = sorted(set(data.tokenizer.chars) - set(vocab or ""))
            raise ResumeError(
                f"the data's vocabulary ({data.tokenizer.vocab_size} characters) is not the run's "
                f"({len(vocab or '')} in {out / 'last.npz'}; missing here: {''.join(gone)[:20]!r}, "
                f"new here: {''.join(new)[:20]!r}, or another order); resume with the run's --data"
            )
        config, changes = resume_config(stored, config, f"the run in {out}")
        start = int(ckpt["step"])
        if start >= config.max_iters:
            raise ResumeError(
                f"the run in {out} is finished (step {start} of --max-iters {config.max_iters}); "
                f"to train further, resume with a larger --max-iters"
            )
        seed = int(ckpt.get("seed", seed))
        skip_eval = bool(ckpt.get("evaluated", True))
        elapsed0 = float(ckpt.get("elapsed", 0.0))
        history = _read_log(out / "log.jsonl", start)
        last_eval = json.loads(ckpt["eval"]) if ckpt.get("eval") else None
        if last_eval:
            history.append(last_eval)

    if ranks is not None:  # before any work: the same flags, data and checkpoint on every rank
        from .distributed import data_fingerprint  # noqa: PLC0415

        ranks.check_same(config=config.to_dict(), data=data_fingerprint(data), seed=seed, start=start)
    elif ckpt is not None and int(ckpt.get("world_size", 1)) > 1:
        raise ResumeError(
            f"the run in {out} was trained on {int(ckpt['world_size'])} ranks: resume it with "
            f"mpiexec -n {int(ckpt['world_size'])} ... --distributed"
        )
    tg.manual_seed(seed)
    model = build_model(config, vocab_size=config.vocab_size).to(device)
    optimizer = tg.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    result = TrainResult(config=config, params=count_parameters(model), model=model, history=history, seed=seed)
    log(f"{result.params / 1e6:.4f} M parameters ({result.params:,})")
    step_model = model  # what a training step calls: the model, or its DistributedDataParallel wrapper
    if ranks is not None:
        step_model = ranks.wrap(model)
        ranks.seed_batches(seed)
        log(f"{ranks.world_size} rank(s) x batch {config.batch_size} = effective batch "
            f"{ranks.world_size * config.batch_size}")  # fmt: skip
    if ckpt is not None:
        model.load_state_dict(ckpt["model"])  # resume_config made sure the shapes are the run's
        optimizer.load_state_dict(ckpt["optimizer"])
        for group in optimizer.param_groups:  # --lr / --weight-decay on resume take effect here
            group["lr"], group["weight_decay"] = config.learning_rate, config.weight_decay
        result.best_val = float(ckpt["best_val"])
        result.best_step = int(ckpt.get("best_step", -1))
        result.resumed_from, result.changes = start, changes
        if ranks is not None:
            ranks.restore_rng(ckpt, device, f"the run in {out}")
        elif ckpt.get("rng"):
            backend.rng(device).set_state(json.loads(ckpt["rng"]))
        else:
            tg.manual_seed(seed + start)
        if main:
            atomic_write(out / "log.jsonl", "".join(_log_line(e) for e in history))  # drop evals past the checkpoint
        log(f"resumed from {out / 'last.npz'} at step {start}")
        for f, (old, new) in changes.items():
            log(f"  {flag(f)}: {old!r} -> {new!r} from step {start}")

    tokens_per_step = config.batch_size * config.block_size
    bar = progress if progress is not None else Progress(config.max_iters, tokens_per_step, enabled=main and None)
    check_every = 1 if device == "cpu" else 50  # reading the loss back syncs a GPU
    t0 = time.perf_counter() - elapsed0
    train_time, train_steps = 0.0, 0
    last_saved = start if ckpt is not None else None

    def save(step, evaluated, improved=False):
        nonlocal last_saved
        state = _checkpoint(model, optimizer, config, step, result, data.tokenizer, device, seed,
                            time.perf_counter() - t0, evaluated)  # fmt: skip
        if ranks is not None:  # every rank's generator (a collective), written by rank 0 alone
            state.update(rng=None, rng_ranks=ranks.rng_states(device), world_size=ranks.world_size)
            if not main:
                last_saved = step
                return
        for name in ("best.npz", "last.npz") if improved else ("last.npz",):
            try:
                tg.save(state, out / name)
            except OSError as e:
                raise RunDirError(f"cannot write {out / name}: {e.strerror or e}") from None
        last_saved = step

    model.train()
    step = start
    try:
        for step in range(start, config.max_iters):
            if (step % config.eval_interval == 0 or step == config.max_iters - 1) and not (skip_eval and step == start):
                bar.clear()
                losses = estimate_loss(model, data, config)
                if ranks is not None:
                    losses = ranks.average(losses)
                if not all(math.isfinite(v) for v in losses.values()):
                    raise TrainingDiverged(f"step {step}: the eval loss is {losses}; the last good checkpoint is kept")
                entry = {"step": step, "train": losses["train"], "val": losses["val"],
                         "time": time.perf_counter() - t0}  # fmt: skip
                result.history.append(entry)
                log(f"step {step}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
                improved = losses["val"] < result.best_val
                if improved:
                    result.best_val, result.best_step = losses["val"], step
                if out is not None and main:
                    try:
                        with open(out / "log.jsonl", "a") as f:
                            f.write(_log_line(entry))
                    except OSError as e:
                        raise RunDirError(f"cannot write {out / 'log.jsonl'}: {e.strerror or e}") from None
                if out is not None:
                    save(step, evaluated=True, improved=improved)

            ts = time.perf_counter()
            xb, yb = data.get_batch("train", config.block_size, config.batch_size)
            logits, loss = step_model(xb, yb)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if ranks is not None:
                step_model.sync_gradients()
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
        step = config.max_iters
        if out is not None:
            save(step, evaluated=False)  # the finished state: a resume with a larger --max-iters continues here
    except KeyboardInterrupt:
        bar.clear()
        if out is None:
            where = "nothing was saved (no --out-dir)"
        elif last_saved is None:
            where = "no checkpoint was written yet"
        else:
            where = f"the last checkpoint is {out / 'last.npz'} (step {last_saved})"
        raise TrainingInterrupted(f"interrupted at step {step}; {where}", step,
                                  out / "last.npz" if last_saved is not None else None) from None  # fmt: skip
    finally:
        bar.clear()
    result.seconds = time.perf_counter() - t0 - elapsed0
    result.train_seconds, result.steps = train_time, train_steps
    return result


if __name__ == "__main__":  # python -m gpt.train: the command-line program, gpt/cli/train.py
    from gpt.cli.train import main

    main()
