"""AdamW: Adam with decoupled weight decay (Loshchilov & Hutter), as torch.optim.AdamW."""

from __future__ import annotations

from .. import backend
from ..tensor import Tensor
from .flat import FlatGroup
from .optimizer import Optimizer


def adamw_update_(
    p, g, m, v, *, step: int, lr: float, beta1: float, beta2: float, eps: float, weight_decay: float, xp
) -> None:
    """One AdamW step on backend arrays, in place on p (param), m (exp_avg), v (exp_avg_sq).

        p <- p * (1 - lr * wd)                       decoupled decay: not part of the gradient
        m <- m + (1 - b1) * (g - m)                  = b1 m + (1 - b1) g      (torch's lerp_)
        v <- v * b2 + (1 - b2) * g * g               = b2 v + (1 - b2) g^2    (mul_, addcmul_)
        mhat = m / (1 - b1^t),  vhat = v / (1 - b2^t)                       (bias corrections)
        p <- p - lr * mhat / (sqrt(vhat) + eps)

    written in torch's order of operations (its single-tensor CPU path): the bias
    corrections are host floats, folded into step_size = lr / (1 - b1^t) and a divisor
    sqrt(1 - b2^t) of sqrt(v), so the arrays see only multiplies, adds, one sqrt and one
    divide, all in their own dtype (a Python float never upcasts a float32 array).
    Arrays of any shape work, so a fused version can call this on one flat buffer.
    """
    if weight_decay != 0:
        p *= 1 - lr * weight_decay
    tmp = xp.subtract(g, m)  # one scratch array for every product below (no other temporaries)
    tmp *= 1 - beta1
    m += tmp  # m + (1 - b1) * (g - m)
    v *= beta2
    xp.multiply(g, 1 - beta2, out=tmp)
    tmp *= g
    v += tmp  # v * b2 + ((1 - b2) * g) * g
    step_size = lr / (1 - beta1**step)
    bias_correction2_sqrt = (1 - beta2**step) ** 0.5
    denom = xp.sqrt(v)
    denom /= bias_correction2_sqrt
    denom += eps
    xp.multiply(m, -step_size, out=tmp)
    tmp /= denom
    p += tmp  # p + (-step_size * m) / denom


class AdamW(Optimizer):
    """torch.optim.AdamW.  With fused=True (the default where it applies: every parameter of a
    group on one device with one dtype) a group's parameters, gradients and moments live in
    flat arrays (optim/flat.py) and a step is one adamw_update_ over all of them, instead of a
    Python loop over each parameter.  Same numbers either way (tests/test_optim_fused.py)."""

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
            adamw_update_(p._data, p.grad._data, m, v, step=s["step"], xp=backend.namespace(p.device), **hyper)
            p._counter[0] += 1  # an in-place write (autograd.py's version counters)

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
        m, v = flat.state["exp_avg"], flat.state["exp_avg_sq"]

        def part(sl):  # elementwise: halves of the flat arrays can run on two threads
            adamw_update_(flat.data[sl], flat.grad[sl], m[sl], v[sl], step=step, xp=flat.xp, **hyper)

        backend.parallel(flat.xp, flat.data.shape[0], flat.data.size, part)
        for p in params:  # every parameter was written in place
            p._counter[0] += 1
        return True
