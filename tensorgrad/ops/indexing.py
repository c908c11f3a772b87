r"""Ops that read or write elements at integer positions: gather, scatter, index_select, index_put.

The one rule behind every backward here: an output element that is a copy of an input
element sends its gradient back to that element, and when several outputs copy the same
element (a repeated index) their gradients add up.  So the adjoint of a gather is a
scatter-*add* of the output gradient, done by `backend.add_at` (repeats accumulate), and
the adjoint of a scatter is a gather of the output gradient.

`along(xp, index, dim)` spells "index along dim" as NumPy advanced indexing: position $p$ of
`index` addresses $x$ at $p$ with coordinate `dim` replaced by `index[p]`,

$$
\begin{aligned}
\text{gather:}&\quad z_{ijk} = x_{i,\ \mathrm{index}_{ijk},\ k} && (\mathtt{dim} = 1) \\
\text{scatter:}&\quad z_{i,\ \mathrm{index}_{ijk},\ k} = \mathrm{src}_{ijk}
\end{aligned}
$$
"""

from __future__ import annotations

from .. import backend
from ..autograd import Function
from ..graph_walk import graph_constant
from .masking import Where
from .shape import Index, IndexBackward


def along(xp, index, dim):
    r"""The advanced index $(r_0, \dots, \mathrm{index}, \dots, r_n)$ with $r_a$ = arange over axis
    $a$ of `index`."""
    parts = []
    for a, n in enumerate(index.shape):
        parts.append(index if a == dim else xp.arange(n).reshape((n,) + (1,) * (index.ndim - a - 1)))
    return tuple(parts)


def leading(index_shape):
    """The slice of `src` that scatter reads: `src[:index.shape[0], :index.shape[1], ...]`."""
    return tuple(slice(0, n) for n in index_shape)


def scatter_reduce_at(xp, target, index, values, reduce):
    """`target[index] = reduce(target[index], values)`, repeated indices combining (unbuffered).

    `reduce` is "sum", "prod", "amax" or "amin".  Every device has an unbuffered sum, max and min
    (`backend.reduce_at`: `ufunc.at` on the host, `cupyx.scatter_*` on CuPy); CuPy has no unbuffered
    product, so there it is done in rounds (`multiply_at_in_rounds`).
    """
    if backend.has_reduce_at(xp, reduce):
        return backend.reduce_at(xp, target, index, values, reduce)
    return multiply_at_in_rounds(xp, target, index, values)


def multiply_at_in_rounds(xp, target, index, values):
    r"""`target[index] *= values` with repeated indices all multiplied in, from buffered updates only.

    A plain fancy-indexed update `view[flat] *= vals` is buffered: when a position appears twice
    in `flat`, only one of its values is applied.  So the updates are split into rounds in which
    no position appears twice.  Number the occurrences of each target position in index order,
    0, 1, 2, ... (its rank); round $k$ multiplies in every occurrence of rank $k$:

    $$
    \mathrm{target}_p \leftarrow (((\mathrm{target}_p \cdot v_0) \cdot v_1) \cdots v_m)
    \qquad \text{for } p\text{'s values } v_0, \dots, v_m
    $$

    Each round is exact, and the product is taken in index order, as ufunc.at takes it.  The ranks
    come from a stable sort of the flat positions: rank = place in the sorted order - place of the
    position's first occurrence (searchsorted, side="left").  As many rounds as the most repeated
    position has values.
    """
    positions = xp.arange(target.size).reshape(target.shape)[index]  # target is contiguous: reshape is a view
    flat, vals = positions.reshape(-1), xp.broadcast_to(values, positions.shape).reshape(-1)
    order = xp.argsort(flat, kind="stable")
    flat, vals = flat[order], vals[order]
    first = xp.searchsorted(flat, flat, side="left")
    rank = xp.arange(flat.size) - first  # occurrence number of each position
    view = target.reshape(-1)
    for k in range(int(rank.max()) + 1 if flat.size else 0):
        sel = rank == k
        view[flat[sel]] *= vals[sel]
    return target


