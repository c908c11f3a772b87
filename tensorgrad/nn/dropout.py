"""Dropout and its channel and alpha forms: active in train(), the identity in eval()."""

from __future__ import annotations

from . import functional as F
from .module import Module


class Dropout(Module):
    """Zero each element with probability p and scale the rest by 1/(1-p) while
    self.training; pass x through unchanged after .eval()."""

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        if inplace:
            raise NotImplementedError("Dropout(inplace=True) is not supported")
        self.p = p
        self.inplace = inplace

    def forward(self, x):
        return F.dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Dropout):
    """F.dropout1d: whole channels of (N, C, L) zeroed while training."""

    def forward(self, x):
        return F.dropout1d(x, self.p, self.training)


class Dropout2d(Dropout):
    """F.dropout2d: whole (n, c) planes zeroed while training."""

    def forward(self, x):
        return F.dropout2d(x, self.p, self.training)


class Dropout3d(Dropout):
    """F.dropout3d: whole (n, c) volumes zeroed while training."""

    def forward(self, x):
        return F.dropout3d(x, self.p, self.training)


class AlphaDropout(Dropout):
    """F.alpha_dropout: dropout that keeps SELU's mean and variance, while training."""

    def forward(self, x):
        return F.alpha_dropout(x, self.p, self.training)


class FeatureAlphaDropout(Dropout):
    """F.feature_alpha_dropout: alpha dropout of whole channels, while training."""

    def forward(self, x):
        return F.feature_alpha_dropout(x, self.p, self.training)
