"""Hypothesis property tests of the linear algebra, shape and index spellings over random shapes and
arguments: each against PyTorch, forward values and shapes and the gradient of sum(out * w) for a
random cotangent w (the same for both libraries), in float64.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import compare_with_torch
from hypothesis import given
from hypothesis import strategies as st

from tensorgrad.testing import strategies as S

torch = pytest.importorskip("torch")  # the reference these tests compare with

# float64 on both sides, the same formulas summed in other orders (BLAS, einsum paths): rounding only.
TOL = {"rtol": 1e-9, "atol": 1e-10}


def against_torch(fn, arrays, device, seed=0):
    compare_with_torch(fn, arrays, device, TOL, seed)


side = st.integers(1, 4)


@given(n=side, k=side, m=side, b=side, beta=st.sampled_from([0, 1, -0.5]), alpha=st.sampled_from([1, 2.5]),
       data=st.data(), device=S.devices(cuda=False))  # fmt: skip
def test_matrix_products_property(n, k, m, b, beta, alpha, data, device):
    A, B = data.draw(S.float_arrays((n, k))), data.draw(S.float_arrays((k, m)))
    P, Q = data.draw(S.float_arrays((b, n, k))), data.draw(S.float_arrays((b, k, m)))
    C, v = data.draw(S.float_arrays((n, m))), data.draw(S.float_arrays((k,)))
    against_torch(
        lambda lib, A, B, P, Q, C, v: (
            lib.mm(A, B), lib.bmm(P, Q), lib.mv(A, v), lib.dot(v, v), lib.outer(v, C[0]),
            lib.addmm(C, A, B, beta=beta, alpha=alpha), lib.baddbmm(C, P, Q, beta=beta, alpha=alpha),
            lib.addbmm(C, P, Q, beta=beta, alpha=alpha), lib.addmv(C[:, 0], A, v, beta=beta, alpha=alpha),
            lib.addr(C, A[:, 0], B[0], beta=beta, alpha=alpha),
        ),
        [A, B, P, Q, C, v], device,
    )  # fmt: skip


@st.composite
def tensordot_case(draw):
    """(a, b, dims): b's leading dims are a's contracted dims in a drawn order (an int or two lists)."""
    a = draw(S.float_arrays(S.shapes(max_dims=3)))
    count = draw(st.integers(0, a.ndim))
    contracted = draw(st.permutations(range(a.ndim)))[:count]
    extra = draw(S.shapes(min_dims=0, max_dims=2))
    b = draw(S.float_arrays(tuple(a.shape[d] for d in contracted) + tuple(extra)))
    as_int = draw(st.booleans()) and list(contracted) == list(range(a.ndim - count, a.ndim))
    dims = count if as_int else (list(contracted), list(range(count)))
    return a, b, dims


@given(case=tensordot_case(), device=S.devices(cuda=False))
def test_tensordot_property(case, device):
    a, b, dims = case
    against_torch(lambda lib, a, b: lib.tensordot(a, b, dims), [a, b], device)


@given(sa=S.shapes(max_dims=3, max_side=3), sb=S.shapes(max_dims=3, max_side=3), data=st.data(),
       device=S.devices(cuda=False))  # fmt: skip
def test_kron_inner_property(sa, sb, data, device):
    a, b = data.draw(S.float_arrays(sa)), data.draw(S.float_arrays(sb))
    c = data.draw(S.float_arrays(sb[:-1] + sa[-1:]))  # inner: the last dims agree
    against_torch(lambda lib, a, b, c: (lib.kron(a, b), lib.inner(a, c)), [a, b, c], device)


@given(case=S.array_and_reduce_dims(), ord=st.sampled_from([0, 1, 2, 3, 0.5, 1.5, math.inf, -math.inf]),
       keepdim=st.booleans(), device=S.devices(cuda=False))  # fmt: skip
def test_vector_norm_property(case, ord, keepdim, device):
    """Every order, over random dims; hypothesis draws zeros and ties, where the subgradients
    (0 at x = 0, ties sharing the max) must be PyTorch's."""
    x, dim = case
    # tiny values (|x| < 1e-100) become 0: with x^p underflowing PyTorch's gradient is nan (its
    # z^(p-1) underflows to 0 and divides), tensorgrad's (a / z)^(p-1) the exact one
    x = np.where(np.abs(x) < 1e-100, 0.0, x)
    against_torch(lambda lib, x: lib.linalg.vector_norm(x, ord, dim, keepdim), [x], device)


