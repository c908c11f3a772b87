"""Reverse-mode autodiff: the Function base class and the backward pass.

An op is a subclass of `Function` with two methods on raw backend arrays:

    forward(self, *inputs, **params) -> output array    (may call self.save_for_backward)
    backward(self, grad) -> one gradient per input      (None where an input needs none)

`Op.apply(*args, **params)` runs forward on the arrays of its Tensor arguments and,
when a gradient is wanted, records the call as a node of the graph: the output
tensor keeps the Function instance (`tensor._ctx`), which keeps its inputs.

The engine, not each op, does the work every op shares:
- un-broadcasting: a gradient shaped like the broadcast output is summed back to
  the input's shape ("the adjoint of broadcast is sum"), in `unbroadcast`;
- accumulation: a tensor used twice receives the sum of both gradients;
- ordering: nodes are visited in reverse topological order, found without
  recursion so deep graphs do not hit Python's recursion limit;
- releasing: each node's saved arrays are dropped as soon as its backward ran;
- checking: a saved array that an in-place write changed after the forward pass
  (x[0] = 1, x += 1, opt.step()) makes backward raise instead of using the new values; and a
  backward must return one gradient per input (None allowed), each of its input's shape or a
  broadcast of it (summed back), else backward raises naming the op, as PyTorch's engine does.
- anomaly mode (tg.autograd.detect_anomaly, anomaly.py): while on, each node keeps the traceback
  of the user's line that made it, and a NaN gradient raises naming the op and that line.

Threads (as PyTorch): the grad mode (grad_mode.py: no_grad, enable_grad, set_grad_enabled), the running
profile and the backward pass a thread runs (with its queue_callback queue) are that thread's
own, in `_state` (a threading.local; a new thread starts with gradients on).  Process-wide, as in
PyTorch: anomaly mode, the kernel tables and loaders, the Function subclass hooks, and the clock of
recorded in-place writes; each says so where it is defined.  A graph itself is not locked: two
threads running backward through one graph at once is not supported (PyTorch locks its nodes).

Version counters (as PyTorch's): every tensor has one, a one-element list shared with
its views (an op whose output array is a view of an input's shares that input's list);
each in-place write bumps it.  When an op that saved arrays records itself, `apply` notes the
version of each of its tensors (the inputs and the output) then; `run_backward` compares them
with the versions now before running the op's backward, and only where one moved does it look
for a saved array in that tensor's memory (then it raises).  So the forward pays a counter read
per tensor, and the walk from arrays to their storage runs only for a write that happened.  The
ops themselves know nothing of this.

Because ops see arrays, a test can run one backward without a graph:

    op = Softmax(np)
    y = op.forward(x, dim=-1)
    dx, = op.backward(dy)

The engine sees tensors only through `TensorBase`, the class `Tensor` derives from: the array,
the device, `requires_grad`, `grad`, the op that made it (`_ctx`) and the version counter.  It
makes each op's output with `type(first tensor argument)._make(...)`, so it never imports the
Tensor (nor anything else of tensorgrad above the backend).

Your own ops can also be written in PyTorch's form, `forward(ctx, ...)` / `backward(ctx, ...)`
as staticmethods on Tensors, subclassing this same `Function` (`tg.autograd.Function`):
custom_function.py adapts that form to this one, through the hook `on_subclass` below.

The kernel seam: a device may run a fused kernel version of an op (tensorgrad/kernels/).  A
kernel is a class that names the reference op it `replaces` and says, in `accepts(*args,
**params)`, whether it takes these arguments; `apply` looks the op up in the device's table (a
dict lookup, for every op), asks `accepts` once, before forward, and builds the kernel's node instead of the
reference's when it does.  The tables are filled on a device's first op by the loader registered
for it (`register_kernel_loader`; tensorgrad/kernels/ registers one per device, importing its
kernels only then), and emptied by `clear_kernels` (`tg.kernels.use` switches paths so).
"""

from __future__ import annotations

import threading

from . import anomaly, backend
from .anomaly import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly  # noqa: F401
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

