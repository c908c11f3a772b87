"""Modules, optimizers and clip_grad_norm_ against PyTorch, on the same weights (float64)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn as nn

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.reference

# float64 throughout: both sides compute the same formulas, differing only in summation
# order, so agreement is at round-off level (~1e-15 relative); 1e-10 leaves headroom.
RTOL, ATOL = 1e-10, 1e-12


def _torch_state(module):
    return {k: torch.from_numpy(v.numpy()) for k, v in module.state_dict().items()}


def _check_module(ours, theirs, x_np, rng):
    """Same weights (loaded by state_dict key: the keys must match PyTorch's), then forward,
    and backward with a random cotangent, compared for the input and every parameter."""
    ours.double()
    theirs.double()
    theirs.load_state_dict(_torch_state(ours))
    floating = x_np.dtype.kind == "f"
    x = tg.tensor(x_np, requires_grad=floating)
    xt = torch.tensor(x_np, requires_grad=floating)
    y, yt = ours(x), theirs(xt)
    np.testing.assert_allclose(y.numpy(), yt.detach().numpy(), rtol=RTOL, atol=ATOL)
    cot = rng.standard_normal(y.shape)
    y.backward(tg.tensor(cot))
    yt.backward(torch.from_numpy(cot))
    if floating:
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=RTOL, atol=ATOL)
    theirs_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), theirs_params[name].grad.numpy(), rtol=RTOL, atol=ATOL, err_msg=name)


@pytest.mark.parametrize("bias", [True, False])
def test_linear(bias):
    rng = np.random.default_rng(0)
    _check_module(nn.Linear(5, 3, bias=bias), torch.nn.Linear(5, 3, bias=bias), rng.standard_normal((2, 4, 5)), rng)


def test_embedding():
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 7, size=(3, 5))
    ids[0, :3] = 2  # repeated ids: their gradient rows add up
    _check_module(nn.Embedding(7, 4), torch.nn.Embedding(7, 4), ids, rng)


def test_layernorm():
    rng = np.random.default_rng(2)
    ours, theirs = nn.LayerNorm(6), torch.nn.LayerNorm(6)
    nn.init.normal_(ours.weight)  # non-trivial affine so its gradients are exercised
    nn.init.normal_(ours.bias)
    _check_module(ours, theirs, rng.standard_normal((3, 4, 6)) * 3 + 1, rng)


@pytest.mark.parametrize("ours,theirs", [(nn.ReLU(), torch.nn.ReLU()), (nn.GELU(), torch.nn.GELU())])
def test_activations(ours, theirs):
    rng = np.random.default_rng(3)
    _check_module(ours, theirs, rng.standard_normal((4, 7)), rng)


def test_gelu_tanh():
    rng = np.random.default_rng(4)
    _check_module(nn.GELU("tanh"), torch.nn.GELU("tanh"), rng.standard_normal((4, 7)), rng)


def test_sequential():
    rng = np.random.default_rng(5)
    ours = nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3))
    theirs = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.GELU(), torch.nn.LayerNorm(8), torch.nn.Linear(8, 3))
    _check_module(ours, theirs, rng.standard_normal((5, 6)), rng)


def test_dropout_eval_is_identity_train_keeps_and_scales():
    d = nn.Dropout(0.25)
    x = tg.ones(200_000)
    y = d.eval()(x)
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    y = d.train()(x).numpy()
    kept = y != 0
    # 200k Bernoulli(0.75) draws: the keep rate's sd is ~0.001, so 0.01 is ~10 sd.
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_array_equal(y[kept], np.float32(1 / 0.75))  # inverted dropout: exact 1/(1-p)


def _grad_fn(p, step, rng_seed):
    """A deterministic, nonlinear 'gradient' of the current parameter (same on both sides)."""
    noise = np.random.default_rng(rng_seed + step).standard_normal(p.shape)
    return np.sin(3 * p) + 0.5 * p + 0.1 * noise


def _run_both(make_ours, make_theirs, shapes, steps, dtype=np.float64):
    rng = np.random.default_rng(7)
    inits = [rng.standard_normal(s).astype(dtype) for s in shapes]
    ours = [nn.Parameter(tg.tensor(a)) for a in inits]
    theirs = [torch.nn.Parameter(torch.tensor(a)) for a in inits]
    opt, topt = make_ours(ours), make_theirs(theirs)
    for step in range(steps):
        for i, (p, q) in enumerate(zip(ours, theirs)):
            p.grad = tg.tensor(_grad_fn(p.numpy(), step, 100 * i).astype(dtype))
            q.grad = torch.tensor(_grad_fn(q.detach().numpy(), step, 100 * i).astype(dtype))
        opt.step()
        topt.step()
    return ours, theirs, opt, topt


def _assert_params_close(ours, theirs, rtol, atol):
    for i, (p, q) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=rtol, atol=atol, err_msg=f"param {i}")


def test_adamw_matches_torch_over_50_steps_with_weight_decay():
    shapes = [(4, 3), (3,), (2, 2, 2)]
    kw = dict(lr=1e-2, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    ours, theirs, opt, topt = _run_both(
        lambda ps: tg.optim.AdamW(ps, **kw), lambda ps: torch.optim.AdamW(ps, **kw), shapes, 50
    )
    _assert_params_close(ours, theirs, rtol=1e-6, atol=1e-6)  # the bound
    _assert_params_close(ours, theirs, rtol=1e-12, atol=1e-13)  # float64, same op order: round-off only
    for p, q in zip(ours, theirs):
        s, ts = opt.state[p], topt.state[q]
        assert s["step"] == int(ts["step"])
        np.testing.assert_allclose(s["exp_avg_sq"].numpy(), ts["exp_avg_sq"].numpy(), rtol=1e-12, atol=1e-15)


def test_adamw_two_param_groups():
    shapes = [(5, 2), (2,)]

    def groups(ps):
        return [{"params": [ps[0]], "weight_decay": 0.2}, {"params": [ps[1]], "lr": 3e-3, "weight_decay": 0.0}]

    ours, theirs, opt, _ = _run_both(
        lambda ps: tg.optim.AdamW(groups(ps), lr=1e-2), lambda ps: torch.optim.AdamW(groups(ps), lr=1e-2), shapes, 50
    )
    _assert_params_close(ours, theirs, rtol=1e-12, atol=1e-13)  # float64: round-off only
    assert opt.param_groups[1]["lr"] == 3e-3 and opt.param_groups[0]["betas"] == (0.9, 0.999)


def test_adamw_float32_stays_float32_and_matches_torch():
    ours, theirs, opt, _ = _run_both(
        lambda ps: tg.optim.AdamW(ps, lr=1e-2), lambda ps: torch.optim.AdamW(ps, lr=1e-2), [(8, 8)], 50, np.float32
    )
    assert ours[0].dtype == tg.float32
    assert opt.state[ours[0]]["exp_avg"].dtype == tg.float32 and opt.state[ours[0]]["exp_avg_sq"].dtype == tg.float32
    _assert_params_close(ours, theirs, rtol=1e-5, atol=1e-6)  # float32: ~1e-7 round-off per step, 50 steps


@pytest.mark.parametrize(
    "kw",
    [
        dict(lr=0.1),
        dict(lr=0.05, momentum=0.9),
        dict(lr=0.05, momentum=0.9, weight_decay=0.01, dampening=0.1),
        dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.02),
    ],
)
def test_sgd_matches_torch(kw):
    ours, theirs, _, _ = _run_both(
        lambda ps: tg.optim.SGD(ps, **kw), lambda ps: torch.optim.SGD(ps, **kw), [(3, 4), (4,)], 30
    )
    _assert_params_close(ours, theirs, rtol=1e-12, atol=1e-13)  # float64, same op order: round-off only


@pytest.mark.parametrize("max_norm,norm_type", [(1.0, 2.0), (100.0, 2.0), (0.5, float("inf")), (0.7, 1.0)])
def test_clip_grad_norm_matches_torch(max_norm, norm_type):
    rng = np.random.default_rng(8)
    grads = [rng.standard_normal(s) for s in [(3, 4), (5,), (2, 2)]]
    ours = [nn.Parameter(tg.zeros(*g.shape, dtype=tg.float64)) for g in grads]
    theirs = [torch.nn.Parameter(torch.zeros(g.shape, dtype=torch.float64)) for g in grads]
    for p, q, g in zip(ours, theirs, grads):
        p.grad, q.grad = tg.tensor(g), torch.tensor(g)
    total = nn.utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    ttotal = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert isinstance(total, tg.Tensor) and total.ndim == 0
    np.testing.assert_allclose(total.item(), ttotal.item(), rtol=1e-12)  # float64 norms: round-off only
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12, atol=1e-15)  # same reason
