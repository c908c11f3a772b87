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
