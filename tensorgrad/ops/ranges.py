r"""The values of the range factories (tg.linspace, tg.logspace, tg.arange; histogram's bin edges),
as PyTorch's CPU kernels compute them, so that equal arguments give equal tensors, bit for bit.

PyTorch's kernels are C++ loops over the index $i$; what they round, and where, decides the last bit
of a float and, for an integer dtype, which side of an integer a value truncates to:

- linspace: `step = (end - start) / (steps - 1)` in the dtype's arithmetic (double for integers);
  `start + step * i` for the first half, `end - step * (steps - 1 - i)` for the rest, each one
  fused multiply-add (the compiler contracts it); integers truncate toward zero.
  float16: every operation rounded to float16 (`c10::Half`'s operators), no fusing.
- logspace: `step = (end - start) / (steps - 1)` in double (the difference in the dtype); the
  exponent `start + step * i` (or `end - step * (steps - 1 - i)`) in plain double arithmetic,
  `base ** exponent` in double, then cast (integers truncate).
- arange: `start + step * i` in the accumulate type (double for floats, int64 for integers), but
  vectorised: the loop writes two vectors at a time (4 doubles or 8 floats each), each vector from
  its first value rounded to the dtype, `base + k * step` ($k = 0, \dots, \mathrm{width} - 1$); the
  tail past the last pair of vectors is scalar.  Integers wrap as C casts do.

NumPy and CuPy have no fused multiply-add: `fma` emulates it, exactly rounded, from Dekker's product
and Knuth's sum.  Only plain array arithmetic: any device.  Not reproduced: arange's split of more
than 32768 values among threads (each thread's part has its own vectors), and float16 arange's vectors.
"""

from __future__ import annotations

import math

from .. import backend


def _two_sum(a, b):
    """$(s, t)$ with $s = a + b$ rounded and $s + t = a + b$ exactly (Knuth)."""
    s = a + b
    z = s - a
    return s, (a - (s - z)) + (b - z)


def fma(xp, a, b, c):
    r"""$a b + c$ for float64 arrays, rounded once, as a fused multiply-add (NumPy and CuPy have none).

    Boldo and Melquiond's emulation: the exact product $a b = p + e$ (Dekker, with Veltkamp's split
    into 26-bit halves), the exact sum $c + p = s + t$ (Knuth), then $s + (t + e)$ with $t + e$ rounded
    to odd (to the neighbour whose last bit is 1 when inexact), which makes the final rounding the one
    of the exact result, ties included.  Where $a b$ is not finite: plain $a b + c$."""
    split = 134217729.0  # 2^27 + 1
    p = a * b
    ta, tb = split * a, split * b
    ah, bh = ta - (ta - a), tb - (tb - b)
    al, bl = a - ah, b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    with backend.quiet():  # inf - inf in the error terms where the product overflows: not used there
        s, t = _two_sum(c, p)
        v, w = _two_sum(t, e)
        mantissa, _ = xp.frexp(v)
        even = xp.fmod(mantissa * 2.0**53, 2.0) == 0
        v = xp.where((w != 0) & even, xp.nextafter(v, xp.where(w > 0, xp.inf, -xp.inf)), v)
        return xp.where(xp.isfinite(p), s + v, p + c)


def _halves(xp, steps):
    """`(first, k)`: whether index `i` is in the first half (`i < steps // 2`), and the multiple of
    `step` that PyTorch adds there (`i`) or takes from `end` in the second half (`steps - 1 - i`), as
    float64."""
    i = xp.arange(steps, dtype=backend.float64)
    first = i < steps // 2
    return first, xp.where(first, i, steps - 1 - i)


def linspace(xp, start, end, steps: int, dtype):
    """`steps` values from start to end, both included, as torch.linspace computes them on the CPU.
    start and end are Python numbers already in the dtype's range (integers for an integer dtype)."""
    if steps <= 1:
        return xp.full((steps,), start if steps else 0, dtype=dtype)
    first, k = _halves(xp, steps)
    if dtype.kind in "iu":  # step in double; the integer start and end as doubles
        step = (float(end) - float(start)) / (steps - 1)
        out = fma(xp, xp.where(first, step, -step), k, xp.where(first, float(start), float(end)))
        return xp.trunc(out).astype(backend.int64).astype(dtype)
    if dtype == backend.float16:  # c10::Half: each operation through float32, rounded to float16
        h, f = backend.float16, backend.float32
        lo, hi = xp.asarray(start, dtype=h), xp.asarray(end, dtype=h)
        step = ((hi.astype(f) - lo.astype(f)).astype(h).astype(f) / f.type(h.type(steps - 1))).astype(h)
        offset = (step.astype(f) * k.astype(h).astype(f)).astype(h).astype(f)
        return xp.where(first, lo.astype(f) + offset, hi.astype(f) - offset).astype(h)
    lo, hi = dtype.type(start), dtype.type(end)
    step = dtype.type((hi - lo) / dtype.type(steps - 1))  # in the dtype's arithmetic, as PyTorch
    base = xp.where(first, float(lo), float(hi))
    if dtype == backend.float32:  # step * k is exact in float64: one rounding there, one to float32
        return (base + xp.where(first, float(step), -float(step)) * k).astype(dtype)
    return fma(xp, xp.where(first, float(step), -float(step)), k, base).astype(dtype)


