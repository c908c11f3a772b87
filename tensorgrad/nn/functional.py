"""tensorgrad.nn.functional (imported as F): the neural-net ops as functions, with
PyTorch's names and signatures.  Each is wired to one op in tensorgrad/ops/."""

from __future__ import annotations

from .. import backend
from ..backend import ShapeError
from ..creation import ones, tril
from ..functions import one_hot  # noqa: F401 - F.one_hot, as torch.nn.functional.one_hot
from ..ops.activation import CELU, ELU, Hardsigmoid, Hardtanh, LeakyReLU, Mish, SiLU, Softplus, Softsign
from ..ops.attention import PackedSelfAttention, ScaledDotProductAttention
from ..ops.conv import Conv2d, ConvTranspose2d
from ..ops.cross_entropy import CrossEntropy
from ..ops.embedding import Embedding
from ..ops.linear import Linear as LinearOp
from ..ops.losses import AbsoluteError, BCEWithLogits, BinaryCrossEntropy, NLLLoss, Normalize, SquaredError
from ..ops.pad import ConstantPad, IndexPad
from ..ops.pool import AvgPool2d, MaxPool2d, max_indices, window_max
from ..tensor import Tensor
from ..tensor_methods.common import broadcast_shapes, normalize_dim


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

    Plain (N, C) logits with ids, no weight and no smoothing take the fused op (ops/cross_entropy.py).  The
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
        raise ShapeError("cross_entropy: expects logits of shape (N, C) or (N, C, d1, ...), got a 0-d tensor")
    probs = backend.is_floating(target.dtype)
    n_classes = input.shape[1]
    want = input.shape if probs else input.shape[:1] + input.shape[2:]
    if target.shape != want:
        kind = "probabilities" if probs else "class ids"
        hint = ""
        if not probs and input.ndim == 3 and target.shape == input.shape[:2]:
            hint = "; the classes are dim 1: for (B, T, C) logits pass logits.view(B * T, C), targets.view(B * T)"
        raise ShapeError(
            f"cross_entropy: target of shape {target.shape} does not match logits {input.shape} "
            f"(expected {kind} of shape {want}){hint}"
        )
    _check_weight("cross_entropy", weight, n_classes)
    if not probs:
        _check_ids(target, n_classes, "cross_entropy", "target", ignore_index)
    x = _classes_last(input)  # (M, C)
    if not probs and weight is None and label_smoothing == 0.0:
        ids = target if target.ndim == 1 else target.reshape(-1)  # (M,): no reshape node for plain targets
        loss = CrossEntropy.apply(x, ids, reduction=reduction, ignore_index=ignore_index)
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
            picked = keep._data if w is None else w._data[xp.where(keep._data, t._data, 0)] * keep._data
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
        raise ShapeError(f"nll_loss: target of shape {target.shape} does not match input {input.shape} (want {want})")
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
        raise ShapeError(
            f"{op}: target size {target.shape} is different from the input size {input.shape}; make them the same shape"
        )
    if not backend.is_floating(input.dtype):
        raise TypeError(f"{op}: input must be floating point, got {input.dtype}")


def _check_weight(op, weight, n_classes):
    if weight is not None and weight.shape != (n_classes,):
        raise ShapeError(f"{op}: weight must have shape ({n_classes},), one per class, got {weight.shape}")


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
                raise ShapeError(f"pad: padding {pad} crops more than the input {input.shape} holds")
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
            raise ShapeError(f"pad: {mode} padding {pad} must be {limit} the padded dims of the input {input.shape}")
    return IndexPad.apply(input, pads=tuple(pads), mode=mode)


# ---------------------------------------------------------------- convolution and pooling (ops/conv.py, ops/pool.py)
def _pair(v, op, name):
    v = (v, v) if isinstance(v, int) else tuple(int(a) for a in v)
    if len(v) != 2:
        raise ValueError(f"{op}: {name} must be an int or a pair, got {v}")
    return v


def _spatial(op, input: Tensor, weight: Tensor | None = None):
    """(N, C, H, W) or unbatched (C, H, W) input; returns (4-d input, batched?)."""
    if input.ndim not in (3, 4):
        raise ShapeError(f"{op}: expected a 3-d (C, H, W) or 4-d (N, C, H, W) input, got shape {input.shape}")
    if not backend.is_floating(input.dtype):
        raise TypeError(f"{op}: expected a floating-point input, got dtype {input.dtype}")
    if weight is not None and weight.dtype != input.dtype:
        raise TypeError(f"{op}: input is {input.dtype} but weight is {weight.dtype} (as in PyTorch, cast one)")
    return (input, True) if input.ndim == 4 else (input.unsqueeze(0), False)


