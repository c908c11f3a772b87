"""Embedding lookup."""

from __future__ import annotations

from .. import backend
from ..autograd import Function


class Embedding(Function):
    """z[..., :] = W[idx[...], :]  for W (V, D) and integer ids idx of any shape.

    Each output row is a copy of one row of W, so dW[v] is the sum of the gradient rows of
    every position holding id v.  Ids repeat (the same character many times in a batch),
    so this is a scatter-*add*, done as onehot(ids)^T @ G by the backend (deterministic).
    """

    def forward(self, idx, weight):
        self.save_for_backward(idx, weight.shape[0])
        return weight[idx]

    def backward(self, g):
        idx, num_embeddings = self.saved
        d = g.shape[-1]
        dw = backend.embedding_backward(self.xp, idx.reshape(-1), g.reshape(-1, d), num_embeddings)
        return None, dw
