"""Reverse-mode autodiff, read top to bottom: grad mode, the tensor protocol, `Function` and its
`apply` (the forward pass records the graph), the topological order, the walk (the backward pass).

An op is a subclass of `Function` with two methods on raw backend arrays:

    forward(self, *inputs, **params) -> output array    (may call self.save_for_backward)
    backward(self, grad) -> one gradient per input      (None where an input needs none)

`Op.apply(*args, **params)` runs forward on the arrays of its Tensor arguments and, when a gradient
is wanted, records the call as a node of the graph: the output tensor keeps the Function instance
(`tensor._ctx`), which keeps its inputs (`ctx.parents`).  Because ops see arrays, a test can run
one backward without a graph: `op = Softmax(np); y = op.forward(x, dim=-1); dx, = op.backward(dy)`.

The engine, not each op, does the work every op shares: un-broadcasting (a gradient shaped like
the broadcast output is summed back to the input's shape, `unbroadcast`); accumulation (a tensor
used twice receives the sum of both gradients); ordering (reverse topological order, found without
recursion); releasing (each node's saved arrays are dropped once its backward ran); checking (one
gradient per input, each of its input's shape or a broadcast of it, else backward raises naming the
op, as PyTorch's engine does).  Under `create_graph` the walk runs each node's Tensor-level
`backward_graph` instead, recorded, so a gradient can be differentiated again.

Beside this file, each with its own story: grad_mode.py (no_grad and the per-thread state),
tensor_base.py (the fields of a tensor the engine uses), versions.py (version counters, in-place
writes recorded in the graph), observers.py (the hook the profiler and anomaly mode hang on),
kernel_registry.py (fused kernels a device runs in place of an op), hooks.py (tensor hooks and
tg.autograd.grad), custom_function.py (PyTorch's static forward / backward form of `Function`).

Threads (as PyTorch): the grad mode, the running profile and the backward pass a thread runs (with
its queue_callback queue) are that thread's own (grad_mode._state).  Process-wide, as in PyTorch:
anomaly mode, the kernel tables, the Function subclass hooks and the in-place clock.  A graph itself
is not locked: two threads running backward through one graph at once is not supported.
"""

from __future__ import annotations