def _out_side(op, n, k, s, d, p_total):
    out = (n + p_total - d * (k - 1) - 1) // s + 1
    if out < 1:
        raise ShapeError(
            f"{op}: the (padded) input side {n + p_total} is smaller than the dilated kernel {d * (k - 1) + 1}"
        )
    return out


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:  # fmt: skip
    """2-d cross-correlation, as PyTorch: input (N, C, H, W), weight (O, C / groups, KH, KW), bias (O,).
    padding: an int, a pair, "valid" (0) or "same" (output size = input size; stride 1)."""
    x, batched = _spatial("conv2d", input, weight)
    stride, dilation = _pair(stride, "conv2d", "stride"), _pair(dilation, "conv2d", "dilation")
    if weight.ndim != 4:
        raise ShapeError(f"conv2d: weight must be 4-d (out_channels, in_channels / groups, KH, KW), got {weight.shape}")
    o, cg, kh, kw = weight.shape
    if groups < 1 or x.shape[1] % groups or o % groups or x.shape[1] // groups != cg:
        raise ShapeError(
            f"conv2d: input has {x.shape[1]} channels and weight {weight.shape} with groups={groups}: "
            f"expected weight (out_channels, {x.shape[1] // max(groups, 1)}, KH, KW), channels divisible by groups"
        )
    if bias is not None and bias.shape != (o,):
        raise ShapeError(f"conv2d: bias has shape {bias.shape}, expected ({o},)")
    pads = _conv_padding("conv2d", padding, (kh, kw), stride, dilation)
    for n, k, s, d, (a, b) in zip(x.shape[2:], (kh, kw), stride, dilation, pads):
        _out_side("conv2d", n, k, s, d, a + b)
    y = Conv2d.apply(x, weight, bias, stride=stride, padding=pads, dilation=dilation, groups=groups)
    return y if batched else y.squeeze(0)


def _conv_padding(op, padding, kernel, stride, dilation):
    """((top, bottom), (left, right)) from an int, a pair, "valid" or "same"."""
    if padding == "valid":
        return ((0, 0), (0, 0))
    if padding == "same":
        if stride != (1, 1):
            raise ValueError(f"{op}: padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    if isinstance(padding, str):
        raise ValueError(f"{op}: padding must be an int, a pair, 'valid' or 'same', got {padding!r}")
    ph, pw = _pair(padding, op, "padding")
    if ph < 0 or pw < 0:
        raise ValueError(f"{op}: padding must be non-negative, got {padding}")
    return ((ph, ph), (pw, pw))


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:  # fmt: skip
    """1-d cross-correlation: input (N, C, L), weight (O, C / groups, K); conv2d on a height-1 image."""
    if input.ndim not in (2, 3) or weight.ndim != 3:
        raise ShapeError(f"conv1d: expected input (N, C, L) or (C, L) and weight (O, C / groups, K), got "
                         f"{input.shape} and {weight.shape}")  # fmt: skip
    one = lambda v: (1, v if isinstance(v, int) else tuple(v)[0])  # noqa: E731
    pad = padding if isinstance(padding, str) else (0, padding if isinstance(padding, int) else tuple(padding)[0])
    y = conv2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, one(stride), pad, one(dilation), groups)
    return y.squeeze(-2)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:  # fmt: skip
    """The transposed convolution (the adjoint of conv2d's input map): input (N, C, H, W), weight
    (C, O / groups, KH, KW); output side (H - 1) * stride - 2 * padding + dilation * (KH - 1) +
    output_padding + 1."""
    x, batched = _spatial("conv_transpose2d", input, weight)
    if weight.ndim != 4 or weight.shape[0] != x.shape[1] or groups < 1 or x.shape[1] % groups:
        raise ShapeError(
            f"conv_transpose2d: weight {weight.shape} does not fit an input of {x.shape[1]} channels with "
            f"groups={groups}: expected (in_channels, out_channels / groups, KH, KW)"
        )
    stride, padding = _pair(stride, "conv_transpose2d", "stride"), _pair(padding, "conv_transpose2d", "padding")
    output_padding = _pair(output_padding, "conv_transpose2d", "output_padding")
    dilation = _pair(dilation, "conv_transpose2d", "dilation")
    for op_, s, d in zip(output_padding, stride, dilation):
        if not 0 <= op_ < max(s, d):
            raise ValueError(
                f"conv_transpose2d: output_padding {output_padding} must be smaller than stride or dilation"
            )
    o = weight.shape[1] * groups
    if bias is not None and bias.shape != (o,):
        raise ShapeError(f"conv_transpose2d: bias has shape {bias.shape}, expected ({o},)")
    for n, k, s, d, p, op_ in zip(x.shape[2:], weight.shape[2:], stride, dilation, padding, output_padding):
        if (n - 1) * s - 2 * p + d * (k - 1) + op_ + 1 < 1:
            raise ShapeError(f"conv_transpose2d: padding {padding} leaves an empty output for input {x.shape}")
    y = ConvTranspose2d.apply(x, weight, bias, stride=stride, padding=padding, output_padding=output_padding,
                              dilation=dilation, groups=groups)  # fmt: skip
    return y if batched else y.squeeze(0)


