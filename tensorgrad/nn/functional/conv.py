"""Convolutions: conv1d, conv2d, conv_transpose1d, conv_transpose2d and unfold (im2col) (ops/conv.py),
conv3d (2-d convolutions per depth tap), with PyTorch's shape checks."""

from __future__ import annotations

from ... import backend
from ...backend import ShapeError
from ...ops.conv import Conv2d, ConvTranspose2d, Unfold
from ...tensor import Tensor
from .padding import pad


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


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:  # fmt: skip
    """1-d transposed convolution: input (N, C, L), weight (C, O / groups, K); conv_transpose2d on a
    height-1 image."""
    if input.ndim not in (2, 3) or weight.ndim != 3:
        raise ShapeError(f"conv_transpose1d: expected input (N, C, L) or (C, L) and weight (C, O / groups, K), got "
                         f"{input.shape} and {weight.shape}")  # fmt: skip
    one = lambda v, lo=1: (lo, v if isinstance(v, int) else tuple(v)[0])  # noqa: E731
    y = conv_transpose2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, one(stride), one(padding, 0),
                         one(output_padding, 0), groups, one(dilation))  # fmt: skip
    return y.squeeze(-2)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """im2col: the sliding kernel_size windows of (N, C, H, W) (or (C, H, W)) as columns,
    (N, C * KH * KW, L) with L the number of windows (ops/conv.py: Unfold)."""
    if input.ndim not in (3, 4):
        raise ShapeError(f"unfold: expected a 3-d (C, H, W) or 4-d (N, C, H, W) input, got shape {input.shape}")
    x = input if input.ndim == 4 else input.unsqueeze(0)
    kernel, dilation = pair(kernel_size, "unfold", "kernel_size"), pair(dilation, "unfold", "dilation")
    padding, stride = pair(padding, "unfold", "padding"), pair(stride, "unfold", "stride")
    if min(kernel) <= 0 or min(dilation) <= 0 or min(stride) <= 0 or min(padding) < 0:
        raise RuntimeError(f"unfold: kernel_size {kernel}, dilation {dilation} and stride {stride} must be positive, "
                           f"padding {padding} non-negative")  # fmt: skip
    if 0 in x.shape[1:]:
        raise ShapeError(f"unfold: expected non-empty channels, height and width, got {input.shape}")
    out = tuple(_out_side("unfold", n, k, s, d, 2 * p) for n, k, s, d, p in zip(x.shape[2:], kernel, stride,
                                                                                dilation, padding))  # fmt: skip
    y = Unfold.apply(x, kernel=kernel, stride=stride, padding=tuple((p, p) for p in padding), dilation=dilation,
                     out_size=out)  # fmt: skip
    return y if input.ndim == 4 else y.squeeze(0)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:  # fmt: skip
    """3-d cross-correlation: input (N, C, D, H, W), weight (O, C / groups, KD, KH, KW), bias (O,).

    A composition of 2-d convolutions, one per depth tap kd: output depth od reads input depth
    od * sd + kd * dd (after zero padding), so
        y[:, :, od] = b + sum_kd conv2d(xpad[:, :, od * sd + kd * dd], w[:, :, kd])
    with every od of a tap done at once (the depths folded into the batch)."""
    if input.ndim not in (4, 5) or weight.ndim != 5:
        raise ShapeError(f"conv3d: expected input (N, C, D, H, W) or (C, D, H, W) and weight (O, C / groups, KD, KH, "
                         f"KW), got {input.shape} and {weight.shape}")  # fmt: skip
    x = input if input.ndim == 5 else input.unsqueeze(0)
    triple = lambda v: (v,) * 3 if isinstance(v, int) else tuple(int(a) for a in v)  # noqa: E731
    stride, dilation = triple(stride), triple(dilation)
    if len(stride) != 3 or len(dilation) != 3 or min(stride) < 1 or min(dilation) < 1:
        raise ValueError(f"conv3d: stride {stride} and dilation {dilation} must be 3 positive ints")
    kd = weight.shape[2]
    if padding == "same":
        if stride != (1, 1, 1):
            raise ValueError("conv3d: padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) for k, d in zip(weight.shape[2:], dilation)]
        pads = [(t // 2, t - t // 2) for t in totals]
    elif padding == "valid":
        pads = [(0, 0)] * 3
    elif isinstance(padding, str):
        raise ValueError(f"conv3d: padding must be an int, a triple, 'valid' or 'same', got {padding!r}")
    else:
        pads = [(p, p) for p in triple(padding)]
        if len(pads) != 3 or min(p for p, _ in pads) < 0:
            raise ValueError(f"conv3d: padding must be 3 non-negative ints, got {padding}")
    if bias is not None and bias.shape != weight.shape[:1]:
        raise ShapeError(f"conv3d: bias has shape {bias.shape}, expected {weight.shape[:1]}")
    if bias is not None and bias.dtype != input.dtype:
        raise TypeError(f"conv3d: input is {input.dtype} but bias is {bias.dtype}; they should be the same")
    (dt, db), (sd, dd) = pads[0], (stride[0], dilation[0])
    depth = _out_side("conv3d", x.shape[2], kd, sd, dd, dt + db)
    if dt or db:
        x = pad(x, (0, 0, 0, 0, dt, db))  # the depth's zeros; H and W are conv2d's to pad
    hw_padding = "same" if padding == "same" else (pads[1][0], pads[2][0])
    n = x.shape[0]
    out = None
    for k in range(kd):
        start = k * dd
        taps = x[:, :, start : start + sd * (depth - 1) + 1 : sd]  # (N, C, OD, H, W): the inputs of tap k
        folded = taps.permute(0, 2, 1, 3, 4).reshape(n * depth, *taps.shape[1:2], *taps.shape[3:])
        y = conv2d(folded, weight[:, :, k], None, stride[1:], hw_padding, dilation[1:], groups)
        out = y if out is None else out + y
    out = out.reshape(n, depth, *out.shape[1:]).permute(0, 2, 1, 3, 4)
    if bias is not None:
        out = out + bias.reshape(-1, 1, 1, 1)
    return out if input.ndim == 5 else out.squeeze(0)

