r"""2-d convolution, transposed convolution and unfold (im2col itself), by im2col / col2im.

Notation: $x$ `(N, C, H, W)`, kernel `(KH, KW)`, stride `(sh, sw)`, dilation `(dh, dw)`.  After
zero padding, output pixel $(o_h, o_w)$ sees the input pixels

$$
x[n,\ c,\ o_h s_h + i\, d_h,\ o_w s_w + j\, d_w] \qquad \text{for each kernel tap } (i, j).
$$

im2col ("windows") copies those pixels into a matrix `cols` `(N, C, KH, KW, OH, OW)`; it is built
one tap at a time: for a fixed tap $(i, j)$ the pixels form a strided slice of $x$,

```
cols[:, :, i, j] = x[:, :, i*dh : i*dh + sh*(OH-1) + 1 : sh, j*dw : j*dw + sw*(OW-1) + 1 : sw]
```

so the convolution is one matrix product per group.  col2im ("add_windows") is its adjoint:
it adds each tap's slice back where it came from.  Windows overlap (stride < kernel), so a
pixel receives the sum over every (output pixel, tap) that read it: a scatter-add, done here
as `KH * KW` strided `+=` (no slice repeats a pixel, so each `+=` is exact).
"""

from __future__ import annotations

from .. import backend
from ..autograd import Function
from .shape import Stack


def _tap(i, d, s, n_out):
    """The strided slice of the padded input that kernel tap `i` reads for all `n_out` outputs."""
    return slice(i * d, i * d + s * (n_out - 1) + 1, s)