# Process-wide: how many threads have a profile open.  While none does, `apply` reads this global
# instead of its thread's `profiler` (a global read is the cheaper of the two, on every op).
_profiles = 0
_profiles_lock = threading.Lock()


def set_thread_profiler(profile):
    """Make `profile` (a tg.profiler.profile, or None) the calling thread's running profile:
    profiler.py calls this on entering and leaving its `with` block."""
    global _profiles
    with _profiles_lock:
        _profiles += (profile is not None) - (_state.profiler is not None)
        _state.profiler = profile


# Process-wide: the clock of in-place writes recorded in the graph (rebase_history), read by
# every node made (Function.__init__); 0: none yet.  One clock for all threads (its stamps only
# need to be ordered); it moves under _epoch_lock, so two threads' writes never share a stamp.
_inplace_epoch = 0
_epoch_lock = threading.Lock()


class TensorBase:
    """What the engine reads and writes of a tensor; `Tensor` (tensor.py) derives from it.

    _data           the backend array (NumPy or CuPy)
    device          its device name ("cpu", "cuda", "strict", ...)
    requires_grad   whether backward computes a gradient for it (a property: only a floating-point
                    tensor may, and only a leaf's can be switched off; the engine reads the field
                    `_requires_grad` itself)
    grad            that gradient (a tensor of the same class, dtype, device and shape), accumulated by
                    run_backward (a property: an assigned one is checked; the engine writes `_grad`)
    _ctx            the Function node that made it (None for a leaf)
    _counter        its version counter: [number of in-place writes], one list shared with its views
    _hooks          None, or its hooks (hooks.TensorHooks: register_hook, retain_grad, post-accumulate
                    hooks), which the engine calls as `_hooks.on_gradient(tensor, grad)` and
                    `_hooks.post_accumulate` (it imports nothing of them)
    """

    __slots__ = ("_data", "device", "_requires_grad", "_grad", "_ctx", "_counter", "_hooks")

    @classmethod
    def _make(cls, data, device, requires_grad):
        """The fast constructor the engine and the ops use: no checks, no copy."""
        t = object.__new__(cls)
        t._data = data
        t.device = device
        t._requires_grad = requires_grad
        t._grad = None
        t._ctx = None
        t._counter = [0]
        t._hooks = None
        return t

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        """As PyTorch: an integer or bool tensor cannot require gradients (its gradient would be
        truncated), and a result of the graph cannot be taken out of it (use detach())."""
        value = bool(value)
        if value and not backend.is_floating(self._data.dtype):
            raise TypeError(f"only floating-point tensors can require gradients, got dtype {self._data.dtype}")
        if not value and self._ctx is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        self._requires_grad = value

    @property
    def grad(self):
        """The gradient backward accumulated (None before the first); the engine writes `_grad`."""
        return self._grad

    @grad.setter
    def grad(self, value):
        """As PyTorch, an assigned gradient must be None or a tensor of this tensor's dtype, device
        and shape: one that is not would be broadcast or cast by whatever reads it (an optimizer)."""
        if value is not None:
            if not isinstance(value, TensorBase):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}"
                )
            if value is self:
                raise RuntimeError("can't assign a tensor as its own grad")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{value._data.dtype}' to a tensor with dtype "
                    f"'{self._data.dtype}'. The gradient must have the tensor's dtype: assign "
                    f"grad.to({self._data.dtype})"
                )
            if value.device != self.device:
                raise RuntimeError(
                    f"attempting to assign a gradient with device '{value.device}' to a tensor with device "
                    f"'{self.device}'. Please ensure that the gradient and the tensor are on the same device"
                )
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a tensor of size "
                    f"'{list(self._data.shape)}'. Please ensure that the gradient and the tensor are the same size"
                )
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def _version(self) -> int:
        """How many in-place writes this tensor's storage has had (PyTorch's tensor._version)."""
        return self._counter[0]

    def _bump_version(self):
        """Count one in-place write to this storage: every tensor sharing it (its views, .data,
        detach()) sees the new version, and backward refuses arrays saved before it."""
        self._counter[0] += 1


_subclass_hooks: list = []  # called with each new Function subclass (see on_subclass); process-wide, as the classes


