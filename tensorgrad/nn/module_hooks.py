"""Module hooks, as PyTorch's: forward pre-hooks, forward hooks and full backward hooks.

Module.__call__ (nn/module.py) runs the forward alone while a module has no hook; otherwise
`call_with_hooks` below runs, in PyTorch's order: the forward pre-hooks (each may replace the
arguments), the backward hooks' wrapping of the inputs, forward, the forward hooks (each may
replace the output), the wrapping of the outputs.

The full backward hook, hook(module, grad_input, grad_output), as PyTorch builds it: every tensor
input that requires grad goes into forward through an identity op, and every tensor output comes
out through another; their outputs are tensors of our own, with tensor hooks
(Tensor.register_hook).  When backward reaches the output identities, their gradients are
grad_output; when it reaches the input identities (after everything inside the module, as they
are upstream of it in the graph), their gradients are grad_input, and once the last has arrived
the hook runs.  A hook that returns a new grad_input replaces the gradient that flows to the
inputs; the engine's nodes have one output each, so that replacement is supported for a module
with one tensor input that requires grad (as Linear, LayerNorm, a transformer block), and refused
with several (each input's gradient has gone on by the time the last one is known).
"""

from __future__ import annotations

from ..autograd import Function, is_grad_enabled
from ..tensor import Tensor


class BackwardHookIdentity(Function):
    """y = x, a node of its own so that a module's inputs and outputs have tensors to hook.
    Backward: dy/dx = I, so dL/dx = dL/dy."""

    custom_backward = True  # its output, its input as is, takes no in-place write, as PyTorch's (inplace.py)

    def forward(self, x):
        return x

    def backward(self, grad):
        return grad


def _wrap(t):
    return BackwardHookIdentity.apply(t) if isinstance(t, Tensor) and t.requires_grad else t


class _BackwardCall:
    """One forward of a module with backward hooks: collects grad_output and grad_input."""

    def __init__(self, module, hooks):
        self.module, self.hooks = module, hooks
        self.grad_inputs = None
        self.grad_outputs = None
        self.pending = 0

    def wrap_inputs(self, args):
        args = list(args)
        self.grad_inputs = [None] * len(args)
        self.input_tensors = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        for i in self.input_tensors:
            if args[i].requires_grad:
                args[i] = _wrap(args[i])
                args[i].register_hook(self._input_hook(i))
                self.pending += 1
        self.expected = self.pending
        return tuple(args)

    def wrap_outputs(self, output):
        single = isinstance(output, Tensor)
        outs = [output] if single else list(output) if isinstance(output, (tuple, list)) else None
        if outs is None:
            return output
        self.grad_outputs = [None] * len(outs)
        for j, o in enumerate(outs):
            if isinstance(o, Tensor) and o.requires_grad:
                outs[j] = _wrap(o)
                outs[j].register_hook(self._output_hook(j))
        if single:
            return outs[0]
        return type(output)(outs)

    def _output_hook(self, j):
        def hook(g):
            self.grad_outputs[j] = g
            if self.expected == 0 and all(
                x is not None for x in self.grad_outputs
            ):  # no input wants a gradient: PyTorch calls the hook once grad_output is known
                self._fire(None)

        return hook

    def _input_hook(self, i):
        def hook(g):
            self.grad_inputs[i] = g
            self.pending -= 1
            if self.pending == 0:
                return self._fire(i)
            return None

        return hook

    def _fire(self, last):
        grad_input = tuple(self.grad_inputs[i] for i in self.input_tensors)
        grad_output = tuple(self.grad_outputs or ())
        for hook in tuple(self.hooks.values()):
            new = hook(self.module, grad_input, grad_output)
            if new is None:
                continue
            new = tuple(new) if isinstance(new, (tuple, list)) else (new,)
            if len(new) != len(grad_input):
                raise RuntimeError(
                    f"Backward hook returned an invalid number of grad_input, got {len(new)}, "
                    f"but expected {len(grad_input)}"
                )
            if self.expected > 1 and any(a is not b for a, b in zip(new, grad_input)):
                raise NotImplementedError(
                    "a full backward hook that replaces grad_input is supported for a module with one tensor "
                    "input that requires grad; this one has several"
                )
            grad_input = new
        if last is None:
            return None
        return grad_input[self.input_tensors.index(last)]


def call_with_hooks(module, args, kwargs):
    """Module.__call__ with hooks (see the module docstring)."""
    for hook in tuple((module._forward_pre_hooks or {}).values()):
        new = hook(module, args)
        if new is not None:
            args = new if isinstance(new, tuple) else (new,)
    backward = None
    if module._backward_hooks and is_grad_enabled():
        backward = _BackwardCall(module, module._backward_hooks)
        args = backward.wrap_inputs(args)
    output = module.forward(*args, **kwargs)
    for hook in tuple((module._forward_hooks or {}).values()):
        new = hook(module, args, output)
        if new is not None:
            output = new
    if backward is not None:
        output = backward.wrap_outputs(output)
    return output
