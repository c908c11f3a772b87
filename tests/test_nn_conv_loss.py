"""Convolution, pooling and loss modules against torch.nn: state_dict keys and shapes, default
initialisation, the same outputs and gradients from the same weights; their errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn as nn
import tensorgrad.nn.functional as F

torch = pytest.importorskip("torch")

# float64 on both sides, the same sums in another order: rounding only.
TOL = {"rtol": 1e-9, "atol": 1e-9}


def load_from_torch(ours, theirs):
    sd = theirs.state_dict()
    assert list(ours.state_dict()) == list(sd)
    for k, v in ours.state_dict().items():
        assert v.shape == tuple(sd[k].shape), k
    ours.load_state_dict({k: tg.tensor(v.numpy()) for k, v in sd.items()})


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2),
        lambda lib: lib.nn.Conv2d(4, 6, (3, 2), padding="same", padding_mode="reflect", bias=False),
        lambda lib: lib.nn.Conv2d(4, 2, 3, stride=2, padding=1, dilation=2, padding_mode="circular"),
        lambda lib: lib.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
    ],
    ids=["conv1d", "conv2d_same_reflect", "conv2d_circular", "conv_transpose2d"],
)
def test_conv_modules_match_torch(make, device):
    theirs = make(torch).double()
    ours = make(tg).to(device).double()
    load_from_torch(ours, theirs)
    assert repr(ours) == repr(theirs)
    shape = (2, 4, 7) if isinstance(ours, nn.Conv1d) else (2, 4, 7, 6)
    x = np.random.default_rng(0).standard_normal(shape)
    tx = tg.tensor(x, device=device, requires_grad=True)
    out = ours(tx)
    tt = torch.tensor(x, requires_grad=True)
    ref = theirs(tt)
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), **TOL)
    g = np.random.default_rng(1).standard_normal(ref.shape)
    out.backward(tg.tensor(g, device=device))
    ref.backward(torch.tensor(g))
    np.testing.assert_allclose(tx.grad.numpy(), tt.grad.numpy(), **TOL)
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), **TOL, err_msg=name)


def test_conv_default_init_is_torchs_bound():
    """U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = in_channels / groups * kernel area (as torch)."""
    tg.manual_seed(0)
    for conv, fan_in in ((nn.Conv2d(8, 16, 3, groups=2), 4 * 9), (nn.ConvTranspose2d(8, 6, 2), 6 * 4)):
        bound = 1 / np.sqrt(fan_in)
        for p in (conv.weight, conv.bias):
            v = p.numpy()
            assert p.dtype == tg.float32 and np.abs(v).max() <= bound
            assert np.abs(v).max() > 0.8 * bound  # a few hundred draws reach near the bound


def test_small_cnn_matches_torch():
    """conv -> relu -> max_pool -> conv -> avg_pool -> linear -> cross_entropy, same weights: same loss
    and gradients."""

    def build(lib):
        return lib.nn.Sequential(
            lib.nn.Conv2d(1, 4, 3, padding=1), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
            lib.nn.Conv2d(4, 6, 3, groups=2), lib.nn.AvgPool2d(2, ceil_mode=True),
        )  # fmt: skip

    theirs = build(torch).double()
    ours = build(tg).double()
    load_from_torch(ours, theirs)
    head_t = torch.nn.Linear(6 * 2 * 2, 3).double()
    head = nn.Linear(24, 3).double()
    load_from_torch(head, head_t)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((5, 1, 10, 10)), rng.integers(0, 3, 5)
    loss = F.cross_entropy(head(ours(tg.tensor(x)).flatten(1)), tg.tensor(y), label_smoothing=0.1)
    loss_t = torch.nn.functional.cross_entropy(head_t(theirs(torch.tensor(x)).flatten(1)), torch.tensor(y),
                                               label_smoothing=0.1)  # fmt: skip
    loss.backward()
    loss_t.backward()
    np.testing.assert_allclose(loss.item(), loss_t.item(), **TOL)
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), **TOL, err_msg=name)


@pytest.mark.parametrize(
    "make, args",
    [
        (lambda lib, w: lib.nn.CrossEntropyLoss(weight=w, ignore_index=1, label_smoothing=0.2), "ids"),
        (lambda lib, w: lib.nn.NLLLoss(weight=w, reduction="sum"), "ids"),
        (lambda lib, w: lib.nn.BCELoss(weight=w), "probs"),
        (lambda lib, w: lib.nn.BCEWithLogitsLoss(weight=w, pos_weight=w * 2), "probs_logits"),
        (lambda lib, w: lib.nn.MSELoss(reduction="none"), "values"),
        (lambda lib, w: lib.nn.L1Loss(), "values"),
    ],
    ids=["CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "MSELoss", "L1Loss"],
)
def test_loss_modules_match_torch(make, args):
    rng = np.random.default_rng(0)
    w = rng.uniform(0.5, 2, 4)
    ours, theirs = make(tg, tg.tensor(w)), make(torch, torch.tensor(w))
    assert list(ours.state_dict()) == list(theirs.state_dict())  # weight / pos_weight are buffers
    x = rng.standard_normal((5, 4))
    if args == "ids":
        t = rng.integers(0, 4, 5)
        x = x if isinstance(ours, nn.CrossEntropyLoss) else np.log(np.exp(x) / np.exp(x).sum(1, keepdims=True))
    elif args.startswith("probs"):
        t = rng.random((5, 4))
        x = x if args == "probs_logits" else 1 / (1 + np.exp(-x))
    else:
        t = rng.standard_normal((5, 4))
    tx, tt = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, ref = ours(tx, tg.tensor(t)), theirs(tt, torch.tensor(t))
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), **TOL)
    out.sum().backward()
    ref.sum().backward()
    np.testing.assert_allclose(tx.grad.numpy(), tt.grad.numpy(), **TOL)


def test_conv_and_pool_errors():
    x = tg.ones(1, 4, 5, 5)
    with pytest.raises(ValueError, match=r"conv2d: input has 4 channels and weight \(2, 3, 3, 3\) with groups=1"):
        F.conv2d(x, tg.ones(2, 3, 3, 3))
    with pytest.raises(ValueError, match=r"expected weight \(out_channels, 2, KH, KW\)"):
        F.conv2d(x, tg.ones(3, 2, 3, 3), groups=2)
    with pytest.raises(ValueError, match="smaller than the dilated kernel 7"):
        F.conv2d(x, tg.ones(2, 4, 4, 4), dilation=2)
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        F.conv2d(x, tg.ones(2, 4, 3, 3), stride=2, padding="same")
    with pytest.raises(ValueError, match=r"expected a 3-d \(C, H, W\) or 4-d \(N, C, H, W\) input"):
        F.conv2d(tg.ones(4, 5), tg.ones(2, 4, 3, 3))
    with pytest.raises(TypeError, match="conv2d: input is float64 but weight is float32"):
        F.conv2d(x.double(), tg.ones(2, 4, 3, 3))
    with pytest.raises(ValueError, match=r"bias has shape \(3,\), expected \(2,\)"):
        F.conv2d(x, tg.ones(2, 4, 3, 3), tg.ones(3))
    with pytest.raises(ValueError, match="output_padding .* must be smaller than stride or dilation"):
        F.conv_transpose2d(x, tg.ones(4, 2, 3, 3), output_padding=1)
    with pytest.raises(ValueError, match=r"conv_transpose2d: weight \(2, 2, 3, 3\) does not fit"):
        F.conv_transpose2d(x, tg.ones(2, 2, 3, 3))
    with pytest.raises(ValueError, match="max_pool2d: padding .* should be at most half the kernel size"):
        F.max_pool2d(x, 2, padding=2)
    with pytest.raises(ValueError, match=r"avg_pool2d: the kernel \(6, 6\) does not fit"):
        F.avg_pool2d(x, 6)
    with pytest.raises(ValueError, match="must be divisible by groups=3"):
        nn.Conv2d(4, 6, 3, groups=3)
    with pytest.raises(ValueError, match="padding_mode must be"):
        nn.Conv2d(4, 6, 3, padding_mode="mirror")


def test_max_pool2d_return_indices_match_torch(device):
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 6))
    out, idx = F.max_pool2d(tg.tensor(x, device=device), 3, 2, 1, 2, ceil_mode=True, return_indices=True)
    ref, ref_idx = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 2, 1, 2, ceil_mode=True, return_indices=True)
    assert idx.dtype == tg.int64
    np.testing.assert_array_equal(idx.numpy(), ref_idx.numpy())
    np.testing.assert_array_equal(out.numpy(), ref.numpy())
