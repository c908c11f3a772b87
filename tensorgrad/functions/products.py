"""tg.* functions of linear algebra (tensor_methods/linalg.py): matmul, einsum (one op,
ops/einsum.py), the matrix and vector products (mm, bmm, mv, dot, outer, kron, tensordot, and
the add-and-multiply forms addmm, baddbmm, addcmul, ...), trace, cross, norm and dist.  The
decompositions are tg.linalg's (tensorgrad/linalg/)."""

from __future__ import annotations

import builtins  # tg.functions defines max, min, all, ... as PyTorch does: builtins.X is the built-in one

from ..backend import ShapeError
from ..ops.einsum import Einsum
from ..tensor import Tensor
from ..tensor_methods.linalg import tensordot as _tensordot
from .common import _same_kind


# ---------------------------------------------------------------- matmul and einsum
def matmul(a: Tensor, b: Tensor) -> Tensor:
    return a.matmul(b)


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


# ---------------------------------------------------------------- linear algebra (tensor_methods/linalg.py)
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    return input.mm(mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    return input.bmm(mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    return input.mv(vec)


def dot(input: Tensor, other: Tensor) -> Tensor:
    return input.dot(other)


def vdot(input: Tensor, other: Tensor) -> Tensor:
    return input.vdot(other)


def inner(input: Tensor, other: Tensor) -> Tensor:
    return input.inner(other)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    return input.outer(vec2)


ger = outer


def kron(input: Tensor, other: Tensor) -> Tensor:
    return input.kron(other)


def trace(input: Tensor) -> Tensor:
    return input.trace()


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return input.addmm(mat1, mat2, beta=beta, alpha=alpha)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    return input.addmv(mat, vec, beta=beta, alpha=alpha)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return input.addr(vec1, vec2, beta=beta, alpha=alpha)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return input.baddbmm(batch1, batch2, beta=beta, alpha=alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return input.addbmm(batch1, batch2, beta=beta, alpha=alpha)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    return input.addcmul(tensor1, tensor2, value=value)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    return input.addcdiv(tensor1, tensor2, value=value)


def cross(input: Tensor, other: Tensor, dim=None) -> Tensor:
    return input.cross(other, dim)


def norm(input: Tensor, p="fro", dim=None, keepdim=False, dtype=None) -> Tensor:
    return input.norm(p, dim, keepdim, dtype)


def dist(input: Tensor, other: Tensor, p=2) -> Tensor:
    return input.dist(other, p)


def tensordot(a: Tensor, b: Tensor, dims=2) -> Tensor:
    return _tensordot(a, b, dims)
