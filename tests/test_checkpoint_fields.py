"""Every field of a checkpoint is checked on load: a bad one is one `error:` line naming the
checkpoint file and the field, in every program that reads checkpoints (train --resume,
generate, probe, inspect), never a traceback and never a flag nobody passed."""

from __future__ import annotations

import json
import shutil

import pytest
from cli_helpers import FAST, TEXT, run

import tensorgrad as tg
from gpt.cli import generate, inspect_model, probe
from gpt.cli import train as cli_train


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """A finished tiny run: its directory and its last checkpoint's fields."""
    out = tmp_path_factory.mktemp("good")
    (out / "input.txt").write_text(TEXT)
    cli_train.main(["--data", str(out / "input.txt"), "--out-dir", str(out / "run"), *FAST])
    return out


def _set(key, value):
    def corrupt(ckpt):
        ckpt[key] = value

    return corrupt


def _drop(key):
    def corrupt(ckpt):
        del ckpt[key]

    return corrupt


def _config(**changes):
    def corrupt(ckpt):
        cfg = json.loads(ckpt["config"])
        for k, v in changes.items():
            if v is _DROP:
                del cfg[k]
            else:
                cfg[k] = v
        ckpt["config"] = json.dumps(cfg)

    return corrupt


_DROP = object()


def _weight(name, value):
    def corrupt(ckpt):
        if value is _DROP:
            del ckpt["model"][name]
        else:
            ckpt["model"][name] = value

    return corrupt


def _optimizer(fn):
    def corrupt(ckpt):
        fn(ckpt["optimizer"])

    return corrupt


RNG = {"bit_generator": "PCG64", "state": {"state": 1, "inc": 3}, "has_uint32": 0, "uinteger": 0}


def _rng(state):
    return _set("rng", json.dumps(state))


def _lr_text(opt):
    opt["param_groups"][0]["lr"] = "fast"


def _moment_shape(opt):
    opt["state"][0]["exp_avg"] = tg.zeros(3)


def _moment_dtype(opt):
    opt["state"][0]["exp_avg_sq"] = opt["state"][0]["exp_avg_sq"].double()


def _step_text(opt):
    opt["state"][0]["step"] = "six"


def _stranger(opt):
    opt["state"][999] = opt["state"][0]


def _no_moment(opt):
    del opt["state"][0]["exp_avg"]


def _one_param_less(opt):
    opt["param_groups"][0]["params"] = opt["param_groups"][0]["params"][:-1]


def _no_groups(opt):
    del opt["param_groups"]


def _params_as_tensors(opt):
    """The group's parameter indices as one-element tensors of the same values: compared with the
    optimizer's indices by `!=` (tensors compare by value), they passed the check, and the
    optimizer's load_state_dict raised a ValueError (a traceback)."""
    group = opt["param_groups"][0]
    group["params"] = [tg.tensor([i]) for i in group["params"]]


def _params_as_long_tensors(opt):
    """As above, two elements each: the truth value of `!=` raised "only a one-element tensor converts"."""
    group = opt["param_groups"][0]
    group["params"] = [tg.tensor([i, i]) for i in group["params"]]


