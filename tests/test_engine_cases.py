"""Engine edge cases that ported PyTorch code meets: 0-d reductions and softmax, PyTorch's shape
rule for integers mixed with index tensors, view(dtype), integer powers."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")


# ------------------------------------------------------------------ 0-d tensors
@pytest.mark.parametrize("dim", [0, -1, (0,), None])
@pytest.mark.parametrize("op", ["sum", "mean", "amax"])
def test_reductions_of_a_0d_tensor(op, dim, device):
    x = tg.tensor(1.5, dtype=tg.float64, device=device, requires_grad=True)
    y = getattr(x, op)() if dim is None else getattr(x, op)(dim)
    ref = getattr(torch.tensor(1.5, dtype=torch.float64), op)() if dim is None else getattr(torch.tensor(1.5), op)(dim)
    assert y.shape == tuple(ref.shape) == () and y.item() == ref.item() == 1.5
    y.backward()
    assert x.grad.item() == 1.0


def test_reductions_of_a_0d_tensor_keepdim_and_bad_dim():
    x = tg.tensor(2.0)
    assert x.sum(0, keepdim=True).shape == tuple(torch.tensor(2.0).sum(0, keepdim=True).shape) == ()
    with pytest.raises(IndexError, match=r"sum: dim 1 is out of range for a tensor of 0 dims \(expected -1..0\)"):
        x.sum(1)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_of_a_0d_tensor(fn):
    x = tg.tensor(1.5, dtype=tg.float64, requires_grad=True)
    y = getattr(x, fn)(0)
    t = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
    ref = getattr(t, fn)(0)
    assert y.shape == () and y.item() == ref.item()
    y.backward()
    ref.backward()
    assert x.grad.item() == t.grad.item() == 0.0
    assert getattr(tg.tensor(0.5), fn)(-1).shape == ()


# ------------------------------------------------------------------ indexing: PyTorch's shape rule
INDEXES = [
    lambda t: (1, slice(None), slice(0, 2), t([0, 2]), slice(0, 2)),  # the issue's case: (5, 2, 2, 2)
    lambda t: (t([1, 0]), slice(None), 3),
    lambda t: (0, t([1, 1, 0])),
    lambda t: (slice(None), 2, slice(1, 3), t([[0, 1], [2, 2]])),
    lambda t: (1, t([0, 4]), slice(None), t([1, 0])),
    lambda t: (Ellipsis, 1, t([2, 0, 1])),
    lambda t: (1, None, slice(None), t([0, 2])),
]


@pytest.mark.parametrize("make", INDEXES)
def test_mixed_int_and_tensor_indexing_matches_torch(make, device):
    a = np.random.default_rng(0).standard_normal((2, 5, 6, 5, 3))
    x = tg.tensor(a, device=device, requires_grad=True)
    xt = torch.tensor(a, requires_grad=True)
    y = x[make(lambda v: tg.tensor(v, device=device))]
    yt = xt[make(torch.tensor)]
    assert y.shape == tuple(yt.shape)
    np.testing.assert_array_equal(y.numpy(), yt.detach().numpy())  # the same elements, picked
    g = np.random.default_rng(1).standard_normal(y.shape)
    y.backward(tg.tensor(g, device=device))
    yt.backward(torch.tensor(g))
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())  # scatter of the same numbers


def test_the_issue_indexing_case_shape():
    x = tg.zeros(2, 5, 6, 5, 3)
    assert x[1, :, 0:2, tg.tensor([0, 2]), 0:2].shape == (5, 2, 2, 2)


# ------------------------------------------------------------------ integer powers
def test_int_tensor_to_a_negative_int_power_raises_as_torch():
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        torch.tensor([2, 3]) ** -1
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        tg.tensor([2, 3]) ** -1
    assert (tg.tensor([2, 3]) ** 2).tolist() == [4, 9] and (tg.tensor([2, 3]) ** 2).dtype == tg.int64
    y = tg.tensor([4, 16]) ** -0.5  # a float exponent gives floats, as in PyTorch
    assert y.dtype == tg.float32 and y.tolist() == [0.5, 0.25]


# ------------------------------------------------------------------ view(dtype)
@pytest.mark.parametrize(
    "src,dst",
    [("float32", "int32"), ("int32", "float32"), ("float64", "int64"), ("float32", "float16"), ("int64", "int32")],
)
def test_view_dtype_reinterprets_as_torch(src, dst):
    a = np.array([[1.5, -2.0, 3.25, 0.0], [7.0, 8.0, -9.5, 1e-3]]).astype(src)
    y = tg.tensor(a).view(getattr(tg, dst))
    ref = torch.tensor(a).view(getattr(torch, dst))
    assert y.dtype == getattr(tg, dst) and y.shape == tuple(ref.shape)
    np.testing.assert_array_equal(y.numpy(), ref.numpy())


def test_view_dtype_shares_storage_and_refuses_what_torch_refuses():
    x = tg.tensor([1.0, 2.0])
    bits = x.view(tg.int32)
    bits[0] = 0  # the bits of 0.0
    assert x.tolist() == [0.0, 2.0] and x._version == 1
    with pytest.raises(RuntimeError, match=r"view\(dtype\): cannot view a float32 tensor of shape \(3,\) as float64"):
        tg.tensor([1.0, 2.0, 3.0]).view(tg.float64)
    with pytest.raises(RuntimeError, match="not differentiable"):
        tg.tensor([1.0], requires_grad=True).view(tg.int32)
    assert x.view(2, 1).shape == (2, 1) and x.view(-1).shape == (2,)
