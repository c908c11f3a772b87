"""Rearranging and resampling images: pixel_shuffle, pixel_unshuffle, channel_shuffle (reshapes
and permutes, whose backward moves the gradient back: ops/shape.py) and interpolate /
upsample_nearest / upsample_bilinear (indexing and weighted sums: ops/shape.py, ops/arithmetic.py)."""

from __future__ import annotations

import math

from ... import backend
from ...backend import ShapeError
from ...tensor import Tensor
from .pooling import adaptive_average


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r): each group of r^2 channels becomes an r x r block of pixels,
    out[c, h r + i, w r + j] = in[c r^2 + i r + j, h, w]."""
    r = int(upscale_factor)
    if input.ndim < 3:
        raise ShapeError(f"pixel_shuffle: expects an input of at least 3 dims (*, C, H, W), got {input.shape}")
    if r <= 0:
        raise ShapeError(f"pixel_shuffle: upscale_factor must be greater than 0, got {r}")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise ShapeError(f"pixel_shuffle: the channels ({c}) must be divisible by upscale_factor^2 = {r * r}")
    b = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.permute(*range(b), b, b + 3, b + 1, b + 4, b + 2)  # (*, C, H, r, W, r)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W), the inverse of pixel_shuffle."""
    r = int(downscale_factor)
    if input.ndim < 3:
        raise ShapeError(f"pixel_unshuffle: expects an input of at least 3 dims (*, C, H, W), got {input.shape}")
    if r <= 0:
        raise ShapeError(f"pixel_unshuffle: downscale_factor must be greater than 0, got {r}")
    *batch, c, h, w = input.shape
    if h % r or w % r:
        raise ShapeError(f"pixel_unshuffle: height {h} and width {w} must be divisible by downscale_factor {r}")
    b = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    x = x.permute(*range(b), b, b + 2, b + 4, b + 1, b + 3)  # (*, C, r, r, H / r, W / r)
    return x.reshape(*batch, c * r * r, h // r, w // r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, C, *) with C = g k: channel i k + j moves to j g + i (the g groups interleaved)."""
    if input.ndim < 3:
        raise ShapeError(f"channel_shuffle: expects an input of at least 3 dims (N, C, *), got {input.shape}")
    if groups <= 0:
        raise ShapeError(f"channel_shuffle: groups must be positive, got {groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise ShapeError(f"channel_shuffle: the channels ({c}) must be divisible by groups ({groups})")
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


_LINEAR_DIMS = {"linear": 1, "bilinear": 2, "trilinear": 3}
_MODES = ("nearest", "nearest-exact", "area", "linear", "bilinear", "trilinear", "bicubic")


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:  # fmt: skip
    """Resample the spatial dims of (N, C, d1, ...) to `size` or `scale_factor` times their size, as PyTorch.

    Every mode is separable: one spatial dim at a time, each output position reads input positions along
    that dim only.  With scale = in / out (or 1 / scale_factor when given and not recomputed):
        nearest:        src = min(floor(i * scale), in - 1)             (in float32, as PyTorch)
        nearest-exact:  src = min(floor((i + 0.5) * scale), in - 1)
        linear:         s = (i + 0.5) * scale - 0.5 clamped at 0, or i (in - 1) / (out - 1) with align_corners;
                        y[i] = (1 - l) x[i0] + l x[i1], i0 = floor(s), i1 = min(i0 + 1, in - 1), l = s - i0
        bicubic:        four taps around s with the cubic convolution weights (see _cubic)
        area:           the adaptive average (adaptive_avg_pool)
    so the result is index_select and weighted sums (each with its backward: the gradient is scatter-added
    back to the positions read, times their weights)."""
    if mode not in _MODES:
        raise NotImplementedError(f"interpolate: mode {mode!r} is not supported (supported: {', '.join(_MODES)})")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("interpolate: align_corners can only be set with the interpolating modes: linear | "
                             "bilinear | bicubic | trilinear")  # fmt: skip
    elif align_corners is None:
        align_corners = False
    dims = input.ndim - 2
    if dims < 1 or dims > 3:
        raise NotImplementedError(f"interpolate: expects a 3-d, 4-d or 5-d input (N, C, d1, ...), got {input.shape}")
    if mode == "bicubic" and dims != 2:
        raise NotImplementedError(f"interpolate: got a {input.ndim}-d input, but bicubic mode needs a 4-d input")
    if mode in _LINEAR_DIMS and _LINEAR_DIMS[mode] != dims:
        raise NotImplementedError(f"interpolate: got a {input.ndim}-d input, but {mode} mode needs a "
                                  f"{_LINEAR_DIMS[mode] + 2}-d input")  # fmt: skip
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported")
    out, scales = _output_size(input, dims, size, scale_factor, recompute_scale_factor)
    sides = input.shape[2:]
    if any(n <= 0 for n in sides) or any(m <= 0 for m in out):
        raise ShapeError(f"interpolate: input and output sizes should be greater than 0, got input {tuple(sides)} "
                         f"and output {tuple(out)}")  # fmt: skip
    if not backend.is_floating(input.dtype) and mode != "nearest" and mode != "nearest-exact":
        raise TypeError(f"interpolate: mode {mode!r} expects a floating-point input, got {input.dtype}")
    if mode == "area":
        return adaptive_average(input, tuple(out))
    xp = backend.namespace(input.device)
    y = input
    for d, (n, m, s) in enumerate(zip(sides, out, scales)):
        axis = d + 2
        if mode in ("nearest", "nearest-exact"):
            y = y.index_select(axis, _const(_nearest(xp, n, m, s, mode == "nearest-exact"), input))
            continue
        taps = (_cubic if mode == "bicubic" else _linear)(xp, n, m, s, align_corners, input.dtype)
        shape = (m,) + (1,) * (input.ndim - axis - 1)  # the weights broadcast along this axis
        terms = [y.index_select(axis, _const(i, input)) * _const(w.reshape(shape), input) for i, w in taps]
        y = terms[0]
        for t in terms[1:]:
            y = y + t
    return y


def _output_size(input, dims, size, scale_factor, recompute):
    """(output sides, the scale per side: 1 / scale_factor, or None for in / out)."""
    if size is not None and scale_factor is not None:
        raise ValueError("interpolate: only one of size or scale_factor should be defined")
    if size is not None:
        if recompute:
            raise ValueError("interpolate: recompute_scale_factor is not meaningful with an explicit size")
        out = list(size) if isinstance(size, list | tuple) else [size] * dims
        if len(out) != dims:
            raise ValueError(f"interpolate: input and output must have the same number of spatial dims, got input "
                             f"{tuple(input.shape[2:])} and size {size}")  # fmt: skip
        if not all(isinstance(m, int) for m in out):
            raise TypeError(f"interpolate: expected size to be ints, got {size}")
        return out, [None] * dims
    if scale_factor is None:
        raise ValueError("interpolate: either size or scale_factor should be defined")
    factors = list(scale_factor) if isinstance(scale_factor, list | tuple) else [scale_factor] * dims
    if len(factors) != dims:
        raise ValueError(f"interpolate: input and scale_factor must have the same number of spatial dims, got "
                         f"input {tuple(input.shape[2:])} and scale_factor {scale_factor}")  # fmt: skip
    out = [int(math.floor(n * float(f))) for n, f in zip(input.shape[2:], factors)]
    return out, ([None] * dims if recompute else [1.0 / float(f) if f > 0 else None for f in factors])


def _const(a, like: Tensor) -> Tensor:
    return Tensor._make(a, like.device, False)


def _nearest(xp, n, m, scale, exact):
    """The source position of each of m outputs, computed in float32 as PyTorch's nearest kernels."""
    if not exact and m == n:
        return xp.arange(m, dtype=backend.int64)
    if not exact and m == 2 * n:
        return xp.arange(m, dtype=backend.int64) // 2
    f32 = backend.float32
    s = xp.asarray(n / m if scale is None else scale, dtype=f32)
    i = xp.arange(m, dtype=f32) + (xp.asarray(0.5, dtype=f32) if exact else xp.asarray(0, dtype=f32))
    return xp.minimum(xp.floor(i * s).astype(backend.int64), n - 1)


def _linear(xp, n, m, scale, align_corners, dtype):
    """(i0, i1, lambda) of each output, in the input's dtype (PyTorch's opmath for CPU float types)."""
    i = xp.arange(m, dtype=dtype)
    if align_corners:
        src = i * xp.asarray((n - 1) / (m - 1) if m > 1 else 0.0, dtype=dtype)
    else:
        s = xp.asarray(n / m if scale is None else scale, dtype=dtype)
        src = xp.maximum(s * (i + xp.asarray(0.5, dtype=dtype)) - xp.asarray(0.5, dtype=dtype), 0)
    i0 = xp.minimum(xp.floor(src).astype(backend.int64), n - 1)
    lam = xp.clip(src - i0.astype(dtype), 0, 1)
    return [(i0, 1 - lam), (xp.minimum(i0 + 1, n - 1), lam)]


def _cubic(xp, n, m, scale, align_corners, dtype, a=-0.75):
    """Bicubic's four taps per output (PyTorch's cubic convolution, A = -0.75): s as linear's but not
    clamped, t = s - floor(s), taps floor(s) - 1 .. floor(s) + 2 (clamped to the input) with weights
    W(t + 1), W(t), W(1 - t), W(2 - t):  W(x) = ((A + 2) x - (A + 3)) x^2 + 1 for |x| <= 1,
    ((A x - 5A) x + 8A) x - 4A for 1 < |x| < 2."""
    i = xp.arange(m, dtype=dtype)
    half = xp.asarray(0.5, dtype=dtype)
    if align_corners:
        src = i * xp.asarray((n - 1) / (m - 1) if m > 1 else 0.0, dtype=dtype)
    else:
        src = xp.asarray(n / m if scale is None else scale, dtype=dtype) * (i + half) - half
    f = xp.floor(src)
    t = src - f
    near = lambda x: ((a + 2) * x - (a + 3)) * x * x + 1  # noqa: E731
    far = lambda x: ((a * x - 5 * a) * x + 8 * a) * x - 4 * a  # noqa: E731
    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    base = f.astype(backend.int64)
    return [(xp.clip(base - 1 + k, 0, n - 1), w) for k, w in enumerate(weights)]


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """interpolate(mode='nearest') (PyTorch's deprecated alias)."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """interpolate(mode='bilinear', align_corners=True) (PyTorch's deprecated alias)."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners=None) -> Tensor:
    """interpolate (PyTorch's deprecated alias)."""
    return interpolate(input, size, scale_factor, mode, align_corners)
