"""Linear algebra with a backward of its own: the cross product, the vector p-norms and the matrix
norms of the singular values (nuclear, spectral).  (The matrix products mm, bmm, mv, dot, inner,
outer, kron, tensordot, addmm, ... are compositions of matmul, einsum and elementwise ops; their
gradients are those ops' backwards.)"""

from __future__ import annotations

import math

from .. import backend
from ..autograd import Function
from ..graph_walk import graph_constant
from .decompositions import SVD
from .scan import widened


def cross3(xp, a, b, axis):
    r"""$a \times b$ along `axis` (size 3): $z_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1}$ (indices mod 3)."""
    next1, next2 = xp.asarray([1, 2, 0]), xp.asarray([2, 0, 1])
    take = xp.take
    return take(a, next1, axis=axis) * take(b, next2, axis=axis) - take(a, next2, axis=axis) * take(b, next1, axis=axis)


class Cross(Function):
    r"""$z = a \times b$ along `dim` (size 3): $z_i = \sum_{jk} \varepsilon_{ijk}\, a_j b_k$
    ($\varepsilon$ the Levi-Civita symbol).

    $\partial z_i/\partial a_j = \sum_k \varepsilon_{ijk}\, b_k$, so
    $da_j = \sum_{ik} g_i\, \varepsilon_{ijk}\, b_k = \sum_{ik} \varepsilon_{jki}\, b_k g_i$
    ($\varepsilon$ is invariant under cyclic shifts), which is the $j$-th component of $b \times g$:

    $$
    da = b \times g, \qquad db = g \times a
    \qquad (\text{the same argument with the roles of } a \text{ and } b \text{ swapped})
    $$

    $a$ and $b$ broadcast against each other; the engine sums $da$, $db$ back to their shapes.
    """

    def forward(self, a, b, dim):
        self.save_for_backward(a, b, dim)
        return cross3(self.xp, a, b, dim)

    def backward(self, g):
        a, b, dim = self.saved
        xp = self.xp
        da = cross3(xp, b, g, dim) if self.needs_grad(0) else None
        db = cross3(xp, g, a, dim) if self.needs_grad(1) else None
        return da, db

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $da = b \times g$, $db = g \times a$, recorded Crosses of the
        input tensors and $g$ (bilinear: a second pass sees $\partial(da)/\partial b$ and
        $\partial(db)/\partial a$, crosses again)."""
        a, b = self.parents[:2]
        dim = self.saved[2]
        da = Cross.apply(b, g, dim=dim) if self.needs_grad(0) else None
        db = Cross.apply(g, a, dim=dim) if self.needs_grad(1) else None
        return da, db


class VectorNorm(Function):
    r"""$z = \lVert x\rVert_p$ over `dims` $= \big(\sum \lvert x\rvert^p\big)^{1/p}$, with the limits
    PyTorch takes: $p = 0$: the number of nonzero elements; $p = \infty$: $\max \lvert x\rvert$;
    $p = -\infty$: $\min \lvert x\rvert$.

    With $a = \lvert x\rvert$ and $d\lvert x\rvert/dx = \operatorname{sign}(x)$:

    $$
    \begin{array}{lll}
    p = 0: & z \text{ is piecewise constant} & dx = 0 \\
    p = 1: & z = \sum a & dx = g \operatorname{sign}(x) \\
    p = 2: & z = \sqrt{\textstyle\sum x^2},\ \ \partial z/\partial x = x / z & dx = g\, x / z \\
    p = \pm\infty: & z = a \text{ at the extreme element(s)}
      & dx = g \operatorname{sign}(x)\, [a = z] \,/\, \#\{a = z\} \\
    \text{other } p: & \partial z/\partial x = \frac{1}{p} \big(\sum a^p\big)^{1/p - 1} p\, a^{p-1}
      \operatorname{sign}(x) & \\
    & \phantom{\partial z/\partial x} = \operatorname{sign}(x)\, a^{p-1} / z^{p-1}
      & dx = g \operatorname{sign}(x)\, (a / z)^{p-1}
    \end{array}
    $$

    (for $p = \pm\infty$ ties share the gradient equally, as PyTorch.)
    $z = 0$ (all of $x$ zero) has no derivative; PyTorch's subgradient there is 0 (for $p \ge 1$; for
    $p < 1$ its formula gives 0 at the $x$ that are 0).  $g$ and $z$ are broadcast back over `dims`.
    Over a single element $z = \lvert x\rvert$ exactly, as PyTorch computes it (the formulas above
    still hold).  float16 is computed in float32 (`backend.widen`), $z$ and $dx$ rounded once, as
    PyTorch's: the squares of float16 values in the hundreds would overflow a float16 sum.
    """

    def forward(self, x, ord, dims, keepdim):
        xp = self.xp
        dtype, x = x.dtype, backend.widen(x)
        a = xp.abs(x)
        count = math.prod(x.shape[d] for d in dims)
        if ord == 0:
            z = (x != 0).sum(axis=dims, keepdims=True).astype(x.dtype)
        elif count == 1:  # the norm of one element is |x| (as PyTorch: no x^p to under- or overflow)
            z = a.reshape(tuple(1 if i in dims else n for i, n in enumerate(x.shape)))
        elif ord == math.inf:
            z = a.max(axis=dims, keepdims=True)
        elif ord == -math.inf:
            z = a.min(axis=dims, keepdims=True)
        elif ord == 1:
            z = backend.sum(xp, a, dims, keepdims=True)
        elif ord == 2:
            z = xp.sqrt(backend.sum(xp, x * x, dims, keepdims=True))
        elif ord > 0:
            z = backend.sum(xp, a**ord, dims, keepdims=True) ** (1.0 / ord)
        else:  # 0^ord = inf for ord < 0, written as such (no division by zero), and inf^(1/ord) = 0
            powers = xp.where(a == 0, xp.inf, xp.where(a == 0, 1, a) ** ord)
            z = backend.sum(xp, powers, dims, keepdims=True) ** (1.0 / ord)
        self.save_for_backward(x, z, ord, dims, dtype)
        out = backend.narrow(z, dtype)
        return out if keepdim else out.reshape(tuple(n for i, n in enumerate(z.shape) if i not in dims))

    def backward(self, g):
        x, z, ord, dims, dtype = self.saved
        xp = self.xp
        g = backend.widen(g).reshape(z.shape)  # the kept dims back, so g and z broadcast against x
        if ord == 0:
            dx = xp.zeros_like(x)
        elif ord == 1:
            dx = g * xp.sign(x)
        elif ord == 2:
            zero = z == 0
            dx = x * xp.where(zero, 0, g / xp.where(zero, 1, z))
        elif ord in (math.inf, -math.inf):
            hit = xp.abs(x) == z
            dx = xp.sign(x) * hit * (g / hit.sum(axis=dims, keepdims=True))
        else:  # (a / z)^(p-1): no power of z alone, which under- or overflows where a^p did not
            a, zero = xp.abs(x), z == 0
            ratio = xp.where(a == 0, 1, a) / xp.where(zero, 1, z)
            scaled = xp.where(a == 0, 0, xp.sign(x) * ratio ** (ord - 1))
            dx = xp.where(zero, 0, g * scaled)
        return backend.narrow(dx, dtype)

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): the backward above with Tensor ops, $z$ recomputed from the
        input tensor as the forward computes it (the same branch, as recorded ops: Abs, Sum, Sqrt,
        Pow, Amax / Amin), the signs, the ties and the masks ($z = 0$, $x = 0$) constants; widened,
        cast back once.  A second pass differentiates $z$ and the ratio: for $p = 2$,
        $\partial(dx)/\partial x = g\, (I - x x^\top / z^2) / z$."""
        xp = self.xp
        x_array, z_array, ord, dims, dtype = self.saved
        x, g = widened(self.parents[0]), widened(g).reshape(z_array.shape)
        const = lambda array: graph_constant(g, xp.asarray(array, dtype=x_array.dtype))  # noqa: E731
        if ord == 0:
            dx = const(xp.zeros_like(x_array))
        elif ord == 1:
            dx = g * const(xp.sign(x_array))
        elif ord in (math.inf, -math.inf):
            hit = xp.abs(x_array) == z_array
            dx = const(xp.sign(x_array) * hit) * (g / const(hit.sum(axis=dims, keepdims=True)))
        else:
            zero = graph_constant(g, z_array == 0)
            z_t = _norm_graph(x, ord, dims, z_array.shape, x_array.size // z_array.size)
            if ord == 2:
                dx = x * (g / z_t.masked_fill(zero, 1.0)).masked_fill(zero, 0.0)
            else:
                a0 = graph_constant(g, x_array == 0)
                ratio = x.abs().masked_fill(a0, 1.0) / z_t.masked_fill(zero, 1.0)
                scaled = (const(xp.sign(x_array)) * ratio ** (ord - 1)).masked_fill(a0, 0.0)
                dx = (g * scaled).masked_fill(zero, 0.0)
        return dx if dx.dtype == dtype else dx.to(dtype)


def _norm_graph(x, ord, dims, shape, count):
    r"""VectorNorm's $z$ (kept dims) as Tensor ops of the (widened) input tensor $x$, as the forward
    computes it for `ord` not in $(0, 1, \pm\infty)$."""
    a = x.abs()
    with backend.quiet():
        if count == 1:
            return a.reshape(shape)
        if ord == 2:
            return (x * x).sum(dims, keepdim=True).sqrt()
        if ord > 0:
            return (a**ord).sum(dims, keepdim=True) ** (1.0 / ord)
        at_zero = graph_constant(x, a._data == 0)
        powers = (a.masked_fill(at_zero, 1.0) ** ord).masked_fill(at_zero, math.inf)
        return powers.sum(dims, keepdim=True) ** (1.0 / ord)


class SingularValueNorm(Function):
    r"""The matrix norms of the singular values of $A$ `(..., m, n)`: with
    $A = U \operatorname{diag}(s)\, V^\top$ (thin SVD),

    $$
    \text{"nuc"}: z = \sum_i s_i, \qquad 2: z = \max_i s_i, \qquad -2: z = \min_i s_i
    $$

    For distinct singular values, first-order perturbation of $A = U \operatorname{diag}(s)\, V^\top$
    gives $ds_i = u_i^\top dA\, v_i$, i.e. $\partial s_i/\partial A = u_i v_i^\top$.  With
    $w_i = \partial z/\partial s_i$ (1 for every $i$ for "nuc"; for 2 / -2, 1 at the largest /
    smallest $s_i$, ties sharing it equally, as PyTorch's amax / amin):

    $$
    dA = \sum_i g\, w_i\, u_i v_i^\top = U \operatorname{diag}(g\, w)\, V^\top
    $$
    """

    def forward(self, a, ord):
        xp = self.xp
        u, s, vh = backend.svd(xp, a)
        if ord == "nuc":
            z = s.sum(axis=-1)
        else:
            z = s.max(axis=-1) if ord == 2 else s.min(axis=-1)
        self.save_for_backward(u, s, vh, z, ord)
        return z

    def backward(self, g):
        u, s, vh, z, ord = self.saved
        if ord == "nuc":
            w = self.xp.ones_like(s)
        else:
            hit = s == z[..., None]
            w = hit / hit.sum(axis=-1, keepdims=True)
        return (u * (g[..., None] * w)[..., None, :]) @ vh

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $dA = U \operatorname{diag}(g\, w)\, V^\top$ with $U, V^\top$ from
        a recorded SVD of the input tensor (`decompositions.SVD`, the same thin factorisation), $w$
        constant (the ties' shares): a second pass differentiates $U$ and $V$ through SVD's own
        backward (distinct, nonzero singular values, as that backward assumes and PyTorch's does); a
        third raises lazily at SVD, which has no Tensor-level formula."""
        u_a, s_a, vh_a, z_a, ord = self.saved
        a = self.parents[0]
        m, k, n = u_a.shape[-2], s_a.shape[-1], vh_a.shape[-1]
        batch = tuple(a.shape[:-2])
        packed = SVD.apply(a, full_matrices=False)
        u = packed[..., : m * k].reshape(batch + (m, k))
        vh = packed[..., m * k + k :].reshape(batch + (k, n))
        if ord == "nuc":
            w = self.xp.ones_like(s_a)
        else:
            hit = s_a == z_a[..., None]
            w = hit / hit.sum(axis=-1, keepdims=True)
        return (u * (g.unsqueeze(-1) * graph_constant(g, w)).unsqueeze(-2)) @ vh