def logspace(xp, start, end, steps: int, base: float, dtype):
    """`base ** e` for `steps` exponents `e` from `start` to `end`, as `torch.logspace` computes them
    on the CPU.  `start` and `end` are Python numbers in the dtype (integers for an integer dtype);
    with one step, `start` is the value itself (`base ** start`, computed by the caller)."""
    if steps <= 1:
        return xp.full((steps,), start if steps else 0, dtype=dtype)
    first, k = _halves(xp, steps)
    if dtype.kind in "iu":  # end - start in C++'s int arithmetic: int for narrower types, else the dtype's (wraps)
        diff = end - start
        if dtype.itemsize >= 4:
            half = 2 ** (8 * dtype.itemsize - 1)
            diff = (diff + half) % (2 * half) - half
    else:  # start and end in the dtype, their difference in its arithmetic
        start, end = dtype.type(start), dtype.type(end)
        diff = end - start
    step = float(diff) / (steps - 1)
    exponent = xp.where(first, float(start) + step * k, float(end) - step * k)
    with backend.quiet():  # overflow to inf, as std::pow; an integer cast of inf is the hardware's value
        out = xp.power(xp.asarray(float(base), dtype=backend.float64), exponent)
        return (xp.trunc(out).astype(backend.int64) if dtype.kind in "iu" else out).astype(dtype)


# Vector widths of PyTorch's CPU kernels (32-byte vectors) and how many the loop writes at a time.
_VECTOR_BYTES, _VECTORS_PER_STEP = 32, 2


def arange(xp, start, step, size: int, dtype):
    """`size` values `start + step * i`, as `torch.arange` computes them on the CPU: in int64 for an
    integer dtype (`start` and `step` already truncated to integers; the values wrap to the dtype), in
    double for a float one, vector by vector (see the module's docstring)."""
    if dtype.kind in "iu":
        with backend.quiet():  # int64 arithmetic wraps, as in C++
            values = start + step * xp.arange(size, dtype=backend.int64)
        return values.astype(dtype)
    i = xp.arange(size, dtype=backend.int64)
    if dtype == backend.float16:  # a float accumulate type: not reproduced to the bit
        return (start + step * i.astype(backend.float64)).astype(dtype)
    width = _VECTOR_BYTES // dtype.itemsize
    vectorised = i < size // (_VECTORS_PER_STEP * width) * (_VECTORS_PER_STEP * width)
    k = xp.where(vectorised, i % width, i).astype(backend.float64)
    first = xp.where(vectorised, i - i % width, 0).astype(backend.float64)
    base = fma(xp, xp.full(first.shape, float(step)), first, xp.full(first.shape, float(start)))
    base = xp.where(vectorised, base.astype(dtype).astype(backend.float64), float(start))
    return fma(xp, xp.full(k.shape, float(step)), k, base).astype(dtype)


def scalar_in(value, dtype, op: str):
    """A Python number converted to `dtype` as PyTorch converts a Scalar: an integer dtype truncates
    (integer_scalar); a float one refuses a finite number beyond its range (which would round to inf)."""
    if dtype.kind in "iu":
        return integer_scalar(value, dtype, op)
    if math.isfinite(value) and not math.isfinite(float(dtype.type(value))):
        raise RuntimeError(f"{op}: value {value} cannot be converted to type {dtype.name} without overflow")
    return value


def integer_scalar(value, dtype, op: str) -> int:
    """A Python number as PyTorch converts a Scalar to an integer dtype: a float truncates toward zero
    and must lie in the dtype's range; an integer must too, except that a negative one wraps into an
    unsigned dtype down to -max (as c10's checked conversion allows)."""
    if type(value) is int and -(2**31) <= value < 2**31 and dtype.kind == "i" and dtype.itemsize >= 4:
        return value  # the common case (arange(T) in a model's forward), in range of every such dtype
    bits = 8 * dtype.itemsize
    lowest, highest = (0, 2**bits - 1) if dtype.kind == "u" else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if isinstance(value, float):
        if not math.isnan(value) and lowest <= value <= highest:
            return math.trunc(value)
    else:
        value = int(value)
        if lowest <= value <= highest:
            return value
        if lowest == 0 and -highest <= value < 0:
            return value % (highest + 1)
    raise RuntimeError(f"{op}: value {value} cannot be converted to type {dtype.name} without overflow")
