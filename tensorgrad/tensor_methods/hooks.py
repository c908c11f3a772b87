"""Tensor methods, reading gradients: retain_grad, register_hook and
register_post_accumulate_grad_hook, as PyTorch's.  Each puts data in the tensor's `_hooks` slot
(a hooks.TensorHooks, made on first use), which the engine runs when the tensor's gradient is
complete (see tensorgrad/hooks.py); a tensor without hooks costs backward nothing more."""

from __future__ import annotations

from ..hooks import RemovableHandle, hooks_of
from .common import TensorBase


class HooksMixin(TensorBase):
    __slots__ = ()

    def retain_grad(self):
        """Keep this non-leaf tensor's gradient in `.grad` after backward (accumulated over
        backwards, as a leaf's; after its register_hook hooks, as PyTorch).  A no-op on a leaf.
        In the engine: a flag in `_hooks`; when backward reaches the tensor, its final gradient is
        added into `.grad` (tensorgrad.hooks.TensorHooks.on_gradient)."""
        if len(self._counter) > 1:  # a view left stale by a recorded write: re-derived first (its hooks are its own)
            self._refresh_view(strict=False)
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._ctx is not None:
            hooks_of(self).retains_grad = True

    @property
    def retains_grad(self) -> bool:
        """Whether retain_grad() was called on this (non-leaf) tensor."""
        return self._hooks is not None and self._hooks.retains_grad

    def register_hook(self, hook):
        """Run `hook(grad)` each time this tensor's gradient is computed; it may return a new
        gradient (a tensor of the same shape) used in its place.  Several hooks run in
        registration order, each on the previous one's result.  For a leaf they run before the
        gradient is accumulated into .grad; for a non-leaf, before the gradient flows into the
        backward of the op that made it.  Returns a handle: `handle.remove()`.
        In the engine: the hook is stored in the tensor's `_hooks`, and backward calls it when it
        reaches the tensor in reverse topological order, i.e. once its gradient is complete."""
        if len(self._counter) > 1:  # a view left stale by a recorded write: re-derived first (its hooks are its own)
            self._refresh_view(strict=False)
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        hooks = hooks_of(self)
        handle = RemovableHandle(hooks.grad)
        hooks.grad[handle.id] = hook
        return handle

    def register_post_accumulate_grad_hook(self, hook):
        """Run `hook(tensor)` on this leaf after backward has accumulated its gradient into .grad
        (what an optimizer-in-backward or DistributedDataParallel's bucketed all-reduce uses).
        Returns a handle: `handle.remove()`.  In the engine: stored in the tensor's `_hooks`; the
        leaf's accumulation step calls it (not autograd.grad, which accumulates nothing)."""
        if len(self._counter) > 1:  # a view left stale by a recorded write: re-derived first (its hooks are its own)
            self._refresh_view(strict=False)
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._ctx is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        hooks = hooks_of(self)
        handle = RemovableHandle(hooks.post_accumulate)
        hooks.post_accumulate[handle.id] = hook
        return handle
