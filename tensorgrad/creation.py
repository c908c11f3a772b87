"""Making tensors: from data, filled, random, ranges.  Signatures follow PyTorch."""

from __future__ import annotations

from . import backend
from .tensor import Tensor
from .tensor_methods.common import shape_arg


def tensor(data, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A new tensor holding a copy of `data`, with PyTorch's dtype rules: Python floats -> float32,
    ints -> int64, bools -> bool; a NumPy array keeps its dtype (float64 stays float64)."""
    if isinstance(data, Tensor):
        data = data._data
    t = Tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
    if backend.is_array(data) and backend.storage_of(t._data) is backend.storage_of(data):
        t._data = t._data.copy()  # a copy, as torch.tensor: an alias would escape the version counter
    return t


def _filled(fill, shape, dtype, device, requires_grad):
    device = backend.normalize_device(device)
    dtype = backend.as_dtype(dtype) or backend.float32
    xp = backend.namespace(device)
    data = xp.full(shape_arg(shape), fill, dtype=dtype)
    return Tensor._make(data, device, False).requires_grad_(requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _filled(0, size, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _filled(1, size, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _filled(0, size, dtype, device, requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    if dtype is None:
        dtype = backend.default_dtype_for(fill_value)
    return _filled(fill_value, (size,), dtype, device, requires_grad)


def zeros_like(t: Tensor, dtype=None, device=None, requires_grad=False) -> Tensor:
    return zeros(t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def ones_like(t: Tensor, dtype=None, device=None, requires_grad=False) -> Tensor:
    return ones(t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def full_like(t: Tensor, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    return full(t.shape, fill_value, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def manual_seed(seed: int):
    """Seed every random op (on every device)."""
    backend.manual_seed(seed)


def _random(draw, size, dtype, device, requires_grad):
    device = backend.normalize_device(device)
    dtype = backend.as_dtype(dtype) or backend.float32
    if not backend.is_floating(dtype):
        raise TypeError(f"random floats need a floating dtype, got {dtype}")
    data = getattr(backend.rng(device), draw)(shape_arg(size), dtype)
    return Tensor._make(data, device, False).requires_grad_(requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal samples."""
    return _random("normal", size, dtype, device, requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uniform samples on [0, 1)."""
    return _random("uniform", size, dtype, device, requires_grad)


def randint(*args, size=None, dtype=None, device=None) -> Tensor:
    """randint(high, size) or randint(low, high, size): uniform integers in [low, high)."""
    if size is None:
        *bounds, size = args
    else:
        bounds = list(args)
    low, high = (0, bounds[0]) if len(bounds) == 1 else bounds
    if high <= low:
        raise ValueError(f"randint: empty range [{low}, {high})")
    device = backend.normalize_device(device)
    data = backend.rng(device).integers(int(low), int(high), shape_arg((size,)))
    if dtype is not None:
        data = data.astype(backend.as_dtype(dtype))
    return Tensor._make(data, device, False)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Integers give int64, any float argument gives float32 (as PyTorch)."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = backend.float32 if any(isinstance(v, float) for v in (start, end, step)) else backend.int64
    device = backend.normalize_device(device)
    data = backend.namespace(device).arange(start, end, step, dtype=backend.as_dtype(dtype))
    return Tensor._make(data, device, False).requires_grad_(requires_grad)


def tril(t: Tensor, diagonal=0) -> Tensor:
    """The lower triangle (elements with col - row <= diagonal) of the last two dims; zeros above."""
    return t.tril(diagonal)


def triu(t: Tensor, diagonal=0) -> Tensor:
    """The upper triangle (col - row >= diagonal) of the last two dims; zeros below."""
    return t.triu(diagonal)


def eye(n, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """The (n, m) identity matrix (m defaults to n), float32 by default."""
    device = backend.normalize_device(device)
    data = backend.namespace(device).eye(n, n if m is None else m, dtype=backend.as_dtype(dtype) or backend.float32)
    return Tensor._make(data, device, False).requires_grad_(requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False) -> Tensor:
    """`steps` evenly spaced values from start to end, both included (float32 by default)."""
    if steps < 0:
        raise ValueError(f"linspace: number of steps must be non-negative, got {steps}")
    device = backend.normalize_device(device)
    data = backend.namespace(device).linspace(start, end, steps, dtype=backend.as_dtype(dtype) or backend.float32)
    return Tensor._make(data, device, False).requires_grad_(requires_grad)


def multinomial(probs: Tensor, num_samples: int, replacement=False) -> Tensor:
    """Draw class ids from each row of (unnormalised, non-negative) probs (int64).

    By inverse CDF: u ~ U[0, total), id = number of classes whose cumulative mass is <= u.
    Without replacement only num_samples=1 is supported (what sampling a language model needs).
    """
    if num_samples != 1 and not replacement:
        raise NotImplementedError("multinomial: without replacement only num_samples=1 is supported")
    if probs.ndim not in (1, 2):
        raise RuntimeError(f"multinomial: prob_dist must be 1 or 2 dim, got shape {probs.shape}")
    xp = backend.namespace(probs.device)
    p = probs._data if probs.ndim == 2 else probs._data[None, :]
    _check_probabilities(xp, p, probs.device)
    cdf = xp.cumsum(p, axis=-1)  # (R, C)
    u = backend.rng(probs.device).uniform((p.shape[0], num_samples), cdf.dtype) * cdf[:, -1:]  # (R, S)
    ids = (cdf[:, None, :] <= u[:, :, None]).sum(axis=-1)  # (R, S)
    ids = xp.minimum(ids, p.shape[-1] - 1).astype(backend.int64)
    return Tensor._make(ids if probs.ndim == 2 else ids[0], probs.device, False)


def _check_probabilities(xp, p, device):
    """PyTorch's checks of multinomial's input: no NaN, inf or negative entry, no row summing
    to 0.  On the CPU they run now; on a GPU they are queued (backend.defer_check) and raise at
    the next read, as the token-id checks do."""
    bad = ~xp.isfinite(p) | (p < 0)
    empty = p.sum(axis=-1) <= 0

    def fail_values():
        raise RuntimeError("multinomial: probability tensor contains either `inf`, `nan` or element < 0")

    def fail_sum():
        raise RuntimeError("multinomial: invalid multinomial distribution (sum of probabilities <= 0)")

    if device == "cpu":
        if bad.any():
            fail_values()
        if empty.any():
            fail_sum()
    else:
        backend.defer_check(bad.any(), fail_values)
        backend.defer_check(empty.any(), fail_sum)
