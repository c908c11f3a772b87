"""In-place initialisers, as torch.nn.init: each overwrites tensor.data and returns the tensor.

Random ones draw from tensorgrad's seeded generator of the tensor's device (through the
tensor's own normal_ / uniform_), so tg.manual_seed(s) makes a freshly built model reproducible;
or, with generator=g, from the tg.Generator g, as in PyTorch.
"""

from __future__ import annotations

from ..autograd import no_grad
from ..tensor import Tensor


@no_grad()
def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """U(a, b)."""
    return tensor.uniform_(a, b, generator=generator)


@no_grad()
def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """N(mean, std^2)."""
    return tensor.normal_(mean, std, generator=generator)


@no_grad()
def constant_(tensor: Tensor, val: float) -> Tensor:
    tensor._data[...] = val
    tensor._bump_version()
    return tensor


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1)
