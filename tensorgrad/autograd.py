"""Reverse-mode autodiff, read top to bottom: grad mode, the tensor protocol, `Function` and its
`apply` (the forward pass records the graph), the topological order, the walk (the backward pass).

An op is a subclass of `Function` with two methods on raw backend arrays:

    forward(self, *inputs, **params) -> output array    (may call self.save_for_backward)
    backward(self, grad) -> one gradient per input      (None where an input needs none)

`Op.apply(*args, **params)` runs forward on the arrays of its Tensor arguments and, when a gradient
is wanted, records the call as a node of the graph: the output tensor keeps the Function instance
(`tensor._ctx`), which keeps its inputs (`ctx.parents`).  Because ops see arrays, a test can run
one backward without a graph: `op = Softmax(np); y = op.forward(x, dim=-1); dx, = op.backward(dy)`.
The walk, not each op, does what every op shares: ordering (without recursion), accumulation,
releasing each node's saved arrays once its backward ran, and the gradients' shapes (checked, and
summed back where an input was broadcast: gradient_shapes.py).

Beside this file: grad_mode.py (no_grad, the per-thread state), tensor_base.py (the fields of a
tensor the engine uses), versions.py (version counters, in-place writes in the graph), observers.py
(the hook of the profiler and anomaly mode), kernel_registry.py (fused kernels a device runs in
place of an op), graph_walk.py (the walk that records a graph, for create_graph).  Threads, as
PyTorch: grad mode and a backward pass are the thread's own (grad_mode._state); anomaly mode, the
kernel tables and the in-place clock are the process's; a graph is not locked against two walks.
"""

from __future__ import annotations

