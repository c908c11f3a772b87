"""Layer, batch, instance, group and RMS normalisation (ops/layernorm.py), local response
normalisation (a composition) and normalize, x / ||x||_p (ops/losses.py)."""

from __future__ import annotations

import math

from ... import backend
from ...autograd import no_grad
from ...backend import ShapeError
from ...ops.layernorm import RMSNorm, Standardize
from ...ops.losses import Normalize
from ...tensor import Tensor
from ...tensor_methods.common import normalize_dim
from .padding import pad
from .pooling import avg_pool2d


def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    return input.layer_norm(normalized_shape, weight, bias, eps)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None) -> Tensor:
    """input / max(||input||_p, eps) along dim (one op: ops/losses.py)."""
    if out is not None:
        raise NotImplementedError("normalize: out= is not supported")
    if p != p or abs(p) == float("inf"):
        raise ValueError(f"normalize: p must be a finite number, got {p}")
    if not backend.is_floating(input.dtype):
        raise TypeError(f"normalize: expected a floating-point tensor, got dtype {input.dtype}")
    return Normalize.apply(input, p=p, dim=normalize_dim(dim, input.ndim, "normalize"), eps=eps)


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Tensor:  # fmt: skip
    """Normalise each channel (dim 1) of (N, C, *) over the batch and the other dims, then scale and shift.
    training: the batch's mean and biased variance (the fused op Standardize, ops/layernorm.py), and the
    running statistics, when given, move towards the batch's: r = (1 - momentum) r + momentum * stat (the
    unbiased variance, as PyTorch).  Otherwise the running statistics normalise (constants)."""
    if input.ndim == 1 and input.numel() == 0:  # PyTorch's one 1-d case: empty, with empty statistics
        for t in (running_mean, running_var, weight, bias):
            _check_per_channel("batch_norm", "running_mean", t, 0)
        return input * 1
    c = _channels("batch_norm", input)
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        _check_per_channel("batch_norm", name, t, c)
    axes = (0,) + tuple(range(2, input.ndim))
    if training:
        if math.prod(input.shape[a] for a in axes) == 1:
            raise ValueError(f"batch_norm: expected more than 1 value per channel when training, got {input.shape}")
        if eps <= 0:
            raise ValueError(f"batch_norm: eps must be positive during training, got {eps}")
        y = Standardize.apply(input, axes=axes, eps=eps)
        _update_running(input.detach(), axes, running_mean, running_var, momentum, 1)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("batch_norm: running_mean and running_var must be given in evaluation mode")
        if eps < 0:
            raise ValueError(f"batch_norm: eps must be non-negative, got {eps}")
        mean, var = _per_channel(running_mean.detach(), input), _per_channel(running_var.detach(), input)
        y = (input - mean) / (var + eps).sqrt()
    return _affine("batch_norm", y, weight, bias, c)


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:  # fmt: skip
    """Normalise each (sample, channel) of (N, C, *) over its spatial dims, then scale and shift per channel.
    With use_input_stats the running statistics (when given) move towards the batch's mean of the
    per-instance statistics; without, they normalise instead, as batch_norm in evaluation mode."""
    c = _channels("instance_norm", input)
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        _check_per_channel("instance_norm", name, t, c)
    axes = tuple(range(2, input.ndim))
    if math.prod(input.shape[2:]) == 1:
        raise ValueError(f"instance_norm: expected more than 1 spatial element when training, got {input.shape}")
    y = Standardize.apply(input, axes=axes, eps=eps)
    _update_running(input.detach(), axes, running_mean, running_var, momentum, 0)
    return _affine("instance_norm", y, weight, bias, c)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:  # fmt: skip
    """Normalise each group of C / num_groups channels of (N, C, *), with their pixels, per sample; then
    scale and shift per channel (Standardize on the (N, G, C / G * rest) view)."""
    if input.ndim < 2:
        raise RuntimeError(f"group_norm: expected at least 2 dimensions for input tensor but received {input.ndim}")
    n, c = input.shape[:2]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"group_norm: expected number of channels in input ({c}) to be divisible by num_groups "
                           f"({num_groups})")  # fmt: skip
    _require_float("group_norm", input)
    x = input.reshape(n, num_groups, c // num_groups * math.prod(input.shape[2:]))
    y = Standardize.apply(x, axes=(2,), eps=eps).reshape(input.shape)
    return _affine("group_norm", y, weight, bias, c)


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x^2) + eps) over the last len(normalized_shape) dims, times weight (ops/layernorm.py:
    RMSNorm); eps=None is the dtype's machine epsilon, as PyTorch."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape:
        raise ShapeError("rms_norm: expected normalized_shape to be at least 1-dimensional, got ()")
    if input.shape[input.ndim - len(shape) :] != shape or len(shape) > input.ndim:
        raise ShapeError(f"rms_norm: normalized_shape {shape} does not match the last dims of {input.shape}")
    if weight is not None and weight.shape != shape:
        raise ShapeError(f"rms_norm: weight has shape {weight.shape}, expected {shape}")
    _require_float("rms_norm", input)
    if eps is None:
        eps = float(backend.namespace(input.device).finfo(input.dtype).eps)
    y = RMSNorm.apply(input, k=len(shape), eps=eps)
    return y if weight is None else y * weight


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta, the window centred on the
    channel (zero-padded at the ends); a composition of pad, avg_pool2d and pow, as PyTorch writes it."""
    if input.ndim < 3:
        raise ValueError(f"local_response_norm: expected 3-d or higher dimensionality input (got {input.ndim} dims)")
    if input.numel() == 0:
        return input
    n, c = input.shape[:2]
    div = (input * input).reshape(n, 1, c, -1)  # (N, 1, C, rest): the channels as the pooled height
    div = pad(div, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(div, (size, 1), stride=1).reshape(input.shape)
    return input / (div * alpha + k) ** beta


def _channels(op, input: Tensor) -> int:
    if input.ndim < 2:
        raise ShapeError(f"{op}: expected an input of at least 2 dims (N, C, *), got {input.shape}")
    _require_float(op, input)
    return input.shape[1]


def _require_float(op, input: Tensor):
    if not backend.is_floating(input.dtype):
        raise TypeError(f"{op}: expected a floating-point input, got dtype {input.dtype}")


def _check_per_channel(op, name, t, c):
    if t is not None and t.shape != (c,):
        raise ShapeError(f"{op}: {name} should contain {c} elements (one per channel), got shape {t.shape}")


def _per_channel(t: Tensor, like: Tensor) -> Tensor:
    """(C,) viewed as (C, 1, ..., 1): broadcast along dim 1 of like."""
    return t.reshape((-1,) + (1,) * (like.ndim - 2))


def _affine(op, y: Tensor, weight, bias, c) -> Tensor:
    for name, t in (("weight", weight), ("bias", bias)):
        _check_per_channel(op, name, t, c)
    if weight is not None:
        y = y * _per_channel(weight, y)
    if bias is not None:
        y = y + _per_channel(bias, y)
    return y


def _update_running(x: Tensor, axes, running_mean, running_var, momentum, batch_axis):
    """running = (1 - momentum) running + momentum * the batch's statistic (the unbiased variance),
    written in place (no graph); instance_norm averages its per-instance statistics over the batch
    (batch_axis 0), batch_norm has one per channel already."""
    if running_mean is None and running_var is None:
        return
    mean, var = x.mean(axes), x.var(axes, correction=1)  # more than one value per statistic: checked
    if batch_axis == 0:
        mean, var = mean.mean(0), var.mean(0)
    with no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype) * momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(var.to(running_var.dtype) * momentum)