CASES = {  # name: (corruption, the field the error names)
    "model missing": (_drop("model"), "model"),
    "model not a dict": (_set("model", "weights"), "model"),
    "weight of the wrong shape": (_weight("lm_head.weight", tg.zeros(3, 32)), "model"),
    "weight of the wrong dtype": (_weight("lm_head.bias", tg.zeros(27, dtype=tg.float64)), "model"),
    "weight not a tensor": (_weight("ln_f.bias", 1.5), "model"),
    "weight missing": (_weight("ln_f.weight", _DROP), "model"),
    "weight unknown": (_weight("extra.weight", tg.zeros(2)), "model"),
    "optimizer missing": (_drop("optimizer"), "optimizer"),
    "optimizer not a dict": (_set("optimizer", [1, 2]), "optimizer"),
    "optimizer without param_groups": (_optimizer(_no_groups), "optimizer"),
    "optimizer lr text": (_optimizer(_lr_text), "optimizer"),
    "optimizer params one short": (_optimizer(_one_param_less), "optimizer"),
    "optimizer params one-element tensors": (_optimizer(_params_as_tensors), "optimizer"),
    "optimizer params tensors": (_optimizer(_params_as_long_tensors), "optimizer"),
    "optimizer moment of the wrong shape": (_optimizer(_moment_shape), "optimizer"),
    "optimizer moment of the wrong dtype": (_optimizer(_moment_dtype), "optimizer"),
    "optimizer moment missing": (_optimizer(_no_moment), "optimizer"),
    "optimizer step text": (_optimizer(_step_text), "optimizer"),
    "optimizer state of no parameter": (_optimizer(_stranger), "optimizer"),
    "config missing": (_drop("config"), "config"),
    "config not JSON": (_set("config", "{kind: gpt"), "config"),
    "config not an object": (_set("config", "[1, 2]"), "config"),
    "config value of the wrong type": (_config(n_embd="32"), "config"),
    "config bool for an int": (_config(n_layer=True), "config"),
    "config text for a float": (_config(dropout="none"), "config"),
    "config out of range": (_config(n_embd=33), "config"),
    "config unknown kind": (_config(kind="rnn"), "config"),
    "config field missing": (_config(n_head=_DROP), "config"),
    "config field unknown": (_config(depth=3), "config"),
    "preset missing": (_drop("preset"), "preset"),
    "preset not the config's": (_set("preset", "large"), "preset"),
    "preset a tensor": (_set("preset", tg.zeros(2)), "preset"),  # `!=` the config's preset: elementwise
    "step missing": (_drop("step"), "step"),
    "step text": (_set("step", "6"), "step"),
    "step negative": (_set("step", -1), "step"),
    "step past max_iters": (_set("step", 10**9), "step"),
    "evaluated missing": (_drop("evaluated"), "evaluated"),
    "evaluated text": (_set("evaluated", "yes"), "evaluated"),
    "eval missing": (_drop("eval"), "eval"),
    "eval not JSON": (_set("eval", "{"), "eval"),
    "eval without evaluated": (_set("eval", json.dumps({"step": 6, "train": 1.0, "val": 1.0, "time": 1.0})), "eval"),
    "eval malformed": (_set("eval", json.dumps({"step": 6})), "eval"),
    "eval null though evaluated": (_set("evaluated", True), "eval"),
    "best_val missing": (_drop("best_val"), "best_val"),
    "best_val text": (_set("best_val", "low"), "best_val"),
    "best_val NaN": (_set("best_val", float("nan")), "best_val"),
    "best_step missing": (_drop("best_step"), "best_step"),
    "best_step float": (_set("best_step", 2.5), "best_step"),
    "vocab missing": (_drop("vocab"), "vocab"),
    "vocab too short": (_set("vocab", "abc"), "vocab"),
    "vocab a number": (_set("vocab", 27), "vocab"),
    "seed missing": (_drop("seed"), "seed"),
    "seed text": (_set("seed", "1337"), "seed"),
    "elapsed missing": (_drop("elapsed"), "elapsed"),
    "elapsed negative": (_set("elapsed", -1.0), "elapsed"),
    "rng missing": (_drop("rng"), "rng"),
    "rng not JSON": (_set("rng", "PCG64!"), "rng"),
    "rng malformed": (_rng({"bit_generator": "PCG64", "state": "x"}), "rng"),
    "rng state text": (_rng({**RNG, "state": {"state": "1", "inc": 3}}), "rng"),
    "rng null on one rank": (_set("rng", None), "rng"),
    "world_size text": (_set("world_size", "2"), "world_size"),
    "rng_ranks of another count": (_set("rng_ranks", "[]"), "rng_ranks"),
    "data a number": (_set("data", 5), "data"),
    "data not a fingerprint": (_set("data", "other.txt"), "data"),
    "resumes not JSON": (_set("resumes", "[{"), "resumes"),
    "resumes malformed": (_set("resumes", json.dumps([{"step": "six"}])), "resumes"),
    "unknown field": (_set("bogus", 1), "bogus"),
}


def test_every_field_has_cases():
    from gpt.checkpoint_fields import OPTIONAL, REQUIRED

    named = {field for _, field in CASES.values()}
    assert set(REQUIRED) | set(OPTIONAL) <= named


def _programs(run_dir, corpus):
    """(name, main, argv) of every program that reads the checkpoint."""
    ckpt = run_dir / "last.npz"
    return [
        ("train", cli_train.main, ["--data", corpus, "--out-dir", run_dir, *FAST, "--max-iters", "9", "--resume"]),
        ("generate", generate.main, [ckpt, "--tokens", "5"]),
        ("probe", probe.main, [ckpt, "--data", corpus]),
        ("inspect", inspect_model.main, [ckpt, "--data", corpus, "--batch-size", "2"]),
    ]


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_field_is_one_line_naming_the_checkpoint_and_the_field(case, good, tmp_path, capsys):
    corrupt, field = CASES[case]
    run_dir = tmp_path / "run"
    shutil.copytree(good / "run", run_dir)
    ckpt = tg.load(run_dir / "last.npz")
    corrupt(ckpt)
    tg.save(ckpt, run_dir / "last.npz")
    for name, main, argv in _programs(run_dir, good / "input.txt"):
        code, out, err = run(main, argv, capsys)
        assert code == 1, (name, out, err)
        assert err.startswith("error: ") and len(err.splitlines()) == 1, (name, err)
        assert "Traceback" not in err
        assert str(run_dir / "last.npz") in err, (name, err)
        assert f"checkpoint field {field!r}" in err, (name, err)
        assert " --" not in err, (name, err)  # no flag: nobody passed one for this


def test_the_good_checkpoint_passes_in_every_program(good, tmp_path, capsys):
    run_dir = tmp_path / "run"
    shutil.copytree(good / "run", run_dir)
    for name, main, argv in _programs(run_dir, good / "input.txt"):
        code, out, err = run(main, argv, capsys)
        assert code == 0, (name, err)


def test_a_checkpoint_of_another_device_is_one_line_on_resume(good, tmp_path, capsys):
    """A GPU's generator state in a CPU resume: the rng field, not a ValueError from the generator."""
    run_dir = tmp_path / "run"
    shutil.copytree(good / "run", run_dir)
    ckpt = tg.load(run_dir / "last.npz")
    ckpt["rng"] = json.dumps({"bit_generator": "Philox4x3210", "threads": 4, "state": "AAAA"})
    tg.save(ckpt, run_dir / "last.npz")
    train = _programs(run_dir, good / "input.txt")[0]
    code, out, err = run(train[1], train[2], capsys)
    assert code == 1 and err.startswith("error: ") and len(err.splitlines()) == 1, err
    assert "checkpoint field 'rng'" in err and "cpu generator" in err
    # sampling needs no generator state: the other programs read it
    code, out, err = run(generate.main, [run_dir / "last.npz", "--tokens", "5"], capsys)
    assert code == 0, err
