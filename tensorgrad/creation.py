"""Making tensors: from data, filled, random, ranges.  Signatures follow PyTorch."""

from __future__ import annotations

import math

from . import backend
from .ops import ranges
from .tensor import Tensor
from .tensor_methods.common import broadcast_shapes, shape_arg


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
    """A tensor of the given size filled with 0 (size as ints or one sequence), as torch.zeros."""
    return _filled(0, size, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of the given size filled with 1 (size as ints or one sequence), as torch.ones."""
    return _filled(1, size, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of the given size, as torch.empty; its values are 0 here (never uninitialized memory)."""
    return _filled(0, size, dtype, device, requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of shape size filled with fill_value; the dtype is fill_value's (bool, int64 or float32) unless given,
    as torch.full."""
    if dtype is None:
        dtype = backend.default_dtype_for(fill_value)
    return _filled(fill_value, (size,), dtype, device, requires_grad)


def zeros_like(t: Tensor, dtype=None, device=None, requires_grad=False) -> Tensor:
    """zeros of t's shape, with t's dtype and device unless given, as torch.zeros_like."""
    return zeros(t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def ones_like(t: Tensor, dtype=None, device=None, requires_grad=False) -> Tensor:
    """ones of t's shape, with t's dtype and device unless given, as torch.ones_like."""
    return ones(t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def full_like(t: Tensor, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of t's shape filled with fill_value, with t's dtype and device unless given, as torch.full_like."""
    return full(t.shape, fill_value, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def manual_seed(seed: int):
    """Seed every device's default generator (the ones made later too); returns the CPU's,
    tg.default_generator, as torch.manual_seed does."""
    return backend.manual_seed(seed)


def _random(draw, size, dtype, device, requires_grad, generator, op):
    device = backend.normalize_device(device)
    dtype = backend.as_dtype(dtype) or backend.float32
    if not backend.is_floating(dtype):
        raise TypeError(f"random floats need a floating dtype, got {dtype}")
    data = getattr(backend.generator_for(device, generator, op), draw)(shape_arg(size), dtype)
    return Tensor._make(data, device, False).requires_grad_(requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal samples, from `generator` (a tg.Generator of `device`) or the device's default."""
    return _random("normal", size, dtype, device, requires_grad, generator, "randn")


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uniform samples on [0, 1), from `generator` (a tg.Generator of `device`) or the device's default."""
    return _random("uniform", size, dtype, device, requires_grad, generator, "rand")


def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A random permutation of 0..n-1 (int64 unless dtype says otherwise), from `generator` or
    the device's default (backend Generator.permutation says how it is drawn)."""
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    device = backend.normalize_device(device)
    data = backend.generator_for(device, generator, "randperm").permutation(n)
    if dtype is not None:
        data = data.astype(backend.as_dtype(dtype))
    return Tensor._make(data, device, False).requires_grad_(requires_grad)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Samples of N(mean, std^2), in PyTorch's forms:

        normal(mean: Tensor, std: Tensor)        # elementwise, shapes broadcast together
        normal(mean: Tensor, std: float = 1.0)   # the shape and dtype of mean
        normal(mean: float, std: Tensor)         # the shape and dtype of std
        normal(mean: float, std: float, size)    # a new tensor of `size` (float32 by default)

    each drawing z ~ N(0, 1) of the result's shape from `generator` or the default generator of
    the tensors' device, and returning mean + std * z.  PyTorch's output records a node whose
    backward is zero (the sample is not differentiated through mean and std); here the result is
    a constant tensor, outside the graph."""
    tensors = [v for v in (mean, std) if isinstance(v, Tensor)]
    if not tensors:
        if size is None:
            raise TypeError("normal(): with a float mean and std, size is required")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        z = _random("normal", (size,), dtype, device, False, generator, "normal")
        return z.mul_(std).add_(mean).requires_grad_(requires_grad)
    if size is not None:
        raise TypeError("normal(): size is given only with a float mean and a float std")
    if not all(backend.is_floating(t.dtype) for t in tensors):
        raise NotImplementedError(f'"normal_kernel" not implemented for {tensors[0].dtype}')
    device = tensors[0].device
    if any(t.device != device for t in tensors):
        raise backend.DeviceError(f"normal(): mean is on {mean.device} and std on {std.device}")
    m = mean._data if isinstance(mean, Tensor) else mean
    s = std._data if isinstance(std, Tensor) else std
    if isinstance(std, Tensor):

        def fail():
            raise RuntimeError("normal expects all elements of std >= 0.0")

        if device == "cpu" and (s < 0).any():
            fail()
        elif device != "cpu":
            backend.defer_check((s < 0).any(), fail)  # raised at the next read, as multinomial's checks
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    out_dtype = backend.result_type(*(t.dtype for t in tensors)) if len(tensors) == 2 else tensors[0].dtype
    shape = broadcast_shapes("normal", mean.shape, std.shape) if len(tensors) == 2 else tensors[0].shape
    z = backend.generator_for(device, generator, "normal").normal(shape, out_dtype)
    out = backend.ensure_array(backend.namespace(device), (m + s * z).astype(out_dtype, copy=False))  # 0-d: an array
    return Tensor._make(out, device, False)


def randint(*args, size=None, generator=None, dtype=None, device=None) -> Tensor:
    """randint(high, size) or randint(low, high, size): uniform integers in [low, high), from
    `generator` (a tg.Generator of `device`) or the device's default."""
    keyword = size is not None
    if size is None:
        *bounds, size = args or (None,)
    else:
        bounds = list(args)
    if len(bounds) not in (1, 2):
        raise TypeError(
            f"randint(): expected (high, size) or (low, high, size), got {len(args)} positional argument(s)"
            + (" and size=" if keyword else "")
        )
    if not isinstance(size, tuple | list):
        raise TypeError(f"randint(): argument 'size' must be a tuple of ints, not {type(size).__name__}")
    low, high = (0, bounds[0]) if len(bounds) == 1 else bounds
    if high <= low:
        raise ValueError(f"randint: empty range [{low}, {high})")
    device = backend.normalize_device(device)
    data = backend.generator_for(device, generator, "randint").integers(int(low), int(high), shape_arg((size,)))
    if dtype is not None:
        data = data.astype(backend.as_dtype(dtype))
    return Tensor._make(data, device, False)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    """start, start + step, ... up to end (excluded): int64 for integer arguments, float32 when any is
    a float (as PyTorch).  The values and their count are PyTorch's CPU kernel's (ops/ranges.py): for
    an integer dtype, start and step truncate to integers (int64 counts from the truncated bounds);
    for a float one, start + step * i in double, rounded once to the dtype."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = backend.float32 if any(isinstance(v, float) for v in (start, end, step)) else backend.int64
    dtype = backend.as_dtype(dtype)
    if dtype.kind == "b":
        raise NotImplementedError('"arange_cpu" not implemented for \'Bool\'')
    lo, hi, by = float(start), float(end), float(step)
    if by == 0:
        raise RuntimeError("arange: step must be nonzero")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"arange: unsupported range: {start} -> {end}")
    if (hi - lo) * by < 0:
        raise RuntimeError(f"arange: upper bound {end} and lower bound {start} inconsistent with step sign {step}")
    size = math.ceil((hi - lo) / by)
    if dtype.kind in "iu":  # PyTorch's accumulate type: int64, every argument truncated
        start, end, step = (ranges.integer_scalar(v, backend.int64, "arange") for v in (start, end, step))
        if dtype == backend.int64:  # counted in int64 from the truncated bounds
            if step == 0:
                raise ValueError("arange: step must be nonzero")
            span = end - start + step - (1 if step > 0 else -1)  # C++'s integer division truncates toward 0
            size = abs(span) // abs(step) * (1 if (span >= 0) == (step > 0) else -1)
    device = backend.normalize_device(device)
    data = ranges.arange(backend.namespace(device), start, step, max(size, 0), dtype)
    return Tensor._make(data, device, False).requires_grad_(requires_grad)


def tril(t: Tensor, diagonal=0) -> Tensor:
    """The lower triangle (elements with col - row <= diagonal) of the last two dims; zeros above."""
    return t.tril(diagonal)


def triu(t: Tensor, diagonal=0) -> Tensor:
    """The upper triangle (col - row >= diagonal) of the last two dims; zeros below."""
    return t.triu(diagonal)


def _triangle_indices(row, col, offset, dtype, device, lower):
    if row < 0 or col < 0:
        raise RuntimeError(
            f"row must be non-negative, got {row}" if row < 0 else f"col must be non-negative, got {col}"
        )
    device = backend.normalize_device(device)
    xp = backend.namespace(device)
    keep = xp.tri(row, col, k=offset, dtype=bool) if lower else ~xp.tri(row, col, k=offset - 1, dtype=bool)
    rows, cols = xp.nonzero(keep)  # row-major order, as PyTorch
    data = xp.stack([rows, cols]).astype(backend.as_dtype(dtype) or backend.int64)
    return Tensor._make(data.reshape(2, -1), device, False)


def tril_indices(row, col, offset=0, *, dtype=None, device=None) -> Tensor:
    """The (2, N) row and column indices of the lower triangle (col - row <= offset) of a row x col matrix."""
    return _triangle_indices(row, col, offset, dtype, device, lower=True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None) -> Tensor:
    """The (2, N) row and column indices of the upper triangle (col - row >= offset) of a row x col matrix."""
    return _triangle_indices(row, col, offset, dtype, device, lower=False)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A 0-d tensor holding s, float32 unless dtype says otherwise (as PyTorch, even for an int s)."""
    return full((), s, dtype=dtype or backend.float32, device=device, requires_grad=requires_grad)


def empty_like(t: Tensor, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of t's shape, dtype and device (its values unspecified: zeros here)."""
    return zeros_like(t, dtype=dtype, device=device, requires_grad=requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """The (n, m) identity matrix (m defaults to n), float32 by default."""
    device = backend.normalize_device(device)
    data = backend.namespace(device).eye(n, n if m is None else m, dtype=backend.as_dtype(dtype) or backend.float32)
    return Tensor._make(data, device, False).requires_grad_(requires_grad)


def _scalar_value(v, op, name):
    """A 0-d tensor given for a number (linspace's start and end): its value, as a Python number,
    so the computation runs in the requested dtype and not the tensor's; PyTorch refuses other shapes."""
    if not isinstance(v, Tensor):
        return v
    if v.ndim != 0:
        raise RuntimeError(f"{op}: only supports 0-dimensional {name} tensors, got shape {v.shape}")
    return v.item()


def _range_bounds(start, end, steps, dtype, op):
    """start and end of linspace / logspace as Python numbers: a 0-d tensor's value, converted to the
    dtype as PyTorch converts them (ops/ranges.py: an integer truncates; out of the dtype's range is an
    error), only those that are used (start with one step, neither with none)."""
    start, end = (_scalar_value(v, op, name) for v, name in ((start, "start"), (end, "end")))
    if dtype.kind == "b":
        raise NotImplementedError(f'"{op}_cpu" not implemented for \'Bool\'')
    if steps == 1 and dtype == backend.float16:  # one value, filled in as it is (inf beyond float16)
        return start, end
    used = (start, end)[: min(steps, 2)]
    return (*(ranges.scalar_in(v, dtype, op) for v in used), *(start, end)[len(used) :])


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False) -> Tensor:
    """`steps` evenly spaced values from start to end, both included (float32 by default), PyTorch's
    CPU values to the bit (ops/ranges.py): an integer dtype truncates start and end, then each value."""
    if steps < 0:
        raise RuntimeError(f"linspace: number of steps must be non-negative, got {steps}")
    dtype = backend.as_dtype(dtype) or backend.float32
    start, end = _range_bounds(start, end, steps, dtype, "linspace")
    device = backend.normalize_device(device)
    data = ranges.linspace(backend.namespace(device), start, end, steps, dtype)
    return Tensor._make(data, device, False).requires_grad_(requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """`steps` values base ** e, e evenly spaced from start to end (both included), float32 by default.

    As PyTorch's CPU kernel (ops/ranges.py): the exponents are start + i * step for the first half and
    end - (steps - 1 - i) * step for the second (so both ends are exact), in double, and so is the
    power; an integer dtype truncates start and end first, and each power after."""
    if isinstance(start, Tensor) or isinstance(end, Tensor):
        dims = [t.ndim if isinstance(t, Tensor) else 0 for t in (start, end)]
        if any(dims):
            raise RuntimeError(
                "logspace only supports 0-dimensional start and end tensors, but got start with "
                f"{dims[0]} dimension(s) and end with {dims[1]} dimension(s)."
            )
    if not isinstance(steps, int) or isinstance(steps, bool):
        raise TypeError(f"logspace(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError(f"logspace: number of steps must be non-negative, got {steps}")
    dtype = backend.as_dtype(dtype) or backend.float32
    if steps == 1:  # base ** start in double, converted as a fill value (start itself is not)
        start = _scalar_value(start, "logspace", "start")
        try:
            start = float(base) ** float(start)
        except OverflowError:
            start = math.inf
        start, end = _range_bounds(start, end, steps, dtype, "logspace")
    else:
        start, end = _range_bounds(start, end, steps, dtype, "logspace")
    device = backend.normalize_device(device)
    data = ranges.logspace(backend.namespace(device), start, end, steps, base, dtype)
    return Tensor._make(data, device, False).requires_grad_(requires_grad)


def multinomial(probs: Tensor, num_samples: int, replacement=False, *, generator=None) -> Tensor:
    """Draw class ids from each row of (unnormalised, non-negative) probs (int64), from `generator`
    (a tg.Generator of probs' device) or the device's default.

    With replacement (or one sample), by inverse CDF: u ~ U[0, total), id = number of classes
    whose cumulative mass is <= u.  Without replacement, by an exponential race: each class c gets
    the time e_c / p_c with e_c ~ Exp(1), and the first num_samples to arrive, in order, are the
    draws (the first arrival is c with probability p_c / total, and so on among those left).
    """
    if probs.ndim not in (1, 2):
        raise RuntimeError(f"multinomial: prob_dist must be 1 or 2 dim, got shape {probs.shape}")
    if num_samples <= 0:
        raise RuntimeError(f"multinomial: cannot sample n_sample <= 0 samples, got {num_samples}")
    if probs.shape[-1] > 2**24:  # PyTorch's limit (its float32 cumulative sums count to 2^24 exactly)
        raise RuntimeError("number of categories cannot exceed 2^24")
    if not replacement and num_samples > probs.shape[-1]:
        raise RuntimeError(
            f"multinomial: cannot sample {num_samples} > {probs.shape[-1]} categories without replacement"
        )
    xp = backend.namespace(probs.device)
    p = probs._data if probs.ndim == 2 else probs._data[None, :]
    gen = backend.generator_for(probs.device, generator, "multinomial")
    _check_probabilities(xp, p, probs.device)
    if num_samples != 1 and not replacement:
        e = -xp.log1p(-gen.uniform(p.shape, p.dtype))  # Exp(1), from u in [0, 1): finite
        with backend.quiet():  # a class of probability 0 arrives at time inf (never, while others remain)
            times = e / p
        ids = xp.argsort(times, axis=-1)[:, :num_samples].astype(backend.int64)
        return Tensor._make(ids if probs.ndim == 2 else ids[0], probs.device, False)
    cdf = xp.cumsum(p, axis=-1)  # (R, C)
    u = gen.uniform((p.shape[0], num_samples), cdf.dtype) * cdf[:, -1:]  # (R, S)
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
