"""tensorgrad.nn.functional (imported as F): the neural-net ops as functions, with
PyTorch's names and signatures.  Each is wired to one op in tensorgrad/ops/."""

from __future__ import annotations

from .. import backend
from ..backend import ShapeError
from ..creation import ones, tril
from ..ops.attention import PackedSelfAttention, ScaledDotProductAttention
from ..ops.embedding import Embedding
from ..ops.linear import Linear as LinearOp
from ..ops.loss import CrossEntropy
from ..tensor import Tensor


def softmax(input: Tensor, dim: int) -> Tensor:
    return input.softmax(dim)


def log_softmax(input: Tensor, dim: int) -> Tensor:
    return input.log_softmax(dim)


def relu(input: Tensor) -> Tensor:
    return input.relu()


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    return input.gelu(approximate)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = x W^T + b, with W of shape (out_features, in_features) as in PyTorch (one op: ops/linear.py)."""
    if input.ndim == 0 or input.shape[-1] != weight.shape[-1]:
        raise ShapeError(
            f"linear: input has {input.shape[-1] if input.ndim else 0} features (shape {input.shape}) but the "
            f"weight expects {weight.shape[-1]} (weight shape {weight.shape})"
        )
    if bias is not None and bias.shape != weight.shape[:1]:
        raise ShapeError(f"linear: bias has shape {bias.shape}, expected {weight.shape[:1]}")
    if input.dtype != weight.dtype:
        input = input.to(weight.dtype)
    return LinearOp.apply(input, weight, bias)


def scaled_dot_product_attention(
    query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None, dropout_p: float = 0.0,
    is_causal: bool = False, scale: float | None = None,
) -> Tensor:  # fmt: skip
    """softmax(q k^T * scale, masked) v, with dropout on the weights, as one op (ops/attention.py).

    query, key (..., T, d), value (..., T, dv).  attn_mask: a bool tensor broadcastable to (..., T, T),
    True where a query may attend to a key (PyTorch's convention); is_causal builds the lower
    triangle.  scale defaults to d ** -0.5.  Pass dropout_p only in training, as PyTorch.
    """
    T, S = query.shape[-2], key.shape[-2]
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise ShapeError(
            f"scaled_dot_product_attention: query {query.shape}, key {key.shape} and value {value.shape} do not fit"
        )
    attn_mask = _attention_mask("scaled_dot_product_attention", attn_mask, is_causal, dropout_p, T, S, query.device)
    scale = query.shape[-1] ** -0.5 if scale is None else scale
    return ScaledDotProductAttention.apply(
        query, key, value, attn_mask, scale=scale, dropout_p=dropout_p, device=query.device
    )


def _attention_mask(op, attn_mask, is_causal, dropout_p, t, s, device):
    """The checks both attention functions share; returns the bool mask (None: no mask)."""
    if is_causal:
        if attn_mask is not None:
            raise ValueError(f"{op}: pass attn_mask or is_causal, not both")
        attn_mask = tril(ones(t, s, dtype=backend.bool_, device=device))
    if attn_mask is not None and attn_mask.dtype != backend.bool_:
        raise TypeError(f"{op}: attn_mask must be bool, got {attn_mask.dtype}")
    if not 0 <= dropout_p < 1:
        raise ValueError(f"dropout probability has to be in [0, 1), got {dropout_p}")
    return attn_mask


def packed_self_attention(
    qkv: Tensor, num_heads: int, attn_mask: Tensor | None = None, dropout_p: float = 0.0,
    is_causal: bool = False, scale: float | None = None,
) -> Tensor:  # fmt: skip
    """Multi-head self-attention from one packed projection (a tensorgrad op; PyTorch spells it
    as a split, a permute, scaled_dot_product_attention and a reshape, which this equals).

    qkv (B, T, 3 * num_heads * d): every head's query, then every head's key, then every head's
    value.  Returns (B, T, num_heads * d), the heads side by side.  attn_mask (T, T), dropout_p,
    is_causal and scale are as in scaled_dot_product_attention.
    """
    if qkv.ndim != 3 or num_heads < 1 or qkv.shape[-1] % (3 * num_heads):
        raise ShapeError(
            f"packed_self_attention: qkv must be (B, T, 3 * num_heads * head_size); got shape {qkv.shape} "
            f"with num_heads={num_heads}"
        )
    T = qkv.shape[1]
    attn_mask = _attention_mask("packed_self_attention", attn_mask, is_causal, dropout_p, T, T, qkv.device)
    if attn_mask is not None and attn_mask.shape != (T, T):
        raise ShapeError(f"packed_self_attention: attn_mask must be ({T}, {T}), got {attn_mask.shape}")
    head_size = qkv.shape[-1] // (3 * num_heads)
    scale = head_size**-0.5 if scale is None else scale
    return PackedSelfAttention.apply(
        qkv, attn_mask, num_heads=num_heads, scale=scale, dropout_p=dropout_p, device=qkv.device
    )


def dropout(input: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Inverted dropout: zero each element with probability p, scale the rest by 1/(1-p)."""
    return input.dropout(p, training)


def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    return input.layer_norm(normalized_shape, weight, bias, eps)


def _check_ids(ids: Tensor, n: int, op: str, what: str, ignore_index=None):
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
        kind = "classes" if op == "cross_entropy" else "embeddings"
        where = "" if ids.device == "cpu" else f" (a check queued on {ids.device}, reported at this read)"
        raise IndexError(f"{op}: {what} contains {value}, outside [0, {n}) ({n} = number of {kind}){where}")

    if ids.device == "cpu":
        if bad.any():
            fail()
    else:
        backend.defer_check(bad.any(), fail)


def embedding(input: Tensor, weight: Tensor) -> Tensor:
    """Rows of weight (V, D) picked by integer ids of any shape -> (*ids.shape, D)."""
    _check_ids(input, weight.shape[0], "embedding", "the token ids")
    return Embedding.apply(input, weight)


def cross_entropy(input: Tensor, target: Tensor, reduction: str = "mean", ignore_index: int = -100) -> Tensor:
    """-log softmax(input)[target], fused with log-softmax.  input (N, C) logits, target (N,) ids."""
    if input.ndim != 2 or target.shape != input.shape[:1]:
        raise ShapeError(
            f"cross_entropy: expects logits of shape (N, C) and target of shape (N,), got logits {input.shape} "
            f"and target {target.shape}; for (B, T, C) logits pass logits.view(B*T, C) and targets.view(B*T)"
        )
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"cross_entropy: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if not backend.is_floating(input.dtype):
        raise TypeError(f"cross_entropy: logits must be floating point, got {input.dtype}")
    _check_ids(target, input.shape[1], "cross_entropy", "target", ignore_index)
    return CrossEntropy.apply(input, target, reduction=reduction, ignore_index=ignore_index)
