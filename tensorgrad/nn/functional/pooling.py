"""Pooling: max_pool2d and avg_pool2d (ops/pool.py), their 1-d forms (on a height-1 image), and the
adaptive poolings as compositions: averages as products with constant averaging matrices (matmul's
backward), maxima as a max over the gathered windows (indexing's and max's backward)."""

from __future__ import annotations

import math

from ... import backend
from ...backend import ShapeError
from ...ops.pool import AvgPool2d, MaxPool2d, max_indices, window_max
from ...tensor import Tensor
from .conv import pair, spatial
from .padding import pad


def _pool_geometry(op, x, kernel_size, stride, padding, dilation, ceil_mode, dims=2):
    """(kernel, stride, ((top, bottom), (left, right)), dilation, out_size) as PyTorch: stride
    defaults to the kernel; with ceil_mode the last window may overhang the bottom/right edge
    (padded further there) but must start inside the input or the top/left padding.  (dims=3: one
    more side, the depth, first.)"""
    tup = pair if dims == 2 else _triple
    kernel = tup(kernel_size, op, "kernel_size")
    stride = kernel if stride is None or stride == () or stride == [] else tup(stride, op, "stride")
    padding, dilation = tup(padding, op, "padding"), tup(dilation, op, "dilation")
    if min(kernel) <= 0 or min(stride) <= 0 or min(dilation) <= 0:
        raise RuntimeError(f"{op}: kernel_size {kernel}, stride {stride} and dilation {dilation} must be positive")
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
        counts = _window_counts(xp, x.shape[2:], kernel, stride, pads, out, count_include_pad)
        divisor = counts[0][:, None] * counts[1][None, :]
    y = AvgPool2d.apply(x, kernel=kernel, stride=stride, padding=pads, out_size=out, divisor=divisor)
    return y if batched else y.squeeze(0)


def _one_d(op, input: Tensor):
    """(N, C, L) or unbatched (C, L) -> the (N, C, 1, L) image pooling takes, and batched?"""
    if input.ndim not in (2, 3):
        raise ShapeError(f"{op}: expected a 2-d (C, L) or 3-d (N, C, L) input, got shape {input.shape}")
    return (input if input.ndim == 3 else input.unsqueeze(0)).unsqueeze(2), input.ndim == 3


def _single(v, op, name):
    v = v if isinstance(v, int) else tuple(v)
    if isinstance(v, tuple):
        if len(v) != 1:
            raise ValueError(f"{op}: {name} must be an int or a 1-tuple, got {v}")
        v = v[0]
    return int(v)


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):  # fmt: skip
    """max_pool2d on the (N, C, 1, L) image: a 1 x kernel_size window (indices are positions along L)."""
    x, batched = _one_d("max_pool1d", input)
    k = _single(kernel_size, "max_pool1d", "kernel_size")
    s = k if stride is None or stride == () or stride == [] else _single(stride, "max_pool1d", "stride")
    p, d = _single(padding, "max_pool1d", "padding"), _single(dilation, "max_pool1d", "dilation")
    if k <= 0 or s <= 0 or d <= 0:
        raise RuntimeError(f"max_pool1d: kernel_size, stride and dilation must be greater than zero, got {k}, {s}, {d}")
    if 0 in input.shape[-2:]:
        raise ShapeError(f"max_pool1d: expected non-empty channels and length (only the batch may be 0), got "
                         f"{input.shape}")  # fmt: skip
    out = max_pool2d(x, (1, k), (1, s), (0, p), (1, d), ceil_mode, return_indices)
    y, indices = out if return_indices else (out, None)
    y = y.squeeze(2) if batched else y.squeeze(2).squeeze(0)
    if not return_indices:
        return y
    return y, indices.squeeze(2) if batched else indices.squeeze(2).squeeze(0)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:  # fmt: skip
    """avg_pool2d on the (N, C, 1, L) image: a 1 x kernel_size window."""
    x, batched = _one_d("avg_pool1d", input)
    k = _single(kernel_size, "avg_pool1d", "kernel_size")
    s = k if stride is None or stride == () or stride == [] else _single(stride, "avg_pool1d", "stride")
    y = avg_pool2d(x, (1, k), (1, s), (0, _single(padding, "avg_pool1d", "padding")), ceil_mode, count_include_pad)
    return y.squeeze(2) if batched else y.squeeze(2).squeeze(0)


