r"""Matrix functions and decompositions with a backward of their own: inv, solve, solve_triangular,
det, slogdet, cholesky, cholesky_solve, eigh / eigvalsh, svd / svdvals, qr and pinv, batched over the leading dims.

Notation: $A^\top$ swaps the last two dims, $\langle X, Y\rangle = \sum_{ij} X_{ij} Y_{ij}$
(so $\operatorname{tr}(G^\top dY) = \langle G, dY\rangle$), and an op's gradient $g_A$ is read off
from the first-order change of the output: $\langle G, dY\rangle = \langle g_A, dA\rangle$.
Ops with several outputs (slogdet, eigh, qr, svd) return them packed into one array that tg.linalg
slices apart, so one node holds the decomposition and its backward sees every output's gradient.
The factorizations come from numpy.linalg / cupy.linalg through `backend.linalg`; a triangular
solve is written here (back substitution), as neither library has a batched one.
"""

from __future__ import annotations

import math

from .. import backend
from ..autograd import Function
from ..graph_walk import graph_constant
from .rearrange import Flip
from .scan import exclusive_cumprod_graph
from .shape import Cat


def mT(x):
    """The last two dims swapped (the transpose of every matrix of a stack)."""
    return x.swapaxes(-1, -2)


def tri(xp, x, upper, strict=False):
    """The upper (or lower) triangle of every matrix, the diagonal left out where strict."""
    return xp.triu(x, 1 if strict else 0) if upper else xp.tril(x, -1 if strict else 0)


def triangular_solve(xp, a, b, upper, unitriangular=False):
    r"""$X$ with $A X = B$, $A$ `(..., n, n)` triangular (only its triangle read; a unit diagonal taken
    as ones where `unitriangular`), $B$ `(..., n, k)`: substitution, row by row,

    $$
    \begin{aligned}
    \text{lower:}&\quad x_i = \Big(b_i - \sum_{j<i} a_{ij} x_j\Big) / a_{ii} && (i = 0, 1, \dots, n-1) \\
    \text{upper:}&\quad x_i = \Big(b_i - \sum_{j>i} a_{ij} x_j\Big) / a_{ii} && (i = n-1, \dots, 0)
    \end{aligned}
    $$

    A zero on the diagonal gives inf / nan, as LAPACK's trsm (no error)."""
    n = a.shape[-1]
    batch = xp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    dtype = xp.result_type(a.dtype, b.dtype)
    a = xp.broadcast_to(a, batch + a.shape[-2:]).astype(dtype, copy=False)
    b = xp.broadcast_to(b, batch + b.shape[-2:]).astype(dtype, copy=False)
    rows = [None] * n
    order = range(n - 1, -1, -1) if upper else range(n)
    for step, i in enumerate(order):
        r = b[..., i : i + 1, :]
        if step:  # rows already solved
            lo, hi = (i + 1, n) if upper else (0, i)
            solved = xp.concatenate([rows[j] for j in range(lo, hi)], axis=-2)
            r = r - a[..., i : i + 1, lo:hi] @ solved
        rows[i] = r if unitriangular else r / a[..., i : i + 1, i : i + 1]
    if n == 0:
        return xp.zeros(batch + b.shape[-2:], dtype=dtype)
    return xp.concatenate(rows, axis=-2)


def _eye(g, n):
    r"""The $n \times n$ identity as a constant of `g`'s dtype."""
    return graph_constant(g, backend.namespace(g.device).eye(n, dtype=g._data.dtype))


def _diag_embed_graph(v):
    """`diag_embed` for a Tensor `v`, as the array helper computes it: `v[..., :, None] * I`."""
    return v.unsqueeze(-1) * _eye(v, v.shape[-1])


def _svd_graph(a):
    r"""$(U, S, V^\top)$ of the Tensor `a`, thin, from one recorded SVD (its array backward takes a
    second pass through them)."""
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    batch = tuple(a.shape[:-2])
    packed = SVD.apply(a, full_matrices=False)
    u = packed[..., : m * k].reshape(batch + (m, k))
    s = packed[..., m * k : m * k + k]
    vh = packed[..., m * k + k :].reshape(batch + (k, n))
    return u, s, vh


def skew(m):
    r"""$(M - M^\top) / 2$, the antisymmetric part."""
    return (m - mT(m)) / 2


def diag_embed(xp, v):
    """`(..., n)` -> `(..., n, n)` with `v` on the diagonal."""
    return v[..., :, None] * xp.eye(v.shape[-1], dtype=v.dtype)