class Gather(Function):
    r"""$z$ = `x[along(index, dim)]` ($z_{ijk} = x_{i,\ \mathrm{index}_{ijk},\ k}$ for `dim = 1`).

    Each $z$ element is one $x$ element: $dx$ = `zeros_like(x)`; `dx[along(index, dim)] += g`
    (a scatter-add: an $x$ element gathered twice receives both gradients).
    """

    def forward(self, x, index, dim):
        idx = along(self.xp, index, dim)
        self.save_for_backward(x.shape, x.dtype, idx)
        return x[idx]

    def backward(self, g):
        shape, dtype, idx = self.saved
        dx = self.xp.zeros(shape, dtype=dtype)
        backend.add_at(self.xp, dx, idx, g)
        return dx, None

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): $dx$ = the scatter-add of $g$ at the gathered places, a recorded
        IndexBackward (whose adjoint is a gather again): linear in $g$, free of $x$."""
        shape, _, idx = self.saved
        return IndexBackward.apply(g, shape=shape, index=idx, advanced=True), None


class IndexSelect(Function):
    """$z$ = `x.take(index, axis=dim)`: whole slices of $x$ along `dim`, picked by a 1-d index.

    $dx$ = `zeros_like(x)`; `dx[..., index, ...] += g` (slices picked twice add their gradients).
    """

    def forward(self, x, index, dim):
        self.save_for_backward(x.shape, x.dtype, index, dim)
        return self.xp.take(x, index, axis=dim)

    def backward(self, g):
        shape, dtype, index, dim = self.saved
        dx = self.xp.zeros(shape, dtype=dtype)
        backend.add_at(self.xp, dx, (slice(None),) * dim + (index,), g)
        return dx, None

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): $dx$ = the scatter-add of $g$'s slices at `index`, a recorded
        IndexBackward: linear in $g$, free of $x$."""
        shape, _, index, dim = self.saved
        return IndexBackward.apply(g, shape=shape, index=(slice(None),) * dim + (index,), advanced=True), None


def _into_src(g, idx, src_shape, index_shape):
    r"""$d\mathrm{src}$ = `zeros(src_shape)` with `g[idx]` in its leading `index_shape` block, as recorded
    ops: an Index (the gather) and, when `src` is larger than `index`, an IndexBackward writing the
    block."""
    part = Index.apply(g, index=idx, advanced=True)
    if tuple(src_shape) == tuple(index_shape):
        return part
    return IndexBackward.apply(part, shape=src_shape, index=leading(index_shape), advanced=False)


class Scatter(Function):
    """$z = x$, then `z[along(index, dim)] = src` (`src` cut to `index`'s shape, or one number).

    The overwritten places of $z$ no longer depend on $x$, and each written element is one `src`
    element:

    - $dx = g$ with `g[along(index, dim)] = 0`;
    - `dsrc[:index.shape] = g[along(index, dim)]` (zero beyond `index`'s shape).

    With a repeated index the last write wins and PyTorch leaves the order undefined; the
    gradient, like PyTorch's, is the gather above for every src element.
    """

    def forward(self, x, index, src, dim):
        idx = along(self.xp, index, dim)
        is_array = not isinstance(src, (bool, int, float))
        self.save_for_backward(idx, src.shape if is_array else None, index.shape)
        out = x.copy()
        out[idx] = src[leading(index.shape)] if is_array else src
        return out

    def backward(self, g):
        idx, src_shape, index_shape = self.saved
        dx = g.copy()
        dx[idx] = 0
        dsrc = None
        if src_shape is not None:
            dsrc = self.xp.zeros(src_shape, dtype=g.dtype)
            dsrc[leading(index_shape)] = g[idx]
        return dx, None, dsrc

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $dx = g$ with the written places 0 (a recorded MaskedFill, the
        mask a constant), $d\mathrm{src}$ = $g$ read at the written places into `src`'s shape
        (`_into_src`): linear in $g$, free of $x$ and `src`."""
        idx, src_shape, index_shape = self.saved
        written = self.xp.zeros(g.shape, dtype=bool)
        written[idx] = True
        dx = g.masked_fill(graph_constant(g, written), 0.0)
        dsrc = _into_src(g, idx, src_shape, index_shape) if src_shape is not None else None
        return dx, None, dsrc


class ScatterAdd(Function):
    """$z = x$, then `z[along(index, dim)] += src` (repeats accumulate).

    $z$ is $x$ plus sums of `src` elements: $dx = g$; `dsrc[:index.shape] = g[along(index, dim)]`.
    """

    def forward(self, x, index, src, dim):
        idx = along(self.xp, index, dim)
        self.save_for_backward(idx, src.shape, index.shape)
        out = x.copy()
        backend.add_at(self.xp, out, idx, src[leading(index.shape)])
        return out

    def backward(self, g):
        idx, src_shape, index_shape = self.saved
        dsrc = self.xp.zeros(src_shape, dtype=g.dtype)
        dsrc[leading(index_shape)] = g[idx]
        return g, None, dsrc

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $dx = g$, $d\mathrm{src}$ = $g$ read at the places added to, into
        `src`'s shape (`_into_src`): linear in $g$."""
        idx, src_shape, index_shape = self.saved
        return g, None, _into_src(g, idx, src_shape, index_shape)