from . import backend, observers, versions
from .anomaly import (  # noqa: F401 - tg.autograd's names, as the grad mode's and the kernel registry's below
    backward_name,
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from .grad_mode import (  # noqa: F401
    _state,
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    queue_callback,
    set_grad_enabled,
)
from .gradient_shapes import check_count, expandable, invalid_gradient, unbroadcast
from .kernel_registry import (  # noqa: F401 - apply reads the tables
    _kernel_tables,
    clear_kernels,
    dispatch,
    kernel_table,
    register_kernel,
    register_kernel_loader,
)
from .observers import observing
from .tensor_base import TensorBase

_SCALARS = backend.SCALAR_TYPES

# --------------------------------------------------------------------------- 1. grad mode
# Whether ops record the graph: `_state.grad_enabled`, the thread's own (grad_mode.py: no_grad, ...).

# --------------------------------------------------------------------------- 2. the tensor protocol
# What the engine reads and writes of a tensor (TensorBase, tensor_base.py): _data (the array), device,
# _requires_grad, _grad, _ctx (the node that made it; None: a leaf), _counter (versions.py), _hooks (hooks.py);
# `type(t)._make(array, device, requires_grad)` makes one.  The engine imports nothing of tensor.py.

# --------------------------------------------------------------------------- 3. Function and apply
_subclass_hooks: list = []  # called with each new Function subclass (see on_subclass); process-wide, as the classes


def on_subclass(hook):
    """Register hook(cls), called for every `Function` subclass defined from now on: custom_function.py
    gives a subclass in PyTorch's form (static forward / backward on Tensors) its `apply` so."""
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
    stack = None  # anomaly mode (anomaly.py): the traceback of the user's line that made the node
    # True: `backward` returns arrays made for this call alone (new, or disjoint views of a new one),
    # which the walk may keep as a leaf's .grad and add into, instead of copying them first.
    fresh_gradients = False
    # The index (among its Tensor inputs) of the input whose memory the op's output always views:
    # its version counter is that input's, whatever the array's `.base` says (CuPy's as_strided, in
    # Unfold, links no `.base`); None: the engine finds views by their `.base`.
    output_views = None
    # Why an op has no Tensor-level formula (`backward_graph`), for the error its double backward raises.
    double_backward_reason = "its backward runs on raw arrays and has no Tensor-level formula yet"

    def __init__(self, xp):
        self.xp = xp  # the array namespace of the inputs' device
        self.parents = None  # the op's arguments (Tensors and others), set by attach
        self.saved = None
        self.versions = None  # (counter, version, array) of its tensors, when it saved arrays (versions.py)
        self.epoch = versions.clock  # in-place writes recorded before this node

    def __init_subclass__(cls, **kwargs):
        """Runs the `on_subclass` hooks; the raw-array ops (every op in ops/) keep the `apply` below."""
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

    def backward_graph(self, grad, output):
        """The backward as Tensor ops, recorded: what create_graph's walk (graph_walk.py) runs for
        this node.  `grad`: the output's gradient (a Tensor), `output`: the tensor this node made;
        the inputs are `self.parents`, and `self.saved`'s non-array entries (the params) may be read.
        Returns one gradient per input (Tensors, or None).  This default, NotImplemented: no formula,
        the walk runs the array backward, its gradients raising if differentiated again."""
        return NotImplemented

    def attach(self, output, parents, records=None):
        """Record this node as the maker of `output`, from `parents` (the op's arguments as passed).
        Every node is attached here (by apply, custom_function.py, tensor.py's device copies and
        versions.rebase_history).  `records`: the versions its saved arrays were taken at (versions.taken),
        None when it saved none."""
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
        # an in-place write was recorded: an input may be a view it left stale (re-derived for the graph only)
        written = versions.clock and _state.grad_enabled
        for a in args:
            if isinstance(a, TensorBase):
                if written and len(a._counter) > 1:
                    a._refresh_view()  # re-derived from its base now, as PyTorch's view on its next use
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
        base = None  # the input result is a view of, if any: it shares that input's version counter
        if ctx.output_views is not None:  # declared by the op: a view of that input
            base = tensors[ctx.output_views]
        elif out.base is not None:  # a view (reshape, transpose, slice): of an input?
            storage = backend.storage_of(out)
            for a in tensors:
                if backend.storage_of(a._data) is storage:
                    base = a
                    break
        else:
            for a in tensors:
                if a._data is out:  # an op returned its input's array as is
                    base = a
                    break
        if base is not None:
            result._counter = base._counter
            if not requires_grad:  # a view outside the graph: its base (made in grad mode) and birth, for _refresh_view
                grad_mode = _state.grad_enabled
                result._view_of = (base if grad_mode else None, None, versions.clock, grad_mode)
        if requires_grad:
            ctx.attach(result, args, versions.taken(result, tensors) if ctx.saved else None)
        return result


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
def backpropagate(roots, root_grads, retain_graph=False, capture=None, walk=None):
    """Backpropagate each root's gradient (arrays shaped like the roots) through the graph: every
    leaf reached accumulates its gradient into `.grad`, or, `capture` a dict {id(tensor): None}
    (tg.autograd.grad), the gradient reaching each of those tensors is stored there and no `.grad`
    is touched.  A tensor's hooks (`_hooks` not None: hooks.py) run when its gradient is complete.
    `walk`: the reverse pass over the order, `_backpropagate` (on arrays) when None; under
    create_graph the caller (Tensor.backward, tg.autograd.grad) passes graph_walk.walk."""
    if versions.clock:  # an in-place write was recorded: a root may be a view it left stale
        for r in roots:
            if len(r._counter) > 1:
                r._refresh_view()  # re-derived from its base, as PyTorch's
            versions.check_root(r)
    order = _topological_order(roots)
    grads, owned = {}, set()  # {id: gradient}; owned: the ids whose gradient is the walk's own array
    for r, g in zip(roots, root_grads):
        if id(r) in grads:  # the same root twice: the sum, an array made here (NumPy's 0-d sum is a scalar)
            grads[id(r)] = backend.ensure_array(backend.namespace(r.device), grads[id(r)] + g)
            owned.add(id(r))
        else:
            grads[id(r)] = g
    outer = _state.callbacks  # a pass this one runs inside (a backward called from a hook), if any
    callbacks = _state.callbacks = []  # this pass's queue (grad_mode.queue_callback)
    try:
        (walk or _backpropagate)(order, grads, owned, retain_graph, capture)
        while callbacks:  # a callback may queue another: it runs too
            callbacks.pop(0)()
    finally:
        _state.callbacks = outer


def _backpropagate(order, grads, owned, retain_graph, capture):
    """The reverse pass of `backpropagate` over `order` (its tensors, inputs first), on arrays."""
    for node in reversed(order):
        g = grads.pop(id(node), None)
        if g is None:
            continue
        hooks = node._hooks
        if hooks is not None:
            g = hooks.on_gradient(node, g)
        if capture is not None and id(node) in capture:
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
            in_grads = check_count(ctx, in_grads)
        if observing:  # anomaly mode checks them for NaN
            observers.gradients(ctx, in_grads)
        for i, (p, pg) in enumerate(zip(ctx.parents if not versions.clock else versions.parents_seen(ctx), in_grads)):
            if pg is None or not isinstance(p, TensorBase) or not p._requires_grad:
                continue
            if isinstance(pg, _SCALARS):  # NumPy turns 0-d results into scalars (backend.ensure_array)
                pg = ctx.xp.asarray(pg)
            data = p._data
            if pg.shape != data.shape:
                if not expandable(data.shape, pg.shape):
                    raise invalid_gradient(ctx, i, pg.shape, data.shape)
                pg = unbroadcast(ctx.xp, pg, data.shape)
            if pg.dtype != data.dtype:  # as PyTorch: a gradient has its input's dtype
                pg = pg.astype(data.dtype)
            key = id(p)
            acc = grads.get(key)
            if acc is None:
                grads[key] = pg  # may alias another gradient: never written into (unless fresh)
                if ctx.fresh_gradients:
                    owned.add(key)
            elif key in owned:
                acc += pg
            else:
                grads[key] = backend.ensure_array(ctx.xp, acc + pg)
                owned.add(key)
        if not retain_graph and (node._data.base is None or not versions.kept_after_backward(ctx, node)):
            ctx.parents = None
            ctx.saved = None
