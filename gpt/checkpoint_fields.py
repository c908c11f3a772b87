"""Every field of a training checkpoint, checked on load.

A checkpoint is a file anyone can edit, cut or mix up, and each of its fields feeds a different
part of a run (the model's weights, the optimizer's moments, the random state, the config...).
A bad field found late is a traceback from deep inside (a shape mismatch in a matmul, a KeyError
in the optimizer, a ValueError from the generator); found here, it is one CheckpointError that
names the file and the field:

    runs/small/last.npz: checkpoint field 'optimizer': missing

Two passes, because the weights can only be judged against the model the config builds:

    config = check_fields(ckpt, path)                # every field but the weights' shapes
    check_state(ckpt, path, model, optimizer, device)  # the weights, the moments, the random state
"""

from __future__ import annotations

import dataclasses
import json
import math
import re

from tensorgrad import Tensor
from tensorgrad.random import get_rng_state
from tensorgrad.serialization import CheckpointError

from .config import ConfigError, GPTConfig, preset_of, validate

# What train() writes (gpt/checkpoint.py's checkpoint_state); every one is needed.
REQUIRED = ("model", "optimizer", "config", "preset", "step", "evaluated", "eval", "best_val", "best_step", "vocab",
            "seed", "elapsed", "rng")  # fmt: skip
# Written by some runs only: a data-parallel run's ranks, and (newer checkpoints) the data's
# fingerprint and the list of resumes.
OPTIONAL = ("world_size", "rng_ranks", "data", "resumes")
CONFIG_FIELDS = tuple(f.name for f in dataclasses.fields(GPTConfig) if f.name != "reference")


class _Bad(Exception):
    """A field that fails its check: which field, and what is wrong with it."""

    def __init__(self, name, problem):
        super().__init__(name, problem)
        self.name, self.problem = name, problem


def _error(path, name, problem) -> CheckpointError:
    return CheckpointError(f"{path}: checkpoint field {name!r}: {problem}")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _json(ckpt, name, kinds):
    """The JSON text of field `name`, decoded, which must be one of `kinds`."""
    text = ckpt[name]
    if not isinstance(text, str):
        raise _Bad(name, f"is a {type(text).__name__}, must be JSON text")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise _Bad(name, f"is not valid JSON ({text[:40]!r})") from None
    if not isinstance(value, kinds):
        raise _Bad(name, f"holds a {type(value).__name__}, must hold {' or '.join(k.__name__ for k in kinds)}")
    return value


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _config(ckpt) -> GPTConfig:
    stored = _json(ckpt, "config", (dict,))
    missing = [f for f in CONFIG_FIELDS if f not in stored]
    extra = [f for f in stored if f not in CONFIG_FIELDS and f != "reference"]
    if missing:
        raise _Bad("config", f"lacks {', '.join(missing)}")
    if extra:
        raise _Bad("config", f"has unknown {', '.join(extra)}")
    default = GPTConfig()
    for f in CONFIG_FIELDS:
        value, expected = stored[f], getattr(default, f)
        if isinstance(expected, bool):
            ok, kind = isinstance(value, bool), "true or false"
        elif isinstance(expected, int):
            ok, kind = _is_int(value), "an integer"
        elif isinstance(expected, float):
            ok, kind = _is_number(value) and math.isfinite(value), "a finite number"
        else:
            ok, kind = isinstance(value, str), "a string"
        if not ok:
            raise _Bad("config", f"{f} {_shown(value)} must be {kind}")
    try:
        return validate(GPTConfig(**{f: stored[f] for f in CONFIG_FIELDS}))
    except ConfigError as e:
        raise _Bad("config", str(e)) from None  # in the config's own names, not flags: nobody passed one


# The generator states tensorgrad.random writes: NumPy's PCG64 on the CPU, the Philox threads' bytes on a GPU.
RNG_STATES = {
    "cpu": {"bit_generator": "PCG64", "state": {"state": 0, "inc": 0}, "has_uint32": 0, "uinteger": 0},
    "cuda": {"bit_generator": "", "threads": 0, "state": ""},
}


def _rng_state(value, name):
    if not any(_same_structure(value, own) for own in RNG_STATES.values()):
        raise _Bad(name, f"holds {_shown(value)}, which is not a generator state (tensorgrad.random's)")


