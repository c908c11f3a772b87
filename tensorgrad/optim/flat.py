"""One flat array per parameter group, so that an optimizer step is a handful of array
ops over all parameters at once instead of a Python loop over each of them.

After `FlatGroup(params)`, every parameter's `.data` is a view into one flat array.  Gradients
stay where backward puts them (each parameter's `.grad`); `gather_grads` copies them into one
flat gradient array at step time, one pass over the gradients.  The per-parameter state tensors
(exp_avg, ...) are views into flat state arrays too, so `state_dict()` keeps PyTorch's
per-parameter layout.

Anything that replaces a parameter's array (Module.to, an assignment to .data) or its state
(load_state_dict) breaks a view; `sync` notices by identity and copies the values back in.
"""

from __future__ import annotations

from .. import backend
from ..tensor import Tensor


class FlatGroup:
    def __init__(self, params, state_keys=()):
        self.params = list(params)
        first = self.params[0]
        self.device, self.dtype = first.device, first.dtype
        self.xp = backend.namespace(self.device)
        self.shapes = [p.shape for p in self.params]
        self.bounds, start = [], 0
        for p in self.params:
            self.bounds.append((start, start + p.numel()))
            start += p.numel()
        self.data = self.xp.empty(start, dtype=self.dtype)
        self.grad = self.xp.zeros(start, dtype=self.dtype)
        self.data_views = self._views(self.data)
        self.grad_views = self._views(self.grad)
        self.state = {key: self.xp.zeros(start, dtype=self.dtype) for key in state_keys}
        self.state_views = {key: self._views(a) for key, a in self.state.items()}
        for p, view in zip(self.params, self.data_views):
            view[...] = p._data
            p._data = view

    @staticmethod
    def fits(params) -> bool:
        """One device, one floating dtype."""
        ps = list(params)
        return (
            bool(ps)
            and all(p.device == ps[0].device and p.dtype == ps[0].dtype for p in ps)
            and backend.is_floating(ps[0].dtype)
        )

    def _views(self, flat):
        return [flat[a:b].reshape(shape) for (a, b), shape in zip(self.bounds, self.shapes)]

    def sync(self, state: dict) -> bool:
        """Bring values the flat arrays no longer alias back in; False if the group changed shape,
        device or dtype (then the caller rebuilds it)."""
        for i, p in enumerate(self.params):
            view = self.data_views[i]
            if p._data is not view:  # (while it is the view, shape, device and dtype are the group's)
                if p.shape != self.shapes[i] or p.device != self.device or p.dtype != self.dtype:
                    return False
                view[...] = p._data
                p._data = view
            s = state.get(p)
            if s is not None:
                for key, views in self.state_views.items():
                    t = s.get(key)
                    if t is None or t._data is not views[i]:
                        views[i][...] = t._data if t is not None else 0
                        s[key] = Tensor._make(views[i], self.device, False)
        return True

    def gather_grads(self):
        """Copy every parameter's gradient into the flat gradient array (where a parameter has none,
        its part keeps what it held)."""
        for p, gview in zip(self.params, self.grad_views):
            if p.grad is not None:
                gview[...] = p.grad._data
