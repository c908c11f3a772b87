"""Reductions (std, prod, logsumexp, all, any) and scans (cumsum, cumprod, logcumsumexp, cummax,
cummin): hypothesis properties over random shapes and dims against NumPy, with gradients built
independently (prod and cumprod by replacing one factor with 1, not by the op's formula)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import backprop, leaf
from hypothesis import assume, given
from hypothesis import strategies as st

import tensorgrad as tg
from tensorgrad.testing import strategies as S

# float64 against NumPy float64 doing the same arithmetic in another order: rounding only.
TOL = {"rtol": 1e-10, "atol": 1e-10}


def axes_of(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    return tuple(d % ndim for d in ((dim,) if isinstance(dim, int) else dim))


def with_one(x, dim, k):
    """x with its k-th slice along dim replaced by ones."""
    y = x.copy()
    y[(slice(None),) * dim + (k,)] = 1.0
    return y


@given(data=S.array_and_reduce_dims(), keepdim=st.booleans(), correction=st.sampled_from([0, 1]))
def test_std(device, data, keepdim, correction):
    x, dim = data
    axes = axes_of(dim, x.ndim)
    n = int(np.prod([x.shape[a] for a in axes]))
    assume(n > correction)
    s = np.std(x, axis=axes, keepdims=True, ddof=correction)
    assume(np.all(s > 1e-6))  # the derivative of sqrt at 0 is infinite
    t = leaf(x, device)
    out = t.std(dim, keepdim=keepdim, correction=correction)
    np.testing.assert_allclose(out.numpy(), s if keepdim else s.reshape(out.shape), **TOL)
    v = backprop(out, device)
    vk = v if keepdim else np.expand_dims(v, axes)
    want = vk * (x - x.mean(axis=axes, keepdims=True)) / ((n - correction) * s)
    np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-9, atol=1e-9)  # divided by a small s
    std, mean = tg.std_mean(tg.tensor(x, device=device), dim, keepdim=keepdim, correction=correction)
    np.testing.assert_allclose(std.numpy(), out.numpy(), **TOL)
    np.testing.assert_allclose(mean.numpy(), x.mean(axis=axes, keepdims=keepdim), **TOL)


@given(data=S.array_and_dim(low=-2, high=2), keepdim=st.booleans(), whole=st.booleans())
def test_prod_with_zeros(device, data, keepdim, whole):
    """Rounded inputs: many exact zeros.  The gradient of each entry is the product of the others."""
    x, dim = data
    x = np.round(x * 2) / 2
    t = leaf(x, device)
    if whole:
        out = t.prod()
        want = np.array([np.prod(np.delete(x.reshape(-1), k)) for k in range(x.size)]).reshape(x.shape)
        np.testing.assert_allclose(out.numpy(), np.prod(x), **TOL)
        v = backprop(out, device)
        np.testing.assert_allclose(t.grad.numpy(), v * want, **TOL)
        return
    d = dim % x.ndim
    out = t.prod(dim, keepdim=keepdim)
    np.testing.assert_allclose(out.numpy(), np.prod(x, axis=d, keepdims=keepdim), **TOL)
    v = backprop(out, device)
    vk = v if keepdim else np.expand_dims(v, d)
    others = np.stack([np.prod(with_one(x, d, k), axis=d) for k in range(x.shape[d])], axis=d)
    np.testing.assert_allclose(t.grad.numpy(), vk * others, **TOL)


@given(data=S.array_and_reduce_dims(), keepdim=st.booleans(), scale=st.sampled_from([1.0, 300.0]))
def test_logsumexp(device, data, keepdim, scale):
    x, dim = data
    x = x * scale  # 300 * 3 = 900: exp overflows without the max shift
    axes = axes_of(dim, x.ndim)
    m = x.max(axis=axes, keepdims=True)
    want = np.log(np.exp(x - m).sum(axis=axes, keepdims=True)) + m
    t = leaf(x, device)
    out = t.logsumexp(axes if dim is None else dim, keepdim=keepdim)  # dim is required, as in PyTorch
    np.testing.assert_allclose(out.numpy(), want if keepdim else want.reshape(out.shape), **TOL)
    v = backprop(out, device)
    vk = v if keepdim else np.expand_dims(v, axes)
    np.testing.assert_allclose(t.grad.numpy(), vk * np.exp(x - want), **TOL)


@given(data=S.array_and_dim(low=-2, high=2))
def test_cumsum_cumprod(device, data):
    x, dim = data
    x = np.round(x * 2) / 2  # zeros for cumprod
    d = dim % x.ndim
    t = leaf(x, device)
    out = t.cumsum(dim)
    np.testing.assert_allclose(out.numpy(), np.cumsum(x, axis=d), **TOL)
    v = backprop(out, device)
    np.testing.assert_allclose(t.grad.numpy(), np.flip(np.cumsum(np.flip(v, d), axis=d), d), **TOL)
    t = leaf(x, device)
    out = t.cumprod(dim)
    np.testing.assert_allclose(out.numpy(), np.cumprod(x, axis=d), **TOL)
    v = backprop(out, device)
    n = x.shape[d]
    later = np.arange(n).reshape([n if a == d else 1 for a in range(x.ndim)])
    # dz_j/dx_k = cumprod(x with x_k = 1)_j for j >= k
    want = np.stack(
        [(v * np.cumprod(with_one(x, d, k), axis=d) * (later >= k)).sum(axis=d) for k in range(n)], axis=d
    )
    np.testing.assert_allclose(t.grad.numpy(), want, **TOL)


@given(data=S.array_and_dim(low=-3, high=3), scale=st.sampled_from([1.0, 300.0]))
def test_logcumsumexp(device, data, scale):
    x, dim = data
    x = x * scale
    d = dim % x.ndim
    z = np.logaddexp.accumulate(x, axis=d)
    t = leaf(x, device)
    out = t.logcumsumexp(dim)
    np.testing.assert_allclose(out.numpy(), z, **TOL)
    v = backprop(out, device)
    n = x.shape[d]
    xi = np.expand_dims(x, d + 1)  # index i on axis d, j on axis d + 1
    zj, vj = np.expand_dims(z, d), np.expand_dims(v, d)
    i = np.arange(n).reshape([n if a == d else 1 for a in range(x.ndim + 1)])
    j = np.arange(n).reshape([n if a == d + 1 else 1 for a in range(x.ndim + 1)])
    want = np.where(j >= i, vj * np.exp(np.minimum(xi - zj, 0)), 0).sum(axis=d + 1)
    np.testing.assert_allclose(t.grad.numpy(), want, **TOL)


@given(data=S.array_and_dim(low=-2, high=2), largest=st.booleans())
def test_cummax_cummin_with_ties(device, data, largest):
    x, dim = data
    x = np.round(x)  # ties
    d = dim % x.ndim
    t = leaf(x, device)
    values, index = t.cummax(dim) if largest else tg.cummin(t, dim)
    acc = np.maximum if largest else np.minimum
    np.testing.assert_array_equal(values.numpy(), acc.accumulate(x, axis=d))
    # the index of the latest entry equal to the running extreme
    n = x.shape[d]
    pos = np.arange(n).reshape([n if a == d else 1 for a in range(x.ndim)])
    want_index = np.maximum.accumulate(np.where(x == acc.accumulate(x, axis=d), pos, -1), axis=d)
    np.testing.assert_array_equal(index.numpy(), want_index)
    assert index.dtype == tg.int64 and not index.requires_grad
    v = backprop(values, device)
    g = np.zeros_like(x)  # each v_j goes to the position index_j (one position may collect several)
    for j in range(n):
        sl = (slice(None),) * d + (slice(j, j + 1),)
        g += (pos == want_index[sl]) * v[sl]
    np.testing.assert_allclose(t.grad.numpy(), g, **TOL)


@given(data=S.array_and_reduce_dims(), keepdim=st.booleans())
def test_all_any(device, data, keepdim):
    x, dim = data
    x = np.round(x)  # zeros
    axes = axes_of(dim, x.ndim)
    t = tg.tensor(x, device=device, requires_grad=True)
    for name in ("all", "any"):
        out = getattr(t, name)(dim, keepdim)
        assert out.dtype == tg.bool and not out.requires_grad
        np.testing.assert_array_equal(out.numpy(), getattr(np, name)(x != 0, axis=axes, keepdims=keepdim))


@given(data=S.array_and_dim())
def test_axis_is_dim(device, data):
    x, dim = data
    t = tg.tensor(x, device=device)
    for name in ("sum", "mean", "amax", "amin", "logsumexp", "prod", "any", "all", "argmax", "argmin"):
        np.testing.assert_array_equal(getattr(t, name)(axis=dim).numpy(), getattr(t, name)(dim).numpy(), err_msg=name)
    for name in ("cumsum", "cumprod", "logcumsumexp"):
        np.testing.assert_array_equal(getattr(tg, name)(t, axis=dim).numpy(), getattr(t, name)(dim).numpy())
    if x.shape[dim] > 1:
        np.testing.assert_array_equal(tg.std(t, axis=dim).numpy(), t.std(dim).numpy())
    np.testing.assert_array_equal(t.max(axis=dim).values.numpy(), t.max(dim).values.numpy())
    for name in ("sum", "mean", "amax", "amin", "argmax", "argmin", "prod", "logsumexp", "all", "any"):
        np.testing.assert_array_equal(getattr(tg, name)(t, axis=dim).numpy(), getattr(t, name)(dim).numpy())
    np.testing.assert_array_equal(tg.min(t, axis=dim).indices.numpy(), t.min(dim).indices.numpy())


def test_dtypes_match_torch():
    torch = pytest.importorskip("torch")
    for a in (np.array([[1, 0, 3], [2, 2, -1]], dtype=np.int32), np.array([[True, False], [True, True]])):
        ours, theirs = tg.tensor(a), torch.tensor(a)
        for fn in (
            lambda x: x.prod(),
            lambda x: x.prod(1),
            lambda x: x.cumsum(0),
            lambda x: x.cumprod(1),
            lambda x: x.all(1),
            lambda x: x.any(),
            lambda x: x.cummax(1).values,
        ):
            o, t = fn(ours), fn(theirs)
            assert str(o.dtype) == str(t.dtype).replace("torch.", ""), (o.dtype, t.dtype)
            np.testing.assert_array_equal(o.numpy(), t.numpy())
    x = np.random.default_rng(0).standard_normal((3, 4))
    assert tg.tensor(x).sum(dtype=tg.float32).dtype == tg.float32
    assert tg.tensor([1, 2]).logsumexp(0).dtype == tg.float32 == tg.tensor([1, 2]).logcumsumexp(0).dtype


def test_errors():
    x = tg.randn(3, 4)
    with pytest.raises(TypeError, match="both dim and axis"):
        x.sum(0, axis=1)
    with pytest.raises(TypeError, match="cumsum\\(\\): missing the dim"):
        x.cumsum()
    with pytest.raises(TypeError, match="logsumexp\\(\\): missing the dim"):  # as torch.logsumexp(x)
        x.logsumexp()
    with pytest.raises(TypeError, match="std: expected a floating-point tensor"):
        tg.tensor([1, 2]).std()


@pytest.mark.reference
@pytest.mark.parametrize("shape, dim", [((0,), 0), ((2, 0), 1), ((0, 3), 0), ((0, 3), -1), ((2, 0, 3), 1)])
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_along_an_empty_dim_as_torch(device, shape, dim, name):
    """Empty values and int64 indices of the input's shape, as PyTorch (not an IndexError), and an empty gradient."""
    torch = pytest.importorskip("torch")
    theirs = getattr(torch.zeros(shape), name)(dim)
    t = tg.zeros(shape, dtype=tg.float64, device=device, requires_grad=True)
    ours = getattr(tg, name)(t, dim)
    assert type(ours).__name__ == name and ours._fields == ("values", "indices")
    assert ours.values.shape == tuple(theirs.values.shape) == ours.indices.shape
    assert ours.indices.dtype == tg.int64
    ours.values.sum().backward()
    assert t.grad.shape == shape


