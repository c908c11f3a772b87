"""Distances: cosine_similarity, pairwise_distance and pdist, as compositions (F.normalize, the
p-norm of ops/losses.py: PNorm, and indexing), each piece with its own backward."""

from __future__ import annotations

from ... import backend
from ...backend import ShapeError
from ...ops.losses import PNorm
from ...tensor import Tensor
from ...tensor_methods.common import broadcast_shapes, normalize_dim
from .normalization import normalize


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along dim, x1 and x2 broadcast (as PyTorch,
    which divides each vector by its clamped norm before the dot product)."""
    if not backend.is_floating(x1.dtype) or x1.dtype != x2.dtype:
        raise TypeError(f"cosine_similarity: expects floating-point inputs of one dtype, got {x1.dtype}, {x2.dtype}")
    shape = broadcast_shapes("cosine_similarity", x1.shape, x2.shape)
    x1, x2 = x1.expand(*shape), x2.expand(*shape)
    dim = normalize_dim(dim, len(shape), "cosine_similarity")
    return (normalize(x1, 2.0, dim, eps) * normalize(x2, 2.0, dim, eps)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p along the last dim (of the larger input; x1 and x2 broadcast)."""
    if not backend.is_floating(x1.dtype):
        raise TypeError(f"pairwise_distance: expects a floating-point input, got {x1.dtype}")
    ndim = max(x1.ndim, x2.ndim)
    diff = x1 - x2 + eps
    if ndim == 0:  # the norm of one number: |diff|
        return PNorm.apply(diff.reshape(1), p=p, dim=(0,), keepdim=False)
    return PNorm.apply(diff, p=p, dim=(ndim - 1,), keepdim=keepdim)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """||input[i] - input[j]||_p for every pair of rows i < j of an (N, M) input, in row-major order
    (the upper triangle of the distance matrix): N (N - 1) / 2 distances."""
    if input.ndim != 2:
        raise ShapeError(f"pdist: only supports 2-d (N, M) inputs, got shape {input.shape}")
    if not backend.is_floating(input.dtype):
        raise TypeError(f"pdist: expects a floating-point input, got {input.dtype}")
    if p < 0:
        raise RuntimeError(f"pdist: only supports non-negative p values, got {p}")
    xp = backend.namespace(input.device)
    i, j = xp.triu_indices(input.shape[0], 1)
    rows = lambda ids: Tensor._make(ids.astype(backend.int64), input.device, False)  # noqa: E731
    return PNorm.apply(input[rows(i)] - input[rows(j)], p=p, dim=(1,), keepdim=False)