@given(x=S.float_arrays(S.shapes(min_dims=2, max_dims=3, min_side=2)),
       ord=st.sampled_from(["fro", 1, -1, math.inf, "nuc", 2, -2]), device=S.devices(cuda=False))  # fmt: skip
def test_matrix_norm_property(x, ord, device):
    if ord in ("nuc", 2, -2):
        # the singular values' gradient u_i v_i^T needs s_i distinct and nonzero: hypothesis' matrices
        # (repeated rows, zeros) are made generic by adding a fixed random one
        x = x + np.random.default_rng(0).standard_normal(x.shape)
    against_torch(lambda lib, x: lib.linalg.matrix_norm(x, ord), [x], device)


@st.composite
def movedim_case(draw):
    x = draw(S.float_arrays(S.shapes(max_dims=4)))
    count = draw(st.integers(1, x.ndim))
    src = draw(st.permutations(range(x.ndim)))[:count]
    dst = draw(st.permutations(range(x.ndim)))[:count]
    return x, tuple(src), tuple(d - x.ndim if draw(st.booleans()) else d for d in dst)


@given(case=movedim_case(), device=S.devices(cuda=False))
def test_movedim_property(case, device):
    x, src, dst = case
    against_torch(lambda lib, x: lib.movedim(x, src, dst), [x], device)


@given(case=S.array_and_dim(), data=st.data(), device=S.devices(cuda=False))
def test_tensor_split_and_diff_property(case, data, device):
    x, dim = case
    n = x.shape[dim]
    sections = data.draw(st.one_of(st.integers(1, n + 2), st.lists(st.integers(-n, n + 1), max_size=3)))
    order = data.draw(st.integers(0, n + 1))
    against_torch(lambda lib, x: (*lib.tensor_split(x, sections, dim), lib.diff(x, order, dim)), [x], device)


@given(x=S.float_arrays(S.shapes(min_dims=2, max_dims=3)), k=st.integers(-5, 5), data=st.data(),
       device=S.devices(cuda=False))  # fmt: skip
def test_rot90_diag_embed_property(x, k, data, device):
    dims = data.draw(st.permutations(range(x.ndim)))[:2]
    offset = data.draw(st.integers(-3, 3))
    d1, d2 = data.draw(st.permutations(range(x.ndim + 1)))[:2]
    against_torch(lambda lib, x: (lib.rot90(x, k, dims), lib.diag_embed(x, offset, d1, d2)), [x], device)


@given(case=S.array_and_dim(), data=st.data(), device=S.devices(cuda=False))
def test_index_add_and_put_property(case, data, device):
    """Random (repeated) indices: the sums of index_add and index_put(accumulate=True) add up."""
    x, dim = case
    d = dim % x.ndim
    n = x.shape[d]
    index = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=5)))
    src = data.draw(S.float_arrays(x.shape[:d] + (len(index),) + x.shape[d + 1 :]))
    values = data.draw(S.float_arrays((len(index),) + x.shape[1:]))
    rows = np.array(data.draw(st.lists(st.integers(0, x.shape[0] - 1), min_size=len(index), max_size=len(index))))

    def fn(lib, x, src, values):
        i, r = lib.tensor(index, device=x.device), lib.tensor(rows, device=x.device)
        return x.index_add(d, i, src, alpha=-2), lib.index_put(x, (r,), values, accumulate=True)

    against_torch(fn, [x, src, values], device)
