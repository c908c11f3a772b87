"""Hypothesis property tests of the statistics ops over random shapes, dims and NaN masks.

Order statistics (median, nanmedian, kthvalue, mode, quantile, nanquantile) and the NaN-skipping
reductions against PyTorch, forward and backward (a random cotangent, the same for both); the
searches and distinct values (unique, searchsorted) against PyTorch and their defining identities.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import leaf
from hypothesis import given
from hypothesis import strategies as st

import tensorgrad as tg
from tensorgrad.testing import strategies as S

torch = pytest.importorskip("torch")

# float64 on both sides: the same selections and the same interpolation formula (torch.lerp's),
# in possibly another order of summation in the backward: rounding only.
TOL = {"rtol": 1e-10, "atol": 1e-10}


@st.composite
def array_dim_nans(draw, distinct=True, nans=True, keep_one=False):
    """(array, dim): float64 values (pairwise distinct: no ties, so the selected index is unique),
    a valid dim, and (nans=True) half the time some entries made NaN; with keep_one=True the first
    entry of each slice along dim stays a number."""
    shape = draw(S.shapes(min_dims=1, max_dims=3, max_side=5))
    x = draw(S.distinct_float_arrays(shape) if distinct else S.float_arrays(shape))
    dim = draw(S.dims(len(shape)))
    if nans and draw(st.booleans()):
        mask = draw(S.bool_arrays(shape))
        if keep_one:
            np.moveaxis(mask, dim, 0)[0] = False
        x = np.where(mask, np.nan, x)
    return x, dim


def both(x, device):
    """The same float64 leaf in tensorgrad (on device) and in PyTorch."""
    return leaf(x, device), torch.tensor(x, requires_grad=True)


def backward_both(ours, theirs, seed=0):
    """Backpropagate one random cotangent through both outputs."""
    w = np.random.default_rng(seed).standard_normal(tuple(theirs.shape))
    ours.backward(tg.tensor(w, device=ours.device))
    theirs.backward(torch.tensor(w))


def assert_same(ours, theirs):
    if theirs is None:  # a gradient PyTorch does not compute (q with a rounding interpolation)
        assert ours is None or not ours.numpy().any()
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), **TOL)


SELECTIONS = {
    "median": lambda lib, x, d, k: lib.median(x, d, keepdim=k),
    "nanmedian": lambda lib, x, d, k: lib.nanmedian(x, d, keepdim=k),
    "kthvalue": lambda lib, x, d, k: lib.kthvalue(x, max(1, x.shape[d] // 2 + 1), d, keepdim=k),
    "mode": lambda lib, x, d, k: lib.mode(x, d, keepdim=k),
}


@pytest.mark.parametrize("op", list(SELECTIONS))
@given(data=st.data(), keepdim=st.booleans())
def test_selection_along_dim_matches_torch(op, device, data, keepdim):
    """values, indices and the gradient (all of it to the selected index) as PyTorch's.  NaN for the
    medians only, and nanmedian's slices keep a number: where NaNs tie (kthvalue or mode of several
    NaN, nanmedian of NaN alone) PyTorch returns the index its nth_element leaves, unspecified by its
    docs."""
    x, dim = data.draw(array_dim_nans(nans=op in ("median", "nanmedian"), keep_one=op == "nanmedian"))
    ours_x, theirs_x = both(x, device)
    ours = SELECTIONS[op](tg, ours_x, dim, keepdim)
    theirs = SELECTIONS[op](torch, theirs_x, dim, keepdim)
    assert type(ours).__name__ == type(theirs).__name__  # the named tuple: median, mode, ...
    assert_same(ours.values, theirs.values)
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    backward_both(ours.values, theirs.values)
    assert_same(ours_x.grad, theirs_x.grad)


@pytest.mark.parametrize("op", ["median", "nanmedian"])
@given(case=array_dim_nans(distinct=False))
def test_median_of_all_shares_the_gradient_as_torch(op, device, case):
    """median() over every element: ties (values drawn with repeats) and NaN share the gradient."""
    x, _ = case
    ours_x, theirs_x = both(np.round(x), device)  # rounding makes ties
    ours, theirs = getattr(tg, op)(ours_x), getattr(torch, op)(theirs_x)
    assert_same(ours, theirs)
    backward_both(ours, theirs)
    assert_same(ours_x.grad, theirs_x.grad)


@pytest.mark.parametrize("op", ["quantile", "nanquantile"])
@given(
    data=st.data(),
    q=st.one_of(st.floats(0, 1), st.lists(st.floats(0, 1), min_size=1, max_size=4)),
    interpolation=st.sampled_from(["linear", "lower", "higher", "midpoint", "nearest"]),
    all_dims=st.booleans(),
    keepdim=st.booleans(),
)
def test_quantile_matches_torch(op, device, data, q, interpolation, all_dims, keepdim):
    """Values and the gradients of x (split between the two neighbours) and of a tensor q.  A slice
    whose quantile is NaN sends its gradient to one of its NaNs, which one unspecified where NaNs
    tie (PyTorch's sort is not stable): x's gradient is compared only where there is no such slice,
    so nanquantile's slices keep a number."""
    x, dim = data.draw(array_dim_nans(keep_one=op == "nanquantile"))
    dim = None if all_dims else dim
    ours_x, theirs_x = both(x, device)
    if isinstance(q, list):
        ours_q, theirs_q = both(np.array(q), device)
    else:
        ours_q, theirs_q = q, q
    ours = getattr(tg, op)(ours_x, ours_q, dim, keepdim, interpolation=interpolation)
    theirs = getattr(torch, op)(theirs_x, theirs_q, dim, keepdim, interpolation=interpolation)
    assert_same(ours, theirs)
    backward_both(ours, theirs)
    if op == "nanquantile" or not np.isnan(x).any():
        assert_same(ours_x.grad, theirs_x.grad)
    if isinstance(q, list):
        assert_same(ours_q.grad, theirs_q.grad)


@pytest.mark.parametrize("op", ["nansum", "nanmean"])
@given(data=st.data(), keepdim=st.booleans())
def test_nan_reductions_match_torch(op, device, data, keepdim):
    x, dim = data.draw(S.array_and_reduce_dims())
    x = np.where(data.draw(S.bool_arrays(x.shape)), np.nan, x)
    ours_x, theirs_x = both(x, device)
    torch_dim = dim if dim is not None else tuple(range(x.ndim))
    ours, theirs = getattr(tg, op)(ours_x, dim, keepdim), getattr(torch, op)(theirs_x, torch_dim, keepdim)
    assert_same(ours, theirs)
    backward_both(ours, theirs)
    assert_same(ours_x.grad, theirs_x.grad)  # 0 at every NaN


@given(data=st.data(), by_dim=st.booleans())
def test_unique_inverse_rebuilds_the_input(device, data, by_dim):
    """values[inverse] == x, the counts add up to the size, the values are sorted: and all as PyTorch's."""
    shape = data.draw(S.shapes(min_dims=1, max_dims=3, max_side=4))
    x = np.round(data.draw(S.float_arrays(shape, -2, 2)))  # few distinct values: repeats
    dim = data.draw(S.dims(len(shape))) if by_dim else None
    values, inverse, counts = tg.unique(tg.tensor(x, device=device), return_inverse=True, return_counts=True, dim=dim)
    want = torch.unique(torch.tensor(x), return_inverse=True, return_counts=True, dim=dim)
    for got, theirs in zip((values, inverse, counts), want):
        np.testing.assert_array_equal(got.numpy(), theirs.numpy())
    v, i = values.numpy(), inverse.numpy()
    if dim is None:
        np.testing.assert_array_equal(v[i], x)
        assert counts.numpy().sum() == x.size and np.all(np.diff(v) > 0)
    else:
        np.testing.assert_array_equal(np.take(v, i, axis=dim), x)
        assert counts.numpy().sum() == x.shape[dim]


@given(data=st.data(), right=st.booleans(), rows=st.booleans())
def test_searchsorted_keeps_the_order(device, data, right, rows):
    """Inserting each value at the index found keeps the sequence sorted; the index is PyTorch's."""
    n = data.draw(st.integers(0, 6))
    lead = data.draw(S.shapes(min_dims=1, max_dims=2, max_side=3)) if rows else ()
    seq = np.sort(np.round(data.draw(S.float_arrays(lead + (n,), -3, 3)) * 2) / 2, axis=-1)  # ties on purpose
    values = np.round(data.draw(S.float_arrays(lead + (data.draw(st.integers(0, 4)),), -4, 4)) * 2) / 2
    got = tg.searchsorted(tg.tensor(seq, device=device), tg.tensor(values, device=device), right=right).numpy()
    want = torch.searchsorted(torch.tensor(seq), torch.tensor(values), right=right).numpy()
    np.testing.assert_array_equal(got, want)
    below = (seq[..., None, :] <= values[..., :, None]) if right else (seq[..., None, :] < values[..., :, None])
    np.testing.assert_array_equal(got, below.sum(-1))  # the number of entries on the left of each value


# ------------------------------------------------------------------ the others, one table against PyTorch
F64 = "float64"

# fn(lib, x, dim) on a float64 x of 2 or 3 dims with pairwise distinct values (no ties, no all-equal
# row for corrcoef's division by a standard deviation), dim one of its dims.
OTHERS = {
    "count_nonzero": lambda lib, x, d: lib.count_nonzero(x.round(), d),  # rounding makes zeros
    "aminmax": lambda lib, x, d: lib.aminmax(x, dim=d, keepdim=True),
    "msort": lambda lib, x, d: lib.msort(x),
    "argwhere": lambda lib, x, d: lib.argwhere(x.round()),
    "isin": lambda lib, x, d: lib.isin(x.round(), x.round().flatten()[:3]),
    "bincount": lambda lib, x, d: lib.bincount((x.abs() * 2).long().flatten(), x.flatten(), minlength=3),
    "unique_consecutive": lambda lib, x, d: lib.unique_consecutive(x.round(), True, True, dim=d),
    "bucketize": lambda lib, x, d: lib.bucketize(x, x.flatten()[:3].sort().values, right=True),
    "cov": lambda lib, x, d: lib.cov(x.flatten(1), correction=0),
    "corrcoef": lambda lib, x, d: lib.corrcoef(x.flatten(1)),
    "trapezoid": lambda lib, x, d: lib.trapezoid(x, dim=d),
    "trapz_dx": lambda lib, x, d: lib.trapz(x, dx=0.5, dim=d),
    "trapezoid_x": lambda lib, x, d: lib.trapezoid(x, x.exp().cumsum(d), dim=d),
    "cumulative_trapezoid": lambda lib, x, d: lib.cumulative_trapezoid(x, x.exp().cumsum(d), dim=d),
    "renorm": lambda lib, x, d: lib.renorm(x, 2, d, 1.5),
    "equal": lambda lib, x, d: lib.equal(x, x.round()),
}


# Counts, positions and distinct values: integers, or values no gradient is defined for (PyTorch's
# bincount and unique_consecutive raise "not implemented" in backward).
NOT_DIFFERENTIABLE = {"count_nonzero", "argwhere", "isin", "bincount", "unique_consecutive", "bucketize", "equal"}


@pytest.mark.parametrize("op", list(OTHERS))
@given(data=st.data())
def test_statistics_op_matches_torch(op, device, data):
    """Outputs (values, dtypes) and the gradients of x, where the op has them, as PyTorch's."""
    shape = data.draw(S.shapes(min_dims=2, max_dims=3, max_side=4).filter(lambda s: s[-1] > 1))
    x = data.draw(S.distinct_float_arrays(shape))
    dim = data.draw(S.dims(len(shape)))
    ours_x, theirs_x = both(x, device)
    ours, theirs = OTHERS[op](tg, ours_x, dim), OTHERS[op](torch, theirs_x, dim)
    ours, theirs = (list(o) if isinstance(o, tuple) else [o] for o in (ours, theirs))
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        if not isinstance(t, torch.Tensor):
            assert o == t
            continue
        assert str(o.dtype) == str(t.dtype).removeprefix("torch.")
        assert_same(o, t)
    if op in NOT_DIFFERENTIABLE:  # PyTorch marks some outputs as requiring grad, then its backward refuses
        assert not any(isinstance(o, tg.Tensor) and o.requires_grad for o in ours)
        return
    grads = [(o, t) for o, t in zip(ours, theirs) if isinstance(t, torch.Tensor) and t.requires_grad]
    if grads:
        w = [np.random.default_rng(k).standard_normal(tuple(t.shape)) for k, (_, t) in enumerate(grads)]
        sum((o * tg.tensor(v, device=device)).sum() for (o, _), v in zip(grads, w)).backward()
        sum((t * torch.tensor(v)).sum() for (_, t), v in zip(grads, w)).backward()
        assert_same(ours_x.grad, theirs_x.grad)


@given(
    start=st.floats(-3, 3),
    end=st.floats(-3, 3),
    steps=st.integers(0, 7),
    base=st.sampled_from([10.0, 2.0, 1.5, 0.5]),
    dtype=st.sampled_from(["float32", "float64"]),
)
def test_logspace_matches_torch_and_ends_exactly(device, start, end, steps, base, dtype):
    ours = tg.logspace(start, end, steps, base, dtype=getattr(tg, dtype), device=device)
    theirs = torch.logspace(start, end, steps, base, dtype=getattr(torch, dtype))
    assert str(ours.dtype) == dtype and ours.shape == tuple(theirs.shape)
    # the same exponents, each in the dtype; the power may differ by an ulp between libms
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=4 * np.finfo(dtype).eps)
    if steps >= 2:  # both ends are base ** start and base ** end, as computed by the dtype's pow
        np.testing.assert_allclose(ours.numpy()[[0, -1]], np.array([base**start, base**end], dtype=dtype),
                                   rtol=4 * np.finfo(dtype).eps)
