"""The losses: cross-entropy, NLL, binary cross-entropy (with logits), MSE and L1
(ops/cross_entropy.py, ops/losses.py), with PyTorch's reduction flags."""

from __future__ import annotations

from ... import backend
from ...backend import ShapeError
from ...ops.cross_entropy import CrossEntropy
from ...ops.losses import AbsoluteError, BCEWithLogits, BinaryCrossEntropy, NLLLoss, SquaredError
from ...tensor import Tensor
from ...tensor_methods.common import broadcast_shapes
from .embedding import check_ids


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
    reduction = resolve_reduction("cross_entropy", size_average, reduce, reduction)
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
        check_ids(target, n_classes, "cross_entropy", "target", ignore_index)
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
    reduction = resolve_reduction("nll_loss", size_average, reduce, reduction)
    if input.ndim == 1:
        loss = nll_loss(input.unsqueeze(0), target.unsqueeze(0), weight, None, ignore_index, None, reduction)
        return loss.squeeze(0) if reduction == "none" else loss
    want = input.shape[:1] + input.shape[2:] if input.ndim >= 2 else None
    if want is None or target.shape != want:
        raise ShapeError(f"nll_loss: target of shape {target.shape} does not match input {input.shape} (want {want})")
    _check_weight("nll_loss", weight, input.shape[1])
    check_ids(target, input.shape[1], "nll_loss", "target", ignore_index)
    w = None if weight is None else weight.to(input.dtype)
    loss = NLLLoss.apply(_classes_last(input), target.reshape(-1), w, ignore_index=ignore_index,
                         reduction=reduction)  # fmt: skip
    return loss.reshape(want) if reduction == "none" else loss


def binary_cross_entropy(
    input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    """-w (y log x + (1 - y) log(1 - x)) for probabilities x (logs clamped at -100, as PyTorch)."""
    reduction = resolve_reduction("binary_cross_entropy", size_average, reduce, reduction)
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
    reduction = resolve_reduction("binary_cross_entropy_with_logits", size_average, reduce, reduction)
    _same_shape("binary_cross_entropy_with_logits", input, target)
    for name, t in (("weight", weight), ("pos_weight", pos_weight)):
        if t is not None:
            broadcast_shapes(f"binary_cross_entropy_with_logits ({name})", t.shape, input.shape)
    cast = [None if t is None else t.to(input.dtype) for t in (target, weight, pos_weight)]
    return _reduce(BCEWithLogits.apply(input, *cast), reduction)


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """(input - target)^2, reduced."""
    reduction = resolve_reduction("mse_loss", size_average, reduce, reduction)
    _same_shape("mse_loss", input, target)
    return _reduce(SquaredError.apply(input, target.to(input.dtype)), reduction)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """|input - target|, reduced."""
    reduction = resolve_reduction("l1_loss", size_average, reduce, reduction)
    _same_shape("l1_loss", input, target)
    return _reduce(AbsoluteError.apply(input, target.to(input.dtype)), reduction)


def resolve_reduction(op, size_average, reduce, reduction):
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
