"""Every op's forward and backward against PyTorch on the same float64 inputs.

Generated from the one table of ops (tests/op_table.py:OPS); the upstream gradient is a
random tensor, not ones.  Skipped where torch is not installed; CI installs it.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import forward_backward
from op_table import OPS, Case, make_inputs

import tensorgrad as tg

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.reference

# Both libraries compute in float64 with the same formulas up to summation order:
# agreement to 1e-9 (relative and absolute) leaves room only for rounding.
TOL = {"rtol": 1e-9, "atol": 1e-9}


def _compare(ours, theirs, what, tol=None):
    assert len(ours) == len(theirs), what
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert a.shape == b.shape, f"{what} {k}: shape {a.shape} vs torch {b.shape}"
        assert a.dtype == b.dtype, f"{what} {k}: dtype {a.dtype} vs torch {b.dtype}"
        np.testing.assert_allclose(a, b, **(tol or TOL), err_msg=f"{what} {k}")


@pytest.mark.parametrize("case", OPS, ids=lambda c: c.name)
def test_matches_torch(case: Case, device):
    arrays = make_inputs(case, seed=1)
    want_out, want_grad = forward_backward(case, torch, arrays)
    out, grad = forward_backward(case, tg, arrays, device=device)
    _compare(out, want_out, "output", case.torch_tol)
    _compare(grad, want_grad, "gradient of input", case.torch_tol)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.amax(1),
        lambda lib, x: x.amax(),
        lambda lib, x: x.amax((0, 1), keepdim=True),
    ],
    ids=["amax_dim", "amax_all", "amax_tuple"],
)
def test_amax_ties_split_the_gradient_like_torch(fn):
    """With ties, amax's gradient is shared evenly between the maxima, as in PyTorch."""
    case = Case("amax_ties", ((3, 3),), fn)
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0], [0.0, -1.0, 3.0]])
    want_out, want_grad = forward_backward(case, torch, [x])
    out, grad = forward_backward(case, tg, [x])
    _compare(out + grad, want_out + want_grad, "amax with ties")


def test_comparisons_match_torch(device):
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 3, (3, 4)).astype(np.float64), rng.integers(0, 3, (4,)).astype(np.float64)
    ta, tb = torch.tensor(a), torch.tensor(b)
    ga, gb = tg.tensor(a, device=device), tg.tensor(b, device=device)
    for op in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
        ours, theirs = getattr(ga, op)(gb), getattr(ta, op)(tb)
        assert ours.dtype == tg.bool and not ours.requires_grad
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=op)
        np.testing.assert_array_equal(getattr(ga, op)(1.0).numpy(), getattr(ta, op)(1.0).numpy(), err_msg=op)


@pytest.mark.parametrize(
    "other",
    [None, "a", b"a", object(), {1: 2}, [1.0, 2.0], (1.0, 2.0)],
    ids=["None", "str", "bytes", "object", "dict", "list", "tuple"],
)
def test_eq_and_ne_with_none_or_another_object_are_python_bools_as_in_torch(other, device):
    """PyTorch's `t == None` is False and `t != None` True, for a tensor of any size: its `==` takes
    tensors, numbers and arrays, and for anything else (a list of the same values too) Python falls
    back to identity.  So `None in [t]`, `[t, None].index(None)` and `[t] == [None]` work on lists
    of tensors (parameters, gradients).  Compared elementwise (NumPy's `array == None`), `t == None`
    was a bool tensor, and in those list operations its truth value raised "only a one-element
    tensor converts"."""
    for lib in (torch, tg):
        t = lib.tensor([1.0, 2.0]) if lib is torch else tg.tensor([1.0, 2.0], device=device)
        assert (t == other) is False and (t != other) is True, lib.__name__
        assert (other in [t]) is False and [t, other].index(other) == 1 and [t] != [other]


def test_argmax_and_max_indices_match_torch(device):
    x = np.random.default_rng(0).standard_normal((3, 5, 4))
    ours, theirs = tg.tensor(x, device=device), torch.tensor(x)
    np.testing.assert_array_equal(ours.argmax().numpy(), theirs.argmax().numpy())
    for dim in (0, 1, -1):
        np.testing.assert_array_equal(ours.argmax(dim).numpy(), theirs.argmax(dim).numpy())
        assert ours.max(dim).indices.dtype == tg.int64
        np.testing.assert_array_equal(ours.max(dim).indices.numpy(), theirs.max(dim).indices.numpy())
        np.testing.assert_array_equal(ours.max(dim, keepdim=True).values.numpy(), theirs.max(dim, True).values.numpy())


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_dropout_matches_torch_given_the_mask(p, device):
    """Random masks differ between libraries; given ours, the values and gradient are torch's
    formula x * mask / (1 - p)."""
    x = np.random.default_rng(0).standard_normal((8, 16))
    t = tg.tensor(x, device=device, requires_grad=True)
    y = tg.nn.functional.dropout(t, p)
    mask = y.numpy() != 0
    g = np.random.default_rng(1).standard_normal(x.shape)
    y.backward(tg.tensor(g, device=device))
    tx = torch.tensor(x, requires_grad=True)
    ty = tx * torch.tensor(mask) / (1 - p)
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), **TOL)
    np.testing.assert_allclose(t.grad.numpy(), tx.grad.numpy(), **TOL)
