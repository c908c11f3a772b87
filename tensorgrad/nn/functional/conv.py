"""Convolutions: conv1d, conv2d and conv_transpose2d (ops/conv.py), with PyTorch's shape checks."""

from __future__ import annotations

from ... import backend
from ...backend import ShapeError
from ...ops.conv import Conv2d, ConvTranspose2d
from ...tensor import Tensor


def pair(v, op, name):
    """An int or a pair (a 1-tuple stands for both sides, as PyTorch's int-or-pair arguments take it)."""
    v = (v, v) if isinstance(v, int) else tuple(int(a) for a in v)
    if len(v) == 1:
        v = v * 2
    if len(v) != 2:
        raise ValueError(f"{op}: {name} must be an int or a pair, got {v}")
    return v


def spatial(op, input: Tensor, weight: Tensor | None = None, bias: Tensor | None = None):
    """(N, C, H, W) or unbatched (C, H, W) input; returns (4-d input, batched?).  weight and bias
    must have the input's dtype (PyTorch refuses to mix them)."""
    if input.ndim not in (3, 4):
        raise ShapeError(f"{op}: expected a 3-d (C, H, W) or 4-d (N, C, H, W) input, got shape {input.shape}")
    if not backend.is_floating(input.dtype):
        raise TypeError(f"{op}: expected a floating-point input, got dtype {input.dtype}")
    if weight is not None and weight.dtype != input.dtype:
        raise TypeError(f"{op}: input is {input.dtype} but weight is {weight.dtype} (as in PyTorch, cast one)")
    if bias is not None and bias.dtype != input.dtype:
        raise TypeError(f"{op}: input is {input.dtype} but bias is {bias.dtype} (as in PyTorch, cast one)")
    return (input, True) if input.ndim == 4 else (input.unsqueeze(0), False)


def _out_side(op, n, k, s, d, p_total):
    out = (n + p_total - d * (k - 1) - 1) // s + 1
    if out < 1:
        raise ShapeError(
            f"{op}: the (padded) input side {n + p_total} is smaller than the dilated kernel {d * (k - 1) + 1}"
        )
    return out


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:  # fmt: skip
    """2-d cross-correlation, as PyTorch: input (N, C, H, W), weight (O, C / groups, KH, KW), bias (O,).
    padding: an int, a pair, "valid" (0) or "same" (output size = input size; stride 1)."""
    x, batched = spatial("conv2d", input, weight, bias)
    stride, dilation = pair(stride, "conv2d", "stride"), pair(dilation, "conv2d", "dilation")
    if weight.ndim != 4:
        raise ShapeError(f"conv2d: weight must be 4-d (out_channels, in_channels / groups, KH, KW), got {weight.shape}")
    o, cg, kh, kw = weight.shape
    if groups < 1 or x.shape[1] % groups or o % groups or x.shape[1] // groups != cg:
        raise ShapeError(
            f"conv2d: input has {x.shape[1]} channels and weight {weight.shape} with groups={groups}: "
            f"expected weight (out_channels, {x.shape[1] // max(groups, 1)}, KH, KW), channels divisible by groups"
        )
    if bias is not None and bias.shape != (o,):
        raise ShapeError(f"conv2d: bias has shape {bias.shape}, expected ({o},)")
    pads = _conv_padding("conv2d", padding, (kh, kw), stride, dilation)
    for n, k, s, d, (a, b) in zip(x.shape[2:], (kh, kw), stride, dilation, pads):
        _out_side("conv2d", n, k, s, d, a + b)
    y = Conv2d.apply(x, weight, bias, stride=stride, padding=pads, dilation=dilation, groups=groups)
    return y if batched else y.squeeze(0)


def _conv_padding(op, padding, kernel, stride, dilation):
    """((top, bottom), (left, right)) from an int, a pair, "valid" or "same"."""
    if padding == "valid":
        return ((0, 0), (0, 0))
    if padding == "same":
        if stride != (1, 1):
            raise ValueError(f"{op}: padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    if isinstance(padding, str):
        raise ValueError(f"{op}: padding must be an int, a pair, 'valid' or 'same', got {padding!r}")
    ph, pw = pair(padding, op, "padding")
    if ph < 0 or pw < 0:
        raise ValueError(f"{op}: padding must be non-negative, got {padding}")
    return ((ph, ph), (pw, pw))


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:  # fmt: skip
    """1-d cross-correlation: input (N, C, L), weight (O, C / groups, K); conv2d on a height-1 image."""
    if input.ndim not in (2, 3) or weight.ndim != 3:
        raise ShapeError(f"conv1d: expected input (N, C, L) or (C, L) and weight (O, C / groups, K), got "
                         f"{input.shape} and {weight.shape}")  # fmt: skip
    one = lambda v: (1, v if isinstance(v, int) else tuple(v)[0])  # noqa: E731
    pad = padding if isinstance(padding, str) else (0, padding if isinstance(padding, int) else tuple(padding)[0])
    y = conv2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, one(stride), pad, one(dilation), groups)
    return y.squeeze(-2)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:  # fmt: skip
    """The transposed convolution (the adjoint of conv2d's input map): input (N, C, H, W), weight
    (C, O / groups, KH, KW); output side (H - 1) * stride - 2 * padding + dilation * (KH - 1) +
    output_padding + 1."""
    x, batched = spatial("conv_transpose2d", input, weight, bias)
    if weight.ndim != 4 or weight.shape[0] != x.shape[1] or groups < 1 or x.shape[1] % groups:
        raise ShapeError(
            f"conv_transpose2d: weight {weight.shape} does not fit an input of {x.shape[1]} channels with "
            f"groups={groups}: expected (in_channels, out_channels / groups, KH, KW)"
        )
    stride, padding = pair(stride, "conv_transpose2d", "stride"), pair(padding, "conv_transpose2d", "padding")
    output_padding = pair(output_padding, "conv_transpose2d", "output_padding")
    dilation = pair(dilation, "conv_transpose2d", "dilation")
    for op_, s, d in zip(output_padding, stride, dilation):
        if not 0 <= op_ < max(s, d):
            raise ValueError(
                f"conv_transpose2d: output_padding {output_padding} must be smaller than stride or dilation"
            )
    o = weight.shape[1] * groups
    if bias is not None and bias.shape != (o,):
        raise ShapeError(f"conv_transpose2d: bias has shape {bias.shape}, expected ({o},)")
    for n, k, s, d, p, op_ in zip(x.shape[2:], weight.shape[2:], stride, dilation, padding, output_padding):
        if (n - 1) * s - 2 * p + d * (k - 1) + op_ + 1 < 1:
            raise ShapeError(f"conv_transpose2d: padding {padding} leaves an empty output for input {x.shape}")
    y = ConvTranspose2d.apply(x, weight, bias, stride=stride, padding=padding, output_padding=output_padding,
                              dilation=dilation, groups=groups)  # fmt: skip
    return y if batched else y.squeeze(0)
