"""Embedding lookup (ops/embedding.py), embedding_bag (a composition), and the id check the class-id
losses share."""

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


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm=None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:  # fmt: skip
    """The sum, mean or max of each bag of embeddings: bags are the rows of a 2-d input (B, L), or
    the segments input[offsets[b] : offsets[b + 1]] of a 1-d one.  A composition: the rows weight[ids]
    (the Embedding op), times per_sample_weights (mode "sum"), then scatter_add / scatter_reduce("amax")
    into one row per bag (each with its backward); padding_idx entries are left out, an empty bag is 0."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag: mode must be 'sum', 'mean' or 'max', got {mode!r}")
    if max_norm is not None or scale_grad_by_freq:
        raise NotImplementedError("embedding_bag: max_norm and scale_grad_by_freq are not supported")
    if weight.ndim != 2:
        raise ShapeError(f"embedding_bag: weight must be 2-d (num_embeddings, D), got {weight.shape}")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"embedding_bag: per_sample_weights needs mode='sum', got {mode!r}")
        if per_sample_weights.shape != input.shape:
            raise ShapeError(f"embedding_bag: per_sample_weights {per_sample_weights.shape} must have the input's "
                             f"shape {input.shape}")  # fmt: skip
    xp = backend.namespace(input.device)
    n_emb = weight.shape[0]
    if padding_idx is not None:
        if not -n_emb <= padding_idx < n_emb:
            raise ValueError(f"embedding_bag: padding_idx must be within [-{n_emb}, {n_emb}), got {padding_idx}")
        padding_idx %= n_emb
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: offsets must be None when the input is 2-d (the rows are the bags)")
        bags, length = input.shape
        bag_of = xp.repeat(xp.arange(bags), length)
    elif input.ndim == 1:
        if offsets is None or offsets.ndim != 1:
            raise ValueError("embedding_bag: a 1-d input needs 1-d offsets (where each bag starts)")
        starts = offsets._data.astype(backend.int64)
        if include_last_offset:
            starts = starts[:-1]
        bags = starts.shape[0]
        if bags and int(starts[0]) != 0:
            raise ValueError(f"embedding_bag: offsets[0] has to be 0, got {int(starts[0])}")
        bag_of = xp.searchsorted(starts, xp.arange(input.shape[0]), side="right") - 1
    else:
        raise ShapeError(f"embedding_bag: input must be 1-d (with offsets) or 2-d (B, L), got {input.shape}")
    ids = input.reshape(-1)
    check_ids(ids, n_emb, "embedding_bag", "input")
    keep = xp.ones(ids.shape, dtype=bool) if padding_idx is None else ids._data != padding_idx
    pick = lambda a: Tensor._make(a[keep], input.device, False)  # noqa: E731  (positions that count)
    rows = embedding(pick(ids._data), weight)  # (N', D)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1)[pick(xp.arange(ids.shape[0]))].unsqueeze(1)
    target = pick(bag_of)[:, None] * Tensor._make(xp.ones((1, weight.shape[1]), dtype=backend.int64), input.device,
                                                  False)  # (N', D): each row's bag  # fmt: skip
    zeros = Tensor._make(xp.zeros((bags, weight.shape[1]), dtype=weight.dtype), input.device, False)
    if mode == "max":
        return zeros.scatter_reduce(0, target, rows, "amax", include_self=False)
    total = zeros.scatter_add(0, target, rows)
    if mode == "sum":
        return total
    counts = xp.zeros(bags, dtype=weight.dtype)
    backend.add_at(xp, counts, bag_of[keep], xp.ones((), dtype=weight.dtype))
    return total / Tensor._make(xp.maximum(counts, 1)[:, None], input.device, False)
