"""torch.* functions that take several tensors (cat, stack, where) and the functional
spellings of Tensor methods (tg.exp(x) == x.exp())."""

from __future__ import annotations

from . import backend
from .ops.masking import Where
from .ops.shape import Cat, Stack
from .tensor import Tensor, broadcast_shapes, normalize_dim


def _same_kind(tensors, op):
    tensors = list(tensors)
    if not tensors:
        raise ValueError(f"{op}: expected a non-empty sequence of tensors")
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype != dtype:
            dtype = backend.result_type(dtype, t.dtype)
    return [t if t.dtype == dtype else t.to(dtype) for t in tensors]


def cat(tensors, dim=0) -> Tensor:
    """Concatenate along an existing dim; all other dims must agree."""
    tensors = _same_kind(tensors, "cat")
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
    broadcast_shapes("where", broadcast_shapes("where", condition.shape, x.shape), y.shape)
    return Where.apply(condition, x, y)


def matmul(a: Tensor, b: Tensor) -> Tensor:
    return a.matmul(b)


def exp(x: Tensor) -> Tensor:
    return x.exp()


def log(x: Tensor) -> Tensor:
    return x.log()


def sqrt(x: Tensor) -> Tensor:
    return x.sqrt()


def tanh(x: Tensor) -> Tensor:
    return x.tanh()


def relu(x: Tensor) -> Tensor:
    return x.relu()


def sum(x: Tensor, dim=None, keepdim=False) -> Tensor:  # noqa: A001 (PyTorch's name)
    return x.sum(dim, keepdim)


def mean(x: Tensor, dim=None, keepdim=False) -> Tensor:
    return x.mean(dim, keepdim)


def softmax(x: Tensor, dim) -> Tensor:
    return x.softmax(dim)


def log_softmax(x: Tensor, dim) -> Tensor:
    return x.log_softmax(dim)


def masked_fill(x: Tensor, mask: Tensor, value) -> Tensor:
    return x.masked_fill(mask, value)