class Inv(Function):
    r"""$Y = A^{-1}$.  From $A Y = I$: $dA\, Y + A\, dY = 0$, so $dY = -Y\, dA\, Y$ and

    $$
    \langle G, dY\rangle = -\operatorname{tr}(G^\top Y\, dA\, Y) = \langle -Y^\top G Y^\top, dA\rangle,
    \qquad g_A = -Y^\top G Y^\top
    $$
    """

    def forward(self, a, error):
        y = backend.linalg(self.xp, "inv", a, error=error)
        self.save_for_backward(y)
        return y

    def backward(self, g):
        (y,) = self.saved
        return -mT(y) @ g @ mT(y)

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $g_A = -Y^\top G Y^\top$ with $Y = A^{-1}$ the output tensor, in
        the graph (its node carries the second pass's $\partial/\partial Y$ on to $A$: $dY = -Y\, dA\, Y$)."""
        return -z.mT @ g @ z.mT


class Solve(Function):
    r"""$X = A^{-1} B$ ($A$ `(..., n, n)`, $B$ `(..., n, k)`, one batch shape).  From $A X = B$:
    $dA\, X + A\, dX = dB$, so $dX = A^{-1} (dB - dA\, X)$ and

    $$
    \langle G, dX\rangle = \langle A^{-\top} G, dB - dA\, X\rangle:
    \qquad g_B = A^{-\top} G = \operatorname{solve}(A^\top, G), \qquad g_A = -g_B X^\top
    $$
    """

    def forward(self, a, b, error):
        x = backend.linalg(self.xp, "solve", a, b, error=error)
        self.save_for_backward(a, x)
        return x

    def backward(self, g):
        a, x = self.saved
        gb = backend.linalg(self.xp, "solve", mT(a), g)
        return (-gb @ mT(x) if self.needs_grad(0) else None), gb

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $g_B = \operatorname{solve}(A^\top, G)$ (a recorded Solve of the
        input tensor), $g_A = -g_B X^\top$ with $X$ the output tensor: a second pass differentiates both
        solves."""
        a = self.parents[0]
        gb = Solve.apply(a.mT, g, error=None)
        return (-gb @ z.mT if self.needs_grad(0) else None), gb


class SolveTriangular(Function):
    r"""$X = A^{-1} B$ with $A$ triangular (upper or lower; with a unit diagonal where `unitriangular`),
    only $A$'s triangle read.  As for Solve, $g_B = A^{-\top} G$ ($A^\top$ is triangular the other way)
    and $g_A = -g_B X^\top$, of which only the triangle that was read counts (the rest of $A$ is not an
    input of the op): $g_A = \operatorname{triu}(-g_B X^\top)$ or $\operatorname{tril}(-g_B X^\top)$,
    without the diagonal where `unitriangular`."""

    def forward(self, a, b, upper, unitriangular):
        x = triangular_solve(self.xp, a, b, upper, unitriangular)
        self.save_for_backward(a, x, upper, unitriangular)
        return x

    def backward(self, g):
        a, x, upper, unit = self.saved
        xp = self.xp
        gb = triangular_solve(xp, mT(a), g, not upper, unit)
        ga = tri(xp, -gb @ mT(x), upper, strict=unit) if self.needs_grad(0) else None
        return ga, gb

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $g_B = A^{-\top} G$ (a recorded SolveTriangular of the input
        tensor's transpose), $g_A$ = the read triangle of $-g_B X^\top$ with $X$ the output tensor (a
        recorded triu / tril): a second pass differentiates both."""
        a = self.parents[0]
        _, _, upper, unit = self.saved
        gb = SolveTriangular.apply(a.mT, g, upper=not upper, unitriangular=unit)
        ga = None
        if self.needs_grad(0):
            full = -gb @ z.mT
            ga = full.triu(1 if unit else 0) if upper else full.tril(-1 if unit else 0)
        return ga, gb


class Det(Function):
    r"""$d = \det A$.  Jacobi's formula: $d(\det A) = \operatorname{tr}(\operatorname{adj}(A)\, dA)$, so
    $g_A = g \operatorname{adj}(A)^\top$ ($= g\, d\, A^{-\top}$ where $A$ is invertible).
    $\operatorname{adj}(A)$ is computed from the SVD $A = U S V^\top$, so that a singular $A$ (where
    $A^{-\top}$ does not exist) has its gradient too:
    $\operatorname{adj}(A) = \operatorname{adj}(V^\top) \operatorname{adj}(S) \operatorname{adj}(U)$,
    and for an orthogonal $Q$, $\operatorname{adj}(Q) = \det(Q)\, Q^\top$, so

    $$
    \operatorname{adj}(A)^\top = \det(U) \det(V)\, U \operatorname{diag}(c)\, V^\top,
    \qquad c_i = \prod_{j \ne i} s_j
    $$

    ($c$ from the products of the $s_j$ before and after $i$: no division by a zero $s_i$).
    """

    def forward(self, a):
        d = backend.linalg(self.xp, "det", a)
        self.save_for_backward(a)
        return d

    def backward(self, g):
        (a,) = self.saved
        return g[..., None, None] * adjugate_t(self.xp, a)

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $g_A = g \operatorname{adj}(A)^\top$ as in `adjugate_t`, with
        $U, s, V^\top$ from a recorded SVD of the input tensor and the products before and after each
        $s_i$ recorded exclusive cumprods (no division), the sign $\det(U) \det(V)$ a constant (piecewise
        constant): a second pass differentiates $\operatorname{adj}(A)$ through them, singular $A$
        included."""
        xp = self.xp
        a = self.parents[0]
        if a.shape[-1] == 0 or a._data.size == 0:
            return graph_constant(g, xp.zeros_like(a._data))
        u, sv, vh = _svd_graph(a)
        last = sv.ndim - 1
        before = exclusive_cumprod_graph(sv, last)
        after = Flip.apply(exclusive_cumprod_graph(Flip.apply(sv, dims=(last,)), last), dims=(last,))
        sign = backend.linalg(xp, "det", u._data) * backend.linalg(xp, "det", vh._data)
        sign = graph_constant(g, xp.asarray(sign)).unsqueeze(-1).unsqueeze(-1)
        adj_t = (sign * (u * (before * after).unsqueeze(-2))) @ vh
        return g.unsqueeze(-1).unsqueeze(-1) * adj_t


def adjugate_t(xp, a):
    r"""$\operatorname{adj}(A)^\top$ from the SVD (see Det)."""
    n = a.shape[-1]
    if n == 0 or a.size == 0:
        return xp.zeros_like(a)
    u, s, vh = backend.svd(xp, a)
    ones = xp.ones_like(s[..., :1])
    before = xp.cumprod(xp.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = xp.flip(xp.cumprod(xp.concatenate([ones, xp.flip(s[..., 1:], axis=-1)], axis=-1), axis=-1), axis=-1)
    sign = backend.linalg(xp, "det", u) * backend.linalg(xp, "det", vh)
    return sign[..., None, None] * (u * (before * after)[..., None, :]) @ vh


class SlogDet(Function):
    r"""$(\operatorname{sign}, \log\lvert\det A\rvert)$, packed along a last dim of 2.  The sign is
    piecewise constant (no gradient);
    $d \log\lvert\det A\rvert = \operatorname{tr}(\operatorname{adj}(A)\, dA) / \det A$, which is
    $\operatorname{tr}(A^{-1} dA)$, so

    $$
    g_A = g A^{-\top} = g\, U \operatorname{diag}(1 / s)\, V^\top
    \qquad (A = U S V^\top;\ \infty \text{ where } A \text{ is singular})
    $$
    """

    def forward(self, a):
        xp = self.xp
        sign, logabs = backend.linalg(xp, "slogdet", a)
        self.save_for_backward(a)
        return xp.stack([sign, logabs], axis=-1)

    def backward(self, g):
        (a,) = self.saved
        xp = self.xp
        if a.size == 0:
            return xp.zeros_like(a)
        u, s, vh = backend.svd(xp, a)
        inv_s = xp.where(s == 0, xp.inf, 1 / xp.where(s == 0, 1, s))
        return g[..., 1, None, None] * ((u * inv_s[..., None, :]) @ vh)

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $g_A = g\, U \operatorname{diag}(1 / s)\, V^\top$ with
        $U, s, V^\top$ from a recorded SVD of the input tensor ($\infty$ where $s = 0$, a constant mask;
        the sign's part is 0): a second pass differentiates $A^{-\top}$ through the SVD's backward."""
        a = self.parents[0]
        if a._data.size == 0:
            return graph_constant(g, self.xp.zeros_like(a._data))
        u, s, vh = _svd_graph(a)
        zero = graph_constant(g, s._data == 0)
        inv_s = (1 / s.masked_fill(zero, 1.0)).masked_fill(zero, math.inf)
        return g[..., 1].unsqueeze(-1).unsqueeze(-1) * ((u * inv_s.unsqueeze(-2)) @ vh)


class Cholesky(Function):
    r"""$L$ lower with $L L^\top = A$ ($A$ symmetric positive-definite; only its lower triangle read).

    $dA = dL\, L^\top + L\, dL^\top$, so $L^{-1} dA\, L^{-\top} = L^{-1} dL + (L^{-1} dL)^\top$ with
    $L^{-1} dL$ lower triangular: $L^{-1} dL = \Phi(L^{-1} dA\, L^{-\top})$, $\Phi(X)$ = the lower
    triangle of $X$ with its diagonal halved.  $\Phi$ is its own adjoint (an elementwise mask), so

    $$
    \langle G, dL\rangle = \langle L^\top G, \Phi(L^{-1} dA\, L^{-\top})\rangle
    = \langle L^{-\top} \Phi(L^\top G) L^{-1}, dA\rangle
    $$

    and, $dA$ being symmetric, $g_A$ is the symmetric part: $S = L^{-\top} \Phi(L^\top G) L^{-1}$,
    $g_A = (S + S^\top)/2$ (as PyTorch, which returns the gradient of the symmetric matrix, not of the
    lower triangle).
    """

    def forward(self, a, error):
        xp = self.xp
        lower = backend.linalg(xp, "cholesky", a, error=error)
        self.save_for_backward(lower)
        return lower

    def backward(self, g):
        (lower,) = self.saved
        xp = self.xp
        p = xp.tril(mT(lower) @ g)
        n = p.shape[-1]
        p = p - diag_embed(xp, xp.diagonal(p, axis1=-2, axis2=-1)) / 2 if n else p
        y = triangular_solve(xp, mT(lower), p, upper=True)  # L^-T Phi
        s = mT(triangular_solve(xp, mT(lower), mT(y), upper=True))  # (L^-T (L^-T Phi)^T)^T = L^-T Phi L^-1
        return (s + mT(s)) / 2

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): the same steps with $L$ the output tensor (in the graph):
        $\Phi(L^\top G)$ by recorded matmul, tril and diagonal, the two solves recorded SolveTriangulars,
        then the symmetric part: a second pass differentiates $L$ through Cholesky's own node."""
        lower = z
        p = (lower.mT @ g).tril()
        if p.shape[-1]:
            p = p - _diag_embed_graph(p.diagonal(0, -2, -1)) / 2
        y = SolveTriangular.apply(lower.mT, p, upper=True, unitriangular=False)
        s = SolveTriangular.apply(lower.mT, y.mT, upper=True, unitriangular=False).mT
        return (s + s.mT) / 2


