"""Inverted dropout."""

from __future__ import annotations

from .. import backend
from ..autograd import Function


class Dropout(Function):
    r"""Training: each element is zeroed with probability $p$ and the kept ones are scaled by
    $1 / (1 - p)$, so $\mathbb{E}[y] = x$ and evaluation needs no rescaling (it is the identity):

    $$
    m \sim \mathrm{Bernoulli}(1 - p), \qquad y = \frac{x\, m}{1 - p}, \qquad dx = \frac{g\, m}{1 - p}
    $$

    (the same mask: it is stored by the forward).
    The mask is drawn by `keep_mask` below, from the seeded generator of $x$'s device, and stored as
    bool (1 byte).
    """

    def forward(self, x, p):
        mask = keep_mask(backend.device_of(x), x.shape, p)
        scale = 1.0 / (1.0 - p)
        self.save_for_backward(mask, scale)
        return x * mask * scale

    def backward(self, g):
        mask, scale = self.saved
        return g * mask * scale

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, m / (1 - p)$ with the forward's mask $m$ as a constant
        tensor: linear in $g$, free of $x$ ($\partial(dx)/\partial x = 0$), as PyTorch's dropout double
        backward."""
        mask, scale = self.saved
        return g * type(g)._make(mask.astype(g.dtype) * scale, g.device, False)


def keep_mask(device, shape, p):
    r"""Dropout's mask, $m \sim \mathrm{Bernoulli}(1 - p)$: $u \sim U[0, 1)$ (float32) from the device's
    seeded generator, $m = (u \ge p)$.  True = kept.  The attention's dropout draws its mask here too.

    float32 uniforms are multiples of $2^{-24}$, so the drop probability is $p$ rounded up to the next
    multiple of $2^{-24}$ (0.2 becomes 0.20000005); the kept values are scaled by exactly $1 / (1 - p)$.
    """
    return backend.rng(device).uniform(shape, backend.float32) >= p