def _check_fields(ckpt) -> GPTConfig:
    missing = [f for f in REQUIRED if f not in ckpt]
    if missing:
        raise _Bad(missing[0], "missing" + (f" (and {', '.join(missing[1:])})" if missing[1:] else ""))
    extra = [f for f in ckpt if f not in REQUIRED + OPTIONAL]
    if extra:
        raise _Bad(extra[0], "unknown: not a field tensorgrad-train writes")
    config = _config(ckpt)
    for name in ("model", "optimizer"):
        if not isinstance(ckpt[name], dict):
            raise _Bad(name, f"is a {type(ckpt[name]).__name__}, must be a dict")
    preset = ckpt["preset"]
    if preset != preset_of(config):
        raise _Bad("preset", f"{_shown(preset)} is not the config's ({preset_of(config)!r})")
    step = ckpt["step"]
    if not _is_int(step) or not 0 <= step <= config.max_iters:
        raise _Bad("step", f"{_shown(step)} must be an integer from 0 to the config's max_iters {config.max_iters}")
    evaluated = ckpt["evaluated"]
    if not isinstance(evaluated, bool):
        raise _Bad("evaluated", f"{_shown(evaluated)} must be true or false")
    last = _json(ckpt, "eval", (dict, type(None)))
    if evaluated and last is None:
        raise _Bad("eval", "is null, but 'evaluated' says the step's evaluation is in it")
    if last is not None:
        if not evaluated:
            raise _Bad("eval", "holds an evaluation, but 'evaluated' says there is none")
        if set(last) != {"step", "train", "val", "time"} or not all(_is_number(v) for v in last.values()):
            raise _Bad("eval", f"{_shown(last)} must be {{step, train, val, time}}, each a number")
        if last["step"] != step:
            raise _Bad("eval", f"is the evaluation of step {last['step']}, the checkpoint's step is {step}")
    best_val = ckpt["best_val"]
    if not _is_number(best_val) or math.isnan(best_val) or best_val == -math.inf:
        raise _Bad("best_val", f"{_shown(best_val)} must be a number")
    best_step = ckpt["best_step"]
    if not _is_int(best_step) or not -1 <= best_step <= step:
        raise _Bad("best_step", f"{_shown(best_step)} must be an integer from -1 to the step {step}")
    vocab = ckpt["vocab"]
    if not isinstance(vocab, str) or len(set(vocab)) != len(vocab) or len(vocab) != config.vocab_size:
        raise _Bad("vocab", f"{_shown(vocab)} must be the config's vocab_size {config.vocab_size} distinct characters")
    if not _is_int(ckpt["seed"]):
        raise _Bad("seed", f"{_shown(ckpt['seed'])} must be an integer")
    elapsed = ckpt["elapsed"]
    if not _is_number(elapsed) or not 0 <= elapsed < math.inf:
        raise _Bad("elapsed", f"{_shown(elapsed)} must be a finite number of seconds >= 0")
    world_size = ckpt.get("world_size", 1)
    if not _is_int(world_size) or world_size < 1:
        raise _Bad("world_size", f"{_shown(world_size)} must be an integer >= 1")
    if ckpt["rng"] is None and "rng_ranks" not in ckpt:
        raise _Bad("rng", "is null (a data-parallel run's), but there is no 'rng_ranks'")
    if ckpt["rng"] is not None:
        _rng_state(_json(ckpt, "rng", (dict,)), "rng")
    if "rng_ranks" in ckpt:
        states = _json(ckpt, "rng_ranks", (list,))
        if len(states) != world_size:
            raise _Bad("rng_ranks", f"holds {len(states)} state(s), the run had {world_size} rank(s)")
        for s in states:
            _rng_state(s, "rng_ranks")
    data = ckpt.get("data", "")
    if not isinstance(data, str) or (data and not re.fullmatch("[0-9a-f]{16}", data)):
        raise _Bad("data", f"{_shown(data)} must be the data's fingerprint (16 hex digits)")
    for entry in _json(ckpt, "resumes", (list,)) if "resumes" in ckpt else []:
        if not (isinstance(entry, dict) and _is_int(entry.get("step")) and isinstance(entry.get("changed"), dict)):
            raise _Bad("resumes", f"holds {_shown(entry)}, must hold {{step, changed}} objects")
    return config


def check_fields(ckpt, path) -> GPTConfig:
    """The config of a training checkpoint whose every field has the type, range and consistency
    train() writes (all but the weights' shapes: see check_state); CheckpointError naming `path`
    and the first bad field otherwise."""
    if not isinstance(ckpt, dict) or not any(f in ckpt for f in REQUIRED):
        raise CheckpointError(f"{path}: not a training checkpoint (no 'config' and 'model' entries)")
    try:
        return _check_fields(ckpt)
    except _Bad as e:
        raise _error(path, e.name, e.problem) from None


