"""The shape of the gradients a node's backward returns, as both walks check it (autograd.py's on
arrays, graph_walk.py's on Tensors): one gradient per input (`check_count`), each of its input's
shape or of a broadcast of it (`expandable`, else `invalid_gradient`), and a broadcast one summed
back to the input's shape (`unbroadcast`), once for every op.  The errors are PyTorch's and name
the op.  The engine imports this module; it imports nothing of tensorgrad but the backend and the
op's name (anomaly.backward_name)."""

from __future__ import annotations

from . import backend
from .anomaly import backward_name


def broadcast_axes(shape, target) -> tuple:
    """The axes of `target` along which broadcasting copied an input of `shape` (`expandable`): the
    new leading axes and the axes where the input has size 1."""
    extra = len(target) - len(shape)
    return tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape) if n == 1 and target[extra + i] != 1)


def unbroadcast(xp, grad, shape):
    """Sum a gradient shaped like a broadcast result back to an input's `shape`.  Broadcasting copies
    an input along new leading axes and along axes of size 1; the adjoint of a copy is a sum, so
    those axes are summed away (by backend.sum, as accurately as PyTorch sums: float16 accumulated
    in float32, axes that are not innermost summed in blocks)."""
    if grad.shape == shape:
        return grad
    axes = broadcast_axes(shape, grad.shape)
    if axes:
        grad = backend.sum(xp, grad, axes, keepdims=True)
    return grad.reshape(shape)


def expandable(shape, target) -> bool:
    """Whether `shape` broadcasts to `target`: a gradient shaped `target` then sums back to `shape`
    (`unbroadcast`); any other shape is a wrong gradient, never reshaped."""
    extra = len(target) - len(shape)
    return extra >= 0 and all(n in (1, t) for n, t in zip(shape, target[extra:]))


def check_count(ctx, in_grads):
    """One gradient per input, or raise naming the op (PyTorch's check): a backward that returned
    fewer would leave an input without its gradient, silently.  Extra gradients may only be None."""
    n = len(ctx.parents)
    if len(in_grads) < n or any(g is not None for g in in_grads[n:]):
        raise RuntimeError(
            f"function {backward_name(ctx)} returned an incorrect number of gradients (expected {n}, "
            f"got {len(in_grads)})"
        )
    return in_grads[:n]


def invalid_gradient(ctx, i, got, expected):
    """The error for a gradient whose shape is neither its input's nor a broadcast of it."""
    return RuntimeError(
        f"Function {backward_name(ctx)} returned an invalid gradient at index {i} - got "
        f"{list(got)} but expected shape compatible with {list(expected)}"
    )
