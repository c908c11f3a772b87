"""The CUDA kernels: Numba-CUDA kernels on CuPy arrays, one fused pass where CuPy makes several.

Each function below follows the contract in kernels/__init__.py (same names and signatures as
kernels/cpu.py): it allocates its results with CuPy and launches one or two compiled kernels on
CuPy's current stream (cuda_launch.py).  The kernels themselves are in cuda_rows.py (a block per
row: layernorm, attention softmax, cross-entropy) and cuda_elementwise.py (AdamW, ReLU, GELU,
dropout, embedding backward); each names, in its docstring, the reference op it must equal.
Attention has its own kernels and host functions besides, outside this contract:
cuda_flash.py (flash-attention style: the scores never in memory), used by cuda_ops.py.

Kernels compile on first use for each dtype (float32, float64) and variant (with or without a
weight, mask, dropout), and are cached on disk (`cache=True`) for later runs.  A kernel that fails
to compile raises kernels.KernelError naming it and the way to run the reference ops.

Without a GPU, the same functions run on NumPy arrays in Numba's CUDA simulator
(`NUMBA_ENABLE_CUDASIM=1`); tests/test_cuda_kernels.py runs them there against the reference ops
and compiles every kernel to PTX for sm_80 and sm_90.
"""

from __future__ import annotations

from . import cuda_elementwise as ew
from . import cuda_rows as rows
from .cuda_launch import ELEMENT_BLOCK, ROW_BLOCK, SIMULATOR, array_namespace, element_grid, launch, scalar

xp = array_namespace()  # CuPy (NumPy under the simulator)


# --------------------------------------------------------------------------- layernorm
def layernorm_forward(x, weight, bias, eps):
    """`(y, mean, rstd)` of `x` `(N, C)`.  Reference: `ops.layernorm.LayerNorm.forward`."""
    N = x.shape[0]
    y = xp.empty_like(x)
    mean = xp.empty(N, x.dtype)
    rstd = xp.empty(N, x.dtype)
    launch("layernorm_forward", rows.layernorm_forward_rows, N, ROW_BLOCK,
           x, weight, bias, scalar(x.dtype, eps), y, mean, rstd)  # fmt: skip
    return y, mean, rstd


