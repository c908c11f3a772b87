"""Hypothesis property tests of tg.linalg's matrix functions and decompositions over random batch
shapes and sizes: the identities each must satisfy (A A^-1 = I, L L^T = A, Q R = A, V diag(L) V^T =
A, U diag(S) V^T = A), and forward values and gradients against PyTorch (float64); then PyTorch's
errors for singular, not positive-definite, non-square and integer inputs.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import compare_with_torch
from hypothesis import given
from hypothesis import strategies as st

import tensorgrad as tg
from tensorgrad.testing import strategies as S

torch = pytest.importorskip("torch")  # the reference these tests compare with

# The matrices below are well conditioned (diagonally dominant, or X X^T + I with bounded X):
# condition numbers stay below ~1e2, so float64 results of different but stable algorithms
# (LAPACK's, here and in PyTorch) agree to ~1e2 * 1e-16 relative; 1e-9 leaves a wide margin and
# still catches any wrong formula (off by O(1)).
TOL = {"rtol": 1e-9, "atol": 1e-9}

batches = st.sampled_from([(), (1,), (2,), (2, 1)])
sizes = st.integers(1, 4)


def dominant(x):
    """X + (6 n + 1) diag(1, 2, ..., n) for entries of X in [-3, 3] (||X||_2 <= ||X||_F <= 3 n):
    strictly diagonally dominant, so invertible with a small condition number, and (Weyl) the
    eigenvalues of its symmetric forms and its singular values stay distinct, 1 apart at least:
    eigenvectors, singular vectors and the gradients through them are well defined."""
    n = x.shape[-1]
    return x + np.diag((6 * n + 1.0) * np.arange(1, n + 1))


def against_torch(fn, arrays, device, seed=0):
    compare_with_torch(fn, arrays, device, TOL, seed)


@given(batch=batches, n=sizes, k=sizes, data=st.data(), device=S.devices(cuda=False))
def test_inverse_solve_det_identities(batch, n, k, data, device):
    a = dominant(data.draw(S.float_arrays(batch + (n, n))))
    b = data.draw(S.float_arrays((1, n, k)))  # a batch of one matrix (an (n, n) B under a batch (n,) is vectors)
    A, B = tg.tensor(a, device=device), tg.tensor(b, device=device)
    out_batch = np.broadcast_shapes(batch, (1,))
    eye = np.broadcast_to(np.eye(n), a.shape)
    np.testing.assert_allclose((A @ tg.linalg.inv(A)).numpy(), eye, **TOL)
    want = np.broadcast_to(b, out_batch + (n, k))
    np.testing.assert_allclose((A @ tg.linalg.solve(A, B)).numpy(), want, **TOL)
    np.testing.assert_allclose((tg.linalg.solve(A, B.mT, left=False) @ A).numpy(), want.swapaxes(-1, -2), **TOL)
    upper = A.triu()
    np.testing.assert_allclose((upper @ tg.linalg.solve_triangular(upper, B, upper=True)).numpy(), want, **TOL)
    sign, logabsdet = tg.linalg.slogdet(A)
    np.testing.assert_allclose((sign * logabsdet.exp()).numpy(), tg.linalg.det(A).numpy(), **TOL)
    np.testing.assert_allclose((tg.linalg.det(A) * tg.linalg.det(tg.linalg.inv(A))).numpy(), 1.0, **TOL)


@given(batch=batches, m=sizes, n=sizes, data=st.data(), device=S.devices(cuda=False))
def test_factorizations_reconstruct(batch, m, n, data, device):
    x = data.draw(S.float_arrays(batch + (m, n)))
    X = tg.tensor(x, device=device)
    q, r = tg.linalg.qr(X)
    k = min(m, n)
    np.testing.assert_allclose((q @ r).numpy(), x, **TOL)
    np.testing.assert_allclose((q.mT @ q).numpy(), np.broadcast_to(np.eye(k), batch + (k, k)), **TOL)
    np.testing.assert_allclose(r.numpy(), np.triu(r.numpy()))
    u, s, vh = tg.linalg.svd(X, full_matrices=False)
    np.testing.assert_allclose(((u * s.unsqueeze(-2)) @ vh).numpy(), x, **TOL)
    np.testing.assert_allclose(tg.linalg.svdvals(X).numpy(), s.numpy(), **TOL)
    sym = X @ X.mT + tg.eye(m, dtype=X.dtype, device=device)  # symmetric positive-definite
    lower = tg.linalg.cholesky(sym)
    np.testing.assert_allclose((lower @ lower.mT).numpy(), sym.numpy(), **TOL)
    w, v = tg.linalg.eigh(sym)
    np.testing.assert_allclose(((v * w.unsqueeze(-2)) @ v.mT).numpy(), sym.numpy(), **TOL)
    assert (np.diff(w.numpy(), axis=-1) >= 0).all()  # ascending


@given(batch=batches, n=sizes, k=sizes, data=st.data(), device=S.devices(cuda=False))
def test_square_ops_match_torch(batch, n, k, data, device):
    a = dominant(data.draw(S.float_arrays(batch + (n, n))))
    b = data.draw(S.float_arrays((1, n, k)))
    against_torch(
        lambda lib, A, B: (
            lib.linalg.det(A), lib.linalg.slogdet(A).logabsdet, lib.linalg.inv(A), lib.linalg.solve(A, B),
            lib.linalg.solve_triangular(A, B, upper=False), lib.linalg.matrix_power(A, 2),
            lib.linalg.cholesky(A @ A.mT), lib.linalg.eigvalsh(A), lib.cholesky_solve(B, A.tril()),
        ),
        [a, b], device,
    )  # fmt: skip


@given(batch=batches, m=sizes, n=sizes, data=st.data(), device=S.devices(cuda=False))
def test_rectangular_ops_match_torch(batch, m, n, data, device):
    # full rank with well separated singular values, as `dominant` (||X||_2 <= 3 max(m, n))
    x = data.draw(S.float_arrays(batch + (m, n)))
    k = min(m, n)
    x[..., :k, :k] += np.diag(np.arange(1, k + 1) * (6 * max(m, n) + 1.0))
    against_torch(
        lambda lib, X: (
            lib.linalg.svdvals(X), lib.linalg.pinv(X), lib.linalg.qr(X).R,
            (lib.linalg.svd(X, full_matrices=False).U ** 2), (lib.linalg.qr(X).Q ** 2),
        ),
        [x], device,
    )  # fmt: skip


@given(batch=batches, n=sizes, scale=st.sampled_from([0.01, 0.3, 1.0, 4.0]), data=st.data(),
       device=S.devices(cuda=False))  # fmt: skip
def test_matrix_exp(batch, n, scale, data, device):
    """exp(A) exp(-A) = I, exp of a diagonal is the exp of its entries, and against PyTorch (every
    Pade degree and some squarings: 1-norms from 0 to 48)."""
    x = data.draw(S.float_arrays(batch + (n, n))) * scale
    A = tg.tensor(x, device=device)
    eye = np.broadcast_to(np.eye(n), x.shape)
    # exp(A) has entries up to e^(||A||_1) ~ e^48 here: the product's error is relative to that
    big = np.exp(np.abs(x).sum(-2).max())
    np.testing.assert_allclose((tg.matrix_exp(A) @ tg.matrix_exp(-A)).numpy(), eye, rtol=0, atol=1e-12 * big**2)
    diagonal = np.eye(n) * x
    np.testing.assert_allclose(tg.linalg.matrix_exp(tg.tensor(diagonal)).numpy(), np.eye(n) * np.exp(diagonal),
                               rtol=1e-13, atol=0)  # fmt: skip
    if scale < 4:
        against_torch(lambda lib, A: lib.matrix_exp(A), [x], device)


@given(batch=batches, m=sizes, n=sizes, data=st.data(), device=S.devices(cuda=False))
def test_householder_product(batch, m, n, data, device):
    """With tau_i = 2 / |v_i|^2 every H_i is a reflection, so the product has orthonormal columns;
    and any tau against PyTorch."""
    m, n = max(m, n), min(m, n)
    a = data.draw(S.float_arrays(batch + (m, n)))
    k = data.draw(st.integers(0, n))
    tau = data.draw(S.float_arrays(batch + (k,)))
    against_torch(lambda lib, A, t: lib.linalg.householder_product(A, t), [a, tau], device)
    v = np.tril(a, -1) + np.eye(m, n)
    reflect = 2 / (v**2).sum(-2)[..., :k]
    q = tg.linalg.householder_product(tg.tensor(a, device=device), tg.tensor(reflect, device=device)).numpy()
    np.testing.assert_allclose(q.swapaxes(-1, -2) @ q, np.broadcast_to(np.eye(n), batch + (n, n)), **TOL)


# ------------------------------------------------------------------ PyTorch's errors and edge cases
def both(fn, *arrays):
    """fn on both libraries, each raising or not: (ours, theirs) as (exception type, message)."""
    found = []
    for lib in (tg, torch):
        try:
            fn(lib, *[lib.tensor(a) for a in arrays])
            found.append(None)
        except Exception as e:  # noqa: BLE001 - compared below
            found.append((type(e), str(e)))
    return found


def test_singular_and_not_positive_definite_raise_linalg_error():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    ours, theirs = both(lambda lib, a: lib.linalg.inv(a), singular)
    assert issubclass(ours[0], tg.linalg.LinAlgError) and issubclass(ours[0], RuntimeError)
    assert theirs[0] is torch.linalg.LinAlgError and ours[1] == theirs[1]
    stack = np.stack([np.eye(3), [[1.0, 2, 3], [2, 4, 6], [1, 0, 1]], [[0.0, 0, 0], [0, 1, 0], [0, 0, 1]]])
    ours, theirs = both(lambda lib, a: lib.linalg.inv(a), stack)
    assert ours[1] == theirs[1] and "(Batch element 1)" in ours[1]
    ours, theirs = tg.linalg.inv_ex(tg.tensor(stack)), torch.linalg.inv_ex(torch.tensor(stack))
    np.testing.assert_array_equal(ours.info.numpy(), theirs.info.numpy())
    np.testing.assert_allclose(ours.inverse.numpy()[0], theirs.inverse.numpy()[0])  # the invertible one's
    assert np.isnan(ours.inverse.numpy()[1:]).all()
    for p in ("fro", 1):  # norm(A) norm(A^-1): inf where A is singular, as PyTorch
        np.testing.assert_allclose(tg.linalg.cond(tg.tensor(stack), p).numpy(),
                                   torch.linalg.cond(torch.tensor(stack), p).numpy())  # fmt: skip
    ours, theirs = both(lambda lib, a: lib.linalg.solve(a, a), singular)
    assert issubclass(ours[0], tg.linalg.LinAlgError) and ours[1] == theirs[1]
    not_pd = np.array([[[4.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]])
    ours, theirs = both(lambda lib, a: lib.linalg.cholesky(a), not_pd)
    assert issubclass(ours[0], tg.linalg.LinAlgError) and ours[1] == theirs[1]
    assert "(Batch element 1)" in ours[1] and "order 2" in ours[1]
    for upper in (False, True):
        ours = tg.linalg.cholesky_ex(tg.tensor(not_pd), upper=upper).info
        theirs = torch.linalg.cholesky_ex(torch.tensor(not_pd), upper=upper).info
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, a: lib.linalg.inv(a[:, :2]),
        lambda lib, a: lib.linalg.det(a[0]),
        lambda lib, a: lib.linalg.cholesky(a[:2]),
        lambda lib, a: lib.linalg.eigh(a[:, :1]),
        lambda lib, a: lib.linalg.inv(a.long()),
        lambda lib, a: lib.linalg.solve(a, a[0, :2]),
        lambda lib, a: lib.linalg.qr(a, mode="full"),
        lambda lib, a: lib.linalg.eigh(a, UPLO="X"),
        lambda lib, a: lib.linalg.vander(a[0], N=1),
        lambda lib, a: lib.linalg.multi_dot([a]),
    ],
)
def test_refusals_match_torch(fn):
    a = np.arange(9.0).reshape(3, 3)
    ours, theirs = both(fn, a)
    assert theirs is not None and ours is not None
    assert issubclass(ours[0], theirs[0]) or issubclass(theirs[0], ours[0]), (ours, theirs)
    assert ours[1] == theirs[1], (ours, theirs)


def test_det_gradient_at_a_singular_matrix():
    """det's gradient is adj(A)^T, the cofactor matrix, which exists where A^-1 does not (rank n - 1 here).

    Compared with the cofactors computed from the 2 x 2 minors, not with PyTorch: at a singular matrix
    PyTorch's CPU answer depends on its LAPACK build (some return zeros)."""
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    cofactors = np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) for j in range(3)]
                          for i in range(3)])
    ours = tg.tensor(a, requires_grad=True)
    tg.linalg.det(ours).backward()
    # 1e-12: the minors are small integers, exact in float64; the SVD route rounds at ~1e-15
    np.testing.assert_allclose(ours.grad.numpy(), cofactors, rtol=1e-12, atol=1e-12)
    assert np.abs(cofactors).max() > 1  # nonzero: the adjugate of a rank-2 matrix


def test_zero_size_matrices():
    empty = tg.zeros(2, 0, 0, dtype=tg.float64)
    assert tg.linalg.det(empty).numpy().tolist() == [1.0, 1.0]
    assert tg.linalg.inv(empty).shape == (2, 0, 0)
    assert tg.linalg.qr(tg.zeros(0, 3, dtype=tg.float64)).R.shape == (0, 3)
