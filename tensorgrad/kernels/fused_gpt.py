"""The fused GPT as one op: token ids in, logits out, backward to every parameter at once.

`FusedGPT.apply(idx, *params, ...)` computes exactly what the lecture's `GPTLanguageModel` computes
from the same parameters (gpt/model.py: token and position embeddings, n_layer pre-norm residual
Blocks with packed heads and the MLP, ln_f, lm_head), with the compiled functions of
kernels/cpu_gpt.py: one call for the whole forward, one for the whole backward, each running the
batch in parts of rows, a run of them per thread (`part_count`, `cpu_threads.run_parts`).  The logits are an ordinary
differentiable tensor, and the loss a second op on them: `FusedGPTLoss`, the lecture's
`F.cross_entropy` of their `(B T, V)` view as one node.

The parameters come as Tensors, in the order of `param_order(n_layer, n_head)`; the model
(gpt/fused.py) gathers them, and it asks `FusedGPT.accepts(...)` first: the op runs on the CPU,
float32, in the "kernels" mode (`TENSORGRAD_KERNELS=reference` turns it off), for sequences of at
most `max_len` positions (its attention loops cost $T^2$ per head).  It imports nothing of gpt/.

Dropout draws the reference's keep masks (kernels/cpu.py's `keep_mask`: the reference's bits, the
generator left as the reference leaves it), in the reference's order: per block, the attention
weights' (B, H, T, T), then the projection's (B, T, C), then the MLP's (B, T, C).
"""

from __future__ import annotations

import functools
import operator
import types

import numpy as np

from .. import autograd, backend, grad_mode
from ..ops import cross_entropy as ref_cross_entropy
from . import mode

# Per block, the parameters in this order (the state_dict names relative to blocks.<i>.); the
# query, key and value weights are per head (H of each), as the lecture's Heads hold them.
BLOCK_PARAMS = ("ln1.weight", "ln1.bias", "sa.heads.{h}.query.weight", "sa.heads.{h}.key.weight",
                "sa.heads.{h}.value.weight", "sa.proj.weight", "sa.proj.bias", "ln2.weight", "ln2.bias",
                "ffwd.net.0.weight", "ffwd.net.0.bias", "ffwd.net.2.weight", "ffwd.net.2.bias")  # fmt: skip
HEAD_PARAMS = ("ln_f.weight", "ln_f.bias", "lm_head.weight", "lm_head.bias")

_FLOAT32 = np.dtype(np.float32)
_dtype_of, _shape_of = operator.attrgetter("dtype"), operator.attrgetter("shape")


