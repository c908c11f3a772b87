"""Selection ops (ops/selection.py): topk, sort, argsort, max/min along a dim, amin, maximum,
minimum.  Hypothesis properties over random shapes, dims and (frequent) ties against NumPy,
the tie rules against PyTorch, and the errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import backprop, leaf
from hypothesis import given
from hypothesis import strategies as st

import tensorgrad as tg
from tensorgrad.testing import strategies as S

# float64 against NumPy: these ops only move values, so results are exact.
EXACT = {"rtol": 0, "atol": 0}


@st.composite
def tied_array_and_dim(draw, min_dims=1):
    """Small-integer float arrays (many ties) and a dim."""
    shape = draw(S.shapes(min_dims=min_dims))
    x = draw(S.float_arrays(shape, -2, 2)).round()
    return x, draw(S.dims(len(shape)))


def scatter(v, index, dim, shape):
    """NumPy reference of the backward: v sent back to the positions it was read from."""
    g = np.zeros(shape)
    np.put_along_axis(g, index, v, axis=dim)
    return g


@given(data=tied_array_and_dim(), descending=st.booleans())
def test_sort_is_a_stable_permutation(device, data, descending):
    x, dim = data
    t = leaf(x, device)
    values, index = t.sort(dim, descending=descending)
    want = np.argsort(-x if descending else x, axis=dim, kind="stable")
    np.testing.assert_array_equal(index.numpy(), want)
    assert index.dtype == tg.int64 and not index.requires_grad
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(x, want, dim))
    np.testing.assert_array_equal(t.argsort(dim, descending=descending).numpy(), want)
    v = backprop(values, device)
    np.testing.assert_allclose(t.grad.numpy(), scatter(v, want, dim, x.shape), **EXACT)


@given(data=tied_array_and_dim(), largest=st.booleans(), k_frac=st.floats(0, 1))
def test_topk_is_the_head_of_the_stable_sort(device, data, largest, k_frac):
    x, dim = data
    k = int(round(k_frac * x.shape[dim]))
    t = leaf(x, device)
    values, index = t.topk(k, dim, largest=largest)
    order = np.argsort(-x if largest else x, axis=dim, kind="stable")
    want = np.take(order, np.arange(k), axis=dim)
    np.testing.assert_array_equal(index.numpy(), want)
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(x, want, dim))
    if k:
        v = backprop(values, device)
        g = t.grad.numpy()
        np.testing.assert_allclose(g, scatter(v, want, dim, x.shape), **EXACT)
        assert np.count_nonzero(g) <= values.numel()  # only the selected entries get a gradient


@given(data=tied_array_and_dim(), keepdim=st.booleans(), largest=st.booleans())
def test_max_min_dim_send_the_gradient_to_the_returned_index(device, data, keepdim, largest):
    """With ties (frequent here) the whole gradient goes to the first extreme, as in PyTorch."""
    x, dim = data
    t = leaf(x, device)
    values, index = t.max(dim, keepdim) if largest else t.min(dim, keepdim)
    first = (np.argmax if largest else np.argmin)(x, axis=dim)
    np.testing.assert_array_equal(index.numpy(), first if not keepdim else np.expand_dims(first, dim))
    np.testing.assert_array_equal(values.numpy(), (np.amax if largest else np.amin)(x, axis=dim, keepdims=keepdim))
    v = backprop(values, device)
    vk = v if keepdim else np.expand_dims(v, dim)
    np.testing.assert_allclose(t.grad.numpy(), scatter(vk, np.expand_dims(first, dim), dim, x.shape), **EXACT)


@given(data=S.array_and_reduce_dims(), keepdim=st.booleans())
def test_amin_ties_share_the_gradient(device, data, keepdim):
    x, dim = data
    x = x.round()  # ties
    axes = tuple(range(x.ndim)) if dim is None else tuple(d % x.ndim for d in np.atleast_1d(dim))
    t = leaf(x, device)
    out = t.amin(dim, keepdim=keepdim)
    np.testing.assert_array_equal(out.numpy(), np.amin(x, axis=axes, keepdims=keepdim))
    v = backprop(out, device)
    hit = x == np.amin(x, axis=axes, keepdims=True)
    vk = v if keepdim else np.expand_dims(v, axes)
    want = vk * hit / hit.sum(axis=axes, keepdims=True)
    np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-15, atol=0)  # one division by a count


@given(data=S.broadcastable_arrays(-2, 2), largest=st.booleans())
def test_maximum_minimum_split_ties_in_halves(device, data, largest):
    a, b = (np.round(x) for x in data)  # ties
    ta, tb = leaf(a, device), leaf(b, device)
    out = ta.maximum(tb) if largest else tg.minimum(ta, tb)
    np.testing.assert_array_equal(out.numpy(), (np.maximum if largest else np.minimum)(a, b))
    v = backprop(out, device)
    win_a = (a > b) if largest else (a < b)
    win_b = (b > a) if largest else (b < a)
    tie = (a == b) * 0.5
    for t, win in ((ta, win_a), (tb, win_b)):
        g = np.broadcast_to(v * (win + tie), out.shape)
        while g.ndim > t.ndim:
            g = g.sum(0)
        g = g.sum(axis=tuple(i for i, n in enumerate(t.shape) if n == 1), keepdims=True)
        np.testing.assert_allclose(t.grad.numpy(), g, rtol=1e-12, atol=1e-12)  # sums in another order


# ---------------------------------------------------------------- tie rules against PyTorch
TIES = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [0.0, -1.0, 5.0, -1.0]])


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.max(1).values,
        lambda lib, x: x.min(0).values,
        lambda lib, x: x.max(),
        lambda lib, x: x.min(),
        lambda lib, x: x.amin(1),
        lambda lib, x: x.sort(dim=1, descending=True, stable=True).values,
        lambda lib, x: lib.maximum(x, x[:, 1:2] * 0 + 2),
        lambda lib, x: lib.minimum(x, x.flip(1) if lib is not tg else x[:, [3, 2, 1, 0]]),
    ],
    ids=["max_dim", "min_dim", "max", "min", "amin", "sort", "maximum", "minimum"],
)
def test_tie_rules_match_torch(fn, device):
    """(Not topk: which of several tied entries PyTorch's topk picks is unspecified; ours takes the
    first, as the stable sort does.)"""
    torch = pytest.importorskip("torch")
    tx = torch.tensor(TIES, requires_grad=True)
    gx = tg.tensor(TIES, device=device, requires_grad=True)
    want, got = fn(torch, tx), fn(tg, gx)
    v = np.random.default_rng(0).standard_normal(tuple(want.shape))
    want.backward(torch.tensor(v))
    got.backward(tg.tensor(v, device=device))
    np.testing.assert_array_equal(got.numpy(), want.detach().numpy())
    np.testing.assert_array_equal(gx.grad.numpy(), tx.grad.numpy())


def test_indices_with_ties_match_torch():
    torch = pytest.importorskip("torch")
    tx, gx = torch.tensor(TIES), tg.tensor(TIES)
    for dim in (0, 1):
        for name in ("max", "min"):
            ours, theirs = getattr(gx, name)(dim).indices, getattr(tx, name)(dim).indices
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        np.testing.assert_array_equal(gx.argmin(dim).numpy(), tx.argmin(dim).numpy())
        np.testing.assert_array_equal(
            gx.sort(dim=dim, stable=True).indices.numpy(), tx.sort(dim=dim, stable=True).indices.numpy()
        )
        np.testing.assert_array_equal(
            gx.argsort(dim=dim, descending=True, stable=True).numpy(),
            tx.argsort(dim=dim, descending=True, stable=True).numpy(),
        )
    assert gx.argmin().item() == tx.argmin().item()


def test_integer_and_bool_inputs():
    torch = pytest.importorskip("torch")
    for a in (np.array([[3, 1, 2], [0, 5, 5]]), np.array([[True, False, True], [False, False, True]])):
        ours, theirs = tg.tensor(a), torch.tensor(a)
        for fn in (
            lambda x: x.sort(dim=1, descending=True, stable=True),
            lambda x: x.topk(2) if x.dtype not in (tg.bool, torch.bool) else x.max(1),
            lambda x: x.max(0),
            lambda x: (x.amin(1), x.argmin(1)) if x.dtype not in (tg.bool, torch.bool) else (x.amin(1),),
        ):
            for o, t in zip(fn(ours), fn(theirs)):
                assert o.dtype == {torch.int64: tg.int64, torch.bool: tg.bool}[t.dtype]
                np.testing.assert_array_equal(o.numpy(), t.numpy())


def test_zero_dim_inputs():
    x = tg.tensor(2.5, requires_grad=True)
    values, index = x.max(0)
    assert values.shape == () and index.item() == 0
    v, i = x.topk(1)
    assert v.item() == 2.5 and i.item() == 0
    (values + v).backward()
    assert x.grad.item() == 2.0


def test_errors():
    x = tg.randn(3, 4)
    with pytest.raises(RuntimeError, match=r"topk: k=5 is out of range .* size 4"):
        x.topk(5)
    with pytest.raises(IndexError, match="dim 2 is out of range"):
        x.sort(2)
    with pytest.raises(TypeError, match="maximum\\(\\): argument 'other' must be a Tensor"):
        x.maximum(1.0)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        tg.minimum(x, tg.randn(3))
