"""compare_grads: a gradient written by hand beside the one autograd computed, one line each.

The exercise of "becoming a backprop ninja" (write every backward of a small network by hand, then
check each against autograd's `.grad`) prints a line per tensor:

    from tensorgrad.testing import compare_grads
    h.retain_grad()                     # keep the .grad of an intermediate
    loss.backward()
    dh = ...                            # the same gradient, derived and written by hand
    compare_grads("h", dh, h)           # h               | exact: True  | approximate: True  | maxdiff: 0.0

exact: every element equal; approximate: within `rtol`/`atol` (tensorgrad.testing.assert_close's
defaults for the dtype when not given); maxdiff: the largest absolute difference.
"""

from __future__ import annotations

from collections import namedtuple

from .. import backend
from ..tensor import Tensor
from .comparison import default_tolerances

GradComparison = namedtuple("GradComparison", ["exact", "approximate", "max_diff"])


def compare_grads(name: str, manual, tensor: Tensor, rtol=None, atol=None, quiet=False) -> GradComparison:
    """Compare `manual` (a tensor or array shaped like `tensor`) with `tensor.grad`; print one line."""
    if tensor.grad is None:
        raise ValueError(
            f"compare_grads({name!r}): the tensor has no .grad; call .retain_grad() on it before backward "
            "(an intermediate keeps no gradient otherwise), or check it is part of the loss"
        )
    got = backend.to_numpy(manual._data if isinstance(manual, Tensor) else manual)
    want = tensor.grad.numpy()
    if got.shape != want.shape:
        squeeze = lambda shape: tuple(n for n in shape if n != 1)  # noqa: E731
        if squeeze(got.shape) != squeeze(want.shape):  # (64,) against (1, 64) is the same gradient
            raise ValueError(f"compare_grads({name!r}): the manual gradient has shape {got.shape}, .grad {want.shape}")
        got = got.reshape(want.shape)
    if rtol is None or atol is None:
        d_rtol, d_atol = default_tolerances(got.dtype, want.dtype)
        rtol, atol = (d_rtol if rtol is None else rtol), (d_atol if atol is None else atol)
    diff = abs(got.astype("float64") - want.astype("float64"))
    result = GradComparison(
        exact=bool((got == want).all()),
        approximate=bool((diff <= atol + rtol * abs(want.astype("float64"))).all()),
        max_diff=float(diff.max()) if diff.size else 0.0,
    )
    if not quiet:
        print(f"{name:15s} | exact: {str(result.exact):5s} | approximate: {str(result.approximate):5s} | "
              f"maxdiff: {result.max_diff:.3g}")  # fmt: skip
    return result
