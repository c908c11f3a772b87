"""tensorgrad.nn.functional (imported as F): the neural-net ops as functions, with
PyTorch's names and signatures.  Each is wired to one op in tensorgrad/ops/."""

from __future__ import annotations

from .. import backend
from ..ops.embedding import Embedding
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
    """y = x W^T + b, with W of shape (out_features, in_features) as in PyTorch."""
    if input.shape[-1] != weight.shape[-1]:
        raise ValueError(
            f"linear: input has {input.shape[-1]} features (shape {input.shape}) but the weight "
            f"expects {weight.shape[-1]} (weight shape {weight.shape})"
        )
    out = input @ weight.T
    return out + bias if bias is not None else out


def dropout(input: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Inverted dropout: zero each element with probability p, scale the rest by 1/(1-p)."""
    return input.dropout(p, training)


def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    return input.layer_norm(normalized_shape, weight, bias, eps)


def _check_ids(ids: Tensor, n: int, op: str, what: str, ignore_index=None):
    """Integer ids in [0, n): a clear error instead of a wrapped or out-of-bounds read.

    This reads one number back from the device (a sync on a GPU), once per call.
    """
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{op}: {what} must be an integer tensor, got dtype {ids.dtype}")
    if ids.numel() == 0:
        return
    data = ids.data
    bad = (data < 0) | (data >= n)
    if ignore_index is not None:
        bad &= data != ignore_index
    if bool(bad.any()):
        value = int(data[bad].reshape(-1)[0])
        kind = "classes" if op == "cross_entropy" else "embeddings"
        raise IndexError(f"{op}: {what} contains {value}, outside [0, {n}) ({n} = number of {kind})")


def embedding(input: Tensor, weight: Tensor) -> Tensor:
    """Rows of weight (V, D) picked by integer ids of any shape -> (*ids.shape, D)."""
    _check_ids(input, weight.shape[0], "embedding", "the token ids")
    return Embedding.apply(input, weight)


def cross_entropy(input: Tensor, target: Tensor, reduction: str = "mean", ignore_index: int = -100) -> Tensor:
    """-log softmax(input)[target], fused with log-softmax.  input (N, C) logits, target (N,) ids."""
    if input.ndim != 2:
        raise ValueError(f"cross_entropy: expects logits of shape (N, C), got {input.shape}; reshape to (B*T, C)")
    if target.shape != input.shape[:1]:
        raise ValueError(f"cross_entropy: target of shape {target.shape} does not match logits {input.shape}")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"cross_entropy: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if not backend.is_floating(input.dtype):
        raise TypeError(f"cross_entropy: logits must be floating point, got {input.dtype}")
    _check_ids(target, input.shape[1], "cross_entropy", "target", ignore_index)
    return CrossEntropy.apply(input, target, reduction=reduction, ignore_index=ignore_index)
