"""tg.* functions that join, choose and reshape, written out: cat, stack and where (several
tensors brought to one dtype), tile and flip (dims as one argument), meshgrid, the stacks (hstack,
vstack, ...), atleast_nd, broadcast_shapes / broadcast_tensors, block_diag, cartesian_prod and
fill.  The indexing and shape ops that only call their Tensor method (gather, scatter, movedim,
diagonal, index_add, take, ...) are generated (forwarders.py)."""

from __future__ import annotations

import builtins  # tg.functions defines max, min, all, ... as PyTorch does: builtins.X is the built-in one

from .. import backend
from ..backend import ShapeError
from ..ops.masking import Where
from ..ops.shape import Cat, Stack
from ..tensor import Tensor
from ..tensor_methods.common import broadcast_shapes as _broadcast
from ..tensor_methods.common import normalize_dim
from .common import _same_kind


# ---------------------------------------------------------------- several tensors: joining and choosing
def cat(tensors, dim=0) -> Tensor:
    """Concatenate along an existing dim; all other dims must agree."""
    tensors = _same_kind(tensors, "cat")
    # PyTorch's legacy rule: a 1-d empty tensor joins anything (it is left out), unless all are such
    tensors = [t for t in tensors if t.shape != (0,)] or tensors
    d = normalize_dim(dim, tensors[0].ndim, "cat")
    first = tensors[0].shape
    for t in tensors[1:]:
        if t.ndim != len(first) or t.shape[:d] + t.shape[d + 1 :] != first[:d] + first[d + 1 :]:
            raise backend.ShapeError(f"cat: shapes {first} and {t.shape} differ outside dim {dim}")
    return Cat.apply(*tensors, axis=d)


def stack(tensors, dim=0) -> Tensor:
    """Join along a new dim; all shapes must be equal."""
    tensors = _same_kind(tensors, "stack")
    for t in tensors[1:]:
        if t.shape != tensors[0].shape:
            raise backend.ShapeError(f"stack: expects tensors of equal shape, got {tensors[0].shape} and {t.shape}")
    return Stack.apply(*tensors, axis=normalize_dim(dim, tensors[0].ndim + 1, "stack"))


def where(condition: Tensor, input, other) -> Tensor:
    """input where condition else other (all three broadcast)."""
    if not isinstance(condition, Tensor) or condition.dtype != backend.bool_:
        raise TypeError("where: condition must be a bool tensor")
    device = condition.device
    x = input if isinstance(input, Tensor) else Tensor(input, device=device)
    y = other if isinstance(other, Tensor) else Tensor(other, device=device)
    if x.is_floating_point() != y.is_floating_point() and not isinstance(input, Tensor):
        x = x.to(y.dtype)
    elif x.is_floating_point() != y.is_floating_point() and not isinstance(other, Tensor):
        y = y.to(x.dtype)
    x, y = _same_kind([x, y], "where")
    _broadcast("where", _broadcast("where", condition.shape, x.shape), y.shape)
    return Where.apply(condition, x, y)


# ---------------------------------------------------------------- shape: dims as one argument, grids
def tile(input: Tensor, dims) -> Tensor:
    """input repeated dims[i] times along dim i (dims: a sequence; shorter than input's dims, leading 1s), as
    torch.tile."""
    return input.tile(dims)


def flip(input: Tensor, dims) -> Tensor:
    """input reversed along each dim of dims (a sequence), as torch.flip."""
    return input.flip(dims)


def meshgrid(*tensors, indexing="ij"):
    """Coordinate grids from 1-d tensors: out[k] varies along dim k ("ij"; "xy" swaps the first two).
    Each grid is a reshape and an expand of one input, so its gradient is summed back by the engine."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    for t in tensors:
        if t.ndim > 1:
            raise ShapeError(f"meshgrid: expects 0-d or 1-d tensors, got shape {t.shape}")
    order = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) >= 2:
        order[0], order[1] = 1, 0
    sizes = [tensors[k].numel() for k in order]
    grids = []
    for k, t in enumerate(tensors):
        shape = [1] * len(tensors)
        shape[order.index(k)] = -1
        grids.append(t.reshape(shape).expand(*sizes))
    return tuple(grids)


# ---------------------------------------------------------------- several tensors: stacks, broadcasting, blocks
def _tensors_arg(tensors, op):
    """f(a, b, c) and f([a, b, c]) alike."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t_ in tensors:
        if not isinstance(t_, Tensor):
            raise TypeError(f"{op}(): expected Tensor as element, got {type(t_).__name__}")
    return tuple(tensors)