def layernorm_backward(dy, x, mean, rstd, weight):
    """(dx, dweight, dbias); dweight and dbias are None when weight is None.
    Reference: ops.layernorm.LayerNorm.backward.  The sums over rows are deterministic: fixed
    chunks of rows, then the chunks in order (cuda_rows.layernorm_param_partials)."""
    N, C = x.shape
    dx = xp.empty_like(x)
    launch("layernorm_backward", rows.layernorm_backward_rows, N, ROW_BLOCK, dy, x, mean, rstd, weight, dx)
    if weight is None:
        return dx, None, None
    rows_per_chunk = max(1, -(-N // rows.ROW_CHUNKS))
    chunks = max(1, -(-N // rows_per_chunk))
    column_blocks = -(-C // ROW_BLOCK)
    dweight_part = xp.empty((chunks, C), x.dtype)
    dbias_part = xp.empty((chunks, C), x.dtype)
    launch("layernorm_backward", rows.layernorm_param_partials, (column_blocks, chunks), ROW_BLOCK,
           dy, x, mean, rstd, rows_per_chunk, dweight_part, dbias_part)  # fmt: skip
    dweight = xp.empty(C, x.dtype)
    dbias = xp.empty(C, x.dtype)
    launch("layernorm_backward", rows.sum_partials, column_blocks, ROW_BLOCK, dweight_part, dweight)
    launch("layernorm_backward", rows.sum_partials, column_blocks, ROW_BLOCK, dbias_part, dbias)
    return dx, dweight, dbias


# --------------------------------------------------------------------------- attention softmax
def attention_softmax_forward(scores, scale, mask, keep, keep_prob):
    """`(p, pd)` from `scores` `(R, T, S)`; `p` is `scores` itself, overwritten.  `pd` is None without
    dropout.  Reference: the $S$, $P$, $P^d$ lines of `ops.attention.ScaledDotProductAttention.forward`."""
    R, T, _ = scores.shape
    pd = None if keep is None else xp.empty_like(scores)
    launch("attention_softmax_forward", rows.attention_softmax_forward_rows, R * T, ROW_BLOCK,
           scores, scalar(scores.dtype, scale), mask, keep, scalar(scores.dtype, keep_prob), scores, pd)  # fmt: skip
    return scores, pd


def attention_softmax_backward(dpd, p, keep, keep_prob):
    r"""$dS = P \odot \big(dP - \sum_S (dP \odot P)\big)$, written over `dpd`.  Reference: the $dP$, $dS$
    lines of `ops.attention.ScaledDotProductAttention.backward`."""
    R, T, _ = p.shape
    launch("attention_softmax_backward", rows.attention_softmax_backward_rows, R * T, ROW_BLOCK,
           dpd, p, keep, scalar(p.dtype, keep_prob), dpd)  # fmt: skip
    return dpd


# --------------------------------------------------------------------------- cross-entropy
def cross_entropy_forward(logits, targets, ignore_index):
    """(losses, lse), each (N,); losses are 0 where ignored.
    Reference: ops.cross_entropy.CrossEntropy.forward with reduction="none"."""
    N = logits.shape[0]
    losses = xp.empty(N, logits.dtype)
    lse = xp.empty(N, logits.dtype)
    launch("cross_entropy_forward", rows.cross_entropy_forward_rows, N, ROW_BLOCK,
           logits, targets, int(ignore_index), losses, lse)  # fmt: skip
    return losses, lse


def cross_entropy_backward(logits, lse, targets, ignore_index, gscale):
    r"""$d\mathrm{logits} = (\operatorname{softmax}(\mathrm{logits}) - \operatorname{onehot}(\mathrm{targets}))\, s_n$
    with $s$ = `gscale`, 0 on ignored rows.  Reference: `ops.cross_entropy.CrossEntropy.backward`."""
    dlogits = xp.empty_like(logits)
    gscale = gscale.astype(logits.dtype, copy=False)
    launch("cross_entropy_backward", rows.cross_entropy_backward_rows, logits.shape[0], ROW_BLOCK,
           logits, lse, targets, int(ignore_index), gscale, dlogits)  # fmt: skip
    return dlogits


# --------------------------------------------------------------------------- AdamW
def adamw_step(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps, weight_decay, step):
    """One AdamW step in place on 1-D arrays, in torch's order.  Reference: optim.adamw.adamw_update_
    (the same host-side folding of the hyperparameters, each then rounded to the arrays' dtype)."""
    dtype = param.dtype
    launch("adamw_step", ew.adamw_elements, element_grid(param.shape[0]), ELEMENT_BLOCK,
           param, grad, exp_avg, exp_avg_sq,
           scalar(dtype, 1 - lr * weight_decay), scalar(dtype, 1 - beta1), scalar(dtype, beta2),
           scalar(dtype, 1 - beta2), scalar(dtype, -(lr / (1 - beta1**step))),
           scalar(dtype, (1 - beta2**step) ** 0.5), scalar(dtype, eps))  # fmt: skip


# --------------------------------------------------------------------------- ReLU, GELU, dropout
def _elementwise(name, kernel, out_like, *args):
    """out = kernel over the flattened arrays (any shape, C-contiguous); out has out_like's shape."""
    out = xp.empty_like(out_like)
    flat = [a if isinstance(a, (int, float)) or a.ndim == 0 else a.reshape(-1) for a in args]
    launch(name, kernel, element_grid(out.size), ELEMENT_BLOCK, *flat, out.reshape(-1))
    return out


def relu_forward(x):
    r"""$\max(x, 0)$.  Reference: `ops.activation.ReLU.forward`."""
    return _elementwise("relu_forward", ew.relu_forward_elements, x, x)


def relu_backward(g, y):
    """$g$ where $y > 0$, else 0.  Reference: `ops.activation.ReLU.backward`."""
    return _elementwise("relu_backward", ew.relu_backward_elements, g, g, y)


def gelu_forward(x):
    r"""$x\, \Phi(x)$ (exact erf GELU).  Reference: `ops.activation.GELU.forward`."""
    return _elementwise("gelu_forward", ew.gelu_forward_elements, x, x)


def gelu_backward(g, x):
    r"""$g\, (\Phi(x) + x\, \varphi(x))$.  Reference: `ops.activation.GELU.backward`."""
    return _elementwise("gelu_backward", ew.gelu_backward_elements, g, g, x)


def dropout_forward(x, keep, scale):
    r"""$x \cdot \mathrm{keep} \cdot \mathrm{scale}$; its backward is the same call on the gradient.
    Reference: `ops.dropout.Dropout`."""
    return _elementwise("dropout_forward", ew.dropout_elements, x, x, keep, scalar(x.dtype, scale))


# --------------------------------------------------------------------------- embedding backward
def embedding_backward(ids, dout, num_embeddings):
    """dweight (num_embeddings, D): row v sums the rows of dout whose id is v, in position order
    (no atomics: the same bits every run).  Reference: ops.embedding.Embedding.backward."""
    ids = ids.reshape(-1)
    D = dout.shape[1]
    # A stable sort groups the positions by id, keeping their order; starts[v] is where id v begins.
    order = xp.argsort(ids, kind="stable") if SIMULATOR else xp.argsort(ids)  # CuPy's sort is stable
    starts = xp.searchsorted(ids[order], xp.arange(num_embeddings + 1, dtype=ids.dtype))
    dweight = xp.empty((num_embeddings, D), dout.dtype)
    launch("embedding_backward", ew.embedding_backward_rows, (num_embeddings, -(-D // ELEMENT_BLOCK)),
           ELEMENT_BLOCK, order, starts, dout, dweight)  # fmt: skip
    return dweight


__all__ = [
    "adamw_step",
    "attention_softmax_backward",
    "attention_softmax_forward",
    "cross_entropy_backward",
    "cross_entropy_forward",
    "dropout_forward",
    "embedding_backward",
    "gelu_backward",
    "gelu_forward",
    "layernorm_backward",
    "layernorm_forward",
    "relu_backward",
    "relu_forward",
]


def keep_mask(rng, shape, p):
    r"""Reference: `ops.dropout.keep_mask`.  On the GPU the reference's draw, uniform float32 $\ge p$, is
    already one device kernel of CuPy's generator: the same expression, so the same bits."""
    return rng.generator.random(shape, dtype="float32") >= p
