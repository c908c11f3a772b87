"""Hypothesis property tests of the losses and F.normalize over random shapes and options.

Forward values against a NumPy reference written from PyTorch's documented formulas;
gradients by central differences (tg.gradcheck, float64), since the shapes are small.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import tensorgrad as tg
import tensorgrad.nn.functional as F
from tensorgrad.testing import strategies as S

# float64 against NumPy float64 with the same formulas in another order: rounding only.
TOL = {"rtol": 1e-10, "atol": 1e-10}


def np_log_softmax(x, axis):
    z = x - x.max(axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis, keepdims=True))


@st.composite
def ce_case(draw):
    """Logits (N, C, d...), int targets with some ignored, or probability targets; options."""
    n, c = draw(st.integers(1, 4)), draw(st.integers(2, 4))
    extra = draw(S.shapes(min_dims=0, max_dims=2, max_side=3))
    x = draw(S.float_arrays((n, c) + extra, -4, 4))
    rng = np.random.default_rng(draw(st.integers(0, 1000)))
    if draw(st.booleans()):
        t = rng.integers(0, c, (n,) + extra)
        t[rng.random(t.shape) < 0.2] = -100
        if (t == -100).all():
            t.reshape(-1)[0] = 0  # keep the mean finite
    else:
        t = rng.random((n, c) + extra)
        t /= t.sum(1, keepdims=True)
    weight = rng.uniform(0.5, 2, c) if draw(st.booleans()) else None
    return x, t, weight, draw(st.sampled_from(["mean", "sum", "none"])), draw(st.sampled_from([0.0, 0.1, 0.5]))


def np_cross_entropy(x, t, weight, reduction, eps):
    c = x.shape[1]
    logp = np_log_softmax(x, 1)
    w = np.ones(c) if weight is None else weight
    wshape = (1, c) + (1,) * (x.ndim - 2)
    if t.dtype.kind == "f":
        y = t * (1 - eps) + eps / c
        per = -(logp * y * w.reshape(wshape)).sum(1)
        return per.mean() if reduction == "mean" else per.sum() if reduction == "sum" else per
    keep = t != -100
    safe = np.where(keep, t, 0)
    picked = np.take_along_axis(logp, safe[:, None], 1)[:, 0]
    wt = w[safe] * keep
    nll = -wt * picked
    smooth = -(logp * w.reshape(wshape)).sum(1) * keep
    per = (1 - eps) * nll + eps / c * smooth
    return per.sum() / wt.sum() if reduction == "mean" else per.sum() if reduction == "sum" else per


@given(case=ce_case(), device=S.devices(cuda=False))
def test_cross_entropy_property(case, device):
    x, t, weight, reduction, eps = case
    target = tg.tensor(t, device=device)
    w = None if weight is None else tg.tensor(weight, device=device)
    lx = tg.tensor(x, device=device, requires_grad=True)

    def fn(a):
        return F.cross_entropy(a, target, weight=w, reduction=reduction, label_smoothing=eps)

    np.testing.assert_allclose(fn(lx).numpy(), np_cross_entropy(x, t, weight, reduction, eps), **TOL)
    assert tg.gradcheck(fn, [lx])


@given(x=S.float_arrays(S.shapes(), -6, 6), data=st.data(), device=S.devices(cuda=False))
def test_bce_with_logits_is_bce_of_sigmoid(x, data, device):
    """Away from saturation both are the same function; pos_weight = 1 changes nothing."""
    y = data.draw(S.float_arrays(x.shape, 0, 1))
    reduction = data.draw(st.sampled_from(["mean", "sum", "none"]))
    lx = tg.tensor(x, device=device, requires_grad=True)
    ty = tg.tensor(y, device=device)
    ones = tg.ones(x.shape[-1:], dtype=tg.float64, device=device)
    a = F.binary_cross_entropy_with_logits(lx, ty, reduction=reduction, pos_weight=ones)
    b = F.binary_cross_entropy(1 / (1 + (-lx).exp()), ty, reduction=reduction)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-12)  # log(1 - sigmoid) loses digits
    assert tg.gradcheck(lambda v: F.binary_cross_entropy_with_logits(v, ty, reduction=reduction), [lx])


@given(case=S.array_and_dim(), p=st.sampled_from([1.0, 2.0, 3.0]), device=S.devices(cuda=False))
def test_normalize_gives_unit_norm(case, p, device):
    x, dim = case
    lx = tg.tensor(x, device=device, requires_grad=True)
    y = F.normalize(lx, p=p, dim=dim).numpy()
    norm = (np.abs(x) ** p).sum(dim, keepdims=True) ** (1 / p)
    np.testing.assert_allclose(y, x / np.maximum(norm, 1e-12), **TOL)
    # away from the kinks (the clamp; |x| at 0 when p = 1), where central differences are meaningful
    if (norm > 1e-3).all() and (p > 1 or (np.abs(x) > 1e-3).all()):
        assert tg.gradcheck(lambda v: F.normalize(v, p=p, dim=dim), [lx])


@given(x=S.float_arrays(S.shapes()), data=st.data(), device=S.devices(cuda=False))
def test_mse_and_l1_match_numpy(x, data, device):
    y = data.draw(S.float_arrays(x.shape))
    lx, ly = (tg.tensor(a, device=device, requires_grad=True) for a in (x, y))
    np.testing.assert_allclose(F.mse_loss(lx, ly).numpy(), ((x - y) ** 2).mean(), **TOL)
    loss = F.l1_loss(lx, ly, reduction="sum")
    np.testing.assert_allclose(loss.numpy(), np.abs(x - y).sum(), **TOL)
    loss.backward()
    np.testing.assert_array_equal(lx.grad.numpy(), np.sign(x - y))
    np.testing.assert_array_equal(ly.grad.numpy(), -np.sign(x - y))