def _adaptive_windows(n: int, m: int):
    """PyTorch's adaptive windows of n inputs into m outputs: output i pools [floor(i n / m), ceil((i + 1) n / m))."""
    return [((i * n) // m, -(-((i + 1) * n) // m)) for i in range(m)]


def _adaptive_input(op, input: Tensor, dims: int, output_size):
    """(batched input, output size as a tuple (None: the input's side), batched?)."""
    if input.ndim not in (dims + 1, dims + 2):
        raise ShapeError(f"{op}: expected a {dims + 1}-d or {dims + 2}-d input, got shape {input.shape}")
    if any(n == 0 for n in input.shape[-dims - 1 + (input.ndim == dims + 1) :]):
        raise ShapeError(f"{op}: expected non-empty dims (besides the batch), got shape {input.shape}")
    size = (output_size,) * dims if isinstance(output_size, int) or output_size is None else tuple(output_size)
    if len(size) != dims:
        raise ValueError(f"{op}: output_size must be an int or {dims} values, got {output_size}")
    size = tuple(n if m is None else int(m) for n, m in zip(input.shape[-dims:], size))
    if any(m < 0 for m in size):
        raise ValueError(f"{op}: output_size must be non-negative, got {output_size}")
    batched = input.ndim == dims + 2
    return (input if batched else input.unsqueeze(0)), size, batched


def _averaging(input: Tensor, n: int, m: int) -> Tensor:
    """The (n, m) constant A with x @ A the adaptive averages along the last dim: A[j, i] = 1 / |window i|
    for j in window i.  (Linear: the gradient is g @ A^T, by matmul's backward.)"""
    xp = backend.namespace(input.device)
    a = xp.zeros((n, m), dtype=input.dtype)
    for i, (start, end) in enumerate(_adaptive_windows(n, m)):
        a[start:end, i] = 1.0 / (end - start)
    return Tensor._make(a, input.device, False)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Mean over PyTorch's adaptive windows along L: x @ A with the averaging matrix A (L, output_size)."""
    x, size, batched = _adaptive_input("adaptive_avg_pool1d", input, 1, output_size)
    _require_float("adaptive_avg_pool1d", x)
    y = adaptive_average(x, size)
    return y if batched else y.squeeze(0)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Mean over adaptive windows in H and W; the average over a rectangle is separable:
    y = A_H^T @ x @ A_W with the averaging matrices of each side."""
    x, size, batched = _adaptive_input("adaptive_avg_pool2d", input, 2, output_size)
    _require_float("adaptive_avg_pool2d", x)
    y = adaptive_average(x, size)
    return y if batched else y.squeeze(0)


def adaptive_average(x: Tensor, size: tuple) -> Tensor:
    """The adaptive averages of x's last len(size) dims (separable: one dim at a time, x @ A along
    each, that dim moved last and back), for the adaptive poolings and interpolate's "area" mode."""
    for d, m in zip(range(x.ndim - len(size), x.ndim), size):
        x = (x.transpose(d, -1) @ _averaging(x, x.shape[d], m)).transpose(d, -1)
    return x


def _window_taps(xp, n: int, m: int):
    """(starts (m,), taps (m, K)): window i's positions start_i + t, t < K = the longest window, the
    shorter windows repeating their last position (a repeat does not change a maximum)."""
    windows = _adaptive_windows(n, m)
    k = max((end - start for start, end in windows), default=1)
    starts = xp.asarray([s for s, _ in windows], dtype=backend.int64).reshape(-1)
    ends = xp.asarray([e for _, e in windows], dtype=backend.int64).reshape(-1)
    return starts, xp.minimum(starts[:, None] + xp.arange(k)[None, :], ends[:, None] - 1)


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """The maximum over adaptive windows along L (see _adaptive_max); indices are positions along L."""
    x, size, batched = _adaptive_input("adaptive_max_pool1d", input, 1, output_size)
    return _unbatch(_adaptive_max(x, size, return_indices), batched)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """The maximum over adaptive H x W windows; indices are flat h * W + w, as max_pool2d's."""
    x, size, batched = _adaptive_input("adaptive_max_pool2d", input, 2, output_size)
    return _unbatch(_adaptive_max(x, size, return_indices), batched)


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """The maximum over adaptive D x H x W windows; indices are flat (d * H + h) * W + w."""
    x, size, batched = _adaptive_input("adaptive_max_pool3d", input, 3, output_size)
    return _unbatch(_adaptive_max(x, size, return_indices), batched)


def _adaptive_max(x: Tensor, size: tuple, return_indices: bool):
    """The windows of every output gathered (_gather_windows: (N, C, m_1, ..., m_k, K_1 * ... * K_k)),
    then max over the last dim.  Indexing's backward and max's (the gradient to the first maximum, in
    row-major order as PyTorch's) give the gradient."""
    xp = backend.namespace(x.device)
    k = len(size)
    sides = x.shape[2:]
    starts, taps = zip(*(_window_taps(xp, n, m) for n, m in zip(sides, size)))  # (m,) and (m, K) per side
    kernel = [t.shape[1] for t in taps]
    win = _gather_windows(x, list(taps))
    y, t = win.max(-1)
    if not return_indices:
        return y
    flat, rest = xp.zeros(t.shape, dtype=backend.int64), t._data
    for d in reversed(range(k)):  # unravel the tap t into (t_1, ..., t_k), position start_d + t_d per dim
        rest, td = rest // kernel[d], rest % kernel[d]
        shape = [1] * k
        shape[d] = size[d]
        flat = flat + (starts[d].reshape(shape) + td) * math.prod(sides[d + 1 :])
    return y, Tensor._make(flat, x.device, False)


def _unbatch(out, batched):
    if batched:
        return out
    return tuple(o.squeeze(0) for o in out) if isinstance(out, tuple) else out.squeeze(0)


def _require_float(op, input: Tensor):
    if not backend.is_floating(input.dtype):
        raise TypeError(f"{op}: expected a floating-point input, got dtype {input.dtype}")


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Mean over adaptive windows in D, H and W (separable, as adaptive_avg_pool2d)."""
    x, size, batched = _adaptive_input("adaptive_avg_pool3d", input, 3, output_size)
    _require_float("adaptive_avg_pool3d", x)
    y = adaptive_average(x, size)
    return y if batched else y.squeeze(0)


def _max_unpool(op, dims, input: Tensor, indices: Tensor, kernel_size, stride, padding, output_size):
    """Zeros of the output size with input's values written at indices (flat positions in each
    (n, c) plane, as max_pool's return_indices): a scatter, whose backward gathers the gradient back."""
    if input.ndim not in (dims + 1, dims + 2) or indices.shape != input.shape:
        raise ShapeError(f"{op}: expected a {dims + 1}-d or {dims + 2}-d input and indices of the same shape, got "
                         f"{input.shape} and {indices.shape}")  # fmt: skip
    if indices.dtype != backend.int64:
        raise TypeError(f"{op}: expected indices of dtype int64, got {indices.dtype}")
    as_tuple = lambda v: (v,) * dims if isinstance(v, int) else tuple(v)  # noqa: E731
    kernel = as_tuple(kernel_size)
    stride = kernel if stride is None else as_tuple(stride)
    padding = as_tuple(padding)
    default = [(n - 1) * s + k - 2 * p for n, s, k, p in zip(input.shape[-dims:], stride, kernel, padding)]
    if output_size is None:
        size = default
    else:
        size = list(output_size)[-dims:] if len(output_size) == dims + 2 else list(output_size)
        if len(size) != dims:
            raise ValueError(f"{op}: output_size should have {dims} or {dims + 2} elements, got {output_size}")
        for d, (m, m0, s) in enumerate(zip(size, default, stride)):
            if not m0 - s < m < m0 + s:
                raise ValueError(f"{op}: invalid output_size {output_size} (dim {d} must be between {m0 - s} and "
                                 f"{m0 + s})")  # fmt: skip
    batched = input.ndim == dims + 2
    x, idx = (input, indices) if batched else (input.unsqueeze(0), indices.unsqueeze(0))
    n, c = x.shape[:2]
    plane = math.prod(size)
    flat_idx = idx.reshape(n, c, -1)
    if flat_idx.numel() and (bool((flat_idx < 0).any()) or bool((flat_idx >= plane).any())):
        raise RuntimeError(f"{op}: found an invalid max index (the output planes have {plane} elements)")
    xp = backend.namespace(x.device)
    zeros = Tensor._make(xp.zeros((n, c, plane), dtype=x.dtype), x.device, False)
    y = zeros.scatter(2, flat_idx, x.reshape(n, c, -1)).reshape(n, c, *size)
    return y if batched else y.squeeze(0)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """The inverse of max_pool1d's return_indices: each value back at its position, zeros elsewhere."""
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """The inverse of max_pool2d's return_indices: each value back at its pixel, zeros elsewhere."""
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


def _triple(v, op, name):
    v = (v,) * 3 if isinstance(v, int) else tuple(int(a) for a in v)
    if len(v) == 1:
        v = v * 3
    if len(v) != 3:
        raise ValueError(f"{op}: {name} must be an int or a triple, got {v}")
    return v


def _volume(op, input: Tensor):
    """(N, C, D, H, W) or unbatched (C, D, H, W); returns (5-d input, batched?)."""
    if input.ndim not in (4, 5):
        raise ShapeError(f"{op}: expected a 4-d (C, D, H, W) or 5-d (N, C, D, H, W) input, got shape {input.shape}")
    if 0 in input.shape[-4:]:
        raise ShapeError(f"{op}: expected non-empty dims besides the batch, got shape {input.shape}")
    _require_float(op, input)
    return (input, True) if input.ndim == 5 else (input.unsqueeze(0), False)


def _gather_windows(x: Tensor, taps: list) -> Tensor:
    """x (N, C, *sides) and per side the (m, K) positions each output reads: the windows
    (N, C, m_1, ..., m_k, K_1 * ... * K_k), by indexing (whose backward scatter-adds the gradient)."""
    k = len(taps)
    index = []
    for d, t in enumerate(taps):
        shape = [1] * (2 * k)
        shape[2 * d], shape[2 * d + 1] = t.shape
        index.append(Tensor._make(t.reshape(shape), x.device, False))
    win = x[(slice(None), slice(None), *index)]  # (N, C, m_1, K_1, ..., m_k, K_k)
    order = (0, 1, *range(2, 2 + 2 * k, 2), *range(3, 3 + 2 * k, 2))
    return win.permute(*order).reshape(*x.shape[:2], *(t.shape[0] for t in taps), math.prod(t.shape[1] for t in taps))


def _strided_taps(xp, pads, kernel, stride, dilation, out):
    """Per side the padded-input positions of window i's taps: i * s + j * d, (m, K)."""
    return [xp.arange(m)[:, None] * s + xp.arange(k)[None, :] * d for (_, _), k, s, d, m in
            zip(pads, kernel, stride, dilation, out)]  # fmt: skip


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):  # fmt: skip
    """The maximum of each kernel window of (N, C, D, H, W): the input padded with -inf, its windows
    gathered (_gather_windows), max over the taps (the gradient to the first maximum);
    return_indices gives each maximum's flat index (d * H + h) * W + w in its input volume."""
    x, batched = _volume("max_pool3d", input)
    kernel, stride, pads, dilation, out = _pool_geometry("max_pool3d", x, kernel_size, stride, padding, dilation,
                                                         ceil_mode, dims=3)  # fmt: skip
    xp = backend.namespace(x.device)
    xpad = pad(x, tuple(v for before, after in reversed(pads) for v in (before, after)), value=-math.inf)
    taps = _strided_taps(xp, pads, kernel, stride, dilation, out)
    y, t = _gather_windows(xpad, taps).max(-1)
    if not return_indices:
        return y if batched else y.squeeze(0)
    flat, rest = xp.zeros(t.shape, dtype=backend.int64), t._data
    for d in reversed(range(3)):  # the winning tap's position per side, back in unpadded coordinates
        rest, j = rest // kernel[d], rest % kernel[d]
        shape = [1, 1, 1]
        shape[d] = out[d]
        pos = xp.arange(out[d]).reshape(shape) * stride[d] + j * dilation[d] - pads[d][0]
        flat = flat + pos * math.prod(x.shape[2 + d + 1 :])
    idx = Tensor._make(flat, x.device, False)
    return (y, idx) if batched else (y.squeeze(0), idx.squeeze(0))


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:  # fmt: skip
    """The mean of each kernel window of (N, C, D, H, W): the zero-padded windows gathered, summed over
    the taps, divided by avg_pool2d's divisor rule extended to three sides."""
    x, batched = _volume("avg_pool3d", input)
    kernel, stride, pads, _, out = _pool_geometry("avg_pool3d", x, kernel_size, stride, padding, 1, ceil_mode,
                                                  dims=3)  # fmt: skip
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("avg_pool3d: divisor must be not zero")
    xp = backend.namespace(x.device)
    xpad = pad(x, tuple(v for before, after in reversed(pads) for v in (before, after)))
    total = _gather_windows(xpad, _strided_taps(xp, pads, kernel, stride, (1, 1, 1), out)).sum(-1)
    if divisor_override:
        y = total / float(divisor_override)
    else:
        counts = _window_counts(xp, x.shape[2:], kernel, stride, pads, out, count_include_pad)
        divisor = counts[0][:, None, None] * counts[1][None, :, None] * counts[2][None, None, :]
        y = total / Tensor._make(divisor.astype(x.dtype), x.device, False)
    return y if batched else y.squeeze(0)


def _window_counts(xp, sides, kernel, stride, pads, out, count_include_pad):
    """Per side, each window's extent for the divisor: PyTorch's rule, the window clipped to the padded
    input (count_include_pad) or to the input itself."""
    counts = []
    for n, k, s, (p, _), m in zip(sides, kernel, stride, pads, out):
        start = xp.arange(m) * s - p
        end = xp.minimum(start + k, n + p)
        size = end - start
        if not count_include_pad:
            size = xp.minimum(end, n) - xp.maximum(start, 0)
        counts.append(size)
    return counts
