"""Activation modules (parameter-free wrappers of F.relu, F.gelu)."""

from __future__ import annotations

from . import functional as F
from .module import Module


class ReLU(Module):
    def forward(self, x):
        return F.relu(x)


class GELU(Module):
    """approximate='none': x * Phi(x) with the exact normal CDF; 'tanh': the tanh formula."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


# ---------------------------------------------------------------- more activations (ops/activation.py)
class Sigmoid(Module):
    def forward(self, x):
        return F.sigmoid(x)


class Tanh(Module):
    def forward(self, x):
        return F.tanh(x)


class SiLU(Module):
    def forward(self, x):
        return F.silu(x)


class Mish(Module):
    def forward(self, x):
        return F.mish(x)


class Softsign(Module):
    def forward(self, x):
        return F.softsign(x)


class Hardsigmoid(Module):
    def forward(self, x):
        return F.hardsigmoid(x)


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, x):
        return F.softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0):
        super().__init__()
        self.min_val, self.max_val = min_val, max_val

    def forward(self, x):
        return F.hardtanh(x, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class ReLU6(Hardtanh):
    def __init__(self):
        super().__init__(0.0, 6.0)


class ELU(Module):
    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return F.elu(x, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


class CELU(ELU):
    def forward(self, x):
        return F.celu(x, self.alpha)


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"
