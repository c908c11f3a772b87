"""2-d max and average pooling, on the windows of ops/conv.py (im2col / col2im).

Both read the same windows as a convolution:
`cols[n, c, i, j, oh, ow] = xpad[n, c, oh*sh + i*dh, ow*sw + j*dw]`.  Pooling reduces each window
over its taps $(i, j)$ instead of weighing them, and its backward hands each window's gradient to
its taps, then adds the windows back with col2im (windows overlap when stride < kernel: a pixel in
two windows receives both gradients).
"""

from __future__ import annotations

from .. import backend
from ..autograd import Function
from .conv import add_windows, crop, windows
from .pad import ConstantPad
from .shape import Index


def pad_with(xp, x, padding, value):
    """`x` `(N, C, H, W)` padded by `((top, bottom), (left, right))` with `value`."""
    (pt, pb), (pl, pr) = padding
    n, c, h, w = x.shape
    out = xp.full((n, c, h + pt + pb, w + pl + pr), value, dtype=x.dtype)
    out[:, :, pt : pt + h, pl : pl + w] = x
    return out


def window_max(xp, x, kernel, stride, padding, dilation, out_size):
    """`(y, arg, padded shape)`: each window's maximum and the tap `i * KW + j` that holds it."""
    kh, kw = kernel
    xpad = pad_with(xp, x, padding, -xp.inf)
    cols = windows(xp, xpad, kernel, stride, dilation, out_size)  # (N, C, KH, KW, OH, OW)
    flat = cols.reshape(cols.shape[:2] + (kh * kw,) + tuple(out_size))
    arg = flat.argmax(axis=2)  # (N, C, OH, OW): the first maximum on ties
    return xp.take_along_axis(flat, arg[:, :, None], axis=2)[:, :, 0], arg, xpad.shape


