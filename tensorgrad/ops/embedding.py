"""Embedding lookup."""

from __future__ import annotations

from .. import backend
from ..autograd import Function

# A one-hot matrix of at most this many elements is built for the embedding backward.
_ONE_HOT_LIMIT = 1 << 26


def embedding_backward(xp, ids, grad_rows, num_embeddings):
    r"""$dW_v$ = the sum of `grad_rows[i]` over every $i$ with `ids[i] == v`.

    `ids`: $(N,)$ int; `grad_rows`: $(N, D)$.  With the one-hot matrix $O$ of shape $(V, N)$,
    $O_{vi} = [\mathit{ids}_i = v]$,

    $$
    dW_v = \sum_i O_{vi}\, \mathit{grad\_rows}_i, \qquad \text{that is} \qquad dW = O\, \mathit{grad\_rows},
    $$

    a matmul: deterministic on every device (no atomics, the same sums in the same order every
    run) and far faster than a scatter-add for small tables.  $O$ has $V N$ elements; past
    `_ONE_HOT_LIMIT` the scatter-add (`backend.add_at`) takes over.
    """
    n = ids.shape[0]
    if n * num_embeddings <= _ONE_HOT_LIMIT:
        one_hot = (ids[None, :] == xp.arange(num_embeddings)[:, None]).astype(grad_rows.dtype)  # (V, N)
        return one_hot @ grad_rows  # (V, D)
    dw = xp.zeros((num_embeddings, grad_rows.shape[1]), dtype=grad_rows.dtype)
    return backend.add_at(xp, dw, ids, grad_rows)


class Embedding(Function):
    r"""$z_{\ldots,:} = W_{\mathit{idx}_{\ldots},:}$ for $W$ of shape $(V, D)$ and integer ids `idx` of any shape.

    Each output row is a copy of one row of $W$, so $dW_v$ is the sum of the gradient rows of
    every position holding id $v$.  Ids repeat (the same character many times in a batch),
    so this is a scatter-*add*, done as $\mathrm{onehot}(\mathit{ids})^\top G$ by `embedding_backward`
    (deterministic).
    """

    def forward(self, idx, weight):
        self.save_for_backward(idx, weight.shape[0])
        return weight[idx]

    def backward(self, g):
        idx, num_embeddings = self.saved
        d = g.shape[-1]
        dw = embedding_backward(self.xp, idx.reshape(-1), g.reshape(-1, d), num_embeddings)
        return None, dw

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dW = \mathrm{onehot}(\mathit{ids})^\top G$ as a recorded `MatMul`
        with a constant one-hot $(V, N)$: linear in $G$ (its adjoint, $\mathrm{onehot}\; V$, is the gather
        again), free of $W$."""
        idx, num_embeddings = self.saved
        xp = self.xp
        flat = idx.reshape(-1)
        onehot = xp.zeros((flat.shape[0], num_embeddings), dtype=g.dtype)
        onehot[xp.arange(flat.shape[0]), flat] = 1
        onehot_t = type(g)._make(onehot.T, g.device, False)  # (V, N), a constant
        return None, onehot_t @ g.reshape(-1, g.shape[-1])
