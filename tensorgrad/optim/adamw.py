"""AdamW: Adam with decoupled weight decay (Loshchilov & Hutter), as torch.optim.AdamW."""

from __future__ import annotations

from .. import autograd, backend
from ..ops.adamw import AdamWUpdate
from ..tensor import Tensor
from .flat import FlatGroup
from .optimizer import Optimizer


class AdamW(Optimizer):
    """torch.optim.AdamW.  With fused=True (the default where it applies: every parameter of a
    group on one device with one dtype) a group's parameters and moments live in flat arrays
    (optim/flat.py), the gradients are copied into one at each step, and a step is one update
    over all of them (the device's adamw_step kernel, or ops/adamw.py's adamw_update_), instead of a Python loop
    over each parameter.  Same numbers either way (tests/test_optim_fused.py)."""

    def __init__(
        self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.01,
        fused: bool | None = None,
    ):  # fmt: skip
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i, b in enumerate(betas):
            if not 0.0 <= b < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {b}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay})
        self.fused = fused is not False
        if fused and not all(FlatGroup.fits(g["params"]) for g in self.param_groups):
            raise ValueError("fused=True needs every group's parameters on one device with one floating dtype")
        self._flat: dict = {}  # id(group) -> FlatGroup

    def _update_group(self, group: dict):
        beta1, beta2 = group["betas"]
        hyper = {"lr": group["lr"], "beta1": beta1, "beta2": beta2, "eps": group["eps"]}
        hyper["weight_decay"] = group["weight_decay"]
        if self.fused and self._fused_step(group, hyper):
            return
        for p in group["params"]:
            if p.grad is None:
                continue
            s = self.state.get(p) or self._init_state(p)
            s["step"] += 1
            m, v = s["exp_avg"]._data, s["exp_avg_sq"]._data
            _update(p._data, p.grad._data, m, v, s["step"], p.device, hyper)
            p._bump_version()  # an in-place write (autograd.py's version counters)

    def _init_state(self, p: Tensor) -> dict:
        xp = backend.namespace(p.device)
        s = self.state[p] = {
            "step": 0,
            "exp_avg": Tensor._make(xp.zeros_like(p._data), p.device, False),
            "exp_avg_sq": Tensor._make(xp.zeros_like(p._data), p.device, False),
        }
        return s

    def _fused_step(self, group: dict, hyper: dict) -> bool:
        """One update of the whole group on its flat arrays; False where it does not apply (a
        parameter without a gradient this step, or parameters at different steps)."""
        params = group["params"]
        if any(p.grad is None for p in params):
            return False
        steps = {s["step"] if s else 0 for s in map(self.state.get, params)}
        if len(steps) != 1:
            return False
        flat = self._flat.get(id(group))
        if flat is None or flat.params != params or not flat.sync(self.state):
            if not FlatGroup.fits(params):
                return False
            flat = self._flat[id(group)] = FlatGroup(params, ("exp_avg", "exp_avg_sq"))
            flat.sync(self.state)  # copies any existing state into the flat arrays
        step = steps.pop() + 1
        for i, p in enumerate(params):
            s = self.state.get(p)
            if s is None:
                s = self.state[p] = {
                    "step": 0,
                    "exp_avg": Tensor._make(flat.state_views["exp_avg"][i], p.device, False),
                    "exp_avg_sq": Tensor._make(flat.state_views["exp_avg_sq"][i], p.device, False),
                }
            s["step"] = step
        flat.gather_grads()  # the gradients into the group's flat gradient array
        _update(flat.data, flat.grad, flat.state["exp_avg"], flat.state["exp_avg_sq"], step, flat.device, hyper)
        for p in params:  # every parameter was written in place
            p._bump_version()
        return True


def _update(p, g, m, v, step, device, hyper):
    """One AdamW step in place: the device's adamw_step kernel where it takes these arrays (the
    engine's kernel registry: contiguous, one float dtype), else the reference, ops/adamw.py's adamw_update_."""
    update = autograd.dispatch(AdamWUpdate, device, p, g, m, v, step=step, **hyper)
    update(backend.namespace(device))(p, g, m, v, step=step, **hyper)
