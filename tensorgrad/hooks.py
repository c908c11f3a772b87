"""Reading gradients: tensor hooks, retain_grad, and tg.autograd.grad.

The engine (autograd.backpropagate) knows one thing of hooks: a tensor whose `_hooks` slot is not
None has them run when its gradient is complete (`_hooks.on_gradient(tensor, grad)`), and a leaf
runs `_hooks.after_accumulate(tensor)` after accumulating its .grad.  Everything else is here, above the
engine: the TensorHooks object in that slot, the handles register_* return, and `grad`, the
engine's reverse pass run with `capture` instead of accumulation.  Tensor.register_hook,
retain_grad and register_post_accumulate_grad_hook (tensor_methods/hooks.py) and the module hooks
(nn/module.py) are built on these.
"""

from __future__ import annotations

import itertools

from . import backend, graph_walk
from .autograd import backpropagate
from .tensor_base import TensorBase


class RemovableHandle:
    """What every register_*hook returns: `handle.remove()` takes the hook out (as PyTorch's
    torch.utils.hooks.RemovableHandle; also a context manager that removes it on exit)."""

    # Process-wide: one numbering of all handles.  next() of an itertools.count is one call, so two
    # threads never take the same id (which would put both hooks under one key of a dict).
    _ids = itertools.count()

    def __init__(self, *dicts):
        self._dicts = dicts  # the dicts the hook was put in (a module's forward hooks, a tensor's ...)
        self.id = next(RemovableHandle._ids)

    def remove(self):
        for d in self._dicts:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


class TensorHooks:
    """A tensor's hooks, in its `_hooks` slot (None until the first is registered, so a tensor
    without hooks costs the engine one attribute check per node).

    grad              {handle id: fn(grad) -> None or a new grad}, in registration order
                      (Tensor.register_hook)
    post_accumulate   {handle id: fn(tensor)}, run by a leaf after its .grad was accumulated
                      (Tensor.register_post_accumulate_grad_hook)
    retains_grad      a non-leaf keeps its gradient in .grad (Tensor.retain_grad)
    """

    __slots__ = ("grad", "post_accumulate", "retains_grad")

    def __init__(self):
        self.grad = {}
        self.post_accumulate = {}
        self.retains_grad = False

    def on_gradient(self, tensor, g):
        """The gradient `g` (an array) of `tensor` is complete: run its grad hooks in order, each on
        the previous one's result; then, as PyTorch, a tensor that retains its gradient adds the
        final one into .grad.  Returns the gradient the engine goes on with.  A hook's new gradient
        must be a tensor of the gradient's dtype, device and shape (PyTorch's checks, in its order):
        it is used as it is, never cast or broadcast."""
        if self.grad:
            g = self._run_grad_hooks(tensor, type(tensor)._make(g, tensor.device, False))._data
        if self.retains_grad:
            if tensor._grad is None:
                tensor._grad = type(tensor)._make(g.copy(), tensor.device, False)
            else:
                tensor._grad._data += g
        return g

    def on_gradient_graph(self, tensor, t):
        """`on_gradient` in a create_graph pass: the gradient `t` is a Tensor (in the graph), the
        hooks get it and may return another, and a retained gradient is added out of place."""
        t = self._run_grad_hooks(tensor, t)
        if self.retains_grad:
            tensor._grad = t.clone() if tensor._grad is None else tensor._grad + t
        return t

    def after_accumulate(self, tensor):
        """The leaf `tensor` has accumulated its .grad (in either walk): run its post-accumulate
        hooks, in order; each must return None (PyTorch's check)."""
        for fn in tuple(self.post_accumulate.values()):
            if fn(tensor) is not None:
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")

    def _run_grad_hooks(self, tensor, t):
        """The grad hooks in order, each on the previous one's result (a Tensor), each new result
        checked as PyTorch checks it: a Tensor of t's dtype, device and shape."""
        for fn in tuple(self.grad.values()):
            new = fn(t)
            if new is None:
                continue
            if not isinstance(new, TensorBase):
                raise TypeError(f"a tensor hook must return None or a Tensor, got {type(new).__name__}")
            if new._data.dtype != t._data.dtype or new.device != tensor.device:
                raise RuntimeError(
                    f"hook '{getattr(fn, '__name__', fn)}' has changed the type of value (was "
                    f"{_type_name(t._data.dtype, tensor.device)} got {_type_name(new._data.dtype, new.device)}); "
                    "return a gradient of the same dtype and device"
                )
            if new._data.shape != t._data.shape:
                raise RuntimeError(
                    f"hook '{getattr(fn, '__name__', fn)}' has changed the size of value: "
                    f"expected {tuple(t._data.shape)}, got {tuple(new._data.shape)}"
                )
            t = new
        return t


def _type_name(dtype, device) -> str:
    """A gradient's type in a hook's error: its dtype, and its device where that is not the CPU."""
    return str(dtype) if device == "cpu" else f"{dtype} on {device}"


def hooks_of(tensor) -> TensorHooks:
    """The tensor's TensorHooks, made on first use."""
    if tensor._hooks is None:
        tensor._hooks = TensorHooks()
    return tensor._hooks


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False):
    """The gradients of `outputs` with respect to `inputs`, returned, as torch.autograd.grad; no
    tensor's `.grad` is touched (a tensor that retains its gradient still gets it, as in PyTorch).

    In the engine: the same reverse pass as backward (`backpropagate`), from every output at once
    with its grad_output (ones for a scalar output when None), with `capture` set to the inputs:
    the gradient reaching each input is recorded, and leaves accumulate nothing.  Tensor hooks on
    the way run as in backward; post-accumulate hooks do not (nothing is accumulated).
    create_graph=True: the pass records the graph of the gradients (each op's `backward_graph`,
    graph_walk.py), so the returned gradients can be differentiated again; grad_outputs that require
    grad are part of that graph.  retain_graph defaults to create_graph, as in PyTorch."""
    if retain_graph is None:
        retain_graph = create_graph
    single = isinstance(outputs, TensorBase)
    outputs = (outputs,) if single else tuple(outputs)
    inputs = (inputs,) if isinstance(inputs, TensorBase) else tuple(inputs)
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    elif isinstance(grad_outputs, TensorBase):
        grad_outputs = (grad_outputs,)
    else:
        grad_outputs = tuple(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(grad_outputs)} for {len(outputs)}")
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    root_grads = []
    for i, (out, go) in enumerate(zip(outputs, grad_outputs)):
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        xp = backend.namespace(out.device)
        if go is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = xp.ones(out._data.shape, dtype=out._data.dtype)
        else:
            g = go._data if isinstance(go, TensorBase) else xp.asarray(go, dtype=out._data.dtype)
            if g.shape != out._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and output[{i}] "
                    f"has a shape of {tuple(out._data.shape)}."
                )
            g = g.astype(out._data.dtype, copy=False)
        if create_graph:  # a Tensor: a grad_output that requires grad stays in the graph
            if isinstance(go, TensorBase) and go._data is g:
                g = go
            elif isinstance(go, TensorBase):
                g = go.to(out._data.dtype)
            else:
                g = type(out)._make(g, out.device, False)
        root_grads.append(g)
    capture = {id(t): None for t in inputs}
    walk = graph_walk.walk if create_graph else None  # the walk that records a graph, or autograd's on arrays
    backpropagate(outputs, root_grads, retain_graph=bool(retain_graph), capture=capture, walk=walk)
    result = []
    for i, t in enumerate(inputs):
        g = capture[id(t)]
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
            result.append(None)
        else:
            result.append(g if create_graph else type(t)._make(g.copy(), t.device, False))
    return tuple(result)
