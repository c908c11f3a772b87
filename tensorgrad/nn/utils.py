"""Gradient utilities: clip_grad_norm_."""

from __future__ import annotations

import math

from .. import backend
from ..tensor import Tensor


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False) -> Tensor:
    """Scale every .grad in place so that their joint norm is at most max_norm; return the
    joint norm from before clipping (a 0-d tensor on the gradients' device), as PyTorch:

        total = || (||g_1||, ..., ||g_n||) ||          (the norm of all grads as one vector)
        coef  = min(max_norm / (total + 1e-6), 1)      g_i *= coef

    Everything stays on the device: no number is read back to the host (unless
    error_if_nonfinite=True, which must look at the total).  Each norm is computed as
    torch.linalg.vector_norm computes it (a float16 gradient's in float32) and has its gradient's
    dtype, as PyTorch's: coef and the products are those of PyTorch, float16 included.
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grad_tensors = [p.grad for p in parameters if p.grad is not None]
    grads = [t._data for t in grad_tensors]
    if not grads:
        return Tensor(0.0)
    device = backend.device_of(grads[0])
    xp = backend.namespace(device)
    norm_type = float(norm_type)
    norms = [_norm(xp, g, norm_type) for g in grads]
    total = _norm(xp, xp.stack(norms), norm_type)
    total = backend.ensure_array(xp, total)
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )
    coef = xp.minimum(max_norm / (total + 1e-6), 1.0)
    for g in grads:
        g *= coef.astype(g.dtype)
    for t in grad_tensors:
        t._bump_version()
    return Tensor._make(total, device, False)


def _norm(xp, g, norm_type):
    """||g||_p of every element of g, a 0-d array of g's dtype, accumulated as PyTorch's
    (backend.widen: float16 in float32; backend.sum)."""
    if norm_type == math.inf:
        return backend.ensure_array(xp, xp.abs(g).max())
    w = backend.widen(g)
    if norm_type == 2.0:
        out = xp.sqrt(backend.sum(xp, w * w))
    else:
        out = backend.sum(xp, xp.abs(w) ** norm_type) ** (1.0 / norm_type)
    return backend.narrow(out, g.dtype)
