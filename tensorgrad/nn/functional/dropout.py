"""Inverted dropout (ops/dropout.py)."""

from __future__ import annotations

from ...tensor import Tensor


def dropout(input: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Inverted dropout: zero each element with probability p, scale the rest by 1/(1-p)."""
    return input.dropout(p, training)
