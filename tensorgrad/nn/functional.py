"""tensorgrad.nn.functional (imported as F): the neural-net ops as functions, with
PyTorch's names and signatures.  Each is wired to one op in tensorgrad/ops/."""

from __future__ import annotations

from .. import backend
from ..creation import ones, tril
from ..ops.attention import PackedSelfAttention, ScaledDotProductAttention
from ..ops.embedding import Embedding
from ..ops.linear import Linear as LinearOp
from ..ops.loss import CrossEntropy
from ..ops.losses import AbsoluteError, BCEWithLogits, BinaryCrossEntropy, NLLLoss, Normalize, SquaredError
from ..ops.pad import ConstantPad, IndexPad
from ..tensor import Tensor, broadcast_shapes, normalize_dim


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
        raise ValueError(
            f"linear: input has {input.shape[-1] if input.ndim else 0} features (shape {input.shape}) but the "
            f"weight expects {weight.shape[-1]} (weight shape {weight.shape})"
        )
    if bias is not None and bias.shape != weight.shape[:1]:
        raise ValueError(f"linear: bias has shape {bias.shape}, expected {weight.shape[:1]}")
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
        raise ValueError(
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
        raise ValueError(
            f"packed_self_attention: qkv must be (B, T, 3 * num_heads * head_size); got shape {qkv.shape} "
            f"with num_heads={num_heads}"
        )
    T = qkv.shape[1]
    attn_mask = _attention_mask("packed_self_attention", attn_mask, is_causal, dropout_p, T, T, qkv.device)
    if attn_mask is not None and attn_mask.shape != (T, T):
        raise ValueError(f"packed_self_attention: attn_mask must be ({T}, {T}), got {attn_mask.shape}")
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
    data = ids.data
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
    _check_ids(input, weight.shape[0], "embedding", "the token ids")
    return Embedding.apply(input, weight)


def cross_entropy(
    input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None, ignore_index: int = -100,
    reduce=None, reduction: str = "mean", label_smoothing: float = 0.0,
) -> Tensor:  # fmt: skip
    """-log softmax(input)[target], as PyTorch: input (N, C), (N, C, d1, ...) or (C,) logits; target
    class ids (N,) / (N, d1, ...) / () or class probabilities shaped like input.

    Plain (N, C) logits with ids, no weight and no smoothing take the fused op (ops/loss.py).  The
    rest is built from log_softmax, nll_loss and sums, each with its own backward:
        ids, label smoothing e:  (1 - e) * nll + e / C * sum_c (-w_c log p_c)   (mean: / sum w[t])
        probabilities y:        -sum_c w_c y_c log p_c, y smoothed to (1 - e) y + e / C (mean: / rows)
    """
    reduction = _reduction("cross_entropy", size_average, reduce, reduction)
    if not backend.is_floating(input.dtype):
        raise TypeError(f"cross_entropy: logits must be floating point, got {input.dtype}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0, got {label_smoothing}")
    if input.ndim == 1:  # one sample: (C,) logits, () id or (C,) probabilities
        loss = cross_entropy(input.unsqueeze(0), target.unsqueeze(0), weight, None, ignore_index, None, reduction,
                             label_smoothing)  # fmt: skip
        return loss.squeeze(0) if reduction == "none" else loss
    if input.ndim == 0:
        raise ValueError("cross_entropy: expects logits of shape (N, C) or (N, C, d1, ...), got a 0-d tensor")
    probs = backend.is_floating(target.dtype)
    n_classes = input.shape[1]
    want = input.shape if probs else input.shape[:1] + input.shape[2:]
    if target.shape != want:
        kind = "probabilities" if probs else "class ids"
        hint = ""
        if not probs and input.ndim == 3 and target.shape == input.shape[:2]:
            hint = "; the classes are dim 1: for (B, T, C) logits pass logits.view(B * T, C), targets.view(B * T)"
        raise ValueError(
            f"cross_entropy: target of shape {target.shape} does not match logits {input.shape} "
            f"(expected {kind} of shape {want}){hint}"
        )
    _check_weight("cross_entropy", weight, n_classes)
    if not probs:
        _check_ids(target, n_classes, "cross_entropy", "target", ignore_index)
    x = _classes_last(input)  # (M, C)
    if not probs and weight is None and label_smoothing == 0.0:
        loss = CrossEntropy.apply(x, target.reshape(-1), reduction=reduction, ignore_index=ignore_index)
        return loss.reshape(want) if reduction == "none" else loss
    logp = x.log_softmax(-1)  # (M, C)
    w = None if weight is None else weight.to(logp.dtype)
    if probs:
        y = _classes_last(target.to(logp.dtype))
        if label_smoothing:
            y = y * (1 - label_smoothing) + label_smoothing / n_classes
        per = -((logp * y) if w is None else (logp * y * w)).sum(-1)  # (M,)
        loss = per.sum() / per.shape[0] if reduction == "mean" else _reduce(per, reduction)
        return loss.reshape(want[:1] + want[2:]) if reduction == "none" else loss
    t = target.reshape(-1)
    loss = NLLLoss.apply(logp, t, w, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing:
        keep = t != ignore_index
        smooth = -(logp if w is None else logp * w).sum(-1).masked_fill(~keep, 0.0)  # (M,)
        if reduction == "mean":
            xp = backend.namespace(t.device)
            picked = keep.data if w is None else w.data[xp.where(keep.data, t.data, 0)] * keep.data
            smooth = smooth.sum() / Tensor._make(picked.sum().astype(logp.dtype), t.device, False)
        else:
            smooth = _reduce(smooth, reduction)
        loss = loss * (1 - label_smoothing) + smooth * (label_smoothing / n_classes)
    return loss.reshape(want) if reduction == "none" else loss


def nll_loss(
    input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None, ignore_index: int = -100,
    reduce=None, reduction: str = "mean",
) -> Tensor:  # fmt: skip
    """-w[t] * input[t] from log-probabilities input (N, C), (N, C, d1, ...) or (C,), class ids target;
    "mean" divides by the sum of the picked weights (one op: ops/losses.py)."""
    reduction = _reduction("nll_loss", size_average, reduce, reduction)
    if input.ndim == 1:
        loss = nll_loss(input.unsqueeze(0), target.unsqueeze(0), weight, None, ignore_index, None, reduction)
        return loss.squeeze(0) if reduction == "none" else loss
    want = input.shape[:1] + input.shape[2:] if input.ndim >= 2 else None
    if want is None or target.shape != want:
        raise ValueError(f"nll_loss: target of shape {target.shape} does not match input {input.shape} (want {want})")
    _check_weight("nll_loss", weight, input.shape[1])
    _check_ids(target, input.shape[1], "nll_loss", "target", ignore_index)
    w = None if weight is None else weight.to(input.dtype)
    loss = NLLLoss.apply(_classes_last(input), target.reshape(-1), w, ignore_index=ignore_index,
                         reduction=reduction)  # fmt: skip
    return loss.reshape(want) if reduction == "none" else loss


def binary_cross_entropy(
    input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    """-w (y log x + (1 - y) log(1 - x)) for probabilities x (logs clamped at -100, as PyTorch)."""
    reduction = _reduction("binary_cross_entropy", size_average, reduce, reduction)
    _same_shape("binary_cross_entropy", input, target)
    if weight is not None:
        broadcast_shapes("binary_cross_entropy (weight)", weight.shape, input.shape)
    target, weight = target.to(input.dtype), None if weight is None else weight.to(input.dtype)
    return _reduce(BinaryCrossEntropy.apply(input, target, weight), reduction)


def binary_cross_entropy_with_logits(
    input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None, reduce=None,
    reduction: str = "mean", pos_weight: Tensor | None = None,
) -> Tensor:  # fmt: skip
    """Binary cross-entropy of sigmoid(input), computed stably from the logits; pos_weight
    (broadcast over the last dim: one per class) weighs the positive targets."""
    reduction = _reduction("binary_cross_entropy_with_logits", size_average, reduce, reduction)
    _same_shape("binary_cross_entropy_with_logits", input, target)
    for name, t in (("weight", weight), ("pos_weight", pos_weight)):
        if t is not None:
            broadcast_shapes(f"binary_cross_entropy_with_logits ({name})", t.shape, input.shape)
    cast = [None if t is None else t.to(input.dtype) for t in (target, weight, pos_weight)]
    return _reduce(BCEWithLogits.apply(input, *cast), reduction)


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """(input - target)^2, reduced."""
    reduction = _reduction("mse_loss", size_average, reduce, reduction)
    _same_shape("mse_loss", input, target)
    return _reduce(SquaredError.apply(input, target.to(input.dtype)), reduction)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """|input - target|, reduced."""
    reduction = _reduction("l1_loss", size_average, reduce, reduction)
    _same_shape("l1_loss", input, target)
    return _reduce(AbsoluteError.apply(input, target.to(input.dtype)), reduction)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None) -> Tensor:
    """input / max(||input||_p, eps) along dim (one op: ops/losses.py)."""
    if out is not None:
        raise NotImplementedError("normalize: out= is not supported")
    if not p > 0 or p == float("inf"):
        raise ValueError(f"normalize: p must be a positive finite number, got {p}")
    if not backend.is_floating(input.dtype):
        raise TypeError(f"normalize: expected a floating-point tensor, got dtype {input.dtype}")
    return Normalize.apply(input, p=p, dim=normalize_dim(dim, input.ndim, "normalize"), eps=eps)


def _reduction(op, size_average, reduce, reduction):
    """PyTorch's legacy size_average / reduce flags, when given, decide the reduction."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduction = ("mean" if size_average else "sum") if reduce is None or reduce else "none"
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def _same_shape(op, input, target):
    if target.shape != input.shape:
        raise ValueError(
            f"{op}: target size {target.shape} is different from the input size {input.shape}; make them the same shape"
        )
    if not backend.is_floating(input.dtype):
        raise TypeError(f"{op}: input must be floating point, got {input.dtype}")


def _check_weight(op, weight, n_classes):
    if weight is not None and weight.shape != (n_classes,):
        raise ValueError(f"{op}: weight must have shape ({n_classes},), one per class, got {weight.shape}")


def _classes_last(x: Tensor) -> Tensor:
    """(N, C, d1, ...) -> (N * d1 * ..., C): one row per sample and position, classes last."""
    if x.ndim == 2:
        return x
    return x.permute(0, *range(2, x.ndim), 1).reshape(-1, x.shape[1])


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last len(pad) // 2 dims: pad = (left, right) for the last dim, then (top, bottom) for
    the one before, ...  mode "constant" (fills value, default 0; negative amounts crop), "reflect"
    (mirror without repeating the edge), "replicate" (repeat the edge) or "circular" (wrap around)."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(f"pad: padding {pad} needs an even length, at most 2 * {input.ndim} (input {input.shape})")
    k = len(pad) // 2
    pads = [(0, 0)] * (input.ndim - k) + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(k))]
    if mode == "constant":
        for n, (b, a) in zip(input.shape, pads):
            if n + b + a < 0:
                raise ValueError(f"pad: padding {pad} crops more than the input {input.shape} holds")
        return ConstantPad.apply(input, pads=tuple(pads), value=0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"pad: mode {mode!r} is not supported (constant, reflect, replicate, circular)")
    if not 1 <= k <= 3 or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"pad: {mode} padding pads the last 1-3 dims of an input with 1 or 2 more (batch, channels); "
            f"got padding {pad} for an input of shape {input.shape}"
        )
    for n, (b, a) in zip(input.shape, pads):
        if min(b, a) < 0 or (mode == "reflect" and max(b, a) >= n) or (mode == "circular" and max(b, a) > n) or n == 0:
            limit = {"reflect": "smaller than", "circular": "at most", "replicate": "(non-negative) for"}[mode]
            raise ValueError(f"pad: {mode} padding {pad} must be {limit} the padded dims of the input {input.shape}")
    return IndexPad.apply(input, pads=tuple(pads), mode=mode)