class Eigh(Function):
    r"""$A = V \operatorname{diag}(L)\, V^\top$ ($A$ symmetric, its lower or upper triangle read; $L$
    ascending), packed as $V$ with $L$ as an extra last row: `(..., n + 1, n)`.  Assumes distinct
    eigenvalues.

    Perturbation theory: $dL_i = v_i^\top dA\, v_i$ and $dV = V (F \odot (V^\top dA\, V))$,
    $F_{ij} = 1/(L_j - L_i)$ ($i \ne j$; 0 on the diagonal, $\odot$ the elementwise product).
    With $M = V^\top G_V$:

    $$
    \langle G_L, dL\rangle + \langle G_V, dV\rangle
    = \langle V (\operatorname{diag}(G_L) + F \odot M) V^\top, dA\rangle
    $$

    and, $dA$ being symmetric, the symmetric part: $F$ is antisymmetric, so
    $\operatorname{sym}(F \odot M) = F \odot \operatorname{skew}(M)$:

    $$
    g_A = V \big(\operatorname{diag}(G_L) + \operatorname{skew}(V^\top G_V) / E\big) V^\top,
    \qquad E_{ij} = L_j - L_i \ \ (1 \text{ on the diagonal})
    $$
    """

    def forward(self, a, uplo):
        xp = self.xp
        values, vectors = backend.linalg(xp, "eigh", a, UPLO=uplo)
        self.save_for_backward(values, vectors)
        return xp.concatenate([vectors, values[..., None, :]], axis=-2)

    def backward(self, g):
        values, v = self.saved
        xp = self.xp
        n = values.shape[-1]
        gv, gl = g[..., :n, :], g[..., n, :]
        e = values[..., None, :] - values[..., :, None]
        e = e + xp.eye(n, dtype=e.dtype)  # the diagonal of skew(.) is 0: any nonzero divisor
        inner = diag_embed(xp, gl) + skew(mT(v) @ gv) / e
        return v @ inner @ mT(v)

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): the same formula with $V$ and $L$ read from the output tensor (in
        the graph: a second pass differentiates them through Eigh's own node, distinct eigenvalues
        assumed as there), $E = L_j - L_i$ plus the identity (a constant)."""
        n = z.shape[-1]
        v, values = z[..., :n, :], z[..., n, :]
        gv, gl = g[..., :n, :], g[..., n, :]
        e = values.unsqueeze(-2) - values.unsqueeze(-1) + _eye(g, n)
        m = v.mT @ gv
        inner = _diag_embed_graph(gl) + (m - m.mT) / 2 / e
        return v @ inner @ v.mT


class Eigvalsh(Function):
    r"""$L$, the eigenvalues of a symmetric $A$ (ascending).  $dL_i = v_i^\top dA\, v_i$, so

    $$
    g_A = \sum_i g_i\, v_i v_i^\top = V \operatorname{diag}(g)\, V^\top
    \qquad (\text{repeated eigenvalues are fine here})
    $$
    """

    def forward(self, a, uplo):
        values, vectors = backend.linalg(self.xp, "eigh", a, UPLO=uplo)
        self.save_for_backward(vectors, uplo)  # uplo: for the formula below
        return values

    def backward(self, g):
        v, _ = self.saved
        return (v * g[..., None, :]) @ mT(v)

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $g_A = V \operatorname{diag}(g)\, V^\top$ with $V$ from a recorded
        Eigh of the input tensor (the same factorisation): a second pass differentiates $V$ through
        Eigh's backward."""
        a = self.parents[0]
        n = a.shape[-1]
        v = Eigh.apply(a, uplo=self.saved[1])[..., :n, :]
        return (v * g.unsqueeze(-2)) @ v.mT


