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
