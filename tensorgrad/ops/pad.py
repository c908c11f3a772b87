"""Padding (`F.pad`): constant, reflect, replicate and circular modes."""

from __future__ import annotations

from .. import backend
from ..autograd import Function
from .shape import IndexBackward


def source_positions(xp, n, before, after, mode):
    r"""For padded positions $j = -\mathrm{before}, \dots, n + \mathrm{after} - 1$ of an axis of length
    $n$, the position of the input element each one copies:

    - reflect: $j < 0 \to -j$; $j \ge n \to 2 (n - 1) - j$ (the edge is not repeated);
    - replicate: $\operatorname{clip}(j, 0, n - 1)$;
    - circular: $j \bmod n$.

    A negative amount crops.  Circular padding (as PyTorch's) crops first and wraps around what is
    left: the $m = n - c_0 - c_1$ positions from $c_0 = \max(-\mathrm{before}, 0)$, so
    $j' = -\max(\mathrm{before}, 0), \dots, m + \max(\mathrm{after}, 0) - 1$ copies
    $c_0 + (j' \bmod m)$.
    """
    if mode == "circular":
        c0 = max(-before, 0)
        m = n - c0 - max(-after, 0)
        return c0 + xp.arange(-max(before, 0), m + max(after, 0)) % m
    j = xp.arange(-before, n + after)
    if mode == "reflect":
        return xp.where(j < 0, -j, xp.where(j >= n, 2 * (n - 1) - j, j))
    return xp.clip(j, 0, n - 1)


class ConstantPad(Function):
    r"""$z$ = $x$ surrounded by `value`: `pads[a] = (before, after)` elements added on axis $a$
    (negative amounts crop).  $z_{\mathrm{before} + i} = x_i$ where both exist, so
    $dx_i = g_{\mathrm{before} + i}$: the slice of $g$ that $x$ filled (zero for cropped elements)."""

    def forward(self, x, pads, value):
        xp = self.xp
        shape = tuple(n + b + a for n, (b, a) in zip(x.shape, pads))
        out_part = tuple(slice(max(b, 0), max(b, 0) + n - max(-b, 0) - max(-a, 0)) for n, (b, a) in zip(x.shape, pads))
        x_part = tuple(slice(max(-b, 0), n - max(-a, 0)) for n, (b, a) in zip(x.shape, pads))
        self.save_for_backward(x.shape, x.dtype, out_part, x_part, pads)
        out = xp.full(shape, value, dtype=x.dtype)
        out[out_part] = x[x_part]
        return out

    def backward(self, g):
        shape, dtype, out_part, x_part, _ = self.saved
        dx = self.xp.zeros(shape, dtype=dtype)
        dx[x_part] = g[out_part]
        return dx

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): $dx$ = $g$ padded by the negated amounts with zeros, a recorded
        ConstantPad (the slice of $g$ that $x$ filled, and zeros where $x$ was cropped): linear in $g$,
        and this formula is again a ConstantPad's, so every order works."""
        pads = self.saved[4]
        return ConstantPad.apply(g, pads=tuple((-b, -a) for b, a in pads), value=0)


class IndexPad(Function):
    r"""reflect / replicate / circular padding: along each padded axis $a$, $z$ =
    `x.take(src_a, axis=a)` with `src_a = source_positions(...)`, one axis after the other.

    A take copies $x_{\mathrm{src}_j}$ to $z_j$; several $j$ share a source near the edges, so the
    backward of each take is a scatter-add, applied to the axes in reverse order:
    $dx$ = zeros; `dx[..., src_a, ...] += g`.
    """

    def forward(self, x, pads, mode):
        xp = self.xp
        steps = []  # (axis, shape before the take, source positions)
        out = x
        for axis, (b, a) in enumerate(pads):
            if b or a:
                src = source_positions(xp, out.shape[axis], b, a, mode)
                steps.append((axis, out.shape, src))
                out = xp.take(out, src, axis=axis)
        self.save_for_backward(steps, x.dtype)
        return out

    def backward(self, g):
        steps, dtype = self.saved
        for axis, shape, src in reversed(steps):
            d = self.xp.zeros(shape, dtype=dtype)
            backend.add_at(self.xp, d, (slice(None),) * axis + (src,), g)
            g = d
        return g

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): the same scatter-adds, each a recorded IndexBackward (the
        adjoint of a take: its own formula takes again), in reverse order: linear in $g$."""
        steps, _ = self.saved
        for axis, shape, src in reversed(steps):
            g = IndexBackward.apply(g, shape=shape, index=(slice(None),) * axis + (src,), advanced=True)
        return g
