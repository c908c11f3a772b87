"""`Tensor.view(shape)` is a view or PyTorch's error, never a silent copy; `diagonal` is a view;
`is_contiguous` answers as PyTorch's.  Checked against PyTorch on transposes, permutations, slices
and steps of random shapes, and through the write that tells a view from a copy.  Before,
view(shape) was reshape, which copies a transpose, and diagonal copied: a write into either never
reached the tensor."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorgrad as tg

torch = pytest.importorskip("torch")

_VIEW_ERROR = "view size is not compatible with input tensor's size and stride"


def _both(shape, perm, cut):
    """The same strided tensor in both libraries: arange(shape) permuted by `perm`, then its first
    dim cut to `cut` rows (a slice: rows no longer one run) when cut is not None."""
    values = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    ours, theirs = tg.tensor(values).permute(*perm), torch.tensor(values).permute(*perm)
    if cut is not None:
        ours, theirs = ours[:cut], theirs[:cut]
    return ours, theirs


def _target_shapes(n):
    """Shapes of n elements to view as: flat, split in two where n factors, with a -1."""
    shapes = [(n,), (-1,), (1, n)]
    shapes += [(a, n // a) for a in range(2, n) if n % a == 0][:3]
    return shapes


@st.composite
def _strided(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    perm = tuple(draw(st.permutations(range(len(shape)))))
    first = shape[perm[0]]
    cut = draw(st.one_of(st.none(), st.integers(0, first)))
    return shape, perm, cut


@given(_strided())
def test_view_raises_exactly_where_torch_raises_and_shares_storage_elsewhere(case):
    ours, theirs = _both(*case)
    for target in _target_shapes(max(ours.numel(), 1)) if ours.numel() else [(0,), (-1,)]:
        try:
            expected = theirs.view(target)
        except RuntimeError:
            with pytest.raises(RuntimeError, match=_VIEW_ERROR):
                ours.view(target)
            continue
        got = ours.view(target)
        assert got.shape == tuple(expected.shape)
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
        if got.numel():  # a write through the view reaches the tensor: it is one
            got[(0,) * got.ndim] = -1.0
            expected[(0,) * expected.ndim] = -1.0
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@given(_strided())
def test_is_contiguous_answers_as_torch(case):
    ours, theirs = _both(*case)
    assert ours.is_contiguous() == theirs.is_contiguous()
    assert ours.contiguous().is_contiguous()
    for fmt, tfmt in ((tg.channels_last, torch.channels_last), (tg.channels_last_3d, torch.channels_last_3d)):
        assert ours.is_contiguous(memory_format=fmt) == theirs.is_contiguous(memory_format=tfmt)


def test_channels_last_and_the_formats_refused(device):
    x = tg.zeros(2, 3, 4, 5, device=device)
    nhwc = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)  # the channels last, as to(memory_format=...)
    assert x.is_contiguous() and not x.is_contiguous(memory_format=tg.channels_last)
    assert nhwc.is_contiguous(memory_format=tg.channels_last) and not nhwc.is_contiguous()
    assert x.is_contiguous(memory_format=tg.preserve_format)  # PyTorch answers it as contiguous_format
    with pytest.raises(TypeError, match="memory_format"):
        x.is_contiguous(memory_format="channels_last")


def test_view_of_a_transpose_raises_on_every_device(device):
    x = tg.arange(6.0, device=device).reshape(2, 3)
    with pytest.raises(RuntimeError, match=_VIEW_ERROR):
        x.t().view(-1)
    assert x.t().reshape(-1).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]  # reshape copies there
    v = x.view(3, 2)
    v[0, 0] = 7.0
    assert x[0, 0].item() == 7.0 and x._version == v._version  # one storage, one version counter


def test_view_keeps_the_graph_and_its_gradient():
    x = tg.arange(6.0).reshape(2, 3).requires_grad_()
    (x.view(3, 2) * tg.arange(6.0).reshape(3, 2)).sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_the_gpt_batch_is_contiguous_as_the_lecture_stack_makes_it():
    """The lecture's loss views its targets (targets.view(B * T)): the batch must allow it."""
    from gpt.data import ShakespeareData  # noqa: PLC0415

    data = ShakespeareData("".join(chr(97 + i % 26) for i in range(500)))
    tg.manual_seed(0)
    x, y = data.get_batch("train", 8, 4)
    assert x.is_contiguous() and y.is_contiguous()
    assert y.view(32).shape == (32,) and x.view(-1).tolist()[1:8] == y.view(-1).tolist()[0:7]


# ------------------------------------------------------------------ diagonal: a view too
@st.composite
def _diagonals(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=2, max_size=4)))
    dim1, dim2 = draw(st.permutations(range(len(shape))))[:2]
    return shape, draw(st.integers(-5, 5)), dim1 - len(shape) * draw(st.integers(0, 1)), dim2