class Svdvals(Function):
    r"""$s$, the singular values of $A$ (descending).  With $A = U \operatorname{diag}(s)\, V^\top$
    (thin), $ds_i = u_i^\top dA\, v_i$ (distinct singular values), so

    $$
    g_A = \sum_i g_i\, u_i v_i^\top = U \operatorname{diag}(g)\, V^\top
    $$
    """

    def forward(self, a):
        u, s, vh = backend.svd(self.xp, a)
        self.save_for_backward(u, vh)
        return s

    def backward(self, g):
        u, vh = self.saved
        return (u * g[..., None, :]) @ vh

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $g_A = U \operatorname{diag}(g)\, V^\top$ with $U, V^\top$ from a
        recorded SVD of the input tensor: a second pass differentiates them through SVD's backward."""
        u, _, vh = _svd_graph(self.parents[0])
        return (u * g.unsqueeze(-2)) @ vh


class QR(Function):
    r"""$A = Q R$ ($A$ `(..., m, n)`, $k = \min(m, n)$; $Q$ `(..., m, k)` with orthonormal columns, $R$
    `(..., k, n)` upper triangular), packed as $Q$ and $R$ flattened side by side: `(..., m k + k n)`.
    Assumes full rank ($R$'s diagonal nonzero).

    $m \ge n$: $dA = dQ\, R + Q\, dR$ with $Q^\top dQ$ antisymmetric and $dR\, R^{-1}$ upper triangular.
    The standard derivation (Walter and Lehmann; Seeger et al.) gives, with $M = R G_R^\top - G_Q^\top Q$,

    $$
    g_A = \big(G_Q + Q \operatorname{copyltu}(M)\big) R^{-\top},
    \qquad \operatorname{copyltu}(M) = \operatorname{tril}(M) + \operatorname{tril}(M, -1)^\top
    $$

    ($M$'s lower triangle mirrored onto the upper).
    $m < n$: $A = [X \mid Y]$ with $X$ `(m, m)` $= Q U$ and $Y = Q V$, $R = [U \mid V]$.  $Y$'s change
    enters $Q$ only through $X$, so $g_Y = Q G_V$ and $X$ takes the square case with
    $G_Q + Y G_V^\top$ in place of $G_Q$.
    `mode='r'` ($R$ alone) has no backward, as in PyTorch; nor has `mode='complete'` with $m > n$
    ($Q$'s last $m - n$ columns are not determined by $A$).
    """

    def forward(self, a, mode, r_only=False):
        xp = self.xp
        q, r = backend.linalg(xp, "qr", a, mode=mode)
        self.save_for_backward(q, r, mode, r_only)
        batch = a.shape[:-2]
        flat = [q.reshape(batch + (q.shape[-2] * q.shape[-1],)), r.reshape(batch + (r.shape[-2] * r.shape[-1],))]
        return xp.concatenate(flat, axis=-1)

    def backward(self, g):
        q, r, mode, r_only = self.saved
        xp = self.xp
        m, n = q.shape[-2], r.shape[-1]
        if r_only:
            raise RuntimeError(
                "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."
            )
        if mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        gq = g[..., : q.shape[-2] * q.shape[-1]].reshape(q.shape)
        gr = g[..., q.shape[-2] * q.shape[-1] :].reshape(r.shape)
        if m >= n:
            return qr_backward_tall(xp, q, r, gq, gr)
        u, v = r[..., :, :m], r[..., :, m:]
        gu, gv = gr[..., :, :m], gr[..., :, m:]
        y = q @ v
        gx = qr_backward_tall(xp, q, u, gq + y @ mT(gv), gu)
        return xp.concatenate([gx, q @ gv], axis=-1)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): the formula above with Q and R read from the output tensor (in
        the graph: a second pass differentiates them through this node again), as recorded ops
        (`qr_backward_tall_graph`; a recorded Cat for m < n).  The modes without a backward raise
        the array backward's error."""
        q_a, r_a, mode, r_only = self.saved
        m, n = q_a.shape[-2], r_a.shape[-1]
        if r_only or (mode == "complete" and m > n):
            return self.backward(g._data)  # raises, as the first-order pass does
        nq = q_a.shape[-2] * q_a.shape[-1]
        q, r = z[..., :nq].reshape(q_a.shape), z[..., nq:].reshape(r_a.shape)
        gq, gr = g[..., :nq].reshape(q_a.shape), g[..., nq:].reshape(r_a.shape)
        if m >= n:
            return qr_backward_tall_graph(q, r, gq, gr)
        u, v = r[..., :, :m], r[..., :, m:]
        gu, gv = gr[..., :, :m], gr[..., :, m:]
        gx = qr_backward_tall_graph(q, u, gq + (q @ v) @ gv.mT, gu)
        return Cat.apply(gx, q @ gv, axis=-1)


