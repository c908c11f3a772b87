"""The fused GPT as one op: token ids in, logits out, backward to every parameter at once.

`FusedGPT.apply(idx, *params, ...)` computes exactly what the lecture's `GPTLanguageModel` computes
from the same parameters (gpt/model.py: token and position embeddings, n_layer pre-norm residual
Blocks with packed heads and the MLP, ln_f, lm_head), with the compiled functions of
kernels/cpu_gpt.py: one call for the embeddings, one per block forward and one per block backward,
one for the head.  The logits are an ordinary differentiable tensor, and the loss a second op on
them: `FusedGPTLoss`, the lecture's `F.cross_entropy` of their `(B T, V)` view as one node.

The parameters come as Tensors, in the order of `param_order(n_layer, n_head)`; the model
(gpt/fused.py) gathers them, and it asks `FusedGPT.accepts(...)` first: the op runs on the CPU,
float32, in the "kernels" mode (`TENSORGRAD_KERNELS=reference` turns it off), for sequences of at
most `max_len` positions (its attention loops cost $T^2$ per head).  It imports nothing of gpt/.

Dropout draws the reference's keep masks (kernels/cpu.py's `keep_mask`: the reference's bits, the
generator left as the reference leaves it), in the reference's order: per block, the attention
weights' (B, H, T, T), then the projection's (B, T, C), then the MLP's (B, T, C).
"""

from __future__ import annotations

import numpy as np

from .. import autograd, backend
from ..ops import cross_entropy as ref_cross_entropy
from . import mode

# Per block, the parameters in this order (the state_dict names relative to blocks.<i>.); the
# query, key and value weights are per head (H of each), as the lecture's Heads hold them.
BLOCK_PARAMS = ("ln1.weight", "ln1.bias", "sa.heads.{h}.query.weight", "sa.heads.{h}.key.weight",
                "sa.heads.{h}.value.weight", "sa.proj.weight", "sa.proj.bias", "ln2.weight", "ln2.bias",
                "ffwd.net.0.weight", "ffwd.net.0.bias", "ffwd.net.2.weight", "ffwd.net.2.bias")  # fmt: skip
HEAD_PARAMS = ("ln_f.weight", "ln_f.bias", "lm_head.weight", "lm_head.bias")


def param_order(n_layer: int, n_head: int) -> list[str]:
    """The `state_dict` names of the op's parameters, in the order `apply` takes them."""
    names = ["token_embedding_table.weight", "position_embedding_table.weight"]
    for i in range(n_layer):
        for name in BLOCK_PARAMS:
            if "{h}" in name:
                names.extend(f"blocks.{i}.{name.format(h=h)}" for h in range(n_head))
            else:
                names.append(f"blocks.{i}.{name}")
    return names + list(HEAD_PARAMS)


def _block_count(n_head):
    return len(BLOCK_PARAMS) - 3 + 3 * n_head  # the per-block parameters: 3 of them are H each


