"""Shared test helpers: running one op of the table (op_table.py) forward and backward,
leaf / backprop / check_unary for the op tests, and compare_with_torch for the property tests."""

from __future__ import annotations

import numpy as np
from op_table import Case

import tensorgrad as tg


def to_numpy(t):
    """A host copy of a tensorgrad or torch tensor."""
    return t.detach().numpy()


def forward_backward(case: Case, lib, arrays, device=None, seed=1):
    """Run case.fn on `arrays` with library `lib` and backpropagate a random cotangent.

    Returns (outputs, grads) as host NumPy arrays.  The cotangent is the same for every
    library and device (drawn on the host from `seed`), never ones: with .sum() the
    softmax and layer-norm gradients are zero and a comparison would prove nothing.
    """
    if lib is tg:
        xs = [tg.tensor(a, device=device, requires_grad=True) for a in arrays]
    else:
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = case.fn(lib, *xs)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    rng = np.random.default_rng(seed)
    total = None
    for o in outs:
        v = lib.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype, device=o.device)
        term = (o * v).sum()
        total = term if total is None else total + term
    total.backward()
    return [to_numpy(o) for o in outs], [to_numpy(x.grad) for x in xs]


def leaf(a, device):
    """A float64 leaf tensor that requires grad, on `device`."""
    return tg.tensor(np.asarray(a, dtype=np.float64), device=device, requires_grad=True)


def backprop(out, device, seed=0):
    """Backpropagate a seeded standard-normal cotangent from `out`; returns it (host)."""
    v = np.random.default_rng(seed).standard_normal(out.shape)
    out.backward(tg.tensor(v, dtype=out.dtype, device=device))
    return v


# float64 against NumPy float64 doing the same arithmetic in a possibly different order: room for
# rounding only.
UNARY_TOL = {"rtol": 1e-10, "atol": 1e-10}


def check_unary(entry, x, device):
    """A unary op table entry (fn on a Tensor, its NumPy reference, the reference's derivative,
    the input range) on the float64 array x: the forward against NumPy and, through a random
    cotangent v, the gradient against v * derivative."""
    fn, ref, dref, _ = entry
    t = leaf(x, device)
    out = fn(t)
    assert out.shape == x.shape and out.dtype == np.float64
    np.testing.assert_allclose(out.numpy(), ref(x), **UNARY_TOL)
    v = backprop(out, device)
    assert t.grad.shape == x.shape and t.grad.dtype == np.float64
    np.testing.assert_allclose(t.grad.numpy(), v * dref(x), **UNARY_TOL)


def compare_with_torch(fn, arrays, device, tol, seed=0):
    """fn(lib, *tensors) on tensorgrad and PyTorch: the outputs (a tensor or a tuple of them) and the
    gradients of every input of sum_k (out_k * w_k), w_k random, agree within `tol` (rtol, atol keywords).
    An input the outputs do not use has no gradient on either side: zeros."""
    import torch  # noqa: PLC0415  (the callers skip without it)

    ours = [tg.tensor(a, device=device, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_t, out_p = fn(tg, *ours), fn(torch, *theirs)
    outs_t = out_t if isinstance(out_t, tuple) else (out_t,)
    outs_p = out_p if isinstance(out_p, tuple) else (out_p,)
    assert len(outs_t) == len(outs_p)
    rng = np.random.default_rng(seed)
    loss_t, loss_p = 0, 0
    for o, p in zip(outs_t, outs_p):
        assert o.shape == tuple(p.shape)
        np.testing.assert_allclose(o.numpy(), p.detach().numpy(), **tol)
        w = rng.standard_normal(o.shape)
        loss_t = loss_t + (o * tg.tensor(w, device=device)).sum()
        loss_p = loss_p + (p * torch.tensor(w)).sum()
    loss_t.backward()
    loss_p.backward()
    for t, p in zip(ours, theirs):
        got = t.grad.numpy() if t.grad is not None else np.zeros(t.shape)
        want = p.grad.numpy() if p.grad is not None else np.zeros(t.shape)
        np.testing.assert_allclose(got, want, **tol)