from . import backend, observers, versions
from .anomaly import (  # noqa: F401 - tg.autograd's names; the walk's errors name ops by backward_name
    backward_name,
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from .grad_mode import (  # noqa: F401 - tg.autograd's names
    _state,
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .kernel_registry import (  # noqa: F401 - tg.autograd's names; apply reads the tables
    _kernel_tables,
    clear_kernels,
    dispatch,
    kernel_table,
    register_kernel,
    register_kernel_loader,
)
from .observers import observing
from .tensor_base import TensorBase

# --------------------------------------------------------------------------- 1. grad mode
# Whether ops record the graph: `_state.grad_enabled`, the calling thread's own, switched by
# no_grad, enable_grad, set_grad_enabled and inference_mode (grad_mode.py, imported above).

# --------------------------------------------------------------------------- 2. the tensor protocol
# What the engine reads and writes of a tensor (TensorBase, tensor_base.py): _data (the array),
# device, _requires_grad, _grad, _ctx (the node that made it; None for a leaf), _counter (its
# version counter, versions.py), _hooks (hooks.py); `type(t)._make(array, device, requires_grad)`
# makes one.  The engine imports nothing of the Tensor class (tensor.py) built on it.


# --------------------------------------------------------------------------- 3. Function and apply
_subclass_hooks: list = []  # called with each new Function subclass (see on_subclass); process-wide, as the classes


def on_subclass(hook):
    """Register hook(cls), called for every `Function` subclass defined from now on: custom_function.py
    registers the one that gives a subclass in PyTorch's form (static forward / backward on Tensors)
    its `apply`; the engine knows only the raw-array form."""
    _subclass_hooks.append(hook)
    return hook


class Function:
    """One differentiable op: forward and backward side by side (see module docstring)."""

    __slots__ = ("xp", "parents", "saved", "versions", "epoch")

    # Declared with their defaults, so any node can be asked; set only on some (class attributes: a
    # node that keeps a default stores nothing).  On an in-place write's node (versions.rebase_history):
    stamp = 0  # its tick of the in-place clock (versions.clock); 0: not an in-place write's node
    previous = None  # the written tensor's version before the write: an alias with its old history
    rederived_view = False  # True: it writes nothing, it re-derives a view (x[i]) of a rebased base
    # Anomaly mode (anomaly.py): the traceback of the user's line that made the node.
    stack = None
    # Why an op has no Tensor-level formula (`backward_graph`), for the error its double backward raises.
    double_backward_reason = "its backward runs on raw arrays and has no Tensor-level formula yet"

    def __init__(self, xp):
        self.xp = xp  # the array namespace of the inputs' device
        self.parents = None  # the op's arguments (Tensors and others), set by attach
        self.saved = None
        self.versions = None  # (counter, version, array) of its tensors, when it saved arrays (versions.py)
        self.epoch = versions.clock  # in-place writes recorded before this node

    def __init_subclass__(cls, **kwargs):
        """Runs the hooks registered with `on_subclass`; ops written on raw arrays (every op in ops/)
        keep the `apply` below."""
        super().__init_subclass__(**kwargs)
        for hook in _subclass_hooks:
            hook(cls)

    def save_for_backward(self, *arrays):
        self.saved = arrays

    def needs_grad(self, i) -> bool:
        """Whether input i wants a gradient (always True when run without a graph)."""
        return self.parents is None or getattr(self.parents[i], "_requires_grad", False)

    def forward(self, *args, **params):  # pragma: no cover - abstract
        raise NotImplementedError

    def backward(self, grad):  # pragma: no cover - abstract
        raise NotImplementedError

    def attach(self, output, parents, records=None):
        """Record this node in the graph as the maker of `output`, from `parents` (the op's arguments
        as passed, tensors and others).  Every node is attached here: by `apply`, by a custom
        Function (custom_function.py), by a copy to another device (tensor.py) and by an in-place
        write (versions.rebase_history).  `records`: the versions of the tensors whose saved arrays
        backward will read (versions.taken), None when the node saved none."""
        self.parents = parents
        output._ctx = self
        self.versions = records
        return output

    @classmethod
    def apply(cls, *args, **params):
        """Run the op on its Tensor arguments and return the output tensor: check that the tensors
        share a device, pick the node (the first of the device's fused kernels for the op that
        accepts these arguments, kernel_registry.py; else the op itself), run its forward on the
        arrays, give the output its version counter (its input's, when it is a view of one), and,
        when an input requires grad and grad mode is on, record the node (`attach`)."""
        device = None
        requires_grad = False
        tensors = []  # the Tensor arguments (the others, numbers and shapes, pass to forward as they are)
        arrays = []
        for a in args:
            if isinstance(a, TensorBase):
                if device is None:
                    device = a.device
                elif a.device != device:
                    raise backend.DeviceError(
                        f"{cls.__name__}: expected all tensors on the same device, got {device} and {a.device}"
                    )
                requires_grad = requires_grad or a._requires_grad
                tensors.append(a)
                arrays.append(a._data)
            else:
                arrays.append(a)
        if device is None:
            raise TypeError(f"{cls.__name__}: needs at least one Tensor argument")
        xp = backend.namespace(device)
        table = _kernel_tables.get(device)
        if table is None:
            table = kernel_table(device)
        for kernel in table.get(cls, ()):  # the device's kernels of the op, in order: the first that takes these inputs
            if kernel.accepts(*arrays, **params):
                ctx = kernel(xp)
                break
        else:
            ctx = cls(xp)
        requires_grad = requires_grad and _state.grad_enabled
        if observing:  # the profiler or anomaly mode is on (observers.py)
            out = observers.forward(ctx, requires_grad, arrays, params)
        else:
            out = ctx.forward(*arrays, **params)
        out = backend.ensure_array(xp, out)
        result = type(tensors[0])._make(out, device, requires_grad)
        if out.base is not None:  # a view (reshape, transpose, slice): of an input?
            storage = backend.storage_of(out)
            for a in tensors:
                if backend.storage_of(a._data) is storage:
                    result._counter = a._counter  # views share their base's version counter
                    break
        else:
            for a in tensors:
                if a._data is out:  # an op returned its input's array as is
                    result._counter = a._counter
                    break
        if requires_grad:
            ctx.attach(result, args, versions.taken(result, tensors) if ctx.saved else None)
        return result

    def backward_graph(self, grad, output):
        """The backward as Tensor ops, recorded in the graph: what a create_graph pass runs for this
        node (the array `backward` is what the first-order pass runs).  `grad` is the output's
        gradient (a Tensor), `output` the tensor this node made; the inputs are `self.parents`, and
        the non-array entries of `self.saved` (the op's params) may be read.  Returns one gradient
        per input (Tensors, or None), as `backward` returns arrays.

        This default is for an op without a formula: it runs the array backward (the first-order
        values are the plain pass's) and gives each gradient a node that raises "double backward is
        not implemented for <op>" when a later pass reaches it, and only then: a gradient that is
        never differentiated again needs no formula, and one that is never comes out silently constant."""
        in_grads = self.backward(grad._data)
        if not isinstance(in_grads, tuple):
            in_grads = (in_grads,)
        sources = tuple(t for t in (grad, *self.parents) if isinstance(t, TensorBase) and t._requires_grad)
        out = []
        for pg in in_grads:
            t = None if pg is None else type(grad)._make(backend.ensure_array(self.xp, pg), grad.device, bool(sources))
            if t is not None and sources:
                node = _NoDoubleBackward(self.xp)
                # it stands for this op's gradient, which read the inputs as the op saw them: the op's
                # epoch, so a later pass pairs them with those versions (versions.parents_seen)
                node.epoch = self.epoch
                node.saved = (backward_name(self), type(self).double_backward_reason)
                node.attach(t, sources)
            out.append(t)
        return tuple(out)


def graph_constant(like, array):
    """`array` as a tensor outside the graph, of `like`'s class and device: a formula's constant
    (a mask, a one-hot, a sign: piecewise constant in the inputs, so its derivative is 0)."""
    return type(like)._make(array, like.device, False)


class _NoDoubleBackward(Function):
    """The node of a gradient made by an op without a Tensor-level formula (the default
    `Function.backward_graph`): reached by a backward pass, it raises, naming the op and why."""

    def backward(self, grad):
        name, reason = self.saved
        raise RuntimeError(f"double backward is not implemented for {name}: {reason}")

    def backward_graph(self, grad, output):
        return self.backward(None)


# --------------------------------------------------------------------------- 4. the topological order
def _topological_order(roots):
    """Every tensor the `roots` depend on (through tensors that require grad), inputs first.
    An explicit stack instead of recursion: a graph thousands of ops deep is fine."""
    order = []
    expanded = set()
    stack = [(root, False) for root in reversed(roots)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            order.append(node)
            continue
        if id(node) in expanded:
            continue
        expanded.add(id(node))
        ctx = node._ctx
        if ctx is None:  # a leaf: nothing comes before it
            order.append(node)
            continue
        if ctx.parents is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time: its saved arrays were "
                "released after the first backward. Use backward(retain_graph=True) the first time."
            )
        stack.append((node, True))  # appended to the order once its inputs are
        for p in ctx.parents if not versions.clock else versions.parents_seen(ctx):
            if p is not None and getattr(p, "_requires_grad", False) and id(p) not in expanded:
                stack.append((p, False))
    return order


# --------------------------------------------------------------------------- 5. the walk
def run_backward(root, grad, retain_graph=False, create_graph=False):
    """Backpropagate `grad` (an array shaped like root; a Tensor with create_graph) into every
    leaf's `.grad`."""
    backpropagate([root], [grad], retain_graph, create_graph=create_graph)


def backpropagate(roots, root_grads, retain_graph=False, capture=None, create_graph=False):
    """Backpropagate each root's gradient (arrays shaped like the roots) through the graph.

    capture None: backward, every leaf reached accumulates its gradient into `.grad`.
    capture a dict {id(tensor): None}: `autograd.grad`, the gradient reaching each of those tensors
    is stored in the dict instead, and no leaf's `.grad` is touched.
    A tensor with hooks (`_hooks` not None: register_hook, retain_grad, post-accumulate hooks) has
    them run when its gradient is complete, i.e. when the node is reached in reverse topological
    order; a tensor without costs one attribute check.
    create_graph True: the root gradients are Tensors, and the pass runs `_backpropagate_graph`
    (each node's Tensor-level `backward_graph`, recorded); the first-order pass is untouched."""
    order = _topological_order(roots)
    grads, owned = _seed(roots, root_grads)
    outer = _state.callbacks  # a pass this one runs inside (a backward called from a hook), if any
    callbacks = _state.callbacks = []  # this pass's queue_callback queue
    try:
        if create_graph:
            _backpropagate_graph(order, grads, retain_graph, capture)
        else:
            _backpropagate(order, grads, owned, retain_graph, capture)
        while callbacks:  # a callback may queue another: it runs too
            callbacks.pop(0)()
    finally:
        _state.callbacks = outer


def queue_callback(fn):
    """Have `fn()` run once the backward pass now running in this thread has finished (PyTorch's
    Variable._execution_engine.queue_callback): a hook that starts work during backward (the
    all-reduces of DistributedDataParallel) finishes it there.  The queue is the pass's own: a
    backward in another thread (or one nested in a hook) neither runs nor drops it, and a pass
    that raises drops its queue.  Outside a backward pass it raises, as PyTorch."""
    callbacks = _state.callbacks
    if callbacks is None:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    callbacks.append(fn)


def _seed(roots, root_grads):
    """Where both walks start: {id(root): its gradient} (the same root twice: the sum), and the ids
    whose gradient is the walk's own array, safe to add into (a sum made here)."""
    grads, owned = {}, set()
    for r, g in zip(roots, root_grads):
        if id(r) in grads:
            grads[id(r)] = grads[id(r)] + g
            owned.add(id(r))
        else:
            grads[id(r)] = g
    return grads, owned


def _backpropagate(order, grads, owned, retain_graph, capture):
    """The reverse pass of `backpropagate` over `order` (its tensors, inputs first), on arrays."""
    for node in reversed(order):
        g = grads.pop(id(node), None)
        if g is None:
            continue
        hooks = node._hooks
        if hooks is not None:
            g = hooks.on_gradient(node, g)
        if capture is not None:
            if id(node) in capture:
                capture[id(node)] = g
        ctx = node._ctx
        if ctx is None:  # a leaf: accumulate into .grad
            if capture is not None:
                continue
            if node._grad is not None:
                node._grad._data += g
            else:
                node._grad = type(node)._make(g if id(node) in owned else g.copy(), node.device, False)
            if hooks is not None:
                hooks.after_accumulate(node)
            continue
        if ctx.versions is not None:
            versions.check(ctx, node)
        in_grads = ctx.backward(g) if not observing else observers.backward(ctx, g)
        if not isinstance(in_grads, tuple):
            in_grads = (in_grads,)
        if len(in_grads) != len(ctx.parents):
            in_grads = _check_count(ctx, in_grads)
        if observing:  # anomaly mode checks them for NaN
            observers.gradients(ctx, in_grads)
        for i, (p, pg) in enumerate(zip(ctx.parents if not versions.clock else versions.parents_seen(ctx), in_grads)):
            if pg is None or not isinstance(p, TensorBase) or not p._requires_grad:
                continue
            pg = backend.ensure_array(ctx.xp, pg)  # NumPy turns 0-d results into scalars
            if pg.shape != p._data.shape:
                if not expandable(p._data.shape, pg.shape):
                    raise _invalid_gradient(ctx, i, pg.shape, p._data.shape)
                pg = unbroadcast(ctx.xp, pg, p._data.shape)
            if pg.dtype != p._data.dtype:  # as PyTorch: a gradient has its input's dtype
                pg = pg.astype(p._data.dtype)
            key = id(p)
            acc = grads.get(key)
            if acc is None:
                grads[key] = pg  # may alias another gradient: never written into
            elif key in owned:
                acc += pg
            else:
                grads[key] = backend.ensure_array(ctx.xp, acc + pg)
                owned.add(key)
        if not retain_graph:
            ctx.parents = None
            ctx.saved = None


def _backpropagate_graph(order, grads, retain_graph, capture):
    """The reverse pass with create_graph=True: as `_backpropagate`, but every gradient is a Tensor
    and every step is a recorded op, so the gradients can be differentiated again (PyTorch's
    create_graph).  Grad mode is on while it runs (as PyTorch's engine sets it to create_graph);
    each node runs its `backward_graph` (a kernel op inherits its reference op's); broadcasting
    is undone by a recorded sum and reshape, a dtype by a recorded cast; gradients add out of
    place, and a leaf's .grad is a copy of its first gradient (a recorded clone), then `.grad +
    g`, a new tensor each time (PyTorch's AccumulateGrad under grad mode).  Hooks get Tensors."""
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
            if not isinstance(in_grads, tuple):
                in_grads = (in_grads,)
            if len(in_grads) != len(ctx.parents):
                in_grads = _check_count(ctx, in_grads)
            if observing:
                observers.gradients(ctx, [None if pg is None else pg._data for pg in in_grads])
            parents = ctx.parents if not versions.clock else versions.parents_seen(ctx)
            for i, (p, pg) in enumerate(zip(parents, in_grads)):
                if pg is None or not isinstance(p, TensorBase) or not p._requires_grad:
                    continue
                if pg._data.shape != p._data.shape:
                    if not expandable(p._data.shape, pg._data.shape):
                        raise _invalid_gradient(ctx, i, pg._data.shape, p._data.shape)
                    pg = unbroadcast_graph(pg, p._data.shape)
                if pg._data.dtype != p._data.dtype:
                    pg = pg.to(p._data.dtype)
                acc = grads.get(id(p))
                grads[id(p)] = pg if acc is None else acc + pg
            if not retain_graph:
                ctx.parents = None
                ctx.saved = None
    finally:
        _state.grad_enabled = previous_mode


def unbroadcast(xp, grad, shape):
    """Sum a gradient shaped like a broadcast result back to an input's `shape`.  Broadcasting copies
    an input along new leading axes and along axes of size 1; the adjoint of a copy is a sum, so
    those axes are summed away (by backend.sum, as accurately as PyTorch sums: float16 accumulated
    in float32, axes that are not innermost summed in blocks)."""
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1)
    if axes:
        grad = backend.sum(xp, grad, axes, keepdims=True)
    return grad.reshape(shape)


def unbroadcast_graph(grad, shape):
    """`unbroadcast` for a Tensor gradient, as recorded ops (a sum, then a reshape)."""
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1)
    if axes:
        grad = grad.sum(dim=axes, keepdim=True)
    return grad.reshape(shape) if grad.shape != tuple(shape) else grad


def expandable(shape, target) -> bool:
    """Whether `shape` broadcasts to `target`: a gradient shaped `target` then sums back to `shape`
    (`unbroadcast`); any other shape is a wrong gradient, never reshaped."""
    extra = len(target) - len(shape)
    return extra >= 0 and all(n in (1, t) for n, t in zip(shape, target[extra:]))


def _check_count(ctx, in_grads):
    """One gradient per input, or raise naming the op (PyTorch's check): a backward that returned
    fewer would leave an input without its gradient, silently.  Extra gradients may only be None."""
    n = len(ctx.parents)
    if len(in_grads) < n or any(g is not None for g in in_grads[n:]):
        raise RuntimeError(
            f"function {backward_name(ctx)} returned an incorrect number of gradients (expected {n}, "
            f"got {len(in_grads)})"
        )
    return in_grads[:n]


def _invalid_gradient(ctx, i, got, expected):
    """The error for a gradient whose shape is neither its input's nor a broadcast of it."""
    return RuntimeError(
        f"Function {backward_name(ctx)} returned an invalid gradient at index {i} - got "
        f"{list(got)} but expected shape compatible with {list(expected)}"
    )
