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
  (x[0] = 1, x += 1, opt.step()) makes backward raise instead of using the new values.

Version counters (as PyTorch's): every tensor has one, a one-element list shared with
its views (an op whose output array is a view of an input's shares that input's list);
each in-place write bumps it.  When an op records itself, `apply` notes, for every array
it saved, the tensor whose storage that array is (an input or the output) and its version
then; `run_backward` compares them with the versions now before running the op's
backward.  The ops themselves know nothing of this.

Because ops see arrays, a test can run one backward without a graph:

    op = Softmax(np)
    y = op.forward(x, dim=-1)
    dx, = op.backward(dy)
"""

from __future__ import annotations

import functools

from . import backend

_grad_enabled = True
Tensor = None  # tensor.py sets this (it imports this module, so it cannot be imported here)


def is_grad_enabled() -> bool:
    return _grad_enabled


class _GradMode:
    """Base of no_grad / enable_grad: a context manager and a decorator."""

    enabled = True

    def __enter__(self):
        global _grad_enabled
        self._prev = _grad_enabled
        _grad_enabled = self.enabled

    def __exit__(self, *exc):
        global _grad_enabled
        _grad_enabled = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):
    """No graph is recorded inside: `with tg.no_grad():` or `@tg.no_grad()`."""

    enabled = False


class enable_grad(_GradMode):
    enabled = True


class Function:
    """One differentiable op: forward and backward side by side (see module docstring)."""

    __slots__ = ("xp", "parents", "saved", "versions")

    def __init__(self, xp):
        self.xp = xp  # the array namespace of the inputs' device
        self.parents = None  # the input Tensors (None for non-tensor args), set by apply
        self.saved = None
        self.versions = None  # (counter, version, what) for each tensor whose array was saved

    def save_for_backward(self, *arrays):
        self.saved = arrays

    def needs_grad(self, i) -> bool:
        """Whether input i wants a gradient (always True when run without a graph)."""
        return self.parents is None or getattr(self.parents[i], "requires_grad", False)

    def forward(self, *args, **params):  # pragma: no cover - abstract
        raise NotImplementedError

    def backward(self, grad):  # pragma: no cover - abstract
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **params):
        device = None
        requires_grad = False
        arrays = []
        for a in args:
            if isinstance(a, Tensor):
                if device is None:
                    device = a.device
                elif a.device != device:
                    raise backend.DeviceError(
                        f"{cls.__name__}: expected all tensors on the same device, got {device} and {a.device}"
                    )
                requires_grad = requires_grad or a.requires_grad
                arrays.append(a._data)
            else:
                arrays.append(a)
        if device is None:
            raise TypeError(f"{cls.__name__}: needs at least one Tensor argument")
        xp = backend.namespace(device)
        ctx = cls(xp)
        out = backend.ensure_array(xp, ctx.forward(*arrays, **params))
        requires_grad = requires_grad and _grad_enabled
        result = Tensor._make(out, device, requires_grad)
        storage = backend.storage_of(out)
        if storage is not out:  # a view (reshape, transpose, slice): of an input's storage?
            for a in args:
                if isinstance(a, Tensor) and backend.storage_of(a._data) is storage:
                    result._counter = a._counter  # views share their base's version counter
                    break
        if requires_grad:
            ctx.parents = args
            result._ctx = ctx
            if ctx.saved:
                ctx.versions = _saved_versions(ctx.saved, args, result)
        return result


def _saved_versions(saved, args, result):
    """For each tensor (input or output) whose storage a saved array shares: its version
    counter, its version now, and how to name it in an error.  Saved arrays of the op's own
    (intermediates no tensor holds) cannot be written by the user and need no record."""
    tensors = [(a, f"input {i}") for i, a in enumerate(args) if isinstance(a, Tensor)]
    tensors.append((result, "output 0"))
    roots = None
    records = []
    for item in saved:
        for array in item if isinstance(item, (tuple, list)) else (item,):
            if not backend.is_array(array):
                continue  # a shape, a dtype, a flag, a Python number
            if roots is None:
                roots = [backend.storage_of(t._data) for t, _ in tensors]
            root = backend.storage_of(array)
            for (t, what), r in zip(tensors, roots):
                if r is root and all(c is not t._counter for c, _, _ in records):
                    records.append((t._counter, t._counter[0], (what, t.shape, t.dtype)))
    return records or None


def _check_versions(ctx):
    """Raise if an array `ctx` saved was written in place after its forward pass."""
    for counter, version, (what, shape, dtype) in ctx.versions:
        if counter[0] != version:
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: [{dtype} tensor of shape {tuple(shape)}], which is {what} of "
                f"{type(ctx).__name__}Backward, is at version {counter[0]}; expected version {version} "
                "instead. Hint: the write came after the forward pass that saved it (x[...] = v, x += v, "
                "x.add_(v), opt.step()); write to a clone(), or call backward before the write."
            )


def unbroadcast(grad, shape):
    """Sum a gradient shaped like a broadcast result back to an input's `shape`.

    Broadcasting copies an input along new leading axes and along axes of size 1;
    the adjoint of a copy is a sum, so those axes are summed away.
    """
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1)
    if axes:
        grad = grad.sum(axis=axes, keepdims=True)
    return grad.reshape(shape)


def _topological_order(root):
    """Every tensor `root` depends on (through tensors that require grad), inputs first.

    An explicit stack instead of recursion: a graph thousands of ops deep is fine.
    """
    order = []
    expanded = set()
    stack = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            order.append(node)
            continue
        if id(node) in expanded:
            continue
        expanded.add(id(node))
        stack.append((node, True))
        ctx = node._ctx
        if ctx is not None:
            if ctx.parents is None:
                raise RuntimeError(
                    "Trying to backward through the graph a second time: its saved arrays were "
                    "released after the first backward. Use backward(retain_graph=True) the first time."
                )
            for p in ctx.parents:
                if p is not None and getattr(p, "requires_grad", False) and id(p) not in expanded:
                    stack.append((p, False))
    return order


def run_backward(root, grad, retain_graph=False):
    """Backpropagate `grad` (an array shaped like root) into every leaf's `.grad`."""
    order = _topological_order(root)
    grads = {id(root): grad}
    owned = set()  # ids whose accumulated gradient is our own array (safe to add into)
    for node in reversed(order):
        g = grads.pop(id(node), None)
        if g is None:
            continue
        ctx = node._ctx
        if ctx is None:  # a leaf: accumulate into .grad
            if node.grad is not None:
                node.grad._data += g
                continue
            buffer = getattr(node, "_grad_buffer", None)  # a Parameter may bring its own array
            if buffer is not None and buffer.shape == g.shape and buffer.dtype == g.dtype:
                buffer[...] = g
                node.grad = Tensor._make(buffer, node.device, False)
            else:
                node.grad = Tensor._make(g if id(node) in owned else g.copy(), node.device, False)
            continue
        if ctx.versions is not None:
            _check_versions(ctx)
        in_grads = ctx.backward(g)
        if not isinstance(in_grads, tuple):
            in_grads = (in_grads,)
        for p, pg in zip(ctx.parents, in_grads):
            if pg is None or not isinstance(p, Tensor) or not p.requires_grad:
                continue
            pg = backend.ensure_array(ctx.xp, pg)  # NumPy turns 0-d results into scalars
            if pg.shape != p.shape:
                pg = unbroadcast(pg, p.shape)
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