class ScatterReduce(Function):
    r"""$z_p$ = `reduce` over the group of position $p$: $x_p$ (if `include_self`) and every `src`
    element scattered to $p$ (`src[q]` with `along(index, dim)[q] == p`).  Positions no `src` reaches
    keep $x_p$.

    `reduce` is "sum", "prod", "mean", "amax" or "amin".  With $G_p$ the group and
    $g = \partial L/\partial z$:

    - sum: $\partial L/\partial e = g_p$ for every $e \in G_p$;
    - mean: $\partial L/\partial e = g_p / \lvert G_p\rvert$;
    - amax / amin: $\partial L/\partial e = g_p / (\text{number of members equal to } z_p)$ if
      $e = z_p$, else 0 (ties share the gradient evenly, as PyTorch does);
    - prod: $\partial L/\partial e = g_p \cdot (\text{product of the other members of } G_p)$,
      computed without dividing by zero: with $P$ = product of the nonzero members and $Z$ = number
      of zeros, the product of the others is $P / e$ if $Z = 0$; $P$ if $Z = 1$ and $e = 0$; else 0.

    $x_p$ is a member only with `include_self`; when it is not, $dx_p = 0$ at reached positions
    and $g_p$ elsewhere ($z_p = x_p$ there).
    """

    def forward(self, x, index, src, dim, reduce, include_self):
        xp = self.xp
        idx = along(xp, index, dim)
        s = src[leading(index.shape)]
        reached = xp.zeros(x.shape, dtype=bool)
        reached[idx] = True
        count = xp.zeros(x.shape, dtype=x.dtype)  # |G_p|
        backend.add_at(xp, count, idx, xp.ones(index.shape, dtype=x.dtype))
        if include_self:
            count += 1
        pz = None
        if reduce == "prod":
            out, pz = self._prod_forward(x, idx, s, reached, include_self)
        else:
            op = "sum" if reduce == "mean" else reduce
            identity = {"sum": 0, "amax": -xp.inf, "amin": xp.inf}[op]
            out = x.copy() if include_self else xp.where(reached, xp.asarray(identity, dtype=x.dtype), x)
            scatter_reduce_at(xp, out, idx, s, op)
            if reduce == "mean":
                out = xp.where(reached, out / xp.maximum(count, 1), x)
        self.save_for_backward(x, s, idx, src.shape, index.shape, out, reached, count, reduce, include_self, pz, dim)
        return out

    def _prod_forward(self, x, idx, s, reached, include_self):
        xp = self.xp
        one = xp.ones((), dtype=x.dtype)
        # P and Z of the docstring, kept for the backward
        nonzero_prod = xp.where(x == 0, one, x) if include_self else xp.where(reached, one, x)
        zeros = (x == 0).astype(x.dtype) if include_self else xp.zeros(x.shape, dtype=x.dtype)
        zeros = backend.ensure_array(xp, zeros)  # 0-d: NumPy's == gives a scalar, add_at needs an array
        scatter_reduce_at(xp, nonzero_prod, idx, xp.where(s == 0, one, s), "prod")
        backend.add_at(xp, zeros, idx, (s == 0).astype(x.dtype))
        return xp.where(zeros > 0, xp.zeros((), dtype=x.dtype), nonzero_prod), (nonzero_prod, zeros)

    def backward(self, g):
        xp = self.xp
        x, s, idx, src_shape, index_shape, out, reached, count, reduce, include_self, pz, _ = self.saved
        if reduce == "sum":
            dx, ds = g, g[idx]
        elif reduce == "mean":
            gm = g / xp.maximum(count, 1)
            dx, ds = (gm if include_self else g), gm[idx]
        elif reduce in ("amax", "amin"):
            x_wins = (x == out) & (include_self | ~reached)  # x[p] is a member equal to z[p]
            s_wins = s == out[idx]
            winners = backend.ensure_array(xp, x_wins.astype(g.dtype))  # 0-d: NumPy's == gives a scalar
            backend.add_at(xp, winners, idx, s_wins.astype(g.dtype))
            share = g / xp.maximum(winners, 1)
            dx, ds = share * x_wins, share[idx] * s_wins
        else:
            nonzero_prod, zeros = pz
            zero = xp.zeros((), dtype=g.dtype)

            def others(e, p, z):  # the product of the other members, for member e of a group (P, Z)
                safe = xp.where(e == 0, xp.ones((), dtype=g.dtype), e)
                return xp.where(z == 0, p / safe, xp.where((z == 1) & (e == 0), p, zero))

            dx = g * others(x, nonzero_prod, zeros)
            ds = g[idx] * others(s, nonzero_prod[idx], zeros[idx])
        if not include_self:
            dx = xp.where(reached, xp.zeros((), dtype=g.dtype), g)
        dsrc = xp.zeros(src_shape, dtype=g.dtype)
        dsrc[leading(index_shape)] = ds
        return dx, None, dsrc

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): the backward above with Tensor ops.  sum, mean: $g$ (or
        $g / \lvert G\rvert$, the count a constant) and its recorded read at the scattered places; amax,
        amin: $g$ times the constant tie-sharing weights (piecewise constant: $\partial/\partial x = 0$,
        as PyTorch's).  prod: the product of the other members is $P / e$ where the group has no zero,
        $P$ where $e$ is its one zero, 0 else, with $P$ (the product of the nonzero members) a recorded
        `ScatterReduce("prod")` of $x$ and `src` with their zeros set to 1 (the same products in the
        same order, so the same values; this formula again at the next order) and $e$ the input
        tensors: a second pass sees $\partial(dx)/\partial\mathrm{src}$ and
        $\partial(d\mathrm{src})/\partial\mathrm{src}$ through $P$.  A 0 there still has a derivative:
        with $M$ the sum of the group's zero members (a recorded `ScatterReduce("sum")`: 0 in value,
        $\partial/\partial m = 1$ for each zero member $m$), the product of the others of a nonzero $e$
        in a group with one zero is $(P / e)\, M$, and of a zero $e$ in a group with two zeros
        $P\,(M - e)$ (the other zero); with more zeros it is 0 to first order.  (Where $P / e$ or $P$
        is not finite the 0 is a constant, the array backward's.)  The masks (reached, the zeros) are
        constants."""
        xp = self.xp
        xa, sa, idx, src_shape, index_shape, out, reached, count, reduce, include_self, pz, dim = self.saved
        x, index, src = self.parents[:3]
        const = lambda array: graph_constant(g, xp.asarray(array, dtype=g._data.dtype))  # noqa: E731
        mask = lambda array: graph_constant(g, xp.asarray(array, dtype=bool))  # noqa: E731
        at = lambda t: Index.apply(t, index=idx, advanced=True)  # noqa: E731
        if reduce == "sum":
            dx, ds = g, at(g)
        elif reduce == "mean":
            gm = g / const(xp.maximum(count, 1))
            dx, ds = (gm if include_self else g), at(gm)
        elif reduce in ("amax", "amin"):
            x_wins = (xa == out) & (include_self | ~reached)
            s_wins = sa == out[idx]
            winners = backend.ensure_array(xp, x_wins.astype(g._data.dtype))
            backend.add_at(xp, winners, idx, s_wins.astype(g._data.dtype))
            share = g / const(xp.maximum(winners, 1))
            dx, ds = share * const(x_wins), at(share) * const(s_wins)
        else:
            zeros = pz[1]
            s_t = src if tuple(src_shape) == tuple(index_shape) else src[leading(index_shape)]
            x_nz, s_nz = x.masked_fill(mask(xa == 0), 1.0), s_t.masked_fill(mask(sa == 0), 1.0)
            p = ScatterReduce.apply(x_nz, index, s_nz, dim=dim, reduce="prod", include_self=include_self)
            # M: the sum of the group's zero members (0 in value, d/dm = 1 for each zero member m)
            x_z, s_z = x.masked_fill(mask(xa != 0), 0.0), s_t.masked_fill(mask(sa != 0), 0.0)
            m = ScatterReduce.apply(x_z, index, s_z, dim=dim, reduce="sum", include_self=include_self)

            def others(e, ea, p, pa, z, m):  # as the array backward's, with the tensor e, P and M
                safe = e.masked_fill(mask(ea == 0), 1.0)
                with backend.quiet():
                    finite_q = xp.isfinite(pa / xp.where(ea == 0, 1, ea))
                zero = const(xp.zeros(p.shape))
                two = Where.apply(mask((z == 2) & (ea == 0) & xp.isfinite(pa)), p * (m - e), zero)
                one_other = Where.apply(mask((z == 1) & (ea != 0) & finite_q), p / safe * m, two)
                inner = Where.apply(mask((z == 1) & (ea == 0)), p, one_other)
                return Where.apply(mask(z == 0), p / safe, inner)

            pa = pz[0]
            dx = g * others(x, xa, p, pa, zeros, m)
            ds = at(g) * others(s_t, sa, at(p), pa[idx], zeros[idx], at(m))
        if not include_self:
            dx = g.masked_fill(mask(reached), 0.0)
        if tuple(src_shape) != tuple(index_shape):
            ds = IndexBackward.apply(ds, shape=src_shape, index=leading(index_shape), advanced=False)
        return dx, None, ds


class IndexPutAccumulate(Function):
    """$z = x$, then `z[index] += v` (`index_put(..., accumulate=True)`: NumPy advanced indexing, $v$
    broadcast to `x[index]`'s shape, repeated positions accumulating: `backend.add_at`).

    $z$ is $x$ plus sums of $v$ elements: $dx = g$; $dv$ = `g[index]` (summed back to $v$'s shape by
    the engine).
    """

    def forward(self, x, v, index):
        xp = self.xp
        self.save_for_backward(index, v.ndim)
        out = x.copy()
        backend.add_at(xp, out, index, xp.broadcast_to(v, out[index].shape))
        return out

    def backward(self, g):
        index, v_ndim = self.saved
        dv = g[index] if self.needs_grad(1) else None
        if dv is not None and dv.ndim < v_ndim:  # v may carry extra leading 1s
            dv = dv.reshape((1,) * (v_ndim - dv.ndim) + dv.shape)
        return g, dv

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): $dx = g$, $dv$ = `g[index]` (a recorded Index; the engine sums it
        back to $v$'s shape with recorded ops): linear in $g$."""
        index, v_ndim = self.saved
        dv = Index.apply(g, index=index, advanced=True) if self.needs_grad(1) else None
        if dv is not None and dv.ndim < v_ndim:
            dv = dv.reshape((1,) * (v_ndim - dv.ndim) + tuple(dv.shape))
        return g, dv
