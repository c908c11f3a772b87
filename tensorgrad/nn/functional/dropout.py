"""Inverted dropout (ops/dropout.py), and the channel and alpha dropouts as compositions with the
same mask (keep_mask)."""

from __future__ import annotations

import math

from ... import backend
from ...backend import ShapeError
from ...ops.activation import SELU_ALPHA, SELU_SCALE
from ...ops.dropout import keep_mask
from ...tensor import Tensor


def dropout(input: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Inverted dropout: zero each element with probability p, scale the rest by 1/(1-p)."""
    return input.dropout(p, training)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel dropout of (N, C, L) or (C, L): whole channels zeroed with probability p, the rest scaled."""
    if input.ndim not in (2, 3):
        raise ShapeError(f"dropout1d: expected a 2-d (C, L) or 3-d (N, C, L) input, got {input.shape}")
    return _batched(input, 3, lambda x: _noise_dropout("dropout1d", x, p, training, inplace, True, False))


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel dropout of (N, C, H, W): each (n, c) plane kept with probability 1 - p and scaled by
    1 / (1 - p), or zeroed (a 3-d input is read as (N, C, L), as PyTorch still does)."""
    return _noise_dropout("dropout2d", input, p, training, inplace, True, False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel dropout of (N, C, D, H, W) or unbatched (C, D, H, W)."""
    return _batched(input, 5, lambda x: _noise_dropout("dropout3d", x, p, training, inplace, True, False))


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU's zero mean and unit variance: dropped elements become -alpha' (SELU's
    negative saturation, alpha' = scale * alpha), then y = a (x m + alpha' (m - 1)) + a alpha' p with
    a = 1 / sqrt((alpha'^2 p + 1)(1 - p)), m ~ Bernoulli(1 - p)."""
    return _noise_dropout("alpha_dropout", input, p, training, inplace, False, True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """alpha_dropout with one draw per (sample, channel), as dropout2d."""
    return _noise_dropout("feature_alpha_dropout", input, p, training, inplace, True, True)


def _batched(input: Tensor, ndim: int, fn):
    """fn on input with a batch dim added when it has one dim less than ndim, removed after."""
    if input.ndim == ndim - 1:
        return fn(input.unsqueeze(0)).squeeze(0)
    return fn(input)


def _noise_dropout(op, input: Tensor, p: float, training: bool, inplace: bool, feature: bool, alpha: bool):
    """PyTorch's _dropout_impl, a composition with a constant noise tensor: m ~ Bernoulli(1 - p)
    (ops/dropout.py: keep_mask) per element, or per (sample, channel) for the feature dropouts;
    y = x m / (1 - p), or the alpha form above.  Its gradient is the constant factor: g m / (1 - p)
    (or g a m), by the multiply's backward."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, but got {p}")
    if inplace:
        raise ValueError(f"{op}: inplace=True is not supported; use the returned tensor (inplace=False)")
    if not training or p == 0:
        return input
    if feature and input.ndim < 2:
        raise ShapeError(f"{op}: feature dropout requires at least 2 dimensions in the input, got {input.shape}")
    if p == 1:
        return input * 0.0
    shape = input.shape[:2] + (1,) * (input.ndim - 2) if feature else input.shape
    xp = backend.namespace(input.device)
    keep = keep_mask(input.device, shape, p).astype(input.dtype)
    if not alpha:
        return input * Tensor._make(keep / xp.asarray(1 - p, dtype=input.dtype), input.device, False)
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    b = (keep - 1) * (_ALPHA * a) + _ALPHA * a * p
    return input * Tensor._make(keep * a, input.device, False) + Tensor._make(b, input.device, False)


_ALPHA = SELU_SCALE * SELU_ALPHA  # SELU's negative saturation value is -_ALPHA (1.7581)