def max_indices(xp, arg, kernel, stride, padding, dilation, width):
    """PyTorch's `return_indices`: the winning tap's input pixel `(oh*sh + i*dh - top, ow*sw + j*dw - left)`
    as the flat index `h * W + w` into its `(H, W)` plane."""
    oh, ow = arg.shape[2:]
    h = xp.arange(oh)[:, None] * stride[0] + (arg // kernel[1]) * dilation[0] - padding[0][0]
    w = xp.arange(ow)[None, :] * stride[1] + (arg % kernel[1]) * dilation[1] - padding[1][0]
    return h * width + w


class MaxPool2d(Function):
    r"""$y[n, c, o_h, o_w] = \max_{(i, j)} \mathrm{cols}[n, c, i, j, o_h, o_w]$ (padding reads
    $-\infty$).

    Only the tap holding the maximum (the first one in $(i, j)$ order on ties, as PyTorch) moves
    the output, so:

    $$
    \begin{aligned}
    d\mathrm{cols}[n, c, i, j, o_h, o_w] &= \begin{cases}
      dy[n, c, o_h, o_w] & \text{if } (i, j) \text{ is that tap} \\ 0 & \text{else}
    \end{cases} \\
    dx &= \operatorname{crop}(\operatorname{add\_windows}(d\mathrm{cols}))
    \end{aligned}
    $$
    """

    def forward(self, x, kernel, stride, padding, dilation, out_size):
        y, arg, xpad_shape = window_max(self.xp, x, kernel, stride, padding, dilation, out_size)
        self.save_for_backward(arg, xpad_shape, kernel, stride, dilation, padding)
        return y

    def backward(self, dy):
        return max_pool_scatter(self.xp, dy, *self.saved)

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $dx$ = the array backward as one recorded op of $g$,
        MaxPoolBackward (below; the same code, so the same values), linear in $g$: the winning taps
        are piecewise constant in $x$, so $\partial(dx)/\partial x = 0$ (as PyTorch's max_pool2d double
        backward), and $\partial(dx)/\partial g$ is MaxPoolBackward's adjoint, a gather at the winning
        pixels."""
        names = ("arg", "xpad_shape", "kernel", "stride", "dilation", "padding")
        return MaxPoolBackward.apply(g, **dict(zip(names, self.saved)))


def max_pool_scatter(xp, dy, arg, xpad_shape, kernel, stride, dilation, padding):
    """MaxPool2d's backward on arrays: $dy$ at each window's winning tap, the windows added back."""
    kh, kw = kernel
    taps = xp.arange(kh * kw).reshape(1, 1, -1, 1, 1)
    dflat = (taps == arg[:, :, None]) * dy[:, :, None]  # dy at the winning tap, 0 elsewhere
    dcols = dflat.reshape(dy.shape[:2] + (kh, kw) + dy.shape[2:])
    return crop(add_windows(xp, dcols, xpad_shape, stride, dilation), padding)


def winning_pixels(xp, arg, kernel, stride, dilation):
    """The `(n, c, h, w)` places in the padded input of each window's winning tap: an advanced
    index of shape `arg`'s `(N, C, OH, OW)`."""
    n, c, oh, ow = arg.shape
    h = xp.arange(oh).reshape(1, 1, -1, 1) * stride[0] + (arg // kernel[1]) * dilation[0]
    w = xp.arange(ow).reshape(1, 1, 1, -1) * stride[1] + (arg % kernel[1]) * dilation[1]
    return xp.arange(n).reshape(-1, 1, 1, 1), xp.arange(c).reshape(1, -1, 1, 1), h, w


class MaxPoolBackward(Function):
    r"""$dx$ = MaxPool2d's backward of $dy$ (`max_pool_scatter`), as an op: what MaxPool2d's
    Tensor-level formula records under create_graph.  It is linear in $dy$, the adjoint of reading $v$
    ($x$'s shape, padded with 0) at each window's winning pixel:
    $d(dy) = v_{\mathrm{padded}}[\text{winning pixels}]$."""

    def forward(self, dy, arg, xpad_shape, kernel, stride, dilation, padding):
        self.save_for_backward(arg, kernel, stride, dilation, padding)
        return max_pool_scatter(self.xp, dy, arg, xpad_shape, kernel, stride, dilation, padding)

    def backward(self, v):
        arg, kernel, stride, dilation, padding = self.saved
        return pad_with(self.xp, v, padding, 0)[winning_pixels(self.xp, arg, kernel, stride, dilation)]

    def backward_graph(self, v, z):
        """Tensor-level (create_graph): $d(dy)$ = $v$ padded with 0 (a recorded ConstantPad), read at
        the winning pixels (a recorded Index): linear in $v$; their formulas scatter back."""
        arg, kernel, stride, dilation, padding = self.saved
        pads = ((0, 0), (0, 0)) + tuple(tuple(p) for p in padding)
        index = winning_pixels(self.xp, arg, kernel, stride, dilation)
        return Index.apply(ConstantPad.apply(v, pads=pads, value=0), index=index, advanced=True)


class AvgPool2d(Function):
    r"""$y[n, c, o_h, o_w] = \big(\sum_{(i, j)} \mathrm{cols}[n, c, i, j, o_h, o_w]\big) / \mathrm{divisor}[o_h, o_w]$
    (padding reads 0).  `divisor` is the window's size (with
    `count_include_pad`; clipped to the padded input), the number of real pixels in it (without), or
    `divisor_override`.

    Every tap moves the output by $1 / \mathrm{divisor}$:

    $$
    \begin{aligned}
    d\mathrm{cols}[n, c, i, j, o_h, o_w] &= dy[n, c, o_h, o_w] / \mathrm{divisor}[o_h, o_w]
      && \text{for every tap } (i, j) \\
    dx &= \operatorname{crop}(\operatorname{add\_windows}(d\mathrm{cols}))
    \end{aligned}
    $$
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
        return avg_pool_spread(self.xp, dy, *self.saved)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): $dx$ = the array backward as one recorded op of $g$,
        AvgPoolBackward (below; the same code, the same values), linear in $g$ and free of $x$;
        its adjoint is this average pooling again."""
        names = ("divisor", "xpad_shape", "kernel", "stride", "padding")
        return AvgPoolBackward.apply(g, **dict(zip(names, self.saved)))


def avg_pool_spread(xp, dy, divisor, xpad_shape, kernel, stride, padding):
    """AvgPool2d's backward on arrays: `dy / divisor` to every tap of its window, added back."""
    share = (dy / divisor)[:, :, None, None]  # (N, C, 1, 1, OH, OW)
    dcols = xp.broadcast_to(share, dy.shape[:2] + tuple(kernel) + dy.shape[2:])
    return crop(add_windows(xp, dcols, xpad_shape, stride, (1, 1)), padding)


class AvgPoolBackward(Function):
    """$dx$ = AvgPool2d's backward of $dy$ (`avg_pool_spread`), as an op: what AvgPool2d's Tensor-level
    formula records under create_graph.  Linear in $dy$; its adjoint sums each window of $v$
    (padded with 0) and divides by the divisor: AvgPool2d's forward on $v$."""

    def forward(self, dy, divisor, xpad_shape, kernel, stride, padding):
        self.save_for_backward(divisor, kernel, stride, padding, tuple(dy.shape[2:]))
        return avg_pool_spread(self.xp, dy, divisor, xpad_shape, kernel, stride, padding)

    def backward(self, v):
        divisor, kernel, stride, padding, out_size = self.saved
        return AvgPool2d(self.xp).forward(v, kernel, stride, padding, out_size, divisor)

    def backward_graph(self, v, z):
        """Tensor-level (create_graph): $d(dy)$ = the average pooling of $v$, a recorded AvgPool2d
        (whose formula is this op again): linear in $v$."""
        divisor, kernel, stride, padding, out_size = self.saved
        return AvgPool2d.apply(v, kernel=kernel, stride=stride, padding=padding, out_size=out_size, divisor=divisor)
