"""Shared test helpers: running one op of the table (op_table.py) forward and backward, and
leaf / backprop / check_unary for the op tests."""

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
