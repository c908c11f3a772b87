"""Padding: constant, reflect, replicate and circular (ops/pad.py)."""

from __future__ import annotations

from ...backend import ShapeError
from ...ops.pad import ConstantPad, IndexPad
from ...tensor import Tensor


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
    # PyTorch's limits: a batch dim (the first of k + 2) may be empty, no other dim; a padded dim
    # must stay non-empty (negative amounts crop); reflect pads less than the dim, circular at most
    # it, and circular crops leave an element to wrap around
    first = 1 if input.ndim == k + 2 else 0
    if 0 in input.shape[first:]:
        raise ShapeError(f"pad: {mode} padding needs non-empty dims (but the batch dim), got input {input.shape}")
    limit = {"reflect": "smaller than", "circular": "at most", "replicate": "leaving at least one element of"}[mode]
    for n, (b, a) in zip(input.shape[-k:], pads[-k:]):
        cropped = max(-b, 0) + max(-a, 0)
        fits = {"reflect": max(b, a) < n, "circular": max(b, a) <= n and cropped < n, "replicate": True}[mode]
        if n + b + a < 1 or not fits:
            raise ShapeError(f"pad: {mode} padding {pad} must be {limit} the padded dims of the input {input.shape}")
    return IndexPad.apply(input, pads=tuple(pads), mode=mode)
