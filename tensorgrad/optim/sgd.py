"""SGD with optional momentum and (L2, coupled) weight decay, as torch.optim.SGD."""

from __future__ import annotations

from ..tensor import Tensor
from .optimizer import Optimizer


def sgd_update_(p, g, buf, *, lr: float, momentum: float, dampening: float, weight_decay: float, nesterov: bool):
    """One SGD step on backend arrays, in place on p; returns the momentum buffer (new on
    the first step, when buf is None).  Torch's order:

        g <- g + wd * p                          (weight decay is part of the gradient here)
        buf <- g                   first step;   buf <- momentum * buf + (1 - dampening) * g after
        g <- g + momentum * buf    (nesterov)    or  g <- buf
        p <- p - lr * g
    """
    if weight_decay != 0:
        g = g + weight_decay * p
    if momentum != 0:
        if buf is None:
            buf = g.copy()
        else:
            buf *= momentum
            buf += (1 - dampening) * g
        g = g + momentum * buf if nesterov else buf
    p += -lr * g
    return buf


class SGD(Optimizer):
    def __init__(
        self,
        params,
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
    ):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
        }
        super().__init__(params, defaults)

    def _update_group(self, group: dict):
        hyper = {k: group[k] for k in ("lr", "momentum", "dampening", "weight_decay", "nesterov")}
        for p in group["params"]:
            if p.grad is None:
                continue
            s = self.state.get(p)
            buf = sgd_update_(p._data, p.grad._data, s["momentum_buffer"]._data if s else None, **hyper)
            p._bump_version()
            if s is None and buf is not None:
                self.state[p] = {"momentum_buffer": Tensor._make(buf, p.device, False)}