def qr_backward_tall_graph(q, r, gq, gr):
    """`qr_backward_tall` with Tensors: recorded matmuls, tril and a SolveTriangular."""
    m_ = r @ gr.mT - gq.mT @ q
    copyltu = m_.tril() + m_.tril(-1).mT
    b = gq + q @ copyltu
    return SolveTriangular.apply(r, b.mT, upper=True, unitriangular=False).mT


def qr_backward_tall(xp, q, r, gq, gr):
    r"""$g_A$ of $A = Q R$ for $m \ge n$ (see QR)."""
    m_ = r @ mT(gr) - mT(gq) @ q
    copyltu = xp.tril(m_) + mT(xp.tril(m_, -1))
    b = gq + q @ copyltu
    return mT(triangular_solve(xp, r, mT(b), upper=True))  # B R^-T = (R^-1 B^T)^T


class Pinv(Function):
    r"""$X = A^+$, the Moore-Penrose pseudo-inverse ($A$ `(..., m, n)`): from the SVD, the singular
    values above $\max(\mathtt{atol}, \mathtt{rtol} \cdot s_{\max})$ inverted, the others dropped.
    Where the rank stays constant (Golub and Pereyra),

    $$
    dX = -X\, dA\, X + X X^\top dA^\top (I - A X) + (I - X A)\, dA^\top X^\top X
    $$

    and reading each term off with $\langle G, \cdot\rangle$:

    $$
    g_A = -X^\top G X^\top + (I - A X)\, G^\top X X^\top + X^\top X\, G^\top (I - X A)
    $$

    With `hermitian`, $X$ is the pseudo-inverse of the symmetric matrix of $A$'s lower triangle, and
    $g_A$ is the formula above with that $X$ and $A$ itself, as PyTorch's (for a symmetric $A$, the
    usual case, it is the gradient; PyTorch's own tests call it on symmetrized inputs only).
    """

    def forward(self, a, atol, rtol, hermitian=False):
        xp = self.xp
        sym = xp.tril(a) + mT(xp.tril(a, -1)) if hermitian else a  # hermitian: the lower triangle read
        u, s, vh = backend.svd(xp, sym)
        if s.shape[-1]:
            cutoff = xp.maximum(atol, rtol * s.max(axis=-1, keepdims=True))
        else:
            cutoff = s
        keep = s > cutoff
        inv_s = xp.where(keep, 1 / xp.where(keep, s, 1), 0)
        x = (mT(vh) * inv_s[..., None, :]) @ mT(u)
        self.save_for_backward(a, x)
        return x

    def backward(self, g):
        a, x = self.saved
        xp = self.xp
        m, n = a.shape[-2], a.shape[-1]
        eye_m, eye_n = xp.eye(m, dtype=a.dtype), xp.eye(n, dtype=a.dtype)
        gt = mT(g)
        return -mT(x) @ g @ mT(x) + (eye_m - a @ x) @ gt @ x @ mT(x) + mT(x) @ x @ gt @ (eye_n - x @ a)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): the same three terms with the input tensor $A$ and $X$ the output
        tensor (in the graph), the identities constants: a second pass differentiates $X$ through
        Pinv's own node (constant rank)."""
        a, x = self.parents[0], z
        eye_m, eye_n = _eye(g, a.shape[-2]), _eye(g, a.shape[-1])
        gt = g.mT
        return -x.mT @ g @ x.mT + (eye_m - a @ x) @ gt @ x @ x.mT + x.mT @ x @ gt @ (eye_n - x @ a)


