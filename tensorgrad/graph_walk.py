"""The walk that records a graph: the backward pass with create_graph=True, so that a gradient can
be differentiated again (PyTorch's create_graph; docs/second_order.md).

The first-order walk (autograd.py) runs each node's `backward` on arrays and records nothing; this
one runs each node's `backward_graph`, the same gradient written with Tensor ops (each op's own,
beside its `backward` in ops/), and every step it takes itself is a recorded op too.  The caller
chooses the walk: Tensor.backward and tg.autograd.grad pass `walk` to autograd.backpropagate when
create_graph is set, which finds the order and runs the walk given; the first-order walk is
untouched by any of this.

Here too: `without_formula`, what a node whose op has no Tensor-level formula gives (a gradient
that raises only if differentiated again), and `graph_constant`, the constants formulas use.  This
module imports the engine (autograd.py); ops import `graph_constant` from it, and the engine
imports nothing of it.
"""

from __future__ import annotations

from . import backend, observers, versions
from .anomaly import backward_name
from .autograd import Function
from .grad_mode import _state
from .gradient_shapes import broadcast_axes, check_count, expandable, invalid_gradient
from .observers import observing
from .tensor_base import TensorBase


def walk(order, grads, owned, retain_graph, capture):
    """The reverse pass with create_graph=True, run by autograd.backpropagate over `order` (its
    tensors, inputs first): as autograd's `_backpropagate`, but every gradient is a Tensor and
    every step is a recorded op.  Grad mode is on while it runs (as PyTorch's engine sets it to
    create_graph); each node runs its `backward_graph` (a kernel op inherits its reference op's;
    NotImplemented, Function's default: `without_formula`); broadcasting is undone by a recorded
    sum and reshape, a dtype by a recorded cast; gradients add out of place (`owned` is unused),
    and a leaf's .grad is a copy of its first gradient (a recorded clone), then `.grad + g`, a new
    tensor each time (PyTorch's AccumulateGrad under grad mode).  Hooks get Tensors."""
    previous_mode = _state.grad_enabled
    _state.grad_enabled = True
    try:
        for node in reversed(order):
            g = grads.pop(id(node), None)
            if g is None:
                continue
            hooks = node._hooks
            if hooks is not None:
                g = hooks.on_gradient_graph(node, g)
            if capture is not None and id(node) in capture:
                capture[id(node)] = g
            ctx = node._ctx
            if ctx is None:
                if capture is not None:
                    continue
                node._grad = g.clone() if node._grad is None else node._grad + g
                if hooks is not None:
                    hooks.after_accumulate(node)
                continue
            if ctx.versions is not None:
                versions.check(ctx, node)
            in_grads = ctx.backward_graph(g, node)
            if in_grads is NotImplemented:
                in_grads = without_formula(ctx, g)
            if not isinstance(in_grads, tuple):
                in_grads = (in_grads,)
            if len(in_grads) != len(ctx.parents):
                in_grads = check_count(ctx, in_grads)
            if observing:
                observers.gradients(ctx, [None if pg is None else pg._data for pg in in_grads])
            parents = ctx.parents if not versions.clock else versions.parents_seen(ctx)
            for i, (p, pg) in enumerate(zip(parents, in_grads)):
                if pg is None or not isinstance(p, TensorBase) or not p._requires_grad:
                    continue
                if pg._data.shape != p._data.shape:
                    if not expandable(p._data.shape, pg._data.shape):
                        raise invalid_gradient(ctx, i, pg._data.shape, p._data.shape)
                    pg = unbroadcast_graph(pg, p._data.shape)
                if pg._data.dtype != p._data.dtype:
                    pg = pg.to(p._data.dtype)
                acc = grads.get(id(p))
                grads[id(p)] = pg if acc is None else acc + pg
            if not retain_graph and (node._data.base is None or not versions.kept_after_backward(ctx, node)):
                ctx.parents = None
                ctx.saved = None
    finally:
        _state.grad_enabled = previous_mode


def unbroadcast_graph(grad, shape):
    """gradient_shapes.unbroadcast for a Tensor gradient, as recorded ops (a sum, then a reshape)."""
    axes = broadcast_axes(shape, grad.shape)
    if axes:
        grad = grad.sum(dim=axes, keepdim=True)
    return grad.reshape(shape) if grad.shape != tuple(shape) else grad


def without_formula(ctx, grad):
    """The gradients of a node whose op has no Tensor-level formula: its array backward runs (the
    first-order values are the plain pass's) and each gradient gets a node that raises "double
    backward is not implemented for <op>" when a later pass reaches it, and only then: a gradient
    that is never differentiated again needs no formula, and one that is never comes out silently
    constant."""
    in_grads = ctx.backward(grad._data)
    if not isinstance(in_grads, tuple):
        in_grads = (in_grads,)
    sources = tuple(t for t in (grad, *ctx.parents) if isinstance(t, TensorBase) and t._requires_grad)
    out = []
    for pg in in_grads:
        t = None if pg is None else type(grad)._make(backend.ensure_array(ctx.xp, pg), grad.device, bool(sources))
        if t is not None and sources:
            node = _NoDoubleBackward(ctx.xp)
            # it stands for this op's gradient, which read the inputs as the op saw them: the op's
            # epoch, so a later pass pairs them with those versions (versions.parents_seen)
            node.epoch = ctx.epoch
            node.saved = (backward_name(ctx), type(ctx).double_backward_reason)
            node.attach(t, sources)
        out.append(t)
    return tuple(out)


class _NoDoubleBackward(Function):
    """The node of a gradient made by `without_formula`: reached by a backward pass, it raises,
    naming the op and why."""

    def backward(self, grad):
        name, reason = self.saved
        raise RuntimeError(f"double backward is not implemented for {name}: {reason}")

    def backward_graph(self, grad, output):
        return self.backward(None)


def graph_constant(like, array):
    """`array` as a tensor outside the graph, of `like`'s class and device: a formula's constant
    (a mask, a one-hot, a sign: piecewise constant in the inputs, so its derivative is 0)."""
    return type(like)._make(array, like.device, False)
