"""2-d max and average pooling, on the windows of ops/conv.py (im2col / col2im).

Both read the same windows as a convolution: cols[n, c, i, j, oh, ow] = xpad[n, c, oh*sh + i*dh,
ow*sw + j*dw].  Pooling reduces each window over its taps (i, j) instead of weighing them, and
its backward hands each window's gradient to its taps, then adds the windows back with col2im
(windows overlap when stride < kernel: a pixel in two windows receives both gradients).
"""

from __future__ import annotations

from .. import backend
from ..autograd import Function
from .conv import add_windows, crop, windows


def pad_with(xp, x, padding, value):
    """x (N, C, H, W) padded by ((top, bottom), (left, right)) with value."""
    (pt, pb), (pl, pr) = padding
    n, c, h, w = x.shape
    out = xp.full((n, c, h + pt + pb, w + pl + pr), value, dtype=x.dtype)
    out[:, :, pt : pt + h, pl : pl + w] = x
    return out


def window_max(xp, x, kernel, stride, padding, dilation, out_size):
    """(y, arg, padded shape): each window's maximum and the tap i * KW + j that holds it."""
    kh, kw = kernel
    xpad = pad_with(xp, x, padding, -xp.inf)
    cols = windows(xp, xpad, kernel, stride, dilation, out_size)  # (N, C, KH, KW, OH, OW)
    flat = cols.reshape(cols.shape[:2] + (kh * kw,) + tuple(out_size))
    arg = flat.argmax(axis=2)  # (N, C, OH, OW): the first maximum on ties
    return xp.take_along_axis(flat, arg[:, :, None], axis=2)[:, :, 0], arg, xpad.shape


def max_indices(xp, arg, kernel, stride, padding, dilation, width):
    """PyTorch's return_indices: the winning tap's input pixel (oh*sh + i*dh - top, ow*sw + j*dw - left)
    as the flat index h * W + w into its (H, W) plane."""
    oh, ow = arg.shape[2:]
    h = xp.arange(oh)[:, None] * stride[0] + (arg // kernel[1]) * dilation[0] - padding[0][0]
    w = xp.arange(ow)[None, :] * stride[1] + (arg % kernel[1]) * dilation[1] - padding[1][0]
    return h * width + w


class MaxPool2d(Function):
    """y[n, c, oh, ow] = max over taps (i, j) of cols[n, c, i, j, oh, ow]  (padding reads -inf).

    Only the tap holding the maximum (the first one in (i, j) order on ties, as PyTorch) moves
    the output, so:
        dcols[n, c, i, j, oh, ow] = dy[n, c, oh, ow] if (i, j) is that tap, else 0
        dx = crop(add_windows(dcols))
    """

    def forward(self, x, kernel, stride, padding, dilation, out_size):
        y, arg, xpad_shape = window_max(self.xp, x, kernel, stride, padding, dilation, out_size)
        self.save_for_backward(arg, xpad_shape, kernel, stride, dilation, padding)
        return y

    def backward(self, dy):
        arg, xpad_shape, kernel, stride, dilation, padding = self.saved
        xp = self.xp
        kh, kw = kernel
        taps = xp.arange(kh * kw).reshape(1, 1, -1, 1, 1)
        dflat = (taps == arg[:, :, None]) * dy[:, :, None]  # dy at the winning tap, 0 elsewhere
        dcols = dflat.reshape(dy.shape[:2] + (kh, kw) + dy.shape[2:])
        return crop(add_windows(xp, dcols, xpad_shape, stride, dilation), padding)


class AvgPool2d(Function):
    """y[n, c, oh, ow] = (sum over taps of cols[n, c, i, j, oh, ow]) / divisor[oh, ow]  (padding
    reads 0).  divisor is the window's size (with count_include_pad; clipped to the padded
    input), the number of real pixels in it (without), or divisor_override.

    Every tap moves the output by 1 / divisor:
        dcols[n, c, i, j, oh, ow] = dy[n, c, oh, ow] / divisor[oh, ow]   for every tap (i, j)
        dx = crop(add_windows(dcols))
    """

    def forward(self, x, kernel, stride, padding, out_size, divisor):
        xp = self.xp
        xpad = pad_with(xp, x, padding, 0)
        cols = windows(xp, xpad, kernel, stride, (1, 1), out_size)  # (N, C, KH, KW, OH, OW)
        divisor = xp.asarray(divisor, dtype=x.dtype)
        self.save_for_backward(divisor, xpad.shape, kernel, stride, padding)
        total = backend.sum(xp, cols, (2, 3), dtype=backend.accumulation_dtype(x.dtype))  # float16: in float32
        return backend.narrow(total / divisor, x.dtype)

    def backward(self, dy):
        divisor, xpad_shape, kernel, stride, padding = self.saved
        xp = self.xp
        share = (dy / divisor)[:, :, None, None]  # (N, C, 1, 1, OH, OW)
        dcols = xp.broadcast_to(share, dy.shape[:2] + tuple(kernel) + dy.shape[2:])
        return crop(add_windows(xp, dcols, xpad_shape, stride, (1, 1)), padding)