def on_subclass(hook):
    """Register hook(cls), called for every `Function` subclass defined from now on.

    custom_function.py registers the one that gives a subclass written in PyTorch's form (static
    forward / backward on Tensors) its `apply`; the engine knows only the raw-array form."""
    _subclass_hooks.append(hook)
    return hook


class Function:
    """One differentiable op: forward and backward side by side (see module docstring)."""

    __slots__ = ("xp", "parents", "saved", "versions", "epoch", "stack")  # stack: set in anomaly mode only

    def __init__(self, xp):
        self.xp = xp  # the array namespace of the inputs' device
        self.parents = None  # the input Tensors (None for non-tensor args), set by apply
        self.saved = None
        self.versions = None  # (counter, version, array) of the output and each input, when it saved arrays
        self.epoch = _inplace_epoch  # recorded in-place writes before this node (see rebase_history)

    def __init_subclass__(cls, **kwargs):
        """Runs the hooks registered with `on_subclass` (custom_function.py's adapts PyTorch's
        form); ops written on raw arrays (every op in ops/) keep the `apply` below."""
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

    # Why an op has no Tensor-level formula (`backward_graph`), for the error its double backward
    # raises; an op that cannot have one says why in its own class attribute.
    double_backward_reason = "its backward runs on raw arrays and has no Tensor-level formula yet"

    def backward_graph(self, grad, output):
        """The backward as Tensor ops, recorded in the graph: what `backward(create_graph=True)` and
        `autograd.grad(..., create_graph=True)` run for this node (the array `backward` is what the
        first-order pass runs).  `grad` is the output's gradient (a Tensor), `output` the tensor this
        node made; the inputs are `self.parents`, and the params the op saved in `self.saved` may
        be read (only its non-array entries: the arrays are the first-order pass's own).  Returns
        one gradient per input (Tensors, or None), as `backward` returns arrays.

        This default is for an op without a formula: it runs the array backward (so the
        first-order values are those of the plain pass) and gives each gradient a node that
        raises "double backward is not implemented for <op>" when a later pass reaches it, and
        only then: a gradient that is never differentiated again needs no formula, and one that is
        never comes out silently constant."""
        in_grads = self.backward(grad._data)
        if not isinstance(in_grads, tuple):
            in_grads = (in_grads,)
        sources = [t for t in (grad, *self.parents) if isinstance(t, TensorBase) and t._requires_grad]
        out = []
        for pg in in_grads:
            if pg is None:
                out.append(None)
                continue
            t = type(grad)._make(backend.ensure_array(self.xp, pg), grad.device, bool(sources))
            if sources:
                node = _NoDoubleBackward(self.xp)
                node.parents = tuple(sources)
                # it stands for this op's gradient, which read the inputs as the op saw them: the
                # op's epoch, so a later pass pairs them with those versions (parents_seen), not
                # with writes recorded after the op (which would read as a stale view)
                node.epoch = self.epoch
                node.saved = (anomaly.backward_name(self), type(self).double_backward_reason)
                t._ctx = node
            out.append(t)
        return tuple(out)

    @classmethod
    def apply(cls, *args, **params):
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
        first = tensors[0]
        xp = backend.namespace(device)
        table = _kernel_tables.get(device)
        if table is None:
            table = kernel_table(device)
        kernel = table.get(cls)  # the device's kernel version of the op, if it has one and takes these inputs
        ctx = kernel(xp) if kernel is not None and kernel.accepts(*arrays, **params) else cls(xp)
        profiler = _state.profiler if _profiles else None
        if profiler is None:
            out = ctx.forward(*arrays, **params)
        else:
            out = profiler._op(ctx, "forward", ctx.forward, *arrays, **params)
        out = backend.ensure_array(xp, out)
        requires_grad = requires_grad and _state.grad_enabled
        result = type(first)._make(out, device, requires_grad)
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
            ctx.parents = args
            result._ctx = ctx
            if ctx.saved:
                ctx.versions = versions_now(result, tensors)
            if anomaly.enabled:  # detect_anomaly: where the user's code made this node (anomaly.py)
                ctx.stack = anomaly.forward_stack()
        return result


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


_NOT_ARRAYS = (int, float, bool, str, type(None))


