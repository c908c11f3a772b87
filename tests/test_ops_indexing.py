"""Indexing and shape ops: what the op table cannot express (no gradient, dtypes, creation
functions, ties, errors).  Gradients and PyTorch parity are in the op table (tests/op_table.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional as F

torch = pytest.importorskip("torch")


def test_nonzero_matches_torch(device):
    a = np.array([[0, 1, 0], [2, 0, 3]])
    ours, theirs = tg.tensor(a, device=device), torch.tensor(a)
    assert ours.nonzero().dtype == tg.int64
    np.testing.assert_array_equal(ours.nonzero().numpy(), theirs.nonzero().numpy())
    for o, t in zip(tg.nonzero(ours, as_tuple=True), theirs.nonzero(as_tuple=True)):
        np.testing.assert_array_equal(o.numpy(), t.numpy())


def test_eye_linspace_meshgrid_match_torch(device):
    np.testing.assert_array_equal(tg.eye(3, 4, device=device).numpy(), torch.eye(3, 4).numpy())
    assert tg.eye(2).dtype == tg.float32 and tg.eye(2, dtype=tg.int64).dtype == tg.int64
    ours, theirs = tg.linspace(-1, 2, 7, device=device), torch.linspace(-1, 2, 7)
    assert ours.dtype == tg.float32
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-7)  # float32: last-bit differences
    a, b = tg.arange(3, device=device), tg.arange(4, device=device)
    for indexing in ("ij", "xy"):
        for o, t in zip(tg.meshgrid(a, b, indexing=indexing), torch.meshgrid(torch.arange(3), torch.arange(4),
                                                                             indexing=indexing)):  # fmt: skip
            np.testing.assert_array_equal(o.numpy(), t.numpy())


def test_integer_inputs_keep_their_dtype(device):
    x = tg.tensor([[1, 2], [3, 4]], device=device)
    idx = tg.tensor([[1, 0], [0, 0]], device=device)
    assert x.gather(1, idx).dtype == tg.int64
    assert x.flip(0).dtype == tg.int64 and x.repeat(2, 1).dtype == tg.int64
    assert tg.einsum("ij->j", x).dtype == tg.int64
    assert F.pad(x, (1, 1)).dtype == tg.int64


def test_scatter_reduce_amax_ties_share_the_gradient(device):
    """Two sources equal to the maximum (and x itself) split the gradient three ways, as in PyTorch."""
    x = np.array([3.0, 1.0])
    src = np.array([3.0, 3.0, 2.0])
    index = np.array([0, 0, 1])
    ours = tg.tensor(x, device=device, requires_grad=True)
    s = tg.tensor(src, device=device, requires_grad=True)
    ours.scatter_reduce(0, tg.tensor(index, device=device), s, "amax").sum().backward()
    tx, ts = torch.tensor(x, requires_grad=True), torch.tensor(src, requires_grad=True)
    tx.scatter_reduce(0, torch.tensor(index), ts, "amax").sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), tx.grad.numpy(), rtol=1e-12)  # 1/3 and 1: exact but for rounding
    np.testing.assert_allclose(s.grad.numpy(), ts.grad.numpy(), rtol=1e-12)


def test_scatter_with_reduce_add_and_multiply(device):
    x = np.arange(1.0, 7.0).reshape(2, 3)
    index = np.array([[0, 0, 2]])
    for reduce in ("add", "multiply"):
        ours = tg.tensor(x, device=device).scatter(1, tg.tensor(index, device=device), 2.0, reduce=reduce)
        theirs = torch.tensor(x).scatter(1, torch.tensor(index), 2.0, reduce=reduce)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_index_errors(device):
    x = tg.ones(3, 4, device=device)
    with pytest.raises(TypeError, match="gather: index must be an integer tensor"):
        x.gather(0, tg.ones(2, 4, device=device))
    with pytest.raises(ValueError, match=r"gather: index has 1 dims but the input has 2"):
        x.gather(0, tg.tensor([0, 1], device=device))
    with pytest.raises(ValueError, match=r"scatter_add: index shape \(2, 5\) is larger than the input"):
        x.scatter_add(0, tg.zeros(2, 5, dtype=tg.int64, device=device), tg.ones(2, 5, device=device))
    with pytest.raises(ValueError, match=r"index shape \(2, 4\) does not fit inside src \(2, 3\)"):
        x.scatter(0, tg.zeros(2, 4, dtype=tg.int64, device=device), tg.ones(2, 3, device=device))
    with pytest.raises(ValueError, match="scatter_reduce: reduce must be"):
        x.scatter_reduce(0, tg.zeros(1, 4, dtype=tg.int64, device=device), x, "max")
    with pytest.raises(ValueError, match="index_select: index must be 1-d"):
        x.index_select(0, tg.zeros(2, 2, dtype=tg.int64, device=device))
    with pytest.raises(ValueError, match="diagonal: dim1 and dim2 must differ"):
        x.diagonal(0, 1, -1)
    with pytest.raises(ValueError, match="unfold: size 5 and step 1 do not fit dim 0 of size 3"):
        x.unfold(0, 5, 1)
    with pytest.raises(ValueError, match="repeat: 1 repeat counts for a tensor of 2 dims"):
        x.repeat(2)
    with pytest.raises(ValueError, match="roll: 2 shifts for 1 dims"):
        x.roll((1, 2), 0)


def test_index_out_of_range_is_an_index_error(device):
    x = tg.ones(3, 4, device=device)
    with pytest.raises(IndexError, match="gather: index 3 is out of bounds for dim 0 with size 3"):
        x.gather(0, tg.tensor([[3, 0, 0, 0]], device=device)).numpy()  # on a GPU: reported at the read
    with pytest.raises(IndexError, match="index_select: index -1 is out of bounds for dim 1 with size 4"):
        x.index_select(1, tg.tensor([-1], device=device)).numpy()


def test_pad_errors():
    x = tg.ones(1, 2, 3)
    with pytest.raises(ValueError, match="reflect padding .* must be smaller than the padded dims"):
        F.pad(x, (3, 0), mode="reflect")
    with pytest.raises(NotImplementedError, match="pads the last 1-3 dims"):
        F.pad(tg.ones(5), (1, 1), mode="replicate")
    with pytest.raises(NotImplementedError, match="mode 'mirror' is not supported"):
        F.pad(x, (1, 1), mode="mirror")
    with pytest.raises(ValueError, match="needs an even length"):
        F.pad(x, (1, 1, 1))


def test_einsum_errors():
    a, b = tg.ones(2, 3), tg.ones(4, 5)
    with pytest.raises(ValueError, match="einsum: label 'j' has sizes 3 and 4"):
        tg.einsum("ij,jk->ik", a, b)
    with pytest.raises(ValueError, match="has 2 operands, got 1 tensors"):
        tg.einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="subscript 'ijk' has 3 labels for an operand of shape"):
        tg.einsum("ijk->i", a)
    with pytest.raises(ValueError, match="output label 'z'"):
        tg.einsum("ij->z", a)


# ------------------------------------------------------------------ PyTorch's edge cases
def test_cat_leaves_out_1d_empty_tensors():
    """PyTorch's legacy rule: a (0,) tensor joins a tensor of any shape (and dim is that tensor's)."""
    a = tg.ones(2, 3, requires_grad=True)
    out = tg.cat([tg.zeros(0), a, tg.zeros(0)], dim=1)
    assert out.shape == (2, 3)
    out.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.ones((2, 3)))
    assert tg.cat([tg.zeros(0), tg.zeros(0)]).shape == (0,)


def test_masked_fill_broadcasts_self_with_the_mask():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    mask = tg.tensor([[True, False, False], [False, False, True]])
    out = x.masked_fill(mask, 0.0)
    np.testing.assert_array_equal(out.numpy(), [[0, 2, 3], [1, 2, 0]])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1, 2, 1])  # each row's unfilled places
    with pytest.raises(tg.ShapeError):
        x.clone().masked_fill_(mask, 0.0)  # in place: the mask must fit self


def test_gather_index_select_unfold_transpose_of_0d_and_empty():
    s = tg.tensor(1.5, requires_grad=True)
    assert s.gather(0, tg.tensor([0])).shape == (1,)  # a 0-d input counts as 1-d
    assert s.index_select(0, tg.tensor([0])).shape == ()
    assert s.unfold(0, 1, 1).shape == (1,) and s.transpose(0, -1).shape == ()
    empty = tg.ones(5, requires_grad=True).gather(0, tg.zeros(2, 0, dtype=tg.int64))
    assert empty.shape == (2, 0)  # an empty index: no shape checks, an empty result (PyTorch)
    with pytest.raises(tg.ShapeError):
        tg.ones(5).gather(0, tg.zeros(2, 1, dtype=tg.int64))


def test_scatter_refuses_a_src_of_another_dtype():
    x, index = tg.zeros(3, 5, dtype=tg.float64), tg.tensor([[0, 1]])
    for op in ("scatter", "scatter_add"):
        with pytest.raises(RuntimeError, match="dtype"):
            getattr(x, op)(0, index, tg.ones(1, 2, dtype=tg.float32))
    with pytest.raises(RuntimeError, match="dtype"):
        x.scatter_reduce(0, index, tg.ones(1, 2, dtype=tg.float32), "sum")


def test_scatter_reduce_amax_of_0d_inputs():
    x, src = tg.tensor(1.5, dtype=tg.float64, requires_grad=True), tg.tensor(2.5, dtype=tg.float64, requires_grad=True)
    out = x.scatter_reduce(0, tg.tensor(0), src, "amax", include_self=True)
    out.backward()
    assert out.item() == 2.5 and x.grad.item() == 0.0 and src.grad.item() == 1.0


def test_circular_pad_crops_then_wraps_as_pytorch():
    torch = pytest.importorskip("torch")
    x = np.arange(2 * 4 * 5, dtype=np.float64).reshape(1, 2, 4, 5)
    for pad in [(-1, 1, -2, 1), (2, -1, 0, -1), (-2, -2, 1, 1)]:
        ours = F.pad(tg.tensor(x), pad, mode="circular").numpy()
        np.testing.assert_array_equal(ours, torch.nn.functional.pad(torch.tensor(x), pad, mode="circular").numpy())
    for mode in ("reflect", "replicate"):  # negative amounts crop; an empty batch is fine
        np.testing.assert_array_equal(
            F.pad(tg.tensor(x), (-1, 2, 1, -2), mode=mode).numpy(),
            torch.nn.functional.pad(torch.tensor(x), (-1, 2, 1, -2), mode=mode).numpy(),
        )
        assert F.pad(tg.ones(0, 3, 3), (1, 1), mode=mode).shape == (0, 3, 5)