def _pool_geometry(op, x, kernel_size, stride, padding, dilation, ceil_mode):
    """(kernel, stride, ((top, bottom), (left, right)), dilation, out_size) as PyTorch: stride
    defaults to the kernel; with ceil_mode the last window may overhang the bottom/right edge
    (padded further there) but must start inside the input or the top/left padding."""
    kernel = _pair(kernel_size, op, "kernel_size")
    stride = kernel if stride is None or stride == () or stride == [] else _pair(stride, op, "stride")
    padding, dilation = _pair(padding, op, "padding"), _pair(dilation, op, "dilation")
    pads, out = [], []
    for n, k, s, p, d in zip(x.shape[2:], kernel, stride, padding, dilation):
        if not 0 <= p <= k // 2:
            raise ValueError(f"{op}: padding {padding} should be at most half the kernel size {kernel}")
        span = n + 2 * p - d * (k - 1) - 1
        if span < 0:
            raise ShapeError(f"{op}: the kernel {kernel} does not fit the (padded) input {x.shape}")
        m = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (m - 1) * s >= n + p:
            m -= 1
        pads.append((p, max(p, (m - 1) * s + d * (k - 1) + 1 - n - p)))
        out.append(m)
    return kernel, stride, tuple(pads), dilation, tuple(out)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):  # fmt: skip
    """The maximum of each kernel window; with return_indices also each maximum's flat index h * W + w."""
    x, batched = _spatial("max_pool2d", input)
    kernel, stride, pads, dilation, out = _pool_geometry("max_pool2d", x, kernel_size, stride, padding, dilation,
                                                         ceil_mode)  # fmt: skip
    y = MaxPool2d.apply(x, kernel=kernel, stride=stride, padding=pads, dilation=dilation, out_size=out)
    y = y if batched else y.squeeze(0)
    if not return_indices:
        return y
    xp = backend.namespace(x.device)
    _, arg, _ = window_max(xp, x._data, kernel, stride, pads, dilation, out)
    indices = max_indices(xp, arg, kernel, stride, pads, dilation, x.shape[3]).astype(backend.int64)
    return y, Tensor._make(indices if batched else indices[0], x.device, False)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:  # fmt: skip
    """The mean of each kernel window (see ops/pool.py for the divisor at the edges)."""
    x, batched = _spatial("avg_pool2d", input)
    kernel, stride, pads, _, out = _pool_geometry("avg_pool2d", x, kernel_size, stride, padding, 1, ceil_mode)
    xp = backend.namespace(x.device)
    if divisor_override:
        divisor = float(divisor_override)
    else:
        counts = []
        for n, k, s, (p, _), m in zip(x.shape[2:], kernel, stride, pads, out):
            start = xp.arange(m) * s - p  # PyTorch's rule: the window clipped to the padded input ...
            end = xp.minimum(start + k, n + p)
            size = end - start
            if not count_include_pad:  # ... or to the input itself
                size = xp.minimum(end, n) - xp.maximum(start, 0)
            counts.append(size)
        divisor = counts[0][:, None] * counts[1][None, :]
    y = AvgPool2d.apply(x, kernel=kernel, stride=stride, padding=pads, out_size=out, divisor=divisor)
    return y if batched else y.squeeze(0)


# ---------------------------------------------------------------- more activations (ops/activation.py)
def _activation(op, input: Tensor, name: str, inplace: bool, **params) -> Tensor:
    if inplace:
        raise ValueError(f"{name}: inplace=True is not supported; use the returned tensor (inplace=False)")
    if not backend.is_floating(input.dtype):
        input = input.float()
    return op.apply(input, **params)


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x)."""
    return _activation(SiLU, input, "silu", inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    return _activation(Mish, input, "mish", inplace)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return _activation(Softsign, input, "softsign", False)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x where beta x > threshold."""
    return _activation(Softplus, input, "softplus", False, beta=beta, threshold=threshold)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})")
    return _activation(Hardtanh, input, "hardtanh", inplace, min_val=min_val, max_val=max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """clamp(x / 6 + 1/2, 0, 1)."""
    return _activation(Hardsigmoid, input, "hardsigmoid", inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, alpha (exp(x) - 1) otherwise."""
    return _activation(ELU, input, "elu", inplace, alpha=alpha)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, alpha (exp(x / alpha) - 1) otherwise."""
    if alpha == 0:
        raise ValueError("celu: alpha must not be 0 (it divides x)")
    return _activation(CELU, input, "celu", inplace, alpha=alpha)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x for x > 0, negative_slope * x otherwise."""
    return _activation(LeakyReLU, input, "leaky_relu", inplace, negative_slope=negative_slope)
