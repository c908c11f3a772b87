"""Embedding: a lookup table of rows, indexed by integer ids."""

from __future__ import annotations

from .. import backend
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