class FusedGPT(autograd.Function):
    r"""`logits` `(B, T, V)` $= \mathrm{GPT}(\mathrm{idx})$, `idx` `(B, T)`, forward and backward by
    kernels/cpu_gpt.py.

    Forward (each line the reference op named in cpu_gpt.py):

    $$
    \begin{aligned}
    x &= \mathrm{tok}[\mathrm{idx}] + \mathrm{pos}[0:T], \\
    x &= \mathrm{Block}_i(x), \qquad i = 0, \ldots, n_{\mathrm{layer}} - 1, \\
    \mathrm{logits} &= \mathrm{LayerNorm}(x;\ \mathrm{ln\_f})\, W_{\mathrm{lm}}^\top + b_{\mathrm{lm}},
    \end{aligned}
    $$

    the first line `Embedding`, `Add`; the second `cpu_gpt.block_forward`; the third `LayerNorm`,
    `Linear`.

    Backward, from $g = \partial L / \partial\, \mathrm{logits}$: the head's, each block's in reverse,
    the embeddings' (the same lines in reverse: `cpu_gpt.head_backward`, `block_backward`,
    `embed_backward`); every parameter gets its gradient, `idx` none.
    """

    __slots__ = ()
    fresh_gradients = True  # every gradient a new array, the heads' disjoint row blocks of one
    max_len = 64  # the attention's loops cost T^2 per head: longer sequences run the op-by-op model

    @classmethod
    def accepts(cls, idx, *params, n_layer, n_head, vocab_size, device, mask, **config) -> bool:
        """Whether the op takes these arrays: the kernels on, the CPU, float32 parameters of the
        GPT's shapes, integer ids in range, at most `max_len` positions, a `(T, T)` mask that lets
        every position attend somewhere (a row with none is NaN in the reference: the op skips
        masked places, so it leaves such rows to the reference)."""
        if mode() != "kernels" or device != "cpu":
            return False
        if idx.ndim != 2 or idx.dtype.kind not in "iu" or not 0 < idx.shape[1] <= cls.max_len or idx.size == 0:
            return False
        if len(params) != 6 + n_layer * _block_count(n_head):
            return False
        if any(type(p) is not np.ndarray or p.dtype != np.float32 for p in params):
            return False
        tok, pos = params[0], params[1]
        C = tok.shape[-1]
        if tok.shape != (vocab_size, C) or pos.ndim != 2 or pos.shape[1] != C or idx.shape[1] > pos.shape[0]:
            return False
        if C % n_head or params[-2].shape != (vocab_size, C):
            return False
        T = idx.shape[1]
        if mask.shape != (T, T) or not mask.any(axis=1).all():
            return False
        return bool(idx.min() >= 0 and idx.max() < vocab_size)

    def forward(self, idx, *params, n_layer, n_head, vocab_size, device, scale, eps, mask, dropout, graph=None):
        """`eps`: (`ln1`, `ln2`) per block and `ln_f`'s; `mask` `(T, T)` bool, True = may attend;
        `dropout`: per block (`p_attention`, `p_proj`, `p_ffn`), 0 where none is drawn (eval mode);
        `graph`: see `backward_graph`."""
        from . import cpu, cpu_gpt  # noqa: PLC0415 - Numba only when the op runs

        idx = np.ascontiguousarray(idx, dtype=np.int64)
        params = tuple(np.ascontiguousarray(p) for p in params)
        B, T = idx.shape
        H = n_head
        mask = np.ascontiguousarray(mask, dtype=np.bool_)
        tok, pos = params[0], params[1]
        C = tok.shape[1]
        x = cpu_gpt.embed_forward(idx, tok, pos)  # (B * T, C)
        blocks = []
        per = _block_count(H)
        for i in range(n_layer):
            w = params[2 + i * per : 2 + (i + 1) * per]
            ln1_w, ln1_b = w[0], w[1]
            w_qkv = np.concatenate(w[2 : 2 + 3 * H])  # (3C, C): the heads' query, key, value weights stacked
            w_proj, b_proj, ln2_w, ln2_b, w_fc, b_fc, w_out, b_out = w[2 + 3 * H :]
            keeps = _keep_masks(cpu, device, dropout[i], (B * H, T, T), (B * T, C))
            saved = cpu_gpt.block_forward(
                x, ln1_w, ln1_b, float(eps[i][0]), w_qkv, w_proj, b_proj, ln2_w, ln2_b, float(eps[i][1]), w_fc, b_fc,
                w_out, b_out, B, T, H, float(scale), mask, *keeps,
            )  # fmt: skip
            blocks.append((x, w_qkv, keeps, saved[1:]))
            x = saved[0]
        lnf_w, lnf_b, w_lm, b_lm = params[-4:]
        logits, mean, rstd, xn = cpu_gpt.head_forward(x, lnf_w, lnf_b, float(eps[-1]), w_lm, b_lm, B, T)
        self.save_for_backward(idx, params, blocks, (x, mean, rstd, xn), n_layer, H, vocab_size, float(scale), mask,
                               graph)  # fmt: skip
        return logits

    def backward(self, g):
        from . import cpu_gpt  # noqa: PLC0415

        idx, params, blocks, head, n_layer, H, vocab_size, scale, mask, _ = self.saved
        B, T = idx.shape
        g = np.ascontiguousarray(g)
        lnf_w, _, w_lm, _ = params[-4:]
        x, mean, rstd, xn = head
        dx, dlnf_w, dlnf_b, dw_lm, db_lm = cpu_gpt.head_backward(g, x, mean, rstd, xn, lnf_w, w_lm)
        per = _block_count(H)
        grads = [None] * len(params)
        grads[-4:] = dlnf_w, dlnf_b, dw_lm, db_lm
        for i in reversed(range(n_layer)):
            x, w_qkv, keeps, saved = blocks[i]
            w = params[2 + i * per : 2 + (i + 1) * per]
            w_proj, ln2_w, w_fc, w_out = w[2 + 3 * H], w[2 + 3 * H + 2], w[2 + 3 * H + 4], w[-2]
            out = cpu_gpt.block_backward(
                dx, x, *saved, w[0], w_qkv, w_proj, ln2_w, w_fc, w_out, B, T, H, scale, mask, *keeps
            )
            dx, dln1_w, dln1_b, dw_qkv, dw_proj, db_proj, dln2_w, dln2_b, dw_fc, db_fc, dw_out, db_out = out
            d = w_qkv.shape[0] // (3 * H)  # the head size: dWqkv's rows split back into the heads' weights
            heads = [dw_qkv[j * d : (j + 1) * d] for j in range(3 * H)]
            grads[2 + i * per : 2 + (i + 1) * per] = [dln1_w, dln1_b, *heads, dw_proj, db_proj, dln2_w, dln2_b,
                                                      dw_fc, db_fc, dw_out, db_out]  # fmt: skip
        grads[0], grads[1] = cpu_gpt.embed_backward(idx, dx, vocab_size, params[1].shape[0])
        return (None, *grads)

    def backward_graph(self, g, z):
        """Tensor-level (`create_graph`): `graph(g)`, given by the caller, recomputes the logits op by
        op from the same parameters and returns their gradients as recorded Tensors (the ops' own
        formulas); without it (a forward that drew dropout masks: a recomputation would draw
        others) the engine's lazy "double backward is not implemented" error."""
        graph = self.saved[-1]
        if graph is None:
            return autograd.Function.backward_graph(self, g, z)
        return (None, *graph(g))


