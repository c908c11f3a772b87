"""tg.* functions of linear algebra written out: einsum (one op, ops/einsum.py) and tensordot.
The products that only call their Tensor method (matmul, mm, bmm, mv, dot, outer, kron, addmm,
baddbmm, addcmul, ..., trace, cross, norm, dist; tensor_methods/linalg.py) are generated
(forwarders.py).  The decompositions are tg.linalg's (tensorgrad/linalg/)."""

from __future__ import annotations

import builtins  # tg.functions defines max, min, all, ... as PyTorch does: builtins.X is the built-in one

from ..backend import ShapeError
from ..ops.einsum import Einsum
from ..tensor import Tensor
from ..tensor_methods.linalg import tensordot as _tensordot
from .common import _same_kind

# ---------------------------------------------------------------- einsum


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def einsum(equation: str, *operands) -> Tensor:
    """Sum of products over labelled axes, e.g. einsum("bij,bjk->bik", a, b); "..." and the implicit
    output (the labels seen once, sorted) as in PyTorch.  One op (ops/einsum.py), whose backward is an
    einsum per operand."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum: expected at least one operand")
    operands = _same_kind(operands, "einsum")
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum: the equation {equation!r} has {len(terms)} operands, got {len(operands)} tensors")
    free = [c for c in _LETTERS if c not in eq]
    dims_under_ellipsis = (t.ndim - len(term.replace("...", "")) for term, t in zip(terms, operands) if "..." in term)
    n_ellipsis = builtins.max(dims_under_ellipsis, default=0)
    spelled = []
    for term, t in zip(terms, operands):
        letters = term.replace("...", "")
        if not builtins.all(c in _LETTERS for c in letters) or term.count("...") > 1:
            raise ValueError(f"einsum: invalid subscript {term!r} in {equation!r} (letters and one '...' only)")
        k = t.ndim - len(letters)
        if ("..." in term and k < 0) or ("..." not in term and k != 0):
            raise ShapeError(f"einsum: subscript {term!r} has {len(letters)} labels for an operand of shape {t.shape}")
        spelled.append(term.replace("...", "".join(free[n_ellipsis - k : n_ellipsis])))
    ellipsis = "".join(free[:n_ellipsis])
    if arrow:
        output = rhs.replace("...", ellipsis)
    else:
        counts = "".join(spelled)
        output = ellipsis + "".join(sorted(c for c in set(lhs) if c in _LETTERS and counts.count(c) == 1))
    sizes = {}
    for term, t in zip(spelled, operands):
        for c, n in zip(term, t.shape):
            if sizes.get(c, 1) != 1 and n != 1 and sizes[c] != n:
                raise ShapeError(f"einsum: label {c!r} has sizes {sizes[c]} and {n} in {equation!r}")
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]
    for c in output:
        if c not in sizes or output.count(c) > 1:
            raise ValueError(f"einsum: output label {c!r} of {equation!r} must appear once and in an input")
    return Einsum.apply(*operands, terms=tuple(spelled), output=output)


# ---------------------------------------------------------------- tensordot (tensor_methods/linalg.py)
def tensordot(a: Tensor, b: Tensor, dims=2) -> Tensor:
    """The sum of products of a and b over dims: the last `dims` dims of a with the first of b (an int), or the dims
    listed as a pair of sequences, as torch.tensordot."""
    return _tensordot(a, b, dims)
