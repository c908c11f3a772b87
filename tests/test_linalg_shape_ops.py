"""The linear algebra, shape and index spellings: what the op table and the OpInfo harness do not
reach -- the in-place forms, beta = 0 ignoring nan, PyTorch's refusals with its exception types."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")  # the reference these tests compare with

# float64 on both sides, the same sums in another order: rounding only.
TOL = {"rtol": 1e-12, "atol": 1e-12}


def pair(array):
    return tg.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)


@pytest.mark.parametrize(
    "write",
    [
        lambda lib, y, s: y.index_add_(0, lib.tensor([2, 0, 2]), s, alpha=3),
        lambda lib, y, s: y.index_copy_(0, lib.tensor([2, 0, 1]), s),
        lambda lib, y, s: y.index_fill_(1, lib.tensor([0, 3]), -2.0).mul_(s),
        lambda lib, y, s: y.index_put_((lib.tensor([1, 1, 0]),), s, accumulate=True),
        lambda lib, y, s: y.addcmul_(s, s, value=0.5),
        lambda lib, y, s: y.addcdiv_(s, s * s + 1, value=-2),
    ],
    ids=["index_add_", "index_copy_", "index_fill_", "index_put_", "addcmul_", "addcdiv_"],
)
def test_inplace_forms_match_torch(write):
    """Written into a non-leaf `x * 1` (a leaf that requires grad may not be written): values and
    both inputs' gradients as PyTorch's."""
    rng = np.random.default_rng(0)
    (x, xt), (s, st) = pair(rng.standard_normal((3, 4))), pair(rng.standard_normal((3, 4)))
    y = x * 1
    out, out_t = write(tg, y, s), write(torch, xt * 1, st)
    assert out is y  # written in place, and returned
    np.testing.assert_allclose(out.numpy(), out_t.detach().numpy(), **TOL)
    w = rng.standard_normal((3, 4))
    (out * tg.tensor(w)).sum().backward()
    (out_t * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), **TOL)
    np.testing.assert_allclose(s.grad.numpy(), st.grad.numpy(), **TOL)


def test_inplace_form_on_a_leaf_that_requires_grad_raises():
    x = tg.zeros(3, 4, requires_grad=True)
    with pytest.raises(RuntimeError):
        x.index_add_(0, tg.tensor([0]), tg.ones(1, 4))


@pytest.mark.parametrize("op", ["addmm", "baddbmm", "addbmm", "addmv", "addr"])
def test_beta_zero_ignores_nan_in_input(op):
    """beta = 0: input is not read, so its nan and inf do not reach the result (as PyTorch)."""
    shapes = {"addmm": [(2, 3), (3, 4)], "baddbmm": [(5, 2, 3), (5, 3, 4)], "addbmm": [(5, 2, 3), (5, 3, 4)],
              "addmv": [(2, 3), (3,)], "addr": [(2,), (4,)]}[op]  # fmt: skip
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(s) for s in shapes)
    out_shape = {"addmm": (2, 4), "baddbmm": (5, 2, 4), "addbmm": (2, 4), "addmv": (2,), "addr": (2, 4)}[op]
    c = np.full(out_shape, np.nan)
    ours = getattr(tg, op)(tg.tensor(c), tg.tensor(a), tg.tensor(b), beta=0, alpha=2)
    theirs = getattr(torch, op)(torch.tensor(c), torch.tensor(a), torch.tensor(b), beta=0, alpha=2)
    assert not np.isnan(ours.numpy()).any()
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **TOL)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.mm(lib.ones(2, 3), lib.ones(2, 3)),  # inner sizes differ
        lambda lib: lib.mm(lib.ones(2, 3), lib.ones(3, 2, dtype=lib.float64)),  # two dtypes: no promotion
        lambda lib: lib.bmm(lib.ones(2, 2, 3), lib.ones(1, 3, 2)),  # no batch broadcasting
        lambda lib: lib.dot(lib.ones(2), lib.ones(3)),
        lambda lib: lib.outer(lib.ones(2, 2), lib.ones(2)),
        lambda lib: lib.trace(lib.ones(3)),
        lambda lib: lib.linalg.cross(lib.ones(2, 3), lib.ones(3)),  # different numbers of dims
        lambda lib: lib.linalg.vector_norm(lib.ones(3, dtype=lib.int64)),
        lambda lib: lib.linalg.vector_norm(lib.ones(0), float("inf")),  # a max over nothing
        lambda lib: lib.addcdiv(lib.ones(3), lib.ones(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64)),
        lambda lib: lib.ones(2, 3, 4).t(),
        lambda lib: lib.ones(3).mT,
        lambda lib: lib.ones(3, 4).narrow(1, 2, 3),
        lambda lib: lib.ones(3, 4).hsplit(3),  # 4 is not divisible by 3
        lambda lib: lib.ones(3, 4).unflatten(1, (3, 2)),
        lambda lib: lib.block_diag(lib.ones(2, 2, 2)),
        lambda lib: lib.cartesian_prod(lib.ones(2), lib.ones(3, dtype=lib.float64)),  # two dtypes
        lambda lib: lib.rot90(lib.ones(3, 4), 1, (0, 0)),
        lambda lib: lib.ones(3).index_put_((lib.tensor([0]),), lib.ones(1, dtype=lib.float64)),
    ],
)
def test_refusals_are_torchs(call):
    """Each input PyTorch refuses is refused with its exception type (RuntimeError here)."""
    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(RuntimeError):
        call(tg)


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize(
    "index, shape",
    [
        ([[0, 2]], (1, 3)),
        ([[0, 2]], (1, 1, 3)),
        ([[0, 2]], (2, 1)),
        ([[0, 2]], (1, 2, 3)),
        ([[0, 2]], (3,)),
        ([[[0], [2]]], (1, 1, 3)),
        ([[[0], [2]]], (1, 1, 1, 3)),
        ([[0, 2], [1, 1]], (1, 2)),
        ([[0, 2], [1, 1]], (1, 1, 2)),
        ([[True, False, True, False]], (1, 3)),
        ([[True, False, True, False]], (1, 1, 3)),
    ],  # fmt: skip
)
def test_index_put_values_broadcast_to_the_result_as_torchs(index, shape, accumulate):
    """index_put's values broadcast to the indexed result as they are, leading dims of size 1
    included: PyTorch refuses a (1, 1, 3) value for a (2, 3) result ("shape mismatch"), which
    `y[index] = v` takes (it drops those dims first).  tensorgrad took it without accumulate (through
    `y[index] = v`) and, with accumulate, leaked NumPy's "input operand has more dimensions than
    allowed by the axis remapping"."""
    results = []
    for lib in (torch, tg):
        x = lib.arange(12.0).reshape(4, 3)
        indices = tuple(lib.tensor(i) for i in index)
        try:
            results.append(x.index_put(indices, lib.ones(*shape), accumulate=accumulate).tolist())
        except RuntimeError as e:
            results.append(str(e).split(" of shape")[0])
    assert results[0] == results[1]


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.ones(3).select(0, 3),
        lambda lib: lib.ones(2, 3).take(lib.tensor([6])),
        lambda lib: lib.ones(3).index_add(0, lib.tensor([3]), lib.ones(1)),
    ],
)
def test_out_of_range_indices_raise_index_error(call):
    with pytest.raises(IndexError):
        call(torch)
    with pytest.raises(IndexError):
        call(tg)
