"""Inverted dropout."""

from __future__ import annotations

from .. import backend
from ..autograd import Function


class Dropout(Function):
    """Training: each element is zeroed with probability p and the kept ones are scaled by
    1 / (1 - p), so E[y] = x and evaluation needs no rescaling (it is the identity):

        m ~ Bernoulli(1 - p),   y = x * m / (1 - p)
        dx = g * m / (1 - p)     (the same mask: it is stored by the forward)

    The mask is drawn from the seeded generator of x's device (backend.rng(device).keep_mask)
    and stored as bool (1 byte).
    """

    def forward(self, x, p, device):
        mask = backend.rng(device).keep_mask(x.shape, p)
        scale = 1.0 / (1.0 - p)
        self.save_for_backward(mask, scale)
        return x * mask * scale

    def backward(self, g):
        mask, scale = self.saved
        return g * mask * scale