def versions_now(result, tensors):
    """[(version counter, version now, array)] of the output and each tensor argument: what
    `_check_versions` compares at backward.  The array is the tensor's array now, so that the
    memory a later write went to is the memory the op saw."""
    records = [(result._counter, result._counter[0], result._data)]
    for t in tensors:
        records.append((t._counter, t._counter[0], t._data))
    return records


def _saved_arrays(saved):
    """The arrays among an op's saved values (an index or a list of arrays: one level in)."""
    for item in saved:
        for array in item if type(item) is tuple or type(item) is list else (item,):
            if not isinstance(array, _NOT_ARRAYS):
                yield array


def _saved_in(ctx, array) -> bool:
    """Whether one of ctx's saved arrays is `array` (a tensor's array at forward time) or lies in its
    memory.  A saved array that is one of the op's tensors' own arrays stands for that tensor alone
    (the parameters of a fused optimizer are views of one flat array, each with its own counter); a
    saved view, or a fresh array the output views, is matched by storage: with every tensor whose
    array shares it."""
    own = {id(a) for _, _, a in ctx.versions if a is not None}
    root = None
    for s in _saved_arrays(ctx.saved):
        if s is array:
            return True
        if id(s) in own:
            continue
        if root is None:
            root = backend.storage_of(array)
        if backend.storage_of(s) is root:
            return True
    return False


def _check_versions(ctx, output):
    """Raise if an array `ctx` (which made `output`) saved was written in place after its forward.

    ctx.versions holds (counter, version, array) per tensor of the op; array None: the tensor itself
    was saved (a custom Function's save_for_backward), so any write to it raises."""
    for counter, version, array in ctx.versions:
        if counter[0] != version and (array is None or _saved_in(ctx, array)):
            i = next(
                (i for i, p in enumerate(ctx.parents) if isinstance(p, TensorBase) and p._counter is counter), None
            )
            if i is not None or output._counter is counter:
                t, what = (ctx.parents[i], f"input {i}") if i is not None else (output, "output 0")
                which = f"[{t.dtype} tensor of shape {tuple(t.shape)}], which is {what} of"
            else:  # a tensor a custom Function made inside its forward and saved
                which = "a tensor saved by"
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: {which} {type(ctx).__name__}Backward, is at version {counter[0]}; "
                f"expected version {version} instead. Hint: the write came after the forward pass that saved "
                "it (x[...] = v, x += v, x.add_(v), opt.step()); write to a clone(), or call backward before "
                "the write."
            )


# --------------------------------------------------------------------------- in-place ops in the graph
def rebase_history(tensor, node, previous=None, view=False):
    """Make `node`, an in-place op that just wrote into `tensor`'s storage, the tensor's history
    (PyTorch's rebase_history): the same tensor object now stands for the new values.

    The graph still needs the version before the write (the node's own input, and the input of
    every node made earlier from this tensor): it becomes `node.previous`, an alias object holding
    the old `_ctx` and `requires_grad` (the storage, now overwritten, is shared; the version counter
    keeps any node that saved the old values from using them).  The write gets a stamp, the
    number of recorded writes so far; the stamp is also appended to the storage's counter
    (`counter[1:]`), so that a view taken before the write can be told apart (`parents_seen`).
    Returns the alias, to use as the node's first parent (or `previous`, when the caller made it).
    view=True: `node` writes nothing, it re-derives a view (x[i]) from its rebased base."""
    global _inplace_epoch
    if previous is None:
        previous = type(tensor)._make(tensor._data, tensor.device, tensor._requires_grad)
        previous._ctx = tensor._ctx
        previous._counter = tensor._counter
    with _epoch_lock:  # `+= 1` is a read and a write: two threads could take the same stamp
        _inplace_epoch += 1
        stamp = _inplace_epoch
    node.previous = previous
    node.stamp = stamp
    node.rederived_view = view
    if not view:
        tensor._counter.append(stamp)
    tensor._ctx = node
    tensor._requires_grad = True
    return previous


