"""Reductions, scans and normalisations accumulate as PyTorch's (backend/accumulation.py).

float16: every sum, scan and normalisation is computed in float32 and rounded to float16 once,
forward and backward, as PyTorch does; NumPy's float16 arithmetic would overflow (a norm of 100
values of 100, a variance of values in the thousands, 70,000 exponentials) or stall (a running sum
of ones stops at 2048).  Where PyTorch's CPU kernel itself keeps float16 in a sum and overflows
(log_softmax, logsumexp, cross_entropy over 70,000 classes, layer_norm's bias gradient past 4096,
prod, nanmean), the expected value is the float64 one rounded to float16: what accumulating in
float32 and rounding once gives.

float32: a sum over a non-innermost axis (NumPy adds one row after another: error ~ n eps) is
blocked, and a scan accumulates in float64 on the host (PyTorch's CPU acc type), so both stay in
PyTorch's accuracy class.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional as F

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.reference


def _half(values, device, requires_grad=False):
    return tg.tensor(np.asarray(values, dtype=np.float16), device=device, requires_grad=requires_grad)


def _torch_half(values, requires_grad=False):
    return torch.tensor(np.asarray(values, dtype=np.float16), requires_grad=requires_grad)


def _assert_within_half_rounding(ours, want):
    """ours within one float16 step of want: both round a float32 result (the two libraries' differ
    in the last float32 bits) to float16, so they agree or are adjacent float16 numbers."""
    ours, want = np.asarray(ours), np.asarray(want, dtype=np.float16)
    assert ours.dtype == np.float16
    step = np.spacing(np.abs(want)).astype(np.float64)
    np.testing.assert_array_less(np.abs(ours.astype(np.float64) - want.astype(np.float64)), step * 1.0001)


# ------------------------------------------------------------------ float16: forward
def test_float16_norm_as_torch(device):
    x = np.full(100, 100.0)  # the squares sum to 1e6, past float16's 65504
    ours = _half(x, device, requires_grad=True)
    theirs = _torch_half(x, requires_grad=True)
    n, t = ours.norm(), theirs.norm()
    assert n.item() == t.item() == 1000.0
    assert tg.linalg.vector_norm(ours).item() == 1000.0
    assert tg.linalg.vector_norm(ours, 3).item() == torch.linalg.vector_norm(theirs, 3).item()
    n.backward()
    t.backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())  # x / ||x|| = 0.1, rounded once


def test_float16_std_var_mean_as_torch(device):
    x = np.arange(0, 6301.0)  # the squared deviations sum to 2e10
    ours, theirs = _half(x, device), _torch_half(x)
    assert ours.std().item() == theirs.std().item() == 1819.0
    big = [60000.0, 60000.0]  # the sum, 120000, is past float16's range; the mean is not
    assert _half(big, device).mean().item() == _torch_half(big).mean().item() == 60000.0
    assert _half(big, device).var().item() == _torch_half(big).var().item() == 0.0


def test_float16_layer_norm_and_batch_norm_as_torch(device):
    x = np.arange(0, 7001.0)  # the variance, 4e6, is past float16's range
    ours = F.layer_norm(_half(x, device), (7001,)).numpy()
    _assert_within_half_rounding(ours, torch.nn.functional.layer_norm(_torch_half(x), (7001,)).numpy())
    assert ours[0] < -1.7  # not the zeros of a variance that overflowed
    ours = F.batch_norm(_half(x.reshape(1, 1, -1), device), None, None, training=True).numpy()
    theirs = torch.nn.functional.batch_norm(_torch_half(x.reshape(1, 1, -1)), None, None, training=True).numpy()
    _assert_within_half_rounding(ours, theirs)
    ours = F.group_norm(_half(x.reshape(1, 1, -1), device), 1).numpy()
    _assert_within_half_rounding(ours, torch.nn.functional.group_norm(_torch_half(x.reshape(1, 1, -1)), 1).numpy())


def test_float16_softmax_as_torch(device):
    x = np.zeros(70000)  # 70,000 exponentials of 0 sum past float16's range
    ours = _half(x, device).softmax(0).numpy()
    theirs = _torch_half(x).softmax(0).numpy()
    np.testing.assert_array_equal(ours, theirs)  # 1 / 70000 rounded once
    assert ours.astype(np.float32).sum() == theirs.astype(np.float32).sum() > 1.0  # not 0
    # PyTorch's CPU log_softmax of float16 sums in float16 and gives -inf here
    np.testing.assert_array_equal(_half(x, device).log_softmax(0).numpy()[:3], np.float16(-np.log(70000.0)))


def test_float16_logsumexp_and_cross_entropy(device):
    # PyTorch's CPU logsumexp rounds its sum to float16 (inf), and its cross_entropy goes through
    # the log_softmax above (inf): the expected values are float64's, rounded
    want = np.float16(np.log(70000.0))
    assert _half(np.zeros(70000), device).logsumexp(0).item() == want
    loss = F.cross_entropy(_half(np.zeros((2, 70000)), device), tg.tensor([0, 1], device=device))
    assert loss.dtype == tg.float16 and loss.item() == want
    q, k = np.zeros((1, 1, 1, 4)), np.zeros((1, 1, 70000, 4))
    v = np.ones((1, 1, 70000, 4))
    ours = F.scaled_dot_product_attention(_half(q, device), _half(k, device), _half(v, device)).numpy()
    theirs = torch.nn.functional.scaled_dot_product_attention(_torch_half(q), _torch_half(k), _torch_half(v)).numpy()
    np.testing.assert_array_equal(ours, theirs)  # ones: the weights 1 / 70000 sum to 1


def test_float16_sums_over_rows_and_scans_as_torch(device):
    ones = np.ones((5000, 3))  # float16 counts 1, 2, ..., 2048 and then stalls: 2048 + 1 = 2048
    for fn in (lambda t: t.sum(0), lambda t: t.mean(0), lambda t: t.cumsum(0), lambda t: t.nansum(0)):
        ours = fn(_half(ones, device))
        assert ours.dtype == tg.float16
        np.testing.assert_array_equal(ours.numpy(), fn(_torch_half(ones)).numpy())
    np.testing.assert_array_equal(tg.einsum("ij->j", _half(ones, device)).numpy(), [5000.0] * 3)
    x = [300.0, 300.0, 1 / 300]  # a running product past float16's range and back
    np.testing.assert_array_equal(_half(x, device).cumprod(0).numpy(), _torch_half(x).cumprod(0).numpy())
    # PyTorch's CPU prod multiplies in float16 (inf); its CUDA prod, in float32, gives this
    assert _half(x, device).prod().item() == np.float16(np.float32(300.0) * np.float32(300.0) * np.float16(1 / 300))


def test_float16_other_reductions_as_torch(device):
    z = np.zeros(5000)  # logcumsumexp: log 1, log 2, ..., log 5000, each step a logaddexp
    ours = _half(z, device).logcumsumexp(0).numpy()
    _assert_within_half_rounding(ours, _torch_half(z).logcumsumexp(0).numpy())
    logp, targets = np.full((5000, 3), -1.0), np.zeros(5000, dtype=np.int64)  # a sum of 5000 ones
    for reduction in ("sum", "mean"):
        ours = F.nll_loss(_half(logp, device), tg.tensor(targets, device=device), reduction=reduction)
        theirs = torch.nn.functional.nll_loss(_torch_half(logp), torch.tensor(targets), reduction=reduction)
        assert ours.item() == theirs.item()
    big = np.full((1, 100), 100.0)  # a norm of 1000: its squares sum past float16's range
    np.testing.assert_array_equal(
        F.normalize(_half(big, device)).numpy(), torch.nn.functional.normalize(_torch_half(big)).numpy()
    )
    np.testing.assert_array_equal(
        F.pairwise_distance(_half(big, device), _half(big * 0, device)).numpy(),
        torch.nn.functional.pairwise_distance(_torch_half(big), _torch_half(big * 0)).numpy(),
    )
    x = np.arange(0, 7001.0)
    ours = F.rms_norm(_half(x, device), (7001,)).numpy()
    _assert_within_half_rounding(ours, torch.nn.functional.rms_norm(_torch_half(x), (7001,)).numpy())
    tiles = np.full((1, 1, 4, 4), 60000.0)  # a window's sum, 240000, past float16's range; its mean not
    np.testing.assert_array_equal(
        F.avg_pool2d(_half(tiles, device), 2).numpy(), torch.nn.functional.avg_pool2d(_torch_half(tiles), 2).numpy()
    )
    # PyTorch's CPU nanmean divides a nansum rounded to float16 (inf); float64's mean, rounded:
    assert _half([60000.0, 60000.0, np.nan], device).nanmean().item() == 60000.0


# ------------------------------------------------------------------ float16: backward
def test_float16_gradients_that_sum_as_torch(device):
    # the gradient of a broadcast sums over the 5000 rows it was copied to
    x, b = _half(np.zeros((5000, 4)), device, True), _half(np.zeros(4), device, True)
    (x + b).sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), [5000.0] * 4)
    # cumsum's backward is a reverse cumsum
    ones = np.ones(5000)
    ours, theirs = _half(ones, device, True), _torch_half(ones, True)
    ours.cumsum(0).sum().backward()
    theirs.cumsum(0).sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
    # layer_norm's weight and bias gradients sum over the rows (PyTorch's CPU kernel stops at 4096)
    x16 = np.random.default_rng(0).standard_normal((5000, 4)).astype(np.float16)
    x, w, b = _half(x16, device, True), _half(np.ones(4), device, True), _half(np.zeros(4), device, True)
    F.layer_norm(x, (4,), w, b).sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), [5000.0] * 4)
    x64 = x16.astype(np.float64)
    xhat = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + 1e-5)
    _assert_within_half_rounding(w.grad.numpy(), xhat.sum(0))  # dw = sum over the rows of xhat


def test_float16_softmax_backward(device):
    # The backward sums g * y (softmax) or g (log_softmax) over 70,000 entries: about 5 and 349,995,
    # which float16 cannot reach by adding terms of 1e-4 (it stalls) or of up to 10 (it overflows).
    # Both ops save their float16 output y, as PyTorch's do: the expected gradient is the formula's
    # in float64 from that same y.
    c = np.arange(70000) % 11
    g = tg.tensor(c, dtype=tg.float16, device=device)
    x = _half(np.zeros(70000), device, True)
    y = x.softmax(0)
    (y * g).sum().backward()
    y64 = y.detach().numpy().astype(np.float64)
    want = y64 * (c - (c * y64).sum())
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=2**-10, atol=2**-24)  # float16 rounding (of values < 1e-4)
    x = _half(np.zeros(70000), device, True)
    y = x.log_softmax(0)
    (y * g).sum().backward()
    want = c - np.exp(y.detach().numpy().astype(np.float64)) * c.sum()  # about c - 5
    # float16 rounding, and float32's of exp(y) * 349995 (5, to 3e-7) where c - 5 cancels
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=2**-10, atol=1e-6)


def test_float16_clip_grad_norm_as_torch(device):
    p = tg.nn.Parameter(_half(np.full(100, 100.0), device))
    p.grad = _half(np.full(100, 100.0), device)
    tp = torch.nn.Parameter(_torch_half(np.full(100, 100.0)))
    tp.grad = _torch_half(np.full(100, 100.0))
    total, want = tg.nn.utils.clip_grad_norm_([p], 1.0), torch.nn.utils.clip_grad_norm_([tp], 1.0)
    assert total.item() == want.item() == 1000.0
    np.testing.assert_array_equal(p.grad.numpy(), tp.grad.numpy())  # 0.1, not the zeros of an inf norm


# ------------------------------------------------------------------ float32
def _normwise_error(ours, want):
    """max |ours - want| / max |want|: the error class of a sum (its relative error per element
    can be large where terms cancel)."""
    return np.max(np.abs(np.asarray(ours, np.float64) - want)) / np.max(np.abs(want))


def test_float32_sum_over_rows_in_pytorchs_accuracy_class(device):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((65536, 64)).astype(np.float32) + 1
    want = a.astype(np.float64).sum(0)
    # PyTorch's cascade sum: ~1.5e-7 here; NumPy's sum(0), one row after another: ~7e-6
    theirs = _normwise_error(torch.tensor(a).sum(0).numpy(), want)
    assert theirs < 1e-6
    t = tg.tensor(a, device=device)
    for ours in (t.sum(0), t.mean(0) * 65536, tg.tensor(a.T.copy(), device=device).T.sum(0)):
        assert _normwise_error(ours.numpy(), want) < 1e-6
    # the same sum as the gradient of a broadcast bias
    b = tg.zeros(64, device=device, requires_grad=True)
    (tg.tensor(a * 0, device=device) + b).backward(t)
    assert _normwise_error(b.grad.numpy(), want) < 1e-6


def test_float32_cumsum_in_pytorchs_accuracy_class(device):
    x = np.full(10**6, 1e-6, dtype=np.float32)
    theirs = torch.tensor(x).cumsum(0)[-1].item()  # 1.0: PyTorch's CPU scan adds in float64
    ours = tg.tensor(x, device=device).cumsum(0)[-1].item()  # NumPy's float32 scan: 1.009
    assert abs(ours - theirs) <= 1e-6  # a few float32 steps at 1.0 (a float32 tree scan's error)



_SHAPES = [(300, 7, 130), (1, 200, 3), (129,), (0, 300), (65, 1, 70)]
_DIMS = [None, 0, -1, (0, 1), (0, -1)]


@pytest.mark.parametrize(("shape", "dim", "permuted"), list(itertools.product(_SHAPES, _DIMS, [False, True])))
def test_float32_sums_of_every_layout_as_numpy(device, shape, dim, permuted):
    """The blocked sum's paths (backend/accumulation.py: blocks and their tails, several axes, size-1
    and empty axes, arrays whose innermost memory axis is not their last): NumPy's shapes, float64's
    values.  (The accuracy itself is the test above's.)"""
    if isinstance(dim, tuple) and len(shape) < 2:
        return
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    t = tg.tensor(a, device=device)
    if permuted:  # a view whose innermost memory axis is its first
        a, t = a.transpose(), t.permute(*reversed(range(len(shape))))
    dims = tuple(range(t.ndim)) if dim is None else dim
    for keepdim in (False, True):
        want = a.astype(np.float64).sum(axis=dim, keepdims=keepdim)
        bound = 1e-6 * np.abs(a).astype(np.float64).sum(axis=dim, keepdims=keepdim)  # float32 rounding, loosely
        ours = t.sum(dims, keepdim)
        assert ours.shape == want.shape and ours.dtype == tg.float32
        np.testing.assert_array_less(np.abs(ours.numpy() - want), bound + 1e-30)
        count = a.size // max(want.size, 1)
        if count:
            mean = t.mean(dims, keepdim)
            assert mean.shape == want.shape
            np.testing.assert_array_less(np.abs(mean.numpy() * count - want), bound + 1e-30)