class CholeskySolve(Function):
    r"""$X = A^{-1} B$ from $A$'s Cholesky factor: $A = L L^\top$ (lower) or $U^\top U$ (upper), only the
    factor's triangle read.  Two triangular solves forward.  As for Solve, $g_B = A^{-1} G$ (two more)
    and $g_A = -g_B X^\top$; $A$ is a product of the factor, and $dA = dL\, L^\top + L\, dL^\top$ gives

    $$
    \langle g_A, dA\rangle = \langle (g_A + g_A^\top) L, dL\rangle:
    \qquad g_L = (g_A + g_A^\top) L \qquad (\text{upper: } g_U = U (g_A + g_A^\top))
    $$

    over the whole factor, as PyTorch's (whose gradient is not restricted to the triangle read),
    L there the input as given, its unread triangle included (PyTorch's formula multiplies by it).
    """

    def forward(self, b, factor, upper):
        xp = self.xp
        triangle = tri(xp, factor, upper)
        x = self.solve(triangle, b, upper)
        self.save_for_backward(triangle, factor, x, upper)
        return x

    def solve(self, factor, b, upper):
        lower = mT(factor) if upper else factor
        y = triangular_solve(self.xp, lower, b, upper=False)  # L Y = B
        return triangular_solve(self.xp, mT(lower), y, upper=True)  # L^T X = Y

    def backward(self, g):
        triangle, factor, x, upper = self.saved
        gb = self.solve(triangle, g, upper)
        if not self.needs_grad(1):
            return gb, None
        ga = -gb @ mT(x)
        sym = ga + mT(ga)
        return gb, (factor @ sym if upper else sym @ factor)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): the same with gB a recorded CholeskySolve of G (so a second
        pass differentiates it through this very formula, the factor's whole gradient included, as
        PyTorch's differentiates its cholesky_solve), the factor the input tensor as given and X the
        output tensor."""
        upper = self.saved[3]
        f = self.parents[1]
        gb = CholeskySolve.apply(g, f, upper=upper)
        if not self.needs_grad(1):
            return gb, None
        ga = -gb @ z.mT
        sym = ga + ga.mT
        return gb, (f @ sym if upper else sym @ f)


class SVD(Function):
    r"""$A = U \operatorname{diag}(S)\, V^\top$ ($A$ `(..., m, n)`, $k = \min(m, n)$; $S$ descending),
    packed as $U$, $S$ and $V^\top$ flattened side by side.  Assumes distinct, nonzero singular values
    (the gradient through $U$ and $V$ has $1 / (s_j^2 - s_i^2)$ and $1 / s_i$ in it); the signs of
    $u_i, v_i$ are LAPACK's.

    Perturbing $A$ (thin $U$ `(m, k)`, $V$ `(n, k)`), with $F_{ij} = 1 / (s_j^2 - s_i^2)$ ($i \ne j$),
    $J = U^\top g_U$, $K = V^\top g_V$, and $\operatorname{skew}(X) = X - X^\top$ (the standard
    derivation, e.g. Townsend's notes):

    $$
    \begin{aligned}
    g_A ={}& U \big[ (F \odot \operatorname{skew}(J)) S + \operatorname{diag}(g_S)
      + S (F \odot \operatorname{skew}(K)) \big] V^\top \\
    &+ (I - U U^\top)\, g_U S^{-1} V^\top && (m > k\text{: the part of } g_U
      \text{ outside } U\text{'s columns}) \\
    &+ U S^{-1} g_V^\top (I - V V^\top) && (n > k\text{: likewise for } V)
    \end{aligned}
    $$

    ($g_V = g_{V^\top}^\top$.)  With `full_matrices`, the columns of $U$ (or $V$) past $k$ are not
    determined by $A$: only the first $k$ take part, as in PyTorch.  With no gradient through $U$ and
    $V$ this is $U \operatorname{diag}(g_S)\, V^\top$.
    """

    def forward(self, a, full_matrices):
        xp = self.xp
        u, s, vh = backend.linalg(xp, "svd", a, full_matrices=full_matrices)
        self.save_for_backward(u, s, vh)
        batch = a.shape[:-2]
        parts = [u, s, vh]
        return xp.concatenate([p.reshape(batch + (math.prod(p.shape[len(batch) :]),)) for p in parts], axis=-1)

    def backward(self, g):
        u, s, vh = self.saved
        xp = self.xp
        m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
        nu, ns = u.shape[-2] * u.shape[-1], k
        gu = g[..., :nu].reshape(u.shape)[..., :, :k]
        gs = g[..., nu : nu + ns]
        gvh = g[..., nu + ns :].reshape(vh.shape)[..., :k, :]
        u, vh = u[..., :, :k], vh[..., :k, :]
        v, gv = mT(vh), mT(gvh)
        s2 = s * s
        e = s2[..., None, :] - s2[..., :, None] + xp.eye(k, dtype=s.dtype)  # s_j^2 - s_i^2, 1 on the diagonal
        j, kk = mT(u) @ gu, mT(v) @ gv
        with backend.quiet():  # repeated or zero singular values: NaN / inf, as PyTorch's (silently)
            inner = ((j - mT(j)) * s[..., None, :] + s[..., :, None] * (kk - mT(kk))) / e + diag_embed(xp, gs)
            ga = u @ inner @ vh
            if m > k:
                gu_s = gu / s[..., None, :]
                ga = ga + (gu_s - u @ (mT(u) @ gu_s)) @ vh
            elif n > k:
                gv_s = gv / s[..., None, :]
                ga = ga + u @ mT(gv_s - v @ (mT(v) @ gv_s))
        return ga

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): the formula above with $U, S, V^\top$ read from the output tensor
        (in the graph: a second pass differentiates them through this node again, and this formula
        at the next order), the identity a constant.  Distinct, nonzero singular values, as above."""
        u_a, s_a, vh_a = self.saved
        m, n, k = u_a.shape[-2], vh_a.shape[-1], s_a.shape[-1]
        nu, ns = u_a.shape[-2] * u_a.shape[-1], k
        u = z[..., :nu].reshape(u_a.shape)[..., :, :k]
        sv = z[..., nu : nu + ns]
        vh = z[..., nu + ns :].reshape(vh_a.shape)[..., :k, :]
        gu = g[..., :nu].reshape(u_a.shape)[..., :, :k]
        gs = g[..., nu : nu + ns]
        gvh = g[..., nu + ns :].reshape(vh_a.shape)[..., :k, :]
        v, gv = vh.mT, gvh.mT
        s2 = sv * sv
        e = s2.unsqueeze(-2) - s2.unsqueeze(-1) + _eye(g, k)
        j, kk = u.mT @ gu, v.mT @ gv
        inner = ((j - j.mT) * sv.unsqueeze(-2) + sv.unsqueeze(-1) * (kk - kk.mT)) / e + _diag_embed_graph(gs)
        ga = u @ inner @ vh
        if m > k:
            gu_s = gu / sv.unsqueeze(-2)
            ga = ga + (gu_s - u @ (u.mT @ gu_s)) @ vh
        elif n > k:
            gv_s = gv / sv.unsqueeze(-2)
            ga = ga + u @ (gv_s - v @ (v.mT @ gv_s)).mT
        return ga