# Each case: (data, dim, correction) with N <= correction somewhere (no degrees of freedom), or a
# row of equal values (std 0).  PyTorch: N - c clamped at 0, so v = sum / 0 is inf (nan for a row
# of equal values), and a UserWarning.
NO_DOF_CASES = [
    ([1.0, 2.0, 4.0], None, 3),
    ([1.0, 2.0, 4.0], None, 5),
    ([1.0, 1.0], None, 2),
    ([3.0], None, 1),
    ([[1.0, 2.0, 4.0], [1.0, 1.0, 1.0]], 1, 3),
    ([[1.0, 2.0, 4.0], [1.0, 1.0, 1.0]], (0, 1), 6),
    ([[1.0, 2.0], [5.0, 3.0]], 0, 2),
]


@pytest.mark.reference
@pytest.mark.parametrize("data, dim, correction", NO_DOF_CASES)
@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
def test_var_std_without_degrees_of_freedom_as_torch(device, data, dim, correction, name):
    """inf where the values differ, nan where they are equal (not nan throughout), with PyTorch's
    UserWarning naming the op; the gradient of var along dims with N = c is PyTorch's +-inf / nan."""
    torch = pytest.importorskip("torch")
    with pytest.warns(UserWarning) as theirs_warned:
        theirs = getattr(torch, name)(torch.tensor(data, dtype=torch.float64), dim, correction=correction)
    t = tg.tensor(data, dtype=tg.float64, device=device, requires_grad=True)
    with pytest.warns(UserWarning) as ours_warned:
        ours = getattr(tg, name)(t, dim, correction=correction)
    assert [str(w.message) for w in ours_warned] == [str(w.message).split(" (Triggered")[0] for w in theirs_warned]
    assert ours_warned[0].filename == __file__  # the warning points at the caller's line, as PyTorch's
    ours, theirs = (ours, theirs) if name in ("var", "std") else (ours[0], theirs[0])
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    n = np.prod(np.shape(data)) if dim is None else np.prod([np.shape(data)[d] for d in np.atleast_1d(dim)])
    if name == "var" and dim is not None and n == correction:  # PyTorch's var gradient with no dim is +inf alone
        x = torch.tensor(data, dtype=torch.float64, requires_grad=True)
        with pytest.warns(UserWarning):
            x.var(dim, correction=correction).sum().backward()
        ours.sum().backward()
        np.testing.assert_array_equal(t.grad.numpy(), x.grad.numpy())


@pytest.mark.reference
@pytest.mark.parametrize("dim", [None, 1])
def test_std_gradient_where_std_is_zero_as_torch(device, dim):
    """A row of equal values: std 0, and PyTorch's gradient 0 there (it masks g / (2 s) where s = 0), not nan."""
    torch = pytest.importorskip("torch")
    data = [[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]] if dim is not None else [[2.0, 2.0], [2.0, 2.0]]
    x = torch.tensor(data, dtype=torch.float64, requires_grad=True)
    x.std(dim).sum().backward()
    t = tg.tensor(data, dtype=tg.float64, device=device, requires_grad=True)
    t.std(dim).sum().backward()
    # float64, the same formula: a rounding apart at most
    np.testing.assert_allclose(t.grad.numpy(), x.grad.numpy(), rtol=1e-12, atol=0)


def test_var_std_with_degrees_of_freedom_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tg.tensor([1.0, 2.0]).var(correction=1)
        tg.std_mean(tg.tensor([[1.0, 2.0]]), 1, correction=0)
