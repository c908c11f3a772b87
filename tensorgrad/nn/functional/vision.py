"""Rearranging and resampling images: pixel_shuffle, pixel_unshuffle, channel_shuffle (reshapes
and permutes, whose backward moves the gradient back: ops/shape.py) and interpolate /
upsample_nearest / upsample_bilinear (indexing and weighted sums: ops/shape.py, ops/arithmetic.py)."""

from __future__ import annotations

from ...backend import ShapeError
from ...tensor import Tensor


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
