"""One flat array per parameter group for the gradients and for each kind of state, so that an
optimizer step is a handful of array ops over all parameters at once instead of a Python loop
over each of them.

The parameters keep their own arrays.  Whatever shares a parameter's storage (its state_dict
entry, `detach()`, `.data`, a view or slice of it) must see every step, as with the per-parameter
loop and in PyTorch, and any of these may have been taken before the optimizer existed; so no
parameter is ever moved into a flat array, and the update writes each parameter where it is (for
AdamW: ops/adamw.py's AdamWParamsUpdate).  Gradients stay where backward puts them (each
parameter's `.grad`); `gather_grads` copies them into the flat gradient array at step time, one
pass over the gradients.  The per-parameter state tensors (exp_avg, ...) are the optimizer's own:
views into the flat state arrays from their creation, so `state_dict()` keeps PyTorch's
per-parameter layout and the update writes them where they are.

`sync` runs before each step: a parameter whose array was replaced (Module.to, an assignment to
.data) is taken from its new array (`prepared`, what the optimizer made for the old arrays, is
dropped), a new shape, device or dtype makes the caller rebuild the group, and state tensors that
are no longer the flat views (load_state_dict) are copied into them.
"""

from __future__ import annotations

import itertools
import operator

from .. import backend
from ..tensor import Tensor

# Each parameter's gradient and each tensor's array, read in C (`map`): the loops over a group's
# parameters run at every step.  `_grad` is what the `grad` property returns.
_grad_of, _data_of = operator.attrgetter("_grad"), operator.attrgetter("_data")
_NONES = itertools.repeat(None)


class FlatGroup:
    def __init__(self, params, state_keys=()):
        self.params = list(params)
        first = self.params[0]
        self.device, self.dtype = first.device, first.dtype
        self.xp = backend.namespace(self.device)
        self.shapes = [p.shape for p in self.params]
        self.arrays = [p._data for p in self.params]  # each parameter's own array (at the last sync)
        self.prepared: dict = {}  # what the optimizer made for these arrays; emptied when one is replaced
        self.bounds, start = [], 0
        for p in self.params:
            self.bounds.append((start, start + p.numel()))
            start += p.numel()
        self.grad = self.xp.zeros(start, dtype=self.dtype)
        self.grad_views = self._views(self.grad)
        self.state = {key: self.xp.zeros(start, dtype=self.dtype) for key in state_keys}
        self.state_views = {key: self._views(a) for key, a in self.state.items()}

    @staticmethod
    def fits(params) -> bool:
        """One device, one floating dtype."""
        ps = list(params)
        return (
            bool(ps)
            and all(p.device == ps[0].device and p.dtype == ps[0].dtype for p in ps)
            and backend.is_floating(ps[0].dtype)
        )

    def holds(self, params) -> bool:
        """Whether `params` are this group's parameters: the same tensors, in the same order (by
        identity: `==` between tensors compares their values)."""
        return len(params) == len(self.params) and all(map(operator.is_, params, self.params))

    def _views(self, flat):
        return [flat[a:b].reshape(shape) for (a, b), shape in zip(self.bounds, self.shapes)]

    def sync(self, state: dict) -> bool:
        """Take in replaced parameter arrays and copy state the flat arrays no longer alias into
        them; False if a parameter changed shape, device or dtype (then the caller rebuilds the
        group)."""
        for i, p in enumerate(self.params):
            if p._data is not self.arrays[i]:  # (while it is, shape, device and dtype are the group's)
                if p.shape != self.shapes[i] or p.device != self.device or p.dtype != self.dtype:
                    return False
                self.arrays[i] = p._data
                self.prepared.clear()
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
        its part keeps what it held): one concatenation when every parameter has one."""
        grads = list(map(_grad_of, self.params))
        if all(map(operator.is_not, grads, _NONES)):  # (identities, in C: `None in grads` calls each `==`)
            self.xp.concatenate(list(map(_data_of, grads)), axis=None, out=self.grad)  # (axis=None: each flattened)
            return
        for g, gview in zip(grads, self.grad_views):
            if g is not None:
                gview[...] = g._data