class FusedGPTLoss(autograd.Function):
    r"""The lecture's loss on the fused op's logits, `F.cross_entropy(logits.view(B * T, V),
    targets.view(B * T))`, as one op: `CrossEntropy` (ops/cross_entropy.py) with the mean over the
    $N = B T$ positions, by kernels/cpu.py's cross-entropy kernels (the op-by-op path's),

    $$
    L = \frac{1}{N} \sum_n \big(\mathrm{logsumexp}(x_n) - x_{n, t_n}\big), \qquad
    dx = \big(\mathrm{softmax}(x) - \mathrm{onehot}(t)\big)\, \frac{g}{N},
    $$

    on `logits` `(B, T, V)` as they lie, its gradient in their shape: no view nodes.  It takes ids
    in range only (`accepts`); gpt/fused.py leaves any other targets to the lecture's code, its
    checks and errors."""

    __slots__ = ()
    fresh_gradients = True

    @staticmethod
    def accepts(logits, targets) -> bool:
        """CPU arrays, float32 or float64 logits `(B, T, V)`, integer targets `(B, T)` in `[0, V)`."""
        if mode() != "kernels" or type(logits) is not np.ndarray or type(targets) is not np.ndarray:
            return False
        if logits.dtype not in (np.float32, np.float64) or logits.ndim != 3 or logits.size == 0:
            return False
        if targets.shape != logits.shape[:2] or targets.dtype.kind not in "iu":
            return False
        return bool(targets.min() >= 0 and targets.max() < logits.shape[2])

    def forward(self, logits, targets):
        from . import cpu  # noqa: PLC0415 - Numba only when the op runs

        V = logits.shape[-1]
        x = np.ascontiguousarray(logits).reshape(-1, V)  # (N, V): the view, as an array
        ids = np.ascontiguousarray(targets, dtype=np.int64).reshape(-1)
        losses, lse = cpu.cross_entropy_forward(x, ids, -100)
        count = x.dtype.type(ids.size)
        self.save_for_backward(x, lse, ids, count, logits.shape)
        return losses.sum() / count  # the reference's mean: the sum over rows / their count

    def backward(self, g):
        from . import cpu  # noqa: PLC0415

        x, lse, ids, count, shape = self.saved
        gscale = np.empty(x.shape[0], x.dtype)
        gscale[...] = g / count  # one factor for every row
        return cpu.cross_entropy_backward(x, lse, ids, -100, gscale).reshape(shape), None

    def backward_graph(self, g, z):
        """The reference's formula (ops/cross_entropy.py's `cross_entropy_graph`) on the recorded
        view of the logits, its gradient viewed back."""
        x, _, ids, count, shape = self.saved
        rows = self.parents[0].reshape(-1, shape[-1])
        dx, _ = ref_cross_entropy.cross_entropy_graph(g, rows, ids, np.ones(ids.shape, np.bool_), "mean", count)
        return dx.reshape(shape), None


_NO_DROPOUT = [np.empty((0, 0, 0), np.bool_), 1.0, np.empty((0, 0), np.bool_), 1.0, np.empty((0, 0), np.bool_), 1.0]


def _keep_masks(cpu, device, ps, att_shape, stream_shape):
    """The block's dropout keep masks and $1 / (1 - p)$, in the reference's order of draws (the
    attention's weights, the projection's output, the MLP's output); empty arrays where $p = 0$
    (never written: one set serves every block)."""
    if not any(ps):
        return _NO_DROPOUT
    out = []
    for p, shape in zip(ps, (att_shape, stream_shape, stream_shape)):
        if p > 0:
            out += [cpu.keep_mask(backend.rng(device), shape, p), 1.0 / (1.0 - p)]
        else:
            out += [np.empty((0,) * len(shape), np.bool_), 1.0]
    return out