def parents_seen(ctx):
    """ctx's inputs in the versions ctx read (only called once an in-place write was recorded).

    Nodes keep tensor objects, and a recorded in-place write rebinds its tensor to a new node;
    a node made before the write (ctx.epoch < the write's stamp) read the version before it, so
    the chain of `previous` versions is walked back to that one.  And a view of a tensor (x[0],
    x.T) made before a recorded write to the storage they share, then read after it, would pair
    the new values with the old history: that raises instead of giving a wrong gradient."""
    out = []
    for p in ctx.parents:
        if isinstance(p, TensorBase):
            node = p._ctx
            while node is not None and getattr(node, "stamp", 0) > ctx.epoch:
                p = node.previous
                node = p._ctx
            counter = p._counter
            if len(counter) > 1 and node is not None and _is_view(node, counter):
                born = getattr(node, "stamp", node.epoch)
                if any(born < s <= ctx.epoch for s in counter[1:]):
                    raise RuntimeError(
                        f"a view made by {type(node).__name__}Backward was used by {type(ctx).__name__}Backward "
                        "after an in-place operation recorded in the graph wrote into the tensor it views; its "
                        "history does not include that write. Take the view again after the write (or clone it)."
                    )
        out.append(p)
    return out


def _is_view(node, counter) -> bool:
    """Whether `node` made a view: an output sharing the storage (`counter`) of one of its inputs
    (an in-place write's node shares its previous version's storage but is not one)."""
    if hasattr(node, "stamp"):
        return node.rederived_view
    return node.parents is not None and any(isinstance(q, TensorBase) and q._counter is counter for q in node.parents)


def unbroadcast(xp, grad, shape):
    """Sum a gradient shaped like a broadcast result back to an input's `shape`.

    Broadcasting copies an input along new leading axes and along axes of size 1;
    the adjoint of a copy is a sum, so those axes are summed away (by backend.sum, as accurately as
    PyTorch sums: float16 accumulated in float32, axes that are not innermost summed in blocks).
    """
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1)
    if axes:
        grad = backend.sum(xp, grad, axes, keepdims=True)
    return grad.reshape(shape)


def _topological_order(roots):
    """Every tensor the `roots` depend on (through tensors that require grad), inputs first.

    An explicit stack instead of recursion: a graph thousands of ops deep is fine.
    """
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
        for p in ctx.parents if not _inplace_epoch else parents_seen(ctx):
            if p is not None and getattr(p, "_requires_grad", False) and id(p) not in expanded:
                stack.append((p, False))
    return order


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
    outer = _state.callbacks  # a pass this one runs inside (a backward called from a hook), if any
    callbacks = _state.callbacks = []  # this pass's queue_callback queue
    try:
        if create_graph:
            _backpropagate_graph(order, roots, root_grads, retain_graph, capture)
        else:
            _backpropagate(order, roots, root_grads, retain_graph, capture)
        while callbacks:  # a callback may queue another: it runs too
            callbacks.pop(0)()
    finally:
        _state.callbacks = outer


def _backpropagate(order, roots, root_grads, retain_graph, capture):
    """The reverse pass of `backpropagate` over `order` (its tensors, inputs first)."""
    profiler = _state.profiler
    grads = {}
    owned = set()  # ids whose accumulated gradient is our own array (safe to add into)
    for r, g in zip(roots, root_grads):
        if id(r) in grads:  # the same root twice: its gradients add (NumPy's 0-d sum is a scalar)
            grads[id(r)] = backend.ensure_array(backend.namespace(r.device), grads[id(r)] + g)
            owned.add(id(r))
        else:
            grads[id(r)] = g
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
            if hooks is not None and hooks.post_accumulate:
                for fn in tuple(hooks.post_accumulate.values()):
                    if fn(node) is not None:
                        raise RuntimeError("Tensor post accumulate grad hooks should return None.")
            continue
        if ctx.versions is not None:
            _check_versions(ctx, node)
        in_grads = ctx.backward(g) if profiler is None else profiler._op(ctx, "backward", ctx.backward, g)
        if not isinstance(in_grads, tuple):
            in_grads = (in_grads,)
        if len(in_grads) != len(ctx.parents):
            in_grads = _check_count(ctx, in_grads)
        if anomaly.enabled:  # detect_anomaly: a NaN gradient raises, naming the op and its forward line
            anomaly.check_gradients(ctx, in_grads)
        for i, (p, pg) in enumerate(zip(ctx.parents if not _inplace_epoch else parents_seen(ctx), in_grads)):
            if pg is None or not isinstance(p, TensorBase) or not p._requires_grad:
                continue
            pg = backend.ensure_array(ctx.xp, pg)  # NumPy turns 0-d results into scalars
            if pg.shape != p._data.shape:
                if not expandable(p._data.shape, pg.shape):
                    raise RuntimeError(
                        f"Function {anomaly.backward_name(ctx)} returned an invalid gradient at index {i} - got "
                        f"{list(pg.shape)} but expected shape compatible with {list(p._data.shape)}"
                    )
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


