"""Optimizer state round trips (resume gives the same trajectory) and the cosine schedule."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn as nn
from tensorgrad.optim import SGD, AdamW, CosineWarmup


def _model():
    return nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3))


def _batches(n):
    rng = np.random.default_rng(3)
    return [
        (tg.tensor(rng.standard_normal((6, 4)).astype(np.float32)), tg.tensor(rng.integers(0, 3, 6))) for _ in range(n)
    ]


def _train(model, opt, batches, sched=None):
    for x, y in batches:
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()


def _make(kind, model):
    if kind == "adamw":
        rest = list(model.parameters())[1:]  # no decay on biases and LayerNorm, as nanoGPT
        opt = AdamW([{"params": [model[0].weight]}, {"params": rest, "weight_decay": 0.0}], lr=1e-2)
    else:
        opt = SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-3)
    return opt, CosineWarmup(opt, warmup_steps=3, max_steps=15, min_lr=1e-3)


@pytest.mark.parametrize("kind", ["adamw", "sgd"])
@pytest.mark.parametrize("through_file", [False, True])
def test_resume_continues_the_same_trajectory(kind, through_file, tmp_path):
    batches = _batches(16)
    tg.manual_seed(0)
    ref = _model()
    ref_opt, ref_sched = _make(kind, ref)
    _train(ref, ref_opt, batches, ref_sched)

    tg.manual_seed(0)
    first = _model()
    opt, sched = _make(kind, first)
    _train(first, opt, batches[:8], sched)
    ckpt = {"model": first.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(), "step": 8}
    if through_file:
        tg.save(ckpt, tmp_path / "ckpt.npz")
        ckpt = tg.load(tmp_path / "ckpt.npz")

    tg.manual_seed(123)  # a different init: everything must come from the checkpoint
    resumed = _model()
    opt2, sched2 = _make(kind, resumed)
    resumed.load_state_dict(ckpt["model"])
    opt2.load_state_dict(ckpt["optimizer"])
    sched2.load_state_dict(ckpt["scheduler"])
    assert ckpt["step"] == 8
    _train(resumed, opt2, batches[8:], sched2)

    for (name, p), q in zip(ref.named_parameters(), resumed.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=name)  # bit-for-bit: same ops, same order
    assert opt2.param_groups[0]["lr"] == ref_opt.param_groups[0]["lr"]


def test_optimizer_state_dict_layout_like_pytorch():
    model = _model()
    opt, _ = _make("adamw", model)
    _train(model, opt, _batches(1))
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1, 2, 3, 4, 5]]
    assert sd["param_groups"][0]["betas"] == (0.9, 0.999) and sd["param_groups"][1]["weight_decay"] == 0.0
    assert sorted(sd["state"]) == [0, 1, 2, 3, 4, 5]
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq"} and sd["state"][0]["step"] == 1


def test_optimizer_state_dict_survives_save_exactly(tmp_path):
    model = _model()
    opt, _ = _make("adamw", model)
    _train(model, opt, _batches(2))
    sd = opt.state_dict()
    tg.save(sd, tmp_path / "opt.npz")
    back = tg.load(tmp_path / "opt.npz")
    assert back["param_groups"] == sd["param_groups"]  # tuples, ints, floats: exactly
    for i, s in sd["state"].items():
        assert back["state"][i]["step"] == s["step"]
        np.testing.assert_array_equal(back["state"][i]["exp_avg"].numpy(), s["exp_avg"].numpy())


def test_load_state_dict_checks_groups():
    model = _model()
    opt = AdamW(model.parameters())
    other = AdamW([{"params": [model[0].weight]}, {"params": [model[0].bias]}])
    with pytest.raises(ValueError, match="parameter groups"):
        opt.load_state_dict(other.state_dict())
    with pytest.raises(ValueError, match="group 0 has 1 parameters"):
        AdamW([model[0].bias, model[0].weight]).load_state_dict(AdamW([model[0].weight]).state_dict())


def test_optimizer_argument_errors():
    p = nn.Parameter(tg.zeros(2))
    with pytest.raises(TypeError, match="iterable of Tensors"):
        AdamW(p)
    with pytest.raises(ValueError, match="empty parameter list"):
        AdamW([])
    with pytest.raises(ValueError, match="more than one parameter group"):
        AdamW([{"params": [p]}, {"params": [p]}])
    with pytest.raises(ValueError, match="Invalid learning rate"):
        SGD([p], lr=-1)


def test_zero_grad_and_params_without_grad_are_skipped():
    a, b = nn.Parameter(tg.ones(2)), nn.Parameter(tg.ones(2))
    opt = AdamW([a, b], lr=0.1)
    (a * 2).sum().backward()
    opt.step()
    assert b.numpy().tolist() == [1.0, 1.0] and b not in opt.state and a in opt.state
    opt.zero_grad(set_to_none=False)
    assert a.grad.numpy().tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert a.grad is None


@pytest.mark.parametrize("fused", [False, True])
def test_step_updates_in_place_on_the_device(fused):
    p = nn.Parameter(tg.ones(3, device="strict"))
    data = p._data  # the parameter keeps its array on either path
    opt = AdamW([p], lr=0.1, fused=fused)
    (p * p).sum().backward()
    opt.step()
    p.grad = None
    (p * p).sum().backward()
    opt.step()
    assert p._data is data and p.device == "strict" and opt.state[p]["exp_avg"].device == "strict"
    assert (p.numpy() < 1).all()


def test_cosine_warmup_values():
    p = nn.Parameter(tg.zeros(1))
    opt = SGD([{"params": [p]}, {"params": [nn.Parameter(tg.zeros(1))], "lr": 0.5}], lr=1.0)
    sched = CosineWarmup(opt, warmup_steps=10, max_steps=110, min_lr=0.1)
    lrs = [sched.get_last_lr()[0]]
    for _ in range(130):
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    assert lrs[0] == pytest.approx(0.1)  # (0 + 1) / 10 of the base lr: never a zero-lr first step
    assert lrs[4] == pytest.approx(0.5)
    assert lrs[9] == pytest.approx(1.0) and lrs[10] == pytest.approx(1.0)  # the ramp ends at the peak
    assert lrs[60] == pytest.approx(0.55)  # halfway through the cosine: (1 + 0.1) / 2
    assert lrs[35] == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi / 4)))
    assert lrs[110] == pytest.approx(0.1) and lrs[130] == pytest.approx(0.1)
    assert all(x >= y for x, y in zip(lrs[10:111], lrs[11:111]))  # monotone decay
    assert sched.get_last_lr()[1] == pytest.approx(0.1)  # each group from its own base lr, to min_lr


def test_cosine_warmup_state_dict():
    opt = SGD([nn.Parameter(tg.zeros(1))], lr=1.0)
    sched = CosineWarmup(opt, warmup_steps=5, max_steps=50)
    for _ in range(20):
        sched.step()
    opt2 = SGD([nn.Parameter(tg.zeros(1))], lr=1.0)
    sched2 = CosineWarmup(opt2, warmup_steps=1, max_steps=2)
    sched2.load_state_dict(sched.state_dict())
    assert sched2.get_last_lr() == sched.get_last_lr() and opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    sched.step()
    sched2.step()
    assert sched2.get_last_lr() == sched.get_last_lr()
