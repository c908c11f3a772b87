"""The losses: cross-entropy, NLL, binary cross-entropy (with logits), MSE, L1, Huber / smooth L1 and
KL divergence (ops/cross_entropy.py, ops/losses.py), with PyTorch's reduction flags; the margin,
embedding and likelihood losses below them are compositions of differentiable ops (each with its
backward), as PyTorch writes them.

As PyTorch, the elementwise losses added here broadcast input and target (kl_div, huber_loss,
smooth_l1_loss, soft_margin_loss, ...); mse_loss, l1_loss and the BCEs refuse a shape mismatch."""

from __future__ import annotations

import builtins
import math

from ... import backend
from ...backend import ShapeError
from ...functions import where
from ...ops.cross_entropy import CrossEntropy
from ...ops.losses import AbsoluteError, BCEWithLogits, BinaryCrossEntropy, HuberError, KLDiv, NLLLoss, SquaredError
from ...tensor import Tensor
from ...tensor_methods.common import broadcast_shapes
from .activations import logsigmoid
from .distance import pairwise_distance
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


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:  # fmt: skip
    """sum of target (log target - input) for log-probabilities input (ops/losses.py: KLDiv);
    reduction "batchmean" divides the sum by the batch size input.shape[0] (the KL divergence per
    sample), "mean" by the number of elements."""
    batchmean = reduction == "batchmean" and size_average is None and reduce is None
    reduction = resolve_reduction("kl_div", size_average, reduce, "sum" if batchmean else reduction)
    input, target = _broadcast_pair("kl_div", input, target)
    loss = _reduce(KLDiv.apply(input, target, log_target=log_target), reduction)
    return loss / input.shape[0] if batchmean and input.ndim else loss


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:  # fmt: skip
    """d^2 / 2 for |d| < delta, delta (|d| - delta / 2) beyond, d = input - target (ops/losses.py);
    weight (input's shape) weighs each element before the reduction."""
    reduction = resolve_reduction("huber_loss", None, None, reduction)
    if not delta > 0:
        raise RuntimeError(f"huber_loss: delta must be positive, got {delta}")
    input, target = _broadcast_pair("huber_loss", input, target)
    loss = HuberError.apply(input, target, delta=delta)
    if weight is not None:
        if weight.shape != input.shape:
            raise ValueError(f"huber_loss: weight of shape {weight.shape} must have the input's shape {input.shape}")
        loss = loss * weight
    return _reduce(loss, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:  # fmt: skip
    """d^2 / (2 beta) for |d| < beta, |d| - beta / 2 beyond: huber_loss(delta=beta) / beta, and the L1
    loss |d| for beta = 0."""
    reduction = resolve_reduction("smooth_l1_loss", size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    input, target = _broadcast_pair("smooth_l1_loss", input, target)
    if beta == 0:
        return _reduce(AbsoluteError.apply(input, target), reduction)
    return _reduce(HuberError.apply(input, target, delta=beta) / beta, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                     reduction: str = "mean") -> Tensor:  # fmt: skip
    """log(1 + exp(-target * input)) = -logsigmoid(target * input), for targets +-1."""
    reduction = resolve_reduction("soft_margin_loss", size_average, reduce, reduction)
    input, target = _broadcast_pair("soft_margin_loss", input, target)
    return _reduce(-logsigmoid(target * input), reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:  # fmt: skip
    """max(0, -target (input1 - input2) + margin): target 1 wants input1 ranked above input2 by margin."""
    reduction = resolve_reduction("margin_ranking_loss", size_average, reduce, reduction)
    if not (input1.ndim == input2.ndim == target.ndim):
        raise ShapeError(
            f"margin_ranking_loss: input1, input2 and target must have the same number of dimensions, got "
            f"{input1.shape}, {input2.shape} and {target.shape}"
        )
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:  # fmt: skip
    """input where target is 1, max(0, margin - input) where target is -1 (PyTorch's sum of both
    terms: a target neither 1 nor -1 takes both)."""
    reduction = resolve_reduction("hinge_embedding_loss", size_average, reduce, reduction)
    zero = _zero(input)
    loss = where(target != 1, (margin - input).clamp(min=0), zero) + where(target != -1, input, zero)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0, size_average=None,
                          reduce=None, reduction: str = "mean") -> Tensor:  # fmt: skip
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where target is -1; cos along
    the last dim of (N, D) or (D,) inputs, with PyTorch's 1e-12 added to each squared norm."""
    reduction = resolve_reduction("cosine_embedding_loss", size_average, reduce, reduction)
    if input1.ndim not in (1, 2) or input1.shape != input2.shape:
        raise ShapeError(f"cosine_embedding_loss: expects two (N, D) or (D,) inputs of the same shape, got "
                         f"{input1.shape} and {input2.shape}")  # fmt: skip
    if target.ndim != input1.ndim - 1:
        raise ShapeError(f"cosine_embedding_loss: a {target.ndim}-d target expects {target.ndim + 1}-d inputs, got "
                         f"{input1.shape}")  # fmt: skip
    dim = input1.ndim - 1
    eps = 1e-12  # PyTorch's: keeps the denominator > 0 for a zero vector
    dot = (input1 * input2).sum(dim)
    cos = dot / ((input1 * input1).sum(dim) + eps).mul((input2 * input2).sum(dim) + eps).sqrt()
    zero = _zero(cos)
    loss = where(target == 1, 1 - cos, zero) + where(target == -1, (cos - margin).clamp(min=0), zero)
    return _reduce(loss, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False, size_average=None,
                     eps: float = 1e-8, reduce=None, reduction: str = "mean") -> Tensor:  # fmt: skip
    """The Poisson negative log-likelihood of target given the rate exp(input) (log_input) or input:
    exp(input) - target * input, or input - target * log(input + eps); full adds Stirling's
    approximation of log(target!), target log target - target + log(2 pi target) / 2, where target > 1."""
    reduction = resolve_reduction("poisson_nll_loss", size_average, reduce, reduction)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        t = where(target > 1, target, _zero(target) + 1)  # target where > 1; 1 elsewhere keeps log finite
        stirling = t * t.log() - t + 0.5 * (2 * math.pi * t).log()
        loss = loss + where(target > 1, stirling, _zero(stirling))
    return _reduce(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:  # fmt: skip
    """The Gaussian negative log-likelihood (log var + (input - target)^2 / var) / 2 (+ log(2 pi) / 2
    when full).  var: input's shape, input's shape without the last dim, or one dim of size 1 (one
    variance shared along it); a float is one variance for all.  var is clamped at eps for the loss,
    but its gradient passes the clamp unchanged (as PyTorch, which clamps it without recording)."""
    if not isinstance(var, Tensor):
        if var < 0:
            raise ValueError("gaussian_nll_loss: var has negative entry/entries")
        var = _zero(input) + var
    elif bool((var < 0).any()):
        raise ValueError("gaussian_nll_loss: var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (var.ndim == input.ndim and builtins.sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError(f"gaussian_nll_loss: var of shape {var.shape} is of incorrect size for {input.shape}")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"gaussian_nll_loss: {reduction} is not valid")
    var = var + (var.detach().clamp(min=eps) - var.detach())  # the clamped value, var's gradient unchanged
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:  # fmt: skip
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d = pairwise_distance(p, eps);
    swap uses min(d(a, n), d(p, n)) as the negative distance."""
    reduction = resolve_reduction("triplet_margin_loss", size_average, reduce, reduction)
    if not (anchor.ndim == positive.ndim == negative.ndim):
        raise ShapeError(
            f"triplet_margin_loss: anchor, positive and negative must have the same number of dimensions, got "
            f"{anchor.shape}, {positive.shape} and {negative.shape}"
        )
    if margin <= 0:
        raise ValueError(f"triplet_margin_loss: margin must be greater than 0, got {margin}")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp(min=0), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                                reduce=None, reduction: str = "mean") -> Tensor:  # fmt: skip
    """-(y logsigmoid(x) + (1 - y) logsigmoid(-x)), (times weight), averaged over the classes (last
    dim): one loss per sample, then reduced."""
    reduction = resolve_reduction("multilabel_soft_margin_loss", size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    dim = builtins.max(input.ndim - 1, 0)
    loss = loss.sum(dim) / (input.shape[dim] if input.ndim else 1)
    return _reduce(loss, reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average=None, reduce=None, reduction: str = "mean") -> Tensor:  # fmt: skip
    """The multi-class hinge loss: sum over classes i != y of max(0, margin - x[y] + x[i])^p, times
    weight[y], divided by C, for input (N, C), (C,) or () and class ids target (N,) or () (a composition
    of gather, relu and pow)."""
    reduction = resolve_reduction("multi_margin_loss", size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("multi_margin_loss: only p == 1 and p == 2 supported")
    x, t = _rows(input), target.reshape(-1) if target.ndim <= 1 else target
    if input.ndim > 2 or t.ndim != 1 or t.shape[0] != x.shape[0]:
        raise ShapeError(f"multi_margin_loss: expects input (N, C) or (C,) and target (N,) or (), got {input.shape} "
                         f"and {target.shape}")  # fmt: skip
    c = x.shape[1]
    if weight is not None and (weight.ndim != 1 or weight.numel() != c):
        raise ShapeError(f"multi_margin_loss: weight must have one element per class ({c}), got {weight.shape}")
    check_ids(t, c, "multi_margin_loss", "target")
    picked = x.gather(1, t.unsqueeze(1))  # (N, 1): x[n, y_n]
    h = (margin - picked + x).relu()
    h = h if p == 1 else h * h
    if weight is not None:
        h = h * weight.to(x.dtype)[t].unsqueeze(1)
    others = Tensor._make(backend.namespace(x.device).arange(c)[None, :] != t._data[:, None], x.device, False)
    loss = where(others, h, _zero(h)).sum(1) / c
    return _reduce(loss.reshape(target.shape) if input.ndim <= 1 else loss, reduction)  # (C,) with (1,): (1,)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:  # fmt: skip
    """The multi-label hinge loss: target lists each sample's classes, ended by the first -1; the loss
    sums max(0, 1 - (x[j] - x[i])) over listed classes j and unlisted classes i, divided by C."""
    reduction = resolve_reduction("multilabel_margin_loss", size_average, reduce, reduction)
    if input.ndim > 2 or target.shape != input.shape:
        raise ShapeError(f"multilabel_margin_loss: expects input and target of the same shape (N, C), (C,) or (), "
                         f"got {input.shape} and {target.shape}")  # fmt: skip
    x, t = _rows(input), _rows(target)
    n, c = x.shape
    check_ids(t.masked_fill(t < 0, 0), c, "multilabel_margin_loss", "target")
    xp = backend.namespace(x.device)
    listed = xp.cumprod(t._data >= 0, axis=1).astype(bool)  # the ids before the first -1
    counts = xp.zeros((n, c), dtype=x.dtype)  # how often class j is listed (a repeat counts twice)
    rows = xp.broadcast_to(xp.arange(n)[:, None], t.shape)
    backend.add_at(xp, counts, (rows[listed], t._data[listed]), xp.ones((), dtype=x.dtype))
    pairs = counts[:, :, None] * (counts == 0)[:, None, :]  # (N, j, i): listed j against unlisted i
    h = (1 - x.unsqueeze(2) + x.unsqueeze(1)).relu()  # (N, j, i)
    loss = (h * Tensor._make(pairs, x.device, False)).sum((1, 2)) / c
    return _reduce(loss.reshape(()) if input.ndim <= 1 else loss, reduction)


def _rows(x: Tensor) -> Tensor:
    """() and (C,) as one row (1, C); (N, C) as it is."""
    return x.reshape(1, -1) if x.ndim <= 1 else x


def _broadcast_pair(op, input: Tensor, target: Tensor):
    """input and target broadcast to one shape (as PyTorch, which warns where the shapes differ)."""
    if not isinstance(target, Tensor):
        raise TypeError(f"{op}: target must be a Tensor, got {type(target).__name__}")
    if target.shape != input.shape:
        shape = broadcast_shapes(op, input.shape, target.shape)
        input, target = input.expand(*shape), target.expand(*shape)
    return input, target.to(input.dtype) if backend.is_floating(input.dtype) else target


def _zero(like: Tensor) -> Tensor:
    """A 0-d zero of like's dtype, on its device (a constant)."""
    return Tensor._make(backend.namespace(like.device).zeros((), dtype=like.dtype), like.device, False)


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
