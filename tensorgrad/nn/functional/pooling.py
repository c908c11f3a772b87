"""Pooling: max_pool2d and avg_pool2d (ops/pool.py)."""

from __future__ import annotations

from ... import backend
from ...backend import ShapeError
from ...ops.pool import AvgPool2d, MaxPool2d, max_indices, window_max
from ...tensor import Tensor
from .conv import pair, spatial


def _pool_geometry(op, x, kernel_size, stride, padding, dilation, ceil_mode):
    """(kernel, stride, ((top, bottom), (left, right)), dilation, out_size) as PyTorch: stride
    defaults to the kernel; with ceil_mode the last window may overhang the bottom/right edge
    (padded further there) but must start inside the input or the top/left padding."""
    kernel = pair(kernel_size, op, "kernel_size")
    stride = kernel if stride is None or stride == () or stride == [] else pair(stride, op, "stride")
    padding, dilation = pair(padding, op, "padding"), pair(dilation, op, "dilation")
    pads, out = [], []
    for n, k, s, p, d in zip(x.shape[2:], kernel, stride, padding, dilation):
        if not 0 <= p <= k // 2:
            raise ValueError(f"{op}: padding {padding} should be at most half the kernel size {kernel}")
        span = n + 2 * p - d * (k - 1) - 1
        if span < 0:
            raise ShapeError(f"{op}: the kernel {kernel} does not fit the (padded) input {x.shape}")
        m = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (m - 1) * s >= n + p:
            m -= 1
        pads.append((p, max(p, (m - 1) * s + d * (k - 1) + 1 - n - p)))
        out.append(m)
    return kernel, stride, tuple(pads), dilation, tuple(out)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):  # fmt: skip
    """The maximum of each kernel window; with return_indices also each maximum's flat index h * W + w."""
    x, batched = spatial("max_pool2d", input)
    kernel, stride, pads, dilation, out = _pool_geometry("max_pool2d", x, kernel_size, stride, padding, dilation,
                                                         ceil_mode)  # fmt: skip
    y = MaxPool2d.apply(x, kernel=kernel, stride=stride, padding=pads, dilation=dilation, out_size=out)
    y = y if batched else y.squeeze(0)
    if not return_indices:
        return y
    xp = backend.namespace(x.device)
    _, arg, _ = window_max(xp, x._data, kernel, stride, pads, dilation, out)
    indices = max_indices(xp, arg, kernel, stride, pads, dilation, x.shape[3]).astype(backend.int64)
    return y, Tensor._make(indices if batched else indices[0], x.device, False)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:  # fmt: skip
    """The mean of each kernel window (see ops/pool.py for the divisor at the edges)."""
    x, batched = spatial("avg_pool2d", input)
    kernel, stride, pads, _, out = _pool_geometry("avg_pool2d", x, kernel_size, stride, padding, 1, ceil_mode)
    xp = backend.namespace(x.device)
    if divisor_override is not None:
        if divisor_override == 0:
            raise RuntimeError("avg_pool2d: divisor_override must not be zero")
        divisor = float(divisor_override)
    else:
        counts = []
        for n, k, s, (p, _), m in zip(x.shape[2:], kernel, stride, pads, out):
            start = xp.arange(m) * s - p  # PyTorch's rule: the window clipped to the padded input ...
            end = xp.minimum(start + k, n + p)
            size = end - start
            if not count_include_pad:  # ... or to the input itself
                size = xp.minimum(end, n) - xp.maximum(start, 0)
            counts.append(size)
        divisor = counts[0][:, None] * counts[1][None, :]
    y = AvgPool2d.apply(x, kernel=kernel, stride=stride, padding=pads, out_size=out, divisor=divisor)
    return y if batched else y.squeeze(0)
