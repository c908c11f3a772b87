"""Embedding: a lookup table of rows, indexed by integer ids; EmbeddingBag: their sums, means or maxima per bag."""

from __future__ import annotations

from .. import backend
from ..autograd import no_grad
from ..creation import empty
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class Embedding(Module):
    """weight (num_embeddings, embedding_dim), N(0, 1) as in PyTorch; forward(ids) -> (*ids.shape, D)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        dtype = backend.as_dtype(dtype) or backend.float32
        self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self):
        init.normal_(self.weight)

    def forward(self, ids):
        return F.embedding(ids, self.weight)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"


class EmbeddingBag(Module):
    """F.embedding_bag: weight (num_embeddings, embedding_dim), N(0, 1) (the padding_idx row zero);
    forward(input, offsets=None, per_sample_weights=None) -> one row per bag."""

    def __init__(self, num_embeddings: int, embedding_dim: int, mode: str = "mean", include_last_offset: bool = False,
                 padding_idx: int | None = None, device=None, dtype=None):  # fmt: skip
        super().__init__()
        self.num_embeddings, self.embedding_dim, self.mode = num_embeddings, embedding_dim, mode
        self.include_last_offset = include_last_offset
        self.padding_idx = None if padding_idx is None else padding_idx % num_embeddings
        dtype = backend.as_dtype(dtype) or backend.float32
        self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, mode=self.mode, per_sample_weights=per_sample_weights,
                               include_last_offset=self.include_last_offset, padding_idx=self.padding_idx)  # fmt: skip

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}"