def windows(xp, x, kernel, stride, dilation, out_size):
    """im2col: `cols[n, c, i, j, oh, ow] = x[n, c, oh*sh + i*dh, ow*sw + j*dw]` (`x` already padded)."""
    (kh, kw), (sh, sw), (dh, dw), (oh, ow) = kernel, stride, dilation, out_size
    cols = xp.empty(x.shape[:2] + (kh, kw, oh, ow), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = x[:, :, _tap(i, dh, sh, oh), _tap(j, dw, sw, ow)]
    return cols


def add_windows(xp, cols, shape, stride, dilation):
    """col2im, the adjoint of windows: `dx[n, c, oh*sh + i*dh, ow*sw + j*dw] += cols[n, c, i, j, oh, ow]`."""
    kh, kw, oh, ow = cols.shape[2:]
    (sh, sw), (dh, dw) = stride, dilation
    dx = xp.zeros(shape, dtype=cols.dtype)
    for i in range(kh):
        for j in range(kw):
            dx[:, :, _tap(i, dh, sh, oh), _tap(j, dw, sw, ow)] += cols[:, :, i, j]
    return dx


def grouped(xp, a, b):
    """`out[g] = a[g] @ b[g]` for every group `g`, as 2-d products (`a` `(G, m, k)`, `b` `(G, k, n)`).

    2-d products go to BLAS whatever their operands' layout; a 3-d `@` with a transposed
    operand can fall back to a much slower loop."""
    if a.shape[0] == 1:
        return (a[0] @ b[0])[None]
    return xp.stack([a[g] @ b[g] for g in range(a.shape[0])])


def zero_pad(xp, x, padding):
    """`x` `(N, C, H, W)` with padding `((top, bottom), (left, right))` of zeros."""
    (pt, pb), (pl, pr) = padding
    if not (pt or pb or pl or pr):
        return x
    n, c, h, w = x.shape
    out = xp.zeros((n, c, h + pt + pb, w + pl + pr), dtype=x.dtype)
    out[:, :, pt : pt + h, pl : pl + w] = x
    return out


def _grouped_graph(a, b):
    """`grouped()` for Tensors: `out[g] = a[g] @ b[g]`, 2-d recorded Matmuls joined by a Stack."""
    if a.shape[0] == 1:
        return (a[0] @ b[0]).unsqueeze(0)
    return Stack.apply(*[a[g] @ b[g] for g in range(a.shape[0])], axis=0)


def _weight_grad_graph(dy, x, w_shape, kernel, stride, padding, dilation, groups):
    r"""Conv2d's $dW_g = dY_g\, \mathrm{cols}_g^\top$ as Tensor ops: `cols` the recorded Unfold (im2col)
    of $x$, $dy$ laid out as `(G, Og, P)`: bilinear in $dy$ and $x$, so a second pass sees both."""
    n, o, oh, ow = dy.shape
    c = x.shape[1]
    k = (c // groups) * kernel[0] * kernel[1]
    cols = Unfold.apply(x, kernel=kernel, stride=stride, padding=padding, dilation=dilation, out_size=(oh, ow))
    cols = cols.reshape(n, groups, k, oh * ow).permute(1, 2, 0, 3).reshape(groups, k, n * oh * ow)
    dym = dy.permute(1, 0, 2, 3).reshape(groups, o // groups, n * oh * ow)
    return _grouped_graph(dym, cols.permute(0, 2, 1)).reshape(w_shape)


def crop(x, padding):
    """The inverse of `zero_pad`'s placement: the `(H, W)` interior of a padded array."""
    (pt, pb), (pl, pr) = padding
    return x[:, :, pt : x.shape[2] - pb, pl : x.shape[3] - pr]


class Conv2d(Function):
    r"""Each output pixel, for $o$ in group $g$:

    $$
    y[n, o, o_h, o_w] = b[o] + \sum_{c, i, j} w[o, c, i, j]\;
    x_{\mathrm{pad}}[n,\ g C_g + c,\ o_h s_h + i\, d_h,\ o_w s_w + j\, d_w]
    $$

    (groups split the $C$ input and $O$ output channels into $G$ blocks; block
    $g$ of the output sees only block $g$ of the input: $C_g = C / G$, $O_g = O / G$).  With
    $\mathrm{cols} = \operatorname{windows}(x_{\mathrm{pad}})$ as a `(G, K, P)` matrix,
    $K = C_g \cdot KH \cdot KW$ rows (channel, tap) and $P = N \cdot OH \cdot OW$ columns (pixel), and
    $w$ as `(G, Og, K)`, the forward is one product per group:

    $$
    Y_g = W_g\, \mathrm{cols}_g \qquad (O_g, P)
    $$

    and the backward is the two products of a matmul's backward, then col2im:

    $$
    \begin{aligned}
    dW_g &= dY_g\, \mathrm{cols}_g^\top && (O_g, K) \\
    d\mathrm{cols}_g &= W_g^\top dY_g && (K, P) \\
    dx_{\mathrm{pad}} &= \operatorname{add\_windows}(d\mathrm{cols}), \quad
      dx = \operatorname{crop}(dx_{\mathrm{pad}}) && (\text{scatter-add of the windows}) \\
    db[o] &= \sum_{n, o_h, o_w} dy[n, o, o_h, o_w]
    \end{aligned}
    $$

    In plain math $dx$ is a correlation of $dy$ (spread out by the stride, zeros between) with the
    kernel flipped in both spatial dims and its in/out channels swapped:

    $$
    dx[n, c, h, w] = \sum_{o, i, j} w[o, c, i, j]\; dy\big[n, o, (h + p - i\, d_h) / s_h, \dots\big]
    $$

    over the taps where $(h + p - i\, d_h) / s_h$ is a whole output index: each input pixel collects
    the gradient of every output pixel whose window covered it, weighted by the tap that read it.
    """

    def forward(self, x, w, b, stride, padding, dilation, groups):
        xp = self.xp
        n, c, _, _ = x.shape
        o, cg, kh, kw = w.shape
        xpad = zero_pad(xp, x, padding)
        (sh, sw), (dh, dw) = stride, dilation
        oh = (xpad.shape[2] - dh * (kh - 1) - 1) // sh + 1
        ow = (xpad.shape[3] - dw * (kw - 1) - 1) // sw + 1
        g = groups
        cols = windows(xp, xpad, (kh, kw), stride, dilation, (oh, ow))  # (N, C, KH, KW, OH, OW)
        cols = cols.reshape(n, g, cg * kh * kw, oh * ow).transpose(1, 2, 0, 3).reshape(g, cg * kh * kw, n * oh * ow)
        wm = w.reshape(g, o // g, cg * kh * kw)  # (G, Og, K)
        y = grouped(xp, wm, cols)  # (G, Og, P)
        y = y.reshape(o, n, oh, ow).transpose(1, 0, 2, 3)  # (N, O, OH, OW)
        if b is not None:
            y = y + b.reshape(1, o, 1, 1)
        self.save_for_backward(cols, wm, xpad.shape, w.shape, padding, stride, dilation)
        return xp.ascontiguousarray(y)

    def backward(self, dy):
        cols, wm, xpad_shape, w_shape, padding, stride, dilation = self.saved
        g, og, k = wm.shape
        n, o, oh, ow = dy.shape
        dym = dy.transpose(1, 0, 2, 3).reshape(g, og, n * oh * ow)  # (G, Og, P)
        dw = grouped(self.xp, dym, cols.transpose(0, 2, 1)).reshape(w_shape) if self.needs_grad(1) else None
        dx = None
        if self.needs_grad(0):
            dcols = grouped(self.xp, wm.transpose(0, 2, 1), dym)  # (G, K, P)
            c = xpad_shape[1]
            dcols = dcols.reshape(g, c // g, w_shape[2], w_shape[3], n, oh, ow).transpose(4, 0, 1, 2, 3, 5, 6)
            dcols = dcols.reshape(n, c, w_shape[2], w_shape[3], oh, ow)
            dx = crop(add_windows(self.xp, dcols, xpad_shape, stride, dilation), padding)
        db = backend.sum(self.xp, dy, (0, 2, 3)) if self.needs_grad(2) else None
        return dx, dw, db

    def backward_graph(self, dy, z):
        r"""Tensor-level (create_graph): $dx$ = the transposed convolution of $dy$ with the same weights
        (a recorded ConvTranspose2d, no padding, its output padded to `xpad`'s size, then cropped by a
        recorded slice: the same products and col2im as the array backward),
        $dW = dY\, \mathrm{cols}^\top$ per group with `cols` a recorded Unfold of $x$
        (`_weight_grad_graph`), $db = \sum dy$.  Each is bilinear in $dy$ and ($w$ or $x$): a second
        pass sees $\partial(dx)/\partial w$, $\partial(dw)/\partial x$ and $\partial/\partial(dy)$."""
        x, w = self.parents[:2]
        _, wm, xpad_shape, w_shape, padding, stride, dilation = self.saved
        groups = wm.shape[0]
        oh, ow = dy.shape[2:]
        kh, kw = w_shape[2:]
        dx = dw = db = None
        if self.needs_grad(0):
            base_h = (oh - 1) * stride[0] + dilation[0] * (kh - 1) + 1
            base_w = (ow - 1) * stride[1] + dilation[1] * (kw - 1) + 1
            extra = (xpad_shape[2] - base_h, xpad_shape[3] - base_w)
            full = ConvTranspose2d.apply(dy, w, None, stride=stride, padding=(0, 0), output_padding=extra,
                                         dilation=dilation, groups=groups)  # fmt: skip
            (pt, pb), (pl, pr) = padding
            dx = full[:, :, pt : xpad_shape[2] - pb, pl : xpad_shape[3] - pr]
        if self.needs_grad(1):
            dw = _weight_grad_graph(dy, x, w_shape, (kh, kw), stride, padding, dilation, groups)
        if self.needs_grad(2):
            db = dy.sum((0, 2, 3))
        return dx, dw, db


class ConvTranspose2d(Function):
    r"""The adjoint of Conv2d's input map, as a layer: each input pixel spreads its channels,
    weighted by $w$ `(C, Og, KH, KW)`, over a window of the (larger) output.  With $x$ as
    `(G, Cg, P)` ($P = N \cdot H \cdot W$ input pixels) and $w$ as `(G, Cg, Og*KH*KW)`:

    $$
    \begin{aligned}
    \mathrm{cols}_g &= W_g^\top X_g && (O_g \cdot KH \cdot KW,\ P) \\
    y_{\mathrm{pad}} &= \operatorname{add\_windows}(\mathrm{cols})
      && (\text{col2im: output pixel } h s_h + i\, d_h \text{ gets tap } i \text{ of input pixel } h) \\
    y &= \operatorname{crop}(y_{\mathrm{pad}}, \mathtt{padding}) + b
    \end{aligned}
    $$

    (the full size $(H-1) s_h + d_h (KH-1) + 1 + \mathtt{output\_padding}$, less `padding` on each
    side).  Its backward is therefore a plain convolution of $dy$ with the same weights:

    $$
    \begin{aligned}
    d\mathrm{cols} &= \operatorname{windows}(\operatorname{zero\_pad}(dy, \mathtt{padding}))
      && (\text{im2col, the adjoint of col2im}) \\
    dX_g &= W_g\, d\mathrm{cols}_g && (C_g, P) \\
    dW_g &= X_g\, d\mathrm{cols}_g^\top && (C_g,\ O_g \cdot KH \cdot KW) \\
    db[o] &= \sum_{n, o_h, o_w} dy[n, o, o_h, o_w]
    \end{aligned}
    $$
    """

    def forward(self, x, w, b, stride, padding, output_padding, dilation, groups):
        xp = self.xp
        n, c, h, wd = x.shape
        _, og, kh, kw = w.shape
        g = groups
        (sh, sw), (dh, dw) = stride, dilation
        full_h = (h - 1) * sh + dh * (kh - 1) + 1 + output_padding[0]  # the output before cropping
        full_w = (wd - 1) * sw + dw * (kw - 1) + 1 + output_padding[1]
        full = (full_h, full_w)
        xm = x.reshape(n, g, c // g, h * wd).transpose(1, 2, 0, 3).reshape(g, c // g, n * h * wd)  # (G, Cg, P)
        wm = w.reshape(g, c // g, og * kh * kw)  # (G, Cg, Og*K)
        cols = grouped(xp, wm.transpose(0, 2, 1), xm)  # (G, Og*KH*KW, P)
        cols = cols.reshape(g * og, kh, kw, n, h, wd).transpose(3, 0, 1, 2, 4, 5)  # (N, O, KH, KW, H, W)
        pads = ((padding[0], padding[0]), (padding[1], padding[1]))
        y = crop(add_windows(xp, cols, (n, g * og) + full, stride, dilation), pads)
        if b is not None:
            y = y + b.reshape(1, -1, 1, 1)
        self.save_for_backward(xm, wm, x.shape, w.shape, pads, stride, dilation, full)
        return xp.ascontiguousarray(y)

    def backward(self, dy):
        xm, wm, x_shape, w_shape, pads, stride, dilation, full = self.saved
        xp = self.xp
        n, c, h, wd = x_shape
        g, cg, _ = wm.shape
        _, og, kh, kw = w_shape
        dypad = xp.zeros(dy.shape[:2] + full, dtype=dy.dtype)
        dypad[:, :, pads[0][0] : pads[0][0] + dy.shape[2], pads[1][0] : pads[1][0] + dy.shape[3]] = dy
        dcols = windows(xp, dypad, (kh, kw), stride, dilation, (h, wd))  # (N, O, KH, KW, H, W)
        dcols = dcols.reshape(n, g, og * kh * kw, h * wd).transpose(1, 2, 0, 3).reshape(g, og * kh * kw, n * h * wd)
        dx = None
        if self.needs_grad(0):
            dx = grouped(xp, wm, dcols).reshape(c, n, h, wd).transpose(1, 0, 2, 3)  # (N, C, H, W)
        dw = grouped(xp, xm, dcols.transpose(0, 2, 1)).reshape(w_shape) if self.needs_grad(1) else None
        db = backend.sum(self.xp, dy, (0, 2, 3)) if self.needs_grad(2) else None
        return dx, dw, db

    def backward_graph(self, dy, z):
        r"""Tensor-level (create_graph): $dx$ = the convolution of $dy$ (padded as the forward cropped
        it) with the same weights, a recorded Conv2d (the same windows and products as the array
        backward); $dW = X\, d\mathrm{cols}^\top$ per group with `dcols` a recorded Unfold of $dy$;
        $db = \sum dy$.  Bilinear: a second pass sees $\partial(dx)/\partial w$,
        $\partial(dw)/\partial x$ and $\partial/\partial(dy)$."""
        x, w = self.parents[:2]
        xm, wm, x_shape, w_shape, pads, stride, dilation, full = self.saved
        n, c, h, wd = x_shape
        groups, cg, _ = wm.shape
        _, og, kh, kw = w_shape
        # The windows of the first (h, wd) outputs read the padded dy's first `need` rows (columns):
        # output_padding past the stride (allowed below the dilation) leaves rows no window reads,
        # cut from dy (or its bottom padding) so the convolution has exactly (h, wd) outputs.
        keep, cut_padding = [], []
        for a, n_in in ((0, h), (1, wd)):
            need = (n_in - 1) * stride[a] + dilation[a] * (w_shape[2 + a] - 1) + 1
            rows = max(0, min(dy.shape[2 + a], need - pads[a][0]))
            keep.append(rows)
            cut_padding.append((pads[a][0], need - pads[a][0] - rows))
        dy_read = dy if tuple(keep) == tuple(dy.shape[2:]) else dy[:, :, : keep[0], : keep[1]]
        padding = (
            (pads[0][0], full[0] - pads[0][0] - dy.shape[2]),
            (pads[1][0], full[1] - pads[1][0] - dy.shape[3]),
        )
        dx = dw = db = None
        if self.needs_grad(0):
            dx = Conv2d.apply(dy_read, w, None, stride=stride, padding=tuple(cut_padding), dilation=dilation,
                              groups=groups)  # fmt: skip
        if self.needs_grad(1):
            k = og * kh * kw
            cols = Unfold.apply(
                dy, kernel=(kh, kw), stride=stride, padding=padding, dilation=dilation, out_size=(h, wd)
            )
            cols = cols.reshape(n, groups, k, h * wd).permute(1, 2, 0, 3).reshape(groups, k, n * h * wd)
            xg = x.reshape(n, groups, cg, h * wd).permute(1, 2, 0, 3).reshape(groups, cg, n * h * wd)
            dw = _grouped_graph(xg, cols.permute(0, 2, 1)).reshape(w_shape)
        if self.needs_grad(2):
            db = dy.sum((0, 2, 3))
        return dx, dw, db


class Unfold(Function):
    r"""`F.unfold` (im2col as an op): `y[n, (c, i, j), (oh, ow)] = cols[n, c, i, j, oh, ow]`, the
    windows of the zero-padded input flattened to `(N, C * KH * KW, OH * OW)`.

    Every output element is one input pixel (or a padding zero), so the backward is col2im:

    $$
    dx = \operatorname{crop}\big(\operatorname{add\_windows}(dy \text{ viewed as } (N, C, KH, KW, OH, OW))\big)
    $$

    (a pixel read by several windows receives the sum of their gradients).
    """

    def forward(self, x, kernel, stride, padding, dilation, out_size):
        xp = self.xp
        xpad = zero_pad(xp, x, padding)
        cols = windows(xp, xpad, kernel, stride, dilation, out_size)
        self.save_for_backward(cols.shape, xpad.shape, stride, dilation, padding)
        n, c = x.shape[:2]
        return cols.reshape(n, c * kernel[0] * kernel[1], out_size[0] * out_size[1])

    def backward(self, g):
        cols_shape, xpad_shape, stride, dilation, padding = self.saved
        return crop(add_windows(self.xp, g.reshape(cols_shape), xpad_shape, stride, dilation), padding)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): $dx$ = col2im of $g$ as one recorded op, Fold (below; the same
        code, the same values), linear in $g$; Fold's adjoint is this Unfold again."""
        cols_shape, xpad_shape, stride, dilation, padding = self.saved
        return Fold.apply(g, cols_shape=cols_shape, xpad_shape=xpad_shape, stride=stride, dilation=dilation,
                          padding=padding)  # fmt: skip


class Fold(Function):
    r"""$dx = \operatorname{crop}(\operatorname{add\_windows}(g \text{ viewed as the windows}))$, Unfold's
    backward as an op (what Unfold's Tensor-level formula records).  Linear in $g$, the adjoint of
    im2col: $d(g)$ = Unfold of $v$."""

    def forward(self, g, cols_shape, xpad_shape, stride, dilation, padding):
        self.save_for_backward(cols_shape, stride, dilation, padding)
        return crop(add_windows(self.xp, g.reshape(cols_shape), xpad_shape, stride, dilation), padding)

    def backward(self, v):
        cols_shape, stride, dilation, padding = self.saved
        kernel, out_size = cols_shape[2:4], cols_shape[4:6]
        return Unfold(self.xp).forward(v, kernel, stride, padding, dilation, out_size)

    def backward_graph(self, v, z):
        """Tensor-level (create_graph): $d(g)$ = the recorded Unfold of $v$ (whose formula is this Fold)."""
        cols_shape, stride, dilation, padding = self.saved
        return Unfold.apply(v, kernel=tuple(cols_shape[2:4]), stride=stride, padding=padding, dilation=dilation,
                            out_size=tuple(cols_shape[4:6]))  # fmt: skip
