"""Embedding lookup (ops/embedding.py), and the id check the class-id losses share."""

from __future__ import annotations

from ... import backend
from ...backend import ShapeError
from ...ops.embedding import Embedding
from ...tensor import Tensor


def check_ids(ids: Tensor, n: int, op: str, what: str, ignore_index=None):
    """Integer ids in [0, n): a clear error instead of a wrapped or out-of-bounds read.

    On the CPU the check runs now.  On a GPU it is queued without a sync (backend.defer_check)
    and its error raised at the next .item() / .numpy(), as PyTorch reports CUDA errors late.
    """
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{op}: {what} must be an integer tensor, got dtype {ids.dtype}")
    if ids.numel() == 0:
        return
    data = ids._data
    bad = (data < 0) | (data >= n)
    if ignore_index is not None:
        bad &= data != ignore_index

    def fail():
        value = int(backend.to_numpy(data[bad].reshape(-1)[:1])[0])
        kind = "embeddings" if op == "embedding" else "classes"
        where = "" if ids.device == "cpu" else f" (a check queued on {ids.device}, reported at this read)"
        raise IndexError(f"{op}: {what} contains {value}, outside [0, {n}) ({n} = number of {kind}){where}")

    if ids.device == "cpu":
        if bad.any():
            fail()
    else:
        backend.defer_check(bad.any(), fail)


def embedding(input: Tensor, weight: Tensor) -> Tensor:
    """Rows of weight (V, D) picked by integer ids of any shape -> (*ids.shape, D)."""
    if weight.ndim != 2:
        raise ShapeError(f"embedding: 'weight' must be 2-D (num_embeddings, embedding_dim), got shape {weight.shape}")
    check_ids(input, weight.shape[0], "embedding", "the token ids")
    return Embedding.apply(input, weight)
