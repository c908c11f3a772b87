"""Checkpoints of a training run and resuming from them.

A checkpoint (best.npz, last.npz; written by tg.save) holds the model's and the optimizer's
state, the config, the step to run next, whether that step's evaluation is done, the best
val loss so far, the vocabulary, the seed, the seconds spent, and the random state: resuming
from it continues the run on the same trajectory, bit for bit.

    state = checkpoint_state(...)              # what train() saves (training_state: what each step changes)
    point = resume_point(ckpt, config, ...)    # where a resume continues, with which config
    restore(ckpt, point, model, optimizer)     # the weights, the optimizer, the random state
    model, tokenizer, ckpt = load_model(path)  # for sampling and probing

A resume may change only the RESUMABLE fields; `is_finished` is the one test of whether a
run has reached its max_iters.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import tensorgrad as tg
from tensorgrad.random import get_rng_state, set_rng_state
from tensorgrad.serialization import CheckpointError

from .checkpoint_fields import check_fields, check_state
from .config import MODEL_FIELDS, GPTConfig, preset_of
from .messages import arg, message
from .model import build_model


class ResumeError(RuntimeError):
    """A resume that cannot continue the run as asked (conflicting settings, other data, finished)."""


# On resume these take the new value (said in the log); every other field must be unchanged.
RESUMABLE = ("max_iters", "eval_interval", "eval_iters", "learning_rate", "weight_decay", "fast_attention")


def is_finished(step: int, config: GPTConfig) -> bool:
    """Whether a run whose next step is `step` has nothing left to train."""
    return step >= config.max_iters


def check_unfinished(step: int, config: GPTConfig, where: str):
    """ResumeError if the run in `where`, at `step`, is finished under `config`."""
    if is_finished(step, config):
        raise ResumeError(message(
            f"the run in {where} is finished (step {step} of {arg('max_iters')} {config.max_iters}); "
            f"to train further, resume with a larger {arg('max_iters')}"
        ))  # fmt: skip


# --------------------------------------------------------------------------- writing
def data_fingerprint(data) -> str:
    """What identifies the text a run trains on: its vocabulary and a hash of its ids (16 hex digits)."""
    digest = hashlib.sha256("".join(data.tokenizer.chars).encode())
    for split in (data.train, data.val):
        digest.update(split.numpy().tobytes())
    return digest.hexdigest()[:16]


def training_state(model, optimizer, device, copy=False) -> dict:
    """The checkpoint's fields that every step changes: the weights, the optimizer's state and the
    generator's.  copy=True copies the tensors, so the state stays this step's while training
    goes on (the checkpoint of an evaluation that runs beside the next steps, gpt/train.py)."""
    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "rng": json.dumps(get_rng_state(device)),  # on a GPU too: a resume is exact there as well
    }
    if copy:
        with tg.no_grad():
            state = _copied(state)
    return state


def _copied(tree):
    if isinstance(tree, dict):
        return {k: _copied(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_copied(v) for v in tree]
    return tree.clone() if isinstance(tree, tg.Tensor) else tree


def checkpoint_state(model, optimizer, config, step, result, tokenizer, device, seed, elapsed, evaluated,
                     data=None, trained=None) -> dict:  # fmt: skip
    """Everything a resume needs, as tg.save writes it (`data`: the data's fingerprint; `trained`:
    training_state's fields, taken now from model, optimizer and the generator if None)."""
    cfg = config.to_dict()
    cfg.pop("reference", None)
    return {
        **(trained or training_state(model, optimizer, device)),
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
        "data": data or "",  # data_fingerprint: a resume on other text is refused
        "resumes": json.dumps(result.resumes),  # [{"step", "changed"}], every resume of the run so far
    }


def log_line(entry: dict) -> str:
    """One evaluation as a line of log.jsonl."""
    return json.dumps(entry) + "\n"


# --------------------------------------------------------------------------- reading
def read_config(ckpt, path="checkpoint") -> GPTConfig:
    """The GPTConfig stored in a checkpoint written by `train`, once every field of the checkpoint
    is checked (gpt/checkpoint_fields.py): CheckpointError naming `path` and the field otherwise."""
    return check_fields(ckpt, path)


def load_model(path, device="cpu"):
    """A model and its tokenizer from a checkpoint written by `train`, and the checkpoint."""
    from .data import CharTokenizer  # noqa: PLC0415

    ckpt = tg.load(path, device=device)
    config = read_config(ckpt, path)
    model = build_model(config, vocab_size=config.vocab_size).to(device)
    check_state(ckpt, path, model, tg.optim.AdamW(model.parameters()))  # every field, though sampling needs few
    model.load_state_dict(ckpt["model"])
    return model, CharTokenizer(ckpt["vocab"]), ckpt


def load_last(out: Path, device):
    """out/last.npz, the checkpoint a resume continues from."""
    path = out / "last.npz"
    if not path.exists():
        raise ResumeError(message(
            f"{arg('resume')}: there is no {path} to continue from (a run stopped before its first "
            f"checkpoint): start over with {arg('overwrite')}"
        ))  # fmt: skip
    ckpt = tg.load(path, device=device)
    check_fields(ckpt, path)
    return ckpt


def read_log(path: Path, before: int) -> list:
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


# --------------------------------------------------------------------------- resuming
def resume_config(stored: GPTConfig, requested: GPTConfig, where="the run") -> tuple[GPTConfig, dict]:
    """The config a resume continues with, and the {field: [old, new]} it changes.

    RESUMABLE fields take the requested value; any other difference is a ResumeError naming
    the field and both values (the model's shape, the batch, the data cannot change mid-run)."""
    diffs = [f for f in stored.to_dict() if f not in RESUMABLE and f != "reference"
             and getattr(stored, f) != getattr(requested, f)]  # fmt: skip
    if diffs:
        old_p, new_p = preset_of(stored), preset_of(requested)
        both = ", ".join(f"{f} {getattr(stored, f)!r} there, {getattr(requested, f)!r} here" for f in diffs)
        if any(f in MODEL_FIELDS for f in diffs) and old_p != new_p and new_p is not None:
            raise ResumeError(message(
                f"{arg('preset')} {new_p} conflicts with {where}, whose checkpoint is preset {old_p or 'custom'} "
                f"({both}); resume without {arg('preset')}, or start a new {arg('out_dir')}"
            ))  # fmt: skip
        named = ", ".join(f"{arg(f)} {getattr(requested, f)!r}" for f in diffs)
        raise ResumeError(message(
            f"{named} conflicts with {where} ({both}); a resume keeps the model, the batch and the data: "
            f"drop the {arg('setting')}, or start a new {arg('out_dir')}"
        ))  # fmt: skip
    changes = {f: [getattr(stored, f), getattr(requested, f)] for f in RESUMABLE
               if getattr(stored, f) != getattr(requested, f)}  # fmt: skip
    return stored.replace(**{f: new for f, (_, new) in changes.items()}), changes


@dataclass
class ResumePoint:
    """Where a resumed run continues: its config (with the changes applied) and its progress."""

    config: GPTConfig
    changes: dict = field(default_factory=dict)  # {field: [old, new]}
    step: int = 0  # the next step to run
    seed: int = 1337
    evaluated: bool = False  # whether step `step`'s evaluation is done
    elapsed: float = 0.0  # seconds the run has taken so far
    history: list = field(default_factory=list)  # the evaluations before `step`, from the log
    resumes: list = field(default_factory=list)  # the run's earlier resumes, [{"step", "changed"}]
    data_checked: bool = True  # False for an older checkpoint, which records no fingerprint of its data


def resume_point(ckpt, config: GPTConfig, data, out: Path, seed: int) -> ResumePoint:
    """Where the run in `out` (its last.npz, `ckpt`) continues when resumed with `config` and `data`;
    ResumeError if it cannot (other data, a conflicting setting, a finished run)."""
    stored = read_config(ckpt, out / "last.npz")
    vocab = ckpt.get("vocab")
    if vocab != "".join(data.tokenizer.chars):
        gone = sorted(set(vocab or "") - set(data.tokenizer.chars))
        new = sorted(set(data.tokenizer.chars) - set(vocab or ""))
        raise ResumeError(message(
            f"the data's vocabulary ({data.tokenizer.vocab_size} characters) is not the run's "
            f"({len(vocab or '')} in {out / 'last.npz'}; missing here: {''.join(gone)[:20]!r}, "
            f"new here: {''.join(new)[:20]!r}, or another order); resume with the run's {arg('data')}"
        ))  # fmt: skip
    stored_data, here = ckpt.get("data"), data_fingerprint(data)
    if stored_data and stored_data != here:
        where = f"{arg('data')} {data.path}" if data.path else "the data"
        raise ResumeError(message(
            f"{where} is not the text the run in {out} was trained on (the same vocabulary, another text: "
            f"fingerprint {here} here, {stored_data} in {out / 'last.npz'}); "
            f"resume with the run's {arg('data')}, or start a new {arg('out_dir')}"
        ))  # fmt: skip
    config, changes = resume_config(stored, config, f"the run in {out}")
    step = ckpt["step"]
    check_unfinished(step, config, out)
    history = read_log(out / "log.jsonl", step)
    last_eval = json.loads(ckpt["eval"])
    if last_eval:
        history.append(last_eval)
    resumes = json.loads(ckpt["resumes"]) if "resumes" in ckpt else []
    return ResumePoint(config, changes, step, ckpt["seed"], ckpt["evaluated"], float(ckpt["elapsed"]), history,
                       resumes, data_checked=bool(stored_data))  # fmt: skip


def restore(ckpt, point: ResumePoint, model, optimizer, result, device, ranks=None, where="the run",
            path="checkpoint"):  # fmt: skip
    """Load the checkpoint's weights, optimizer state, best val loss and random state into a
    freshly built run; the resumed config's learning rate and weight decay take effect here.
    CheckpointError naming `path` and the field if one does not fit the run (check_state)."""
    check_state(ckpt, path, model, optimizer, device=device if ranks is None else None)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    for group in optimizer.param_groups:
        group["lr"], group["weight_decay"] = point.config.learning_rate, point.config.weight_decay
    result.best_val = float(ckpt["best_val"])
    result.best_step = ckpt["best_step"]
    result.resumed_from, result.changes = point.step, point.changes
    result.resumes = [*point.resumes, {"step": point.step, "changed": point.changes}]
    if ranks is not None:
        ranks.restore_rng(ckpt, device, where)
    elif ckpt["rng"] is not None:
        try:
            set_rng_state(json.loads(ckpt["rng"]), device)
        except (ValueError, TypeError, KeyError, OverflowError) as e:
            raise CheckpointError(
                f"{path}: checkpoint field 'rng': not a state of the {device} generator ({e})"
            ) from None
    else:
        tg.manual_seed((point.seed + point.step) % 2**64)  # a seed's range is [-2**63, 2**64): wrap as seeds do