def _tensors(entries: dict, expected: dict, name: str):
    """`entries` must hold a tensor of the expected shape and dtype under each expected key, and nothing else."""
    missing = [k for k in expected if k not in entries]
    extra = [k for k in entries if k not in expected]
    if missing or extra:
        raise _Bad(name, f"lacks {missing[0]!r}" if missing else f"has an unknown entry {_shown(extra[0])}")
    for key, (shape, dtype) in expected.items():
        value = entries[key]
        if not isinstance(value, Tensor):
            raise _Bad(name, f"{key!r} is a {type(value).__name__}, must be a tensor")
        if tuple(value.shape) != shape or str(value.dtype) != dtype:
            raise _Bad(name, f"{key!r} is {value.dtype} {tuple(value.shape)}, the model's is {dtype} {shape}")


def _like(value, own) -> bool:
    """A hyperparameter: a finite number >= 0, or a tuple of as many as the optimizer's own."""
    if isinstance(own, (tuple, list)):
        return isinstance(value, (tuple, list)) and len(value) == len(own) and all(_like(v, 0.0) for v in value)
    return _is_number(value) and 0 <= value < math.inf


def _optimizer(saved: dict, optimizer):
    if set(saved) != {"state", "param_groups"}:
        raise _Bad("optimizer", f"has entries {sorted(map(str, saved))}, must have 'state' and 'param_groups'")
    groups, fresh = saved["param_groups"], optimizer.state_dict()["param_groups"]
    if not isinstance(groups, list) or len(groups) != len(fresh):
        raise _Bad("optimizer", f"param_groups must be a list of {len(fresh)} group(s)")
    params = {}
    for i, (group, own) in enumerate(zip(groups, fresh)):
        if not isinstance(group, dict) or set(group) != set(own):
            raise _Bad("optimizer", f"param_groups[{i}] must have the entries {sorted(own)}")
        indices = group["params"]  # ints, each checked before `!=` (a tensor among them would compare by value)
        if not isinstance(indices, list) or not all(map(_is_int, indices)) or indices != own["params"]:
            raise _Bad("optimizer", f"param_groups[{i}] params must be {own['params'][:3]}...{own['params'][-1:]}")
        for key, value in group.items():
            if key != "params" and not _like(value, own[key]):
                raise _Bad("optimizer", f"param_groups[{i}] {key} {_shown(value)} must be like {own[key]!r}")
        params.update(zip(own["params"], optimizer.param_groups[i]["params"]))
    state = saved["state"]
    if not isinstance(state, dict):
        raise _Bad("optimizer", "state must be a dict")
    for idx, s in state.items():
        p = params.get(idx)
        if p is None:
            raise _Bad("optimizer", f"state {_shown(idx)} is not one of the model's {len(params)} parameters")
        if not isinstance(s, dict) or not _is_int(s.get("step")) or s["step"] < 0:
            raise _Bad("optimizer", f"state {idx} must have a 'step' (an integer >= 0)")
        moments = {k: v for k, v in s.items() if k != "step"}
        _tensors(moments, {k: (tuple(p.shape), str(p.dtype)) for k in ("exp_avg", "exp_avg_sq")}, "optimizer")


def _same_structure(saved, own) -> bool:
    """Whether a saved generator state has the keys and kinds of values of this device's own."""
    if isinstance(own, dict):
        same_keys = isinstance(saved, dict) and set(saved) == set(own)
        return same_keys and all(_same_structure(saved[k], own[k]) for k in own)
    if _is_int(own):
        return _is_int(saved)
    return type(saved) is type(own)


def check_state(ckpt, path, model, optimizer=None, device=None):
    """The weights fit `model` (every key, shape and dtype), the optimizer's state fits `optimizer`
    and, given the `device` a resume runs on, the random state fits its generator; CheckpointError
    naming `path` and the field otherwise.  After check_fields."""
    try:
        expected = {k: (tuple(v.shape), str(v.dtype)) for k, v in model.state_dict().items()}
        _tensors(ckpt["model"], expected, "model")
        if optimizer is not None:
            _optimizer(ckpt["optimizer"], optimizer)
        if device is not None and ckpt["rng"] is not None:
            if not _same_structure(json.loads(ckpt["rng"]), get_rng_state(device)):
                raise _Bad("rng", f"is not a state of the {device} generator (written on another kind of device?)")
    except _Bad as e:
        raise _error(path, e.name, e.problem) from None