@given(_diagonals())
def test_diagonal_is_a_view_with_torchs_values(case):
    shape, offset, dim1, dim2 = case
    values = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    ours, theirs = tg.tensor(values), torch.tensor(values)
    d, e = ours.diagonal(offset, dim1, dim2), theirs.diagonal(offset, dim1, dim2)
    assert d.shape == tuple(e.shape)
    np.testing.assert_array_equal(d.numpy(), e.numpy())
    d.mul_(-1.0)  # the write reaches the tensor, as PyTorch's
    e.mul_(-1.0)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_a_write_through_the_diagonal_reaches_the_tensor(device):
    a = tg.zeros(3, 3, device=device)
    a.diagonal().add_(1.0)  # A + I in place, a common idiom
    assert a.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    d = a.diagonal(1)
    a[0, 1] = 5.0
    assert d.tolist() == [5.0, 0.0] and d._version == a._version


def test_diagonal_gradient_and_a_recorded_write_as_torchs():
    x = tg.arange(9.0).reshape(3, 3).requires_grad_()
    (x.diagonal(-1) * tg.tensor([2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 3.0, 0.0]]
    grads = []
    for lib in (tg, torch):
        x = lib.arange(9.0).reshape(3, 3).requires_grad_()
        y = x * 1.0
        y.diagonal().mul_(3.0)  # recorded in the graph, on y
        (y * y).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1] == [[(18.0 if i == j else 2.0) * (3 * i + j) for j in range(3)] for i in range(3)]


def test_diag_of_a_matrix_is_a_copy_as_torchs():
    a, b = tg.zeros(3, 3), torch.zeros(3, 3)
    tg.diag(a).add_(1.0)
    torch.diag(b).add_(1.0)
    assert a.tolist() == b.tolist() == [[0.0] * 3] * 3  # diag copies, diagonal views
    x = tg.ones(3, 3, requires_grad=True)
    d = (x * 1).diag()
    d.mul_(2.0)  # a write into the copy, recorded
    d.sum().backward()
    assert x.grad.tolist() == [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]]


class _NoBase(np.ndarray):
    """An array sharing its memory with no `.base`: what CuPy's as_strided returns."""

    base = property(lambda self: None)


def test_a_diagonal_without_a_base_is_still_known_as_a_view(monkeypatch):
    """On CuPy the diagonal's array has no `.base` (as_strided): a value that requires grad written
    into the diagonal of a tensor outside the graph is recorded on the tensor there as on NumPy, as
    PyTorch's, never a lost gradient."""
    from tensorgrad import backend  # noqa: PLC0415

    diagonal = backend.diagonal
    monkeypatch.setattr(backend, "diagonal", lambda *args: diagonal(*args).view(_NoBase))
    a, v = tg.zeros(3, 3), tg.ones(3, requires_grad=True)
    a.diagonal().copy_(v * 2)
    assert a.tolist() == [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]]
    (a * tg.arange(9.0).reshape(3, 3)).sum().backward()
    assert v.grad.tolist() == [0.0, 8.0, 16.0]


@pytest.mark.parametrize("take", [lambda y: y.diagonal(), lambda y: y[0], lambda y: y.t()])
def test_a_view_taken_before_a_recorded_write_is_re_derived_as_a_root_of_backward(take):
    """Its values are the written ones; its history is re-derived from the base on use, as PyTorch
    regenerates a view's history, so backward from it gives the gradient through the write."""
    grads = []
    for lib in (tg, torch):
        x = lib.ones(3, 3, requires_grad=True)
        y = x * 1
        stale = take(y)
        y.mul_(2.0)
        stale.backward(lib.ones(stale.shape))
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]


@pytest.mark.parametrize(
    "take", [lambda p: p[0:2], lambda p: p.reshape(12), lambda p: p.t(), lambda p: p[1], lambda p: p.view(2, 6)[1]]
)
def test_a_view_of_a_parameter_taken_once_serves_every_step_as_torchs(take):
    """PyTorch's view nodes save no tensor, so a backward through one does not free it: a view of
    a parameter taken once (at a model's set-up, say) is used by every step's graph, across the
    optimizer's writes under no_grad.  tensorgrad keeps such a node (a view that saved no array)."""
    results = []
    for lib in (torch, tg):
        p = lib.tensor(np.arange(12.0).reshape(3, 4) / 10, requires_grad=True)
        v = take(p)
        for _ in range(3):
            (v * v).sum().backward()
            with lib.no_grad():
                p -= 0.1 * p.grad
            p.grad = None
        results.append(p.detach().numpy().copy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6, atol=1e-7)  # float32 both, the same ops


def test_a_graph_node_that_saved_arrays_still_refuses_a_second_backward():
    x = tg.ones(3, requires_grad=True)
    y = (x * x)[0:2]  # the view is kept; the product before it saved x and is released
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()