def _at_least(tensors, ndim, reshape, op):
    tensors = _tensors_arg(tensors, op)
    out = tuple(x if x.ndim >= ndim else reshape(x) for x in tensors)
    return out[0] if len(out) == 1 else out


def atleast_1d(*tensors):
    """Each tensor with at least 1 dim: a 0-d tensor becomes shape (1,)."""
    return _at_least(tensors, 1, lambda x: x.reshape(1), "atleast_1d")


def atleast_2d(*tensors):
    """Each tensor with at least 2 dims: () -> (1, 1), (n,) -> (1, n)."""
    return _at_least(tensors, 2, lambda x: x.reshape(1, -1) if x.ndim else x.reshape(1, 1), "atleast_2d")


def atleast_3d(*tensors):
    """Each tensor with at least 3 dims: () -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    shapes = {0: lambda x: (1, 1, 1), 1: lambda x: (1, x.shape[0], 1), 2: lambda x: x.shape + (1,)}
    return _at_least(tensors, 3, lambda x: x.reshape(shapes[x.ndim](x)), "atleast_3d")


def _sequence(tensors, op):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' must be a tuple of Tensors, not {type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{op} expects a non-empty TensorList")
    return list(tensors)


def hstack(tensors) -> Tensor:
    """cat along dim 1 (dim 0 when every tensor is 1-D), after atleast_1d."""
    tensors = [atleast_1d(x) for x in _sequence(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """cat along dim 0 after atleast_2d (1-D tensors become rows)."""
    return cat([atleast_2d(x) for x in _sequence(tensors, "vstack")], 0)


def dstack(tensors) -> Tensor:
    """cat along dim 2 after atleast_3d."""
    return cat([atleast_3d(x) for x in _sequence(tensors, "dstack")], 2)


def column_stack(tensors) -> Tensor:
    """cat along dim 1, 0-d and 1-D tensors first made columns (n, 1)."""
    return cat([x.reshape(-1, 1) if x.ndim <= 1 else x for x in _sequence(tensors, "column_stack")], 1)


def broadcast_shapes(*shapes) -> tuple:
    """The shape all the given shapes broadcast to (ints count as 1-d shapes)."""
    out = ()
    for s in shapes:
        s = (s,) if isinstance(s, int) else tuple(int(n) for n in s)
        if builtins.any(n < 0 for n in s):
            raise RuntimeError(f"Trying to create tensor with negative dimension {builtins.min(s)}: {list(s)}")
        out = _broadcast("broadcast_shapes", out, s)
    return out


def broadcast_tensors(*tensors):
    """Every tensor expanded to the shape they broadcast to (views: Expand)."""
    tensors = _tensors_arg(tensors, "broadcast_tensors")
    shape = ()
    for x in tensors:
        shape = _broadcast("broadcast_tensors", shape, x.shape)
    return tuple(x.expand(*shape) for x in tensors)


def block_diag(*tensors) -> Tensor:
    """The tensors (0-d as 1x1, 1-D as a row) placed along the diagonal of a matrix of zeros: each
    one padded with zero columns to the total width, then the rows concatenated (cat)."""
    tensors = _tensors_arg(tensors, "block_diag")
    for i, x in enumerate(tensors):
        if x.ndim > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {x.ndim} dimensions"
            )
    if not tensors:
        return Tensor(backend.namespace("cpu").zeros((1, 0), dtype=backend.float32))
    blocks = _same_kind(
        [x.reshape(1, 1) if x.ndim == 0 else x.reshape(1, -1) if x.ndim == 1 else x for x in tensors], "block_diag"
    )
    width = builtins.sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        n, m = b.shape
        pieces = [b.new_zeros(n, left), b, b.new_zeros(n, width - left - m)]
        rows.append(cat(pieces, 1))
        left += m
    return cat(rows, 0)


def cartesian_prod(*tensors) -> Tensor:
    """Every combination of one element of each 1-D tensor, as rows (k columns): meshgrid, then stack."""
    tensors = _tensors_arg(tensors, "cartesian_prod")
    for x in tensors:
        if x.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
        if x.dtype != tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


def fill(input: Tensor, value) -> Tensor:
    """A copy of input with every element value (torch.fill); a tensor value gets the gradient."""
    return input.clone().fill_(value)
