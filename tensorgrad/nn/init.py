"""In-place initialisers, as torch.nn.init: each overwrites tensor.data and returns the tensor.

Random ones draw from tensorgrad's seeded generator of the tensor's device (through
tg.rand / tg.randn), so tg.manual_seed(s) makes a freshly built model reproducible.
"""

from __future__ import annotations

from .. import backend
from ..autograd import no_grad
from ..creation import rand, randn
from ..tensor import Tensor


def _draw_dtype(tensor: Tensor, fn: str):
    """The generator makes float32 and float64; other float dtypes are drawn in float32 and cast."""
    if not backend.is_floating(tensor.dtype):
        raise TypeError(f"init.{fn}: expected a floating-point tensor, got dtype {tensor.dtype}")
    return tensor.dtype if tensor.dtype in (backend.float32, backend.float64) else backend.float32


@no_grad()
def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """U(a, b)."""
    u = rand(tensor.shape, dtype=_draw_dtype(tensor, "uniform_"), device=tensor.device)._data
    tensor._data[...] = u * (b - a) + a
    tensor._counter[0] += 1  # an in-place write: bump the version (autograd.py)
    return tensor


@no_grad()
def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """N(mean, std^2)."""
    z = randn(tensor.shape, dtype=_draw_dtype(tensor, "normal_"), device=tensor.device)._data
    tensor._data[...] = z * std + mean
    tensor._counter[0] += 1  # an in-place write: bump the version (autograd.py)
    return tensor


@no_grad()
def constant_(tensor: Tensor, val: float) -> Tensor:
    tensor._data[...] = val
    tensor._counter[0] += 1  # an in-place write: bump the version (autograd.py)
    return tensor


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1)