@functools.cache
def _compiled():
    """The compiled modules the ops call (kernels/cpu.py, cpu_checks.py, cpu_gpt.py, cpu_threads.py),
    imported at their first use: they load Numba.  (A cached call, not an import statement in each
    method: `from . import` runs importlib's Python at every call.)"""
    from . import cpu, cpu_checks, cpu_gpt, cpu_threads  # noqa: PLC0415

    return types.SimpleNamespace(cpu=cpu, cpu_checks=cpu_checks, cpu_gpt=cpu_gpt, cpu_threads=cpu_threads)


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

    the first line `Embedding`, `Add`; the second `cpu_gpt._block_forward_into`; the third
    `LayerNorm`, `Linear` (`cpu_gpt.forward_parts` runs them on each part of the batch rows).

    Backward, from $g = \partial L / \partial\, \mathrm{logits}$: the head's, each block's in reverse,
    the embeddings' (the same lines in reverse: `cpu_gpt._head_backward_into`, `_block_backward_into`,
    `_embed_backward_into`, in `cpu_gpt.backward_parts`); every parameter gets its gradient, the
    sum of the parts' (`Add.backward`: every row reads the same parameters), `idx` none.
    """

    __slots__ = ()
    fresh_gradients = True  # every gradient a new array, the heads' disjoint row blocks of one
    max_len = 64  # the attention's loops cost T^2 per head: longer sequences run the op-by-op model

    @classmethod
    def accepts(cls, idx, *params, n_layer, n_head, vocab_size, device, mask, **config) -> bool:
        """Whether the op takes these arrays: `accepts_params` and `accepts_input` (the model's
        side, gpt/fused.py, asks the first again only when a parameter's array was replaced)."""
        return cls.accepts_params(*params, n_layer=n_layer, n_head=n_head, vocab_size=vocab_size) and (
            cls.accepts_input(idx, params[1].shape[0], vocab_size=vocab_size, device=device, mask=mask)
        )  # fmt: skip

    @staticmethod
    def accepts_params(*params, n_layer, n_head, vocab_size) -> bool:
        """The parameters' side: float32 NumPy arrays of the GPT's shapes (at least one block, every
        block's the same: they are stacked), the ones the op reads in place (the embeddings, `ln_f`,
        `lm_head`) C-contiguous.  The checks run as C loops (`map`, list and set comparisons).
        What it checks cannot change while every array stays the same object."""
        per = _block_count(n_head)
        if n_layer < 1 or len(params) != 6 + n_layer * per:
            return False
        if set(map(type, params)) != {np.ndarray} or set(map(_dtype_of, params)) != {_FLOAT32}:
            return False
        if not all(p.flags.c_contiguous for p in (*params[:2], *params[-4:])):
            return False  # (the stacked blocks are copies, in any layout; other layouts run op by op)
        shapes = list(map(_shape_of, params))
        tok, pos = shapes[0], shapes[1]
        if len(tok) != 2 or len(pos) != 2 or tok[0] != vocab_size or pos[1] != tok[1]:
            return False
        C = tok[1]
        if C % n_head or shapes[-4:] != [(C,), (C,), (vocab_size, C), (vocab_size,)]:
            return False
        fc = shapes[2 + 2 + 3 * n_head + 4]  # the first block's ffwd.net.0 weight: (F, C)
        F = fc[0] if len(fc) == 2 else -1
        block = [(C,), (C,), *[(C // n_head, C)] * (3 * n_head), (C, C), (C,), (C,), (C,), (F, C), (F,), (C, F), (C,)]
        for i in range(n_layer):  # every block of these shapes: they are stacked
            if shapes[2 + i * per : 2 + (i + 1) * per] != block:
                return False
        return True

    @classmethod
    def accepts_input(cls, idx, block_size, *, vocab_size, device, mask) -> bool:
        """The call's side: the kernels on, the CPU, integer ids `(B, T)` in range, at most
        `max_len` positions and at most `block_size` (the position table's rows), a `(T, T)` mask
        that lets every position attend somewhere (a row with none is NaN in the reference: the
        op skips masked places, so it leaves such rows to the reference)."""
        if mode() != "kernels" or device != "cpu":
            return False
        if idx.ndim != 2 or idx.dtype.kind not in "iu" or idx.size == 0:
            return False
        T = idx.shape[1]
        if not 0 < T <= min(cls.max_len, block_size):
            return False
        checks = _compiled().cpu_checks
        if mask.shape != (T, T) or not checks.every_row_attends(mask):
            return False
        return checks.ids_in_range(idx, vocab_size)

    def forward(self, idx, *params, n_layer, n_head, vocab_size, device, scale, eps, mask, dropout, graph=None):
        """`eps`: (`ln1`, `ln2`) per block and `ln_f`'s; `mask` `(T, T)` bool, True = may attend;
        `dropout`: per block (`p_attention`, `p_proj`, `p_ffn`), 0 where none is drawn (eval mode);
        `graph`: see `backward_graph`.

        `cpu_gpt.forward_parts` runs the model on `part_count(B, T)` parts of the batch rows, a run
        of consecutive parts per thread (`cpu_threads.run_parts`: one thread runs them all unless
        the op has several).  The dropout masks are drawn first, for the whole batch, in the
        reference's order.  Under no_grad, `cpu_gpt.logits_parts` computes the logits alone."""
        compiled = _compiled()
        cpu, cpu_gpt, cpu_threads = compiled.cpu, compiled.cpu_gpt, compiled.cpu_threads
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        B, T = idx.shape
        P = part_count(B, T)
        weights = _stacked_weights(params, n_layer, n_head)
        if any(p for ps in dropout for p in ps):
            keeps = _keep_masks(cpu, device, dropout, B, T, n_head, params[0].shape[1])
        else:  # none drawn: the same empty masks every call
            keeps = _no_masks(len(dropout), B, T, n_head, params[0].shape[1])
        eps1, eps2 = _block_eps(eps[:-1])
        ln1_w, ln1_b, w_qkv, w_proj, b_proj, ln2_w, ln2_b, w_fc, b_fc, w_out, b_out = weights
        lnf_w, lnf_b, w_lm, b_lm = params[-4:]
        mask = np.ascontiguousarray(mask, dtype=np.bool_)
        args = (idx, P, params[0], params[1], ln1_w, ln1_b, eps1, w_qkv, w_proj, b_proj, ln2_w, ln2_b, eps2, w_fc, b_fc,
                w_out, b_out, n_head, float(scale), mask, *keeps, lnf_w, lnf_b, float(eps[-1]), w_lm, b_lm)  # fmt: skip
        logits = np.empty((B, T, w_lm.shape[0]), w_lm.dtype)
        if not grad_mode.is_grad_enabled():  # no backward follows: the logits alone
            cpu_threads.run_parts(lambda run: cpu_gpt.logits_parts(run.start, run.stop, *args, logits),
                                  cpu_threads.thread_parts(P))  # fmt: skip
            return logits
        saved = _saved_arrays(B, T, P, w_qkv.shape[0], w_qkv.shape[2], w_fc.shape[1], n_head, keeps[0].shape[1] > 0,
                              w_lm.dtype)  # fmt: skip
        cpu_threads.run_parts(lambda run: cpu_gpt.forward_parts(run.start, run.stop, *args, logits, saved),
                              cpu_threads.thread_parts(P))  # fmt: skip
        self.save_for_backward(idx, params, weights, keeps, P, saved, n_head, vocab_size, float(scale), mask, graph)
        return logits

    def backward(self, g):
        """`cpu_gpt.backward_parts` on the forward's parts, a run of them per thread; each
        parameter's gradient the sum of its parts', added in the parts' order; the stacked blocks'
        gradients handed out as each parameter's (views: `dWqkv`'s rows back into the heads' query,
        key and value weights)."""
        compiled = _compiled()
        cpu_gpt, cpu_threads = compiled.cpu_gpt, compiled.cpu_threads
        idx, params, weights, keeps, P, saved, H, vocab_size, scale, mask, _ = self.saved
        ln1_w, _, w_qkv, w_proj, _, ln2_w, _, w_fc, _, w_out, _ = weights
        lnf_w, _, w_lm, _ = params[-4:]
        # a slot per part for each gradient, in backward_parts' order: the embeddings', the blocks', the head's
        grads = tuple(np.empty((P, *a.shape), a.dtype) for a in (params[0], params[1], *weights, *params[-4:]))
        g = np.ascontiguousarray(g)
        cpu_threads.run_parts(
            lambda run: cpu_gpt.backward_parts(run.start, run.stop, g, idx, P, saved, ln1_w, w_qkv, w_proj, ln2_w, w_fc,
                                               w_out, H, scale, mask, *keeps, lnf_w, w_lm, grads),
            cpu_threads.thread_parts(P),
        )  # fmt: skip
        total = list(map(_only_part, grads)) if P == 1 else [_sum_parts(a) for a in grads]
        dtok, dpos, dln1_w, dln1_b, dw_qkv, dw_proj, db_proj, dln2_w, dln2_b, dw_fc, db_fc, dw_out, db_out = total[:13]
        # dWqkv's rows split back into the heads' weights: every block's heads' query, key and value
        # weights in turn, (3 H) per block of (head size, C) each (iterating an array gives its rows)
        L, k = w_qkv.shape[0], 3 * H
        heads = list(dw_qkv.reshape(L * k, -1, w_qkv.shape[2]))
        out = [dtok, dpos]
        for i, (l1w, l1b, wp, bp, l2w, l2b, wf, bf, wo, bo) in enumerate(
            zip(dln1_w, dln1_b, dw_proj, db_proj, dln2_w, dln2_b, dw_fc, db_fc, dw_out, db_out)
        ):
            out += [l1w, l1b, *heads[i * k : (i + 1) * k], wp, bp, l2w, l2b, wf, bf, wo, bo]
        return (None, *out, *total[13:])

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
        return _compiled().cpu_checks.ids_in_range(targets, logits.shape[2])

    def forward(self, logits, targets):
        cpu = _compiled().cpu
        V = logits.shape[-1]
        x = np.ascontiguousarray(logits).reshape(-1, V)  # (N, V): the view, as an array
        ids = np.ascontiguousarray(targets, dtype=np.int64).reshape(-1)
        losses, lse = cpu.cross_entropy_forward(x, ids, -100)
        count = x.dtype.type(ids.size)
        self.save_for_backward(x, lse, ids, count, logits.shape)
        return np.add.reduce(losses) / count  # the reference's mean: the sum over rows (`sum`'s reduce) / their count

    def backward(self, g):
        cpu = _compiled().cpu
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


# The batch rows in parts of at least this many positions each (cpu_gpt.forward_parts), a run of
# them per thread of the op (cpu_threads.run_parts).  The small model's training batch (32 rows of
# 8 positions) is one part: the training program gives it one thread (gpt/threads.py), and on one
# thread its two halves cost more than the whole (each half's products are as slow to start).  Its
# evaluation batches (16384 positions) are 64 parts, whose arrays stay small enough for the
# allocator to reuse them from part to part (one batch's in one part were fresh pages each time).
PART_POSITIONS = 256


def part_count(B: int, T: int) -> int:
    """The number of parts of the batch rows: the most that divides `B` and leaves each part at
    least PART_POSITIONS positions; 1 for a batch of fewer than twice that.  It depends on the
    batch's shape alone, never on the thread count, so the sums over parts in the backward add the
    same numbers in the same order on every machine."""
    most = min(B, B * T // PART_POSITIONS)
    for P in range(max(most, 1), 1, -1):
        if B % P == 0:
            return P
    return 1


def _saved_arrays(B, T, P, L, C, F, H, dropout, dt):
    """What `cpu_gpt.forward_parts` writes for the backward, per block and part of `b = B / P` rows
    (`n = b T` positions): (`xs` `(L + 1, P, n, C)`: each block's input, then the head's; `mean1`,
    `rstd1` `(L, P, n)`, `xn1` `(L, P, n, C)`, `qkvT` `(L, P, 3C, n)`, `p`, `pd` `(L, P, H, T, T, b)`
    (`pd` empty without attention dropout), `attT` `(L, P, C, n)`, `xm`, `mean2`, `rstd2`, `xn2`,
    `hr` `(L, P, n, F)`; the head's `hmean`, `hrstd` `(P, n)`, `hxn` `(P, n, C)`)."""
    b = B // P
    n = b * T
    e = np.empty
    pd = e((L, P, H, T, T, b), dt) if dropout else e((L, P, 0, T, T, 0), dt)
    return (e((L + 1, P, n, C), dt), e((L, P, n), dt), e((L, P, n), dt), e((L, P, n, C), dt), e((L, P, 3 * C, n), dt),
            e((L, P, H, T, T, b), dt), pd, e((L, P, C, n), dt), e((L, P, n, C), dt), e((L, P, n), dt),
            e((L, P, n), dt), e((L, P, n, C), dt), e((L, P, n, F), dt), e((P, n), dt), e((P, n), dt),
            e((P, n, C), dt))  # fmt: skip


_only_part = operator.itemgetter(0)  # a gradient of one part: that part's (no sum, no call of _sum_parts)


def _sum_parts(a):
    """`a[0] + a[1] + ...`: a gradient's parts, two or more, added in their order (the same sum
    whatever thread computed each; one part is handed out as it is: `_only_part`)."""
    total = a[0].copy()
    for part in a[1:]:
        total += part
    return total


def _stacked_weights(params, n_layer, H):
    """The blocks' parameters stacked, one row per block, as `cpu_gpt.forward_parts` takes them:
    (`ln1_w`, `ln1_b`, `w_qkv`, `w_proj`, `b_proj`, `ln2_w`, `ln2_b`, `w_fc`, `b_fc`, `w_out`,
    `b_out`), `w_qkv` `(L, 3C, C)`: each block's heads' query, then key, then value weights
    (`MultiHeadAttention`'s stack).  One concatenation of them all, in this order, and each stacked
    array a view of its run of it, shaped `(L, ...)` (one concatenation per array costs as much
    again at the small model's sizes, and np.stack twice that)."""
    getter, kinds = _stacking(n_layer, H)
    flat = np.concatenate(getter(params), axis=None)
    stacked, start = [], 0
    for first, count in kinds:  # a kind's parameters are all of the first one's shape
        p = params[first]
        end = start + count * p.size
        stacked.append(flat[start:end].reshape(n_layer, -1, *p.shape[1:]))
        start = end
    return tuple(stacked)


@functools.cache
def _stacking(n_layer, H):
    """`_stacked_weights`' plan: an itemgetter of the blocks' parameters in the stacked order (per
    stacked array, the j-th parameter of every block; for `w_qkv`, every block's heads' weights in
    turn), and per stacked array its first parameter's index and its count of parameters."""
    per = _block_count(H)
    k = 2 + 3 * H  # the index of w_proj in a block's parameters
    kinds = [[j] for j in (0, 1)] + [list(range(2, k))] + [[j] for j in range(k, k + 8)]
    runs = [tuple(2 + i * per + j for i in range(n_layer) for j in kind) for kind in kinds]
    return operator.itemgetter(*(i for run in runs for i in run)), tuple((run[0], len(run)) for run in runs)


@functools.lru_cache(maxsize=16)
def _no_masks(L, B, T, H, C):
    """`_keep_masks` where no block drops anywhere: size-0 masks and $1 / (1 - p) = 1$, made once
    per shape and shared (the compiled functions never write them)."""
    return _keep_masks(None, None, ((0.0, 0.0, 0.0),) * L, B, T, H, C)


@functools.lru_cache(maxsize=16)
def _block_eps(eps):
    """The blocks' layer-norm epsilons as `forward_parts` takes them: (`eps1`, `eps2`) `(L,)`
    float64, from (`ln1`, `ln2`) per block; made once per tuple and shared (never written)."""
    return np.array([e[0] for e in eps], np.float64), np.array([e[1] for e in eps], np.float64)


def _keep_masks(cpu, device, dropout, B, T, H, C):
    r"""The blocks' dropout keep masks, drawn in the reference's order (per block: the attention's
    weights `(B H, T, T)`, the projection's output `(B T, C)`, the MLP's `(B T, C)`), stacked per
    block: (`keep_att` `(L, B H, T, T)`, `keep_proj`, `keep_ffn` `(L, B T, C)`, `inv` `(L, 3)` the
    $1 / (1 - p)$).  A place no block drops at is a size-0 second dim (never read); a block that
    does not drop where another does keeps every element, with $1 / (1 - p) = 1$ (the same value)."""
    L = len(dropout)
    shapes = ((B * H, T, T), (B * T, C), (B * T, C))
    keeps = [np.ones((L, *shape), np.bool_) if any(ps[k] > 0 for ps in dropout) else np.empty((L, 0, *shape[1:]),
             np.bool_) for k, shape in enumerate(shapes)]  # fmt: skip
    inv = np.ones((L, 3), np.float64)
    for i, ps in enumerate(dropout):
        for k, (p, shape) in enumerate(zip(ps, shapes)):
            if p > 0:
                keeps[k][i] = cpu.keep_mask(backend.rng(device), shape, p)
                inv[i, k] = 1.0 / (1.0 - p)
    return (*keeps, inv)