def _backpropagate_graph(order, roots, root_grads, retain_graph, capture):
    """The reverse pass with create_graph=True: as `_backpropagate`, but every gradient is a Tensor
    and every step is a recorded op, so the gradients can be differentiated again (PyTorch's
    create_graph).  Grad mode is on while it runs (as PyTorch's engine sets it to create_graph);
    each node runs its `backward_graph` (a kernel op inherits its reference op's); broadcasting
    is undone by a recorded sum and reshape, a dtype by a recorded cast; gradients add out of
    place, and a leaf's .grad is a copy of its first gradient (a recorded clone), then `.grad +
    g`, a new tensor each time (PyTorch's AccumulateGrad under grad mode).  Hooks get Tensors."""
    grads = {}
    for r, g in zip(roots, root_grads):
        grads[id(r)] = grads[id(r)] + g if id(r) in grads else g
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
                if hooks is not None and hooks.post_accumulate:
                    for fn in tuple(hooks.post_accumulate.values()):
                        if fn(node) is not None:
                            raise RuntimeError("Tensor post accumulate grad hooks should return None.")
                continue
            if ctx.versions is not None:
                _check_versions(ctx, node)
            in_grads = ctx.backward_graph(g, node)
            if not isinstance(in_grads, tuple):
                in_grads = (in_grads,)
            if len(in_grads) != len(ctx.parents):
                in_grads = _check_count(ctx, in_grads)
            if anomaly.enabled:
                anomaly.check_gradients(ctx, [None if pg is None else pg._data for pg in in_grads])
            for p, pg in zip(ctx.parents if not _inplace_epoch else parents_seen(ctx), in_grads):
                if pg is None or not isinstance(p, TensorBase) or not p._requires_grad:
                    continue
                if pg._data.shape != p._data.shape:
                    if not expandable(p._data.shape, pg._data.shape):
                        i = next(i for i, q in enumerate(in_grads) if q is pg)
                        raise RuntimeError(
                            f"Function {anomaly.backward_name(ctx)} returned an invalid gradient at index {i} - got "
                            f"{list(pg._data.shape)} but expected shape compatible with {list(p._data.shape)}"
                        )
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


def unbroadcast_graph(grad, shape):
    """`unbroadcast` for a Tensor gradient, as recorded ops (a sum, then a reshape)."""
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1)
    if axes:
        grad = grad.sum(dim=axes, keepdim=True)
    return grad.reshape(shape) if grad.shape != tuple(shape) else grad


def _check_count(ctx, in_grads):
    """One gradient per input, or raise naming the op (PyTorch's check): a backward that returned
    fewer would leave an input without its gradient, silently.  Extra gradients may only be None."""
    n = len(ctx.parents)
    if len(in_grads) < n or any(g is not None for g in in_grads[n:]):
        raise RuntimeError(
            f"function {anomaly.backward_name(ctx)} returned an incorrect number of gradients (expected {n}, "
            f"got {len(in_grads)})"
        )
    return in_grads[:n]


def expandable(shape, target) -> bool:
    """Whether `shape` broadcasts to `target`: a gradient shaped `target` then sums back to `shape`
    (`unbroadcast`); any other shape is a wrong gradient, never reshaped."""
    extra = len(target) - len(shape)
    return extra >= 0 and all(n in (1, t) for n, t in zip(shape, target[extra:]))
