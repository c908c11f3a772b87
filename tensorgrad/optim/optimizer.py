"""Optimizer: the base class (parameter groups, zero_grad, state_dict), as torch.optim.Optimizer.

Updates run on the backend arrays (`p._data`, `p.grad._data`) in place: no graph is built,
each updated parameter's version is bumped (so a graph that saved it refuses a second backward),
nothing is read back from the device, and the arithmetic stays in the parameter's dtype.

A state_dict has PyTorch's layout, with parameters replaced by their position (counted
across all groups, in order):

    {"state": {0: {"step": 3, "exp_avg": tensor, ...}, 1: {...}},
     "param_groups": [{"lr": 0.001, "betas": (0.9, 0.999), ..., "params": [0, 1]}]}

("step" is a Python int here, a 0-d tensor in PyTorch.)
"""

from __future__ import annotations

from .. import backend
from ..autograd import enable_grad
from ..tensor import Tensor


class Optimizer:
    def __init__(self, params, defaults: dict):
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                "but got a Tensor (wrap it in a list: [p])"
            )
        self.defaults = defaults
        self.state: dict = {}  # Parameter -> its per-parameter state (tensors hash by identity)
        self.param_groups: list[dict] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict):
        """A dict with "params" and any hyperparameters that differ from the defaults."""
        group = dict(group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if len({id(p) for p in group["params"]}) != len(group["params"]) or any(id(p) in seen for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group (or twice in one)")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True):
        """Every parameter's gradient None (the default, as PyTorch's), or zeroed in place.  (`_grad`:
        the field behind the `grad` property, whose setter's checks have nothing to check for None;
        this runs at every step.)"""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    g._data[...] = 0
                    g._bump_version()

    def step(self, closure=None):
        """One update of every parameter with a .grad; closure() re-evaluates the loss if given."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            self._update_group(group)
        return loss

    def _update_group(self, group: dict):  # pragma: no cover - abstract
        raise NotImplementedError

    # ------------------------------------------------------------------ state dict
    def state_dict(self) -> dict:
        """The optimizer's state and hyperparameters, parameters replaced by their index.
        The tensors are the live state (not copies), as in PyTorch; tg.save copies them."""
        index, groups = {}, []
        for group in self.param_groups:
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            hyper = {k: v for k, v in group.items() if k != "params"}
            groups.append({**hyper, "params": [index[id(p)] for p in group["params"]]})
        state = {index[id(p)]: dict(s) for p, s in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict):
        """Restore hyperparameters and per-parameter state; the state tensors are copied onto
        each parameter's device (floating ones in the parameter's dtype)."""
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"loaded state dict has {len(saved_groups)} parameter groups, "
                f"the optimizer has {len(self.param_groups)}"
            )
        for i, (saved, group) in enumerate(zip(saved_groups, self.param_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(
                    f"loaded state dict's parameter group {i} has {len(saved['params'])} parameters, "
                    f"the optimizer's has {len(group['params'])}"
                )
        by_index = {}
        for saved, group in zip(saved_groups, self.param_groups):
            by_index.update(zip(saved["params"], group["params"]))
        new_state = {}
        for idx, s in state_dict["state"].items():
            p = by_index.get(int(idx))
            if p is None:
                raise ValueError(f"loaded optimizer state refers to parameter {idx}, which no parameter group holds")
            new_state[p] = {k: _copy_state_value(v, p, k, idx) for k, v in s.items()}
        self.state = new_state
        for saved, group in zip(saved_groups, self.param_groups):
            group.update({k: v for k, v in saved.items() if k != "params"})

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {k}: {group[k]}" for k in sorted(group) if k != "params")
        return "\n".join(lines + [")"])


def _copy_state_value(value, p: Tensor, key, idx):
    """A state entry for parameter p: a tensor is copied onto p's device (and dtype, if floating)."""
    if not isinstance(value, Tensor):
        return value
    if value.ndim and value.shape != p.shape:
        raise ValueError(
            f"loaded optimizer state {key!r} of parameter {idx} has shape {value.shape}, "
            f"the parameter has shape {p.shape}"
        )
    data = backend.to_device(value._data, p.device)
    if backend.is_floating(data.dtype):
        data = data.astype(p.dtype)  # astype copies: the optimizer never aliases the loaded dict
    else:
        data = data.copy()
    return Tensor._make(data, p.device, False)
