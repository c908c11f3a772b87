"""AdamW: Adam with decoupled weight decay (Loshchilov & Hutter), as torch.optim.AdamW."""

from __future__ import annotations

from .. import autograd, backend
from ..ops.adamw import AdamWParamsUpdate, AdamWUpdate
from ..tensor import Tensor
from .flat import FlatGroup
from .optimizer import Optimizer


class AdamW(Optimizer):
    """torch.optim.AdamW.  With fused=True (the default where it applies: every parameter of a
    group on one device with one dtype) a group's moments live in flat arrays (optim/flat.py), the
    gradients are copied into one at each step, and a step is one update over all parameters, each
    in its own array (ops/adamw.py's AdamWParamsUpdate, or the device's kernel op for it), instead
    of a Python loop over each parameter; after steps where some parameters had no gradient, one
    update per run of consecutive parameters at one step count.  Same numbers either way, and
    every parameter keeps its storage either way (tests/test_optim_fused.py)."""

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

    def load_state_dict(self, state_dict: dict):
        """Optimizer.load_state_dict; then, on the fused path, the loaded state is copied into the
        flat arrays at once, so that the state tensors held from now on are the ones every step
        updates (as the per-parameter loop updates the loaded tensors themselves)."""
        super().load_state_dict(state_dict)
        if self.fused:
            for group in self.param_groups:
                self._flat_group(group)

    def _flat_group(self, group: dict) -> FlatGroup | None:
        """The group's flat arrays, in step with its parameters and state (built or rebuilt where
        needed); None where they do not apply (FlatGroup.fits)."""
        params = group["params"]
        flat = self._flat.get(id(group))
        if flat is None or not flat.holds(params) or not flat.sync(self.state):
            if not FlatGroup.fits(params):
                return None
            flat = self._flat[id(group)] = FlatGroup(params, ("exp_avg", "exp_avg_sq"))
            flat.sync(self.state)  # copies any existing state into the flat arrays
        return flat

    def _fused_step(self, group: dict, hyper: dict) -> bool:
        """The group's update with its flat gradient and moment arrays: one update per run of
        consecutive parameters that have a gradient and are at one step count, which is one run for
        the whole group when every parameter has a gradient at every step.  Each parameter is
        updated in its own array (AdamWParamsUpdate: it keeps its storage).  A parameter without a
        gradient this step is left as it is, as the per-parameter loop leaves it, and its step
        count stays behind the others'.  False where the flat arrays do not apply (FlatGroup.fits)."""
        flat = self._flat_group(group)
        if flat is None:
            return False
        params = group["params"]
        runs = []  # [first, end, step]: params[first:end] have gradients and are at this step now
        for i, p in enumerate(params):
            if p._grad is None:  # (the `grad` property's field: this loop runs at every step)
                continue
            s = self.state.get(p)
            if s is None:
                s = self.state[p] = {
                    "step": 0,
                    "exp_avg": Tensor._make(flat.state_views["exp_avg"][i], p.device, False),
                    "exp_avg_sq": Tensor._make(flat.state_views["exp_avg_sq"][i], p.device, False),
                }
            s["step"] += 1
            if runs and runs[-1][1] == i and runs[-1][2] == s["step"]:
                runs[-1][1] = i + 1
            else:
                runs.append([i, i + 1, s["step"]])
        flat.gather_grads()  # the gradients into the group's flat gradient array
        update = _params_update(flat)
        m, v = flat.state["exp_avg"], flat.state["exp_avg_sq"]
        for first, end, step in runs:
            update(first, end, flat.grad, m, v, step=step, **hyper)
            for p in params[first:end]:  # every parameter of the run was written in place
                p._bump_version()
        return True


def _params_update(flat: FlatGroup) -> AdamWParamsUpdate:
    """The AdamWParamsUpdate for the group's parameter arrays (the device's kernel op where it takes
    them: autograd.dispatch), made again when an array was replaced (FlatGroup.sync empties
    `prepared`) or the kernel path changed (tg.kernels.use)."""
    kernels = autograd.kernel_table(flat.device).get(AdamWParamsUpdate)
    made = flat.prepared.get("update")
    if made is None or made[0] is not kernels:
        cls = autograd.dispatch(AdamWParamsUpdate, flat.device, flat.arrays)
        made = flat.prepared["update"] = (kernels, cls(flat.arrays))
    return made[1]


def _update(p, g, m, v, step, device, hyper):
    """One AdamW step in place: the device's adamw_step kernel where it takes these arrays (the
    engine's kernel registry: contiguous, one float dtype), else the reference, ops/adamw.py's adamw_update_."""
    update = autograd.dispatch(AdamWUpdate, device, p, g, m, v, step=step, **hyper)
    update(backend.namespace(device))(p, g, m, v, step=step, **hyper)
