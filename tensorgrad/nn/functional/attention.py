"""Scaled dot-product attention, and the packed multi-head self-attention of the GPT
(ops/attention.py)."""

from __future__ import annotations

from ... import backend
from ...backend import ShapeError
from ...creation import ones, tril
from ...ops.attention import PackedSelfAttention, ScaledDotProductAttention
from ...tensor import Tensor


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
    return ScaledDotProductAttention.apply(query, key, value, attn_mask, scale=scale, dropout_p=dropout_p)


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
    return PackedSelfAttention.apply(qkv, attn_mask, num_heads=num_heads, scale=scale, dropout_p=dropout_p)
