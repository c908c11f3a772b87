"""einsum, whose backward is itself an einsum."""

from __future__ import annotations

from .. import backend
from ..autograd import Function
from .scan import widened
from .shape import IndexBackward


class Einsum(Function):
    r"""$z$ = `einsum("A,B,C->O", a, b, c)`: $z[O] = \sum_{\text{labels not in } O} a[A]\, b[B]\, c[C]$.

    (The equation arrives explicit: every "..." spelled out as letters, the output given.)
    $z$ is linear in each operand, and $\partial z[O]/\partial a[A]$ = the product of the others,
    $b[B]\, c[C]$, summed over the labels that are in neither $A$ nor $O$.  So the gradient of an
    operand contracts the output gradient with the other operands:

    $$
    da[A] = \mathrm{einsum}(\texttt{"O,B,C->A"}, g, b, c)
    $$

    Three details make that one line exact:

    - a label that appears only in $A$ (summed away in the forward, e.g. $j$ in "ij->i") is absent
      from the right-hand side, and $da$ does not depend on it: compute without it, then
      broadcast $da$ along it;
    - a repeated label in $A$ ("ii->i" reads a diagonal) means only the diagonal of $a$ is used:
      compute $da$ over the distinct labels, then write it onto the diagonal of zeros;
    - a size-1 axis of $a$ that broadcast against a longer one (size $n$ in the others) gets
      the gradient summed over the $n$ copies.

    float16 operands are computed in float32 (`backend.widen`) and the results rounded once, as
    PyTorch's: NumPy's einsum of float16 would add the terms of a sum in float16.
    """

    def forward(self, *operands, terms, output):
        self.save_for_backward(operands, terms, output)
        wide = [backend.widen(o) for o in operands]
        z = self.xp.einsum(",".join(terms) + "->" + output, *wide, optimize=True)
        return backend.narrow(backend.ensure_array(self.xp, z), operands[0].dtype)  # the operands share a dtype

    def backward(self, g):
        operands, terms, output = self.saved
        g, wide = backend.widen(g), [backend.widen(o) for o in operands]
        return tuple(
            backend.narrow(self._operand_grad(g, i, wide, terms, output), operands[i].dtype)
            if self.needs_grad(i)
            else None
            for i in range(len(operands))
        )

    def _operand_grad(self, g, i, operands, terms, output):
        xp = self.xp
        term, x = terms[i], operands[i]
        others = [(terms[k], operands[k]) for k in range(len(operands)) if k != i]
        labels = "".join(dict.fromkeys(term))  # distinct labels of A, in order
        present = set(output).union(*(t for t, _ in others))
        kept = "".join(c for c in labels if c in present)
        equation = ",".join([output] + [t for t, _ in others]) + "->" + kept
        d = xp.einsum(equation, g, *[o for _, o in others], optimize=True)  # da over `kept`
        # labels only in A: a new axis of size 1 (broadcast below)
        d = d.reshape(tuple(d.shape[kept.index(c)] if c in kept else 1 for c in labels))
        size = {c: x.shape[term.index(c)] for c in labels}
        for axis, c in enumerate(labels):  # reconcile broadcast axes with A's sizes
            if d.shape[axis] != size[c] and size[c] == 1:
                d = backend.sum(xp, d, axis, keepdims=True)
        d = xp.broadcast_to(d, tuple(size[c] for c in labels))
        if len(labels) == len(term):
            return xp.ascontiguousarray(d)
        dx = xp.zeros(x.shape, dtype=g.dtype)  # repeated labels: onto the diagonal
        k = len(labels)
        grid = [xp.arange(size[c]).reshape((1,) * a + (-1,) + (1,) * (k - a - 1)) for a, c in enumerate(labels)]
        dx[tuple(grid[labels.index(c)] for c in term)] = d
        return dx

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): each operand's gradient as above, with Tensor ops: the
        contraction a recorded Einsum of $g$ and the other operand tensors (so a second pass sees
        $\partial(da)/\partial g$ = the others, $\partial(da)/\partial b = g$ and the rest: an einsum
        again), the reshape, the sums over broadcast axes and the broadcast recorded, and the write
        onto a diagonal a recorded IndexBackward (distinct places: the same values as the
        assignment).  Widened, cast back."""
        terms, output = self.saved[1], self.saved[2]
        dtype = g.dtype
        g, operands = widened(g), [widened(o) for o in self.parents]
        grads = []
        for i in range(len(operands)):
            if not self.needs_grad(i):
                grads.append(None)
                continue
            d = self._operand_grad_graph(g, i, operands, terms, output)
            grads.append(d if d.dtype == dtype else d.to(dtype))
        return tuple(grads)

    def _operand_grad_graph(self, g, i, operands, terms, output):
        xp = self.xp
        term, x = terms[i], operands[i]
        others = [(terms[k], operands[k]) for k in range(len(operands)) if k != i]
        labels = "".join(dict.fromkeys(term))
        present = set(output).union(*(t for t, _ in others))
        kept = "".join(c for c in labels if c in present)
        d = Einsum.apply(g, *[o for _, o in others], terms=[output] + [t for t, _ in others], output=kept)
        d = d.reshape(tuple(d.shape[kept.index(c)] if c in kept else 1 for c in labels))
        size = {c: x.shape[term.index(c)] for c in labels}
        for axis, c in enumerate(labels):
            if d.shape[axis] != size[c] and size[c] == 1:
                d = d.sum(axis, keepdim=True)
        d = d.expand(*(size[c] for c in labels))
        if len(labels) == len(term):
            return d
        k = len(labels)
        grid = [xp.arange(size[c]).reshape((1,) * a + (-1,) + (1,) * (k - a - 1)) for a, c in enumerate(labels)]
        index = tuple(grid[labels.index(c)] for c in term)
        return IndexBackward.apply(d, shape=tuple(x.shape), index=index, advanced=True)
