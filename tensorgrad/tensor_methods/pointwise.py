"""Tensor methods, pointwise math beyond the arithmetic operators: the inverse trigonometric and
hyperbolic functions, expm1 / log1p, rsqrt, the special functions (erf, lgamma, i0, ...), the
binary functions of two reals (atan2, hypot, logaddexp, lerp, fmax, xlogy, ...), and the ops with
no gradient: the predicates (isnan, signbit, ...), the logical and bitwise ops, gcd and lcm.
Each differentiable one calls one op's `apply` (ops/elementary.py, special.py, arithmetic.py);
the others compute their integer or bool result outside the graph, as PyTorch does."""

from __future__ import annotations

import collections
import math

from .. import backend
from ..ops.arithmetic import Atan2, FMax, Frac, Hypot, Ldexp, Lerp, LogAddExp, NanToNum, NextAfter, Piecewise
from ..ops.elementary import (
    Acos,
    Acosh,
    Asin,
    Asinh,
    Atan,
    Atanh,
    Cosh,
    Expm1,
    Log1p,
    Logit,
    Reciprocal,
    Rsqrt,
    Scale,
    Sinc,
    Sinh,
)
from ..ops.special import I0, Digamma, Erf, Erfc, Erfinv, Lgamma, Polygamma, Xlogy
from .common import TensorBase, broadcast_shapes

FrexpResult = collections.namedtuple("frexp", ["mantissa", "exponent"])  # torch.return_types.frexp's fields


class PointwiseMixin(TensorBase):
    __slots__ = ()

    # ------------------------------------------------------------------ one variable, differentiable
    def asin(self):
        return Asin.apply(self._floating("asin"))

    def acos(self):
        return Acos.apply(self._floating("acos"))

    def atan(self):
        return Atan.apply(self._floating("atan"))

    def sinh(self):
        return Sinh.apply(self._floating("sinh"))

    def cosh(self):
        return Cosh.apply(self._floating("cosh"))

    def asinh(self):
        return Asinh.apply(self._floating("asinh"))

    def acosh(self):
        return Acosh.apply(self._floating("acosh"))

    def atanh(self):
        return Atanh.apply(self._floating("atanh"))

    arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh  # NumPy's names

    def expm1(self):
        return Expm1.apply(self._floating("expm1"))

    def log1p(self):
        return Log1p.apply(self._floating("log1p"))

    def rsqrt(self):
        return Rsqrt.apply(self._floating("rsqrt"))

    def reciprocal(self):
        return Reciprocal.apply(self._floating("reciprocal"))

    def square(self):
        """x ** 2: integers stay integers, bools become int64 (as in PyTorch)."""
        return (self.long() if self.dtype == backend.bool_ else self) ** 2

    def sinc(self):
        return Sinc.apply(self._floating("sinc"))

    def deg2rad(self):
        return Scale.apply(self._floating("deg2rad"), factor=math.pi / 180)

    def rad2deg(self):
        return Scale.apply(self._floating("rad2deg"), factor=180 / math.pi)

    def logit(self, eps=None):
        return Logit.apply(self._floating("logit"), eps=eps)

    def frac(self):
        """x - trunc(x); refused for integers and bools, as in PyTorch."""
        if not backend.is_floating(self.dtype):
            raise RuntimeError(f'"frac_cpu" not implemented for {self.dtype}')
        return Frac.apply(self)

    def sgn(self):
        """sign(x) for real x (PyTorch's sgn is x / |x| for complex); the gradient is zero."""
        return Piecewise.apply(self, mode="sign")

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        """nan -> the number `nan` (0 by default), +inf -> posinf, -inf -> neginf (by default the
        dtype's largest and smallest finite numbers); integers unchanged.  The gradient passes
        where x is finite."""
        return NanToNum.apply(self, nan=nan, posinf=posinf, neginf=neginf)

    # ------------------------------------------------------------------ special functions
    def erf(self):
        return Erf.apply(self._floating("erf"))

    def erfc(self):
        return Erfc.apply(self._floating("erfc"))

    def erfinv(self):
        return Erfinv.apply(self._floating("erfinv"))

    def lgamma(self):
        return Lgamma.apply(self._floating("lgamma"))

    def digamma(self):
        return Digamma.apply(self._floating("digamma"))

    def i0(self):
        return I0.apply(self._floating("i0"))

    def polygamma(self, n):
        """polygamma(n, self): the n-th derivative of digamma (n = 0: digamma)."""
        if not isinstance(n, int) or n < 0:
            raise RuntimeError(f"polygamma(n, x) does not support negative n, got {n}")
        return Polygamma.apply(self._floating("polygamma"), n=n)

    def _special(self, op, name):
        """The ops of tg.special without a Tensor method in PyTorch (ndtr, i0e, ...)."""
        return op.apply(self._floating(name))

    def _special_values(self, op, name, *others):
        """SciPy's special function `name` of self (and the others), outside the graph: the
        functions PyTorch gives no derivative (the Bessel functions j0, y0, k0, ...)."""
        return self._floating(op)._values(op, lambda xp, *arrays: backend.special(xp, name, *arrays), *others)

    # ------------------------------------------------------------------ two variables, differentiable
    def atan2(self, other):
        a, b = self._other_tensor(other, "atan2")
        return Atan2.apply(a._floating("atan2"), b._floating("atan2"))

    arctan2 = atan2

    def _float_pair(self, other, op):
        """(self, other) in their common floating dtype; integers and bools refused, as PyTorch does."""
        a, b = self._other_tensor(other, op)
        if not backend.is_floating(a.dtype):
            raise NotImplementedError(f'"{op}_cpu" not implemented for {a.dtype}')
        return a, b

    def hypot(self, other):
        return Hypot.apply(*self._float_pair(other, "hypot"))

    def logaddexp(self, other):
        return LogAddExp.apply(*self._float_pair(other, "logaddexp"), base="e")

    def logaddexp2(self, other):
        return LogAddExp.apply(*self._float_pair(other, "logaddexp2"), base="2")

    def fmax(self, other):
        """The larger, or the number where one is nan; a tie's gradient goes to self (PyTorch)."""
        return FMax.apply(*self._other_tensor(other, "fmax"), mode="max")

    def fmin(self, other):
        return FMax.apply(*self._other_tensor(other, "fmin"), mode="min")

    def xlogy(self, other):
        """x * log(y), 0 where x = 0 (unless y is nan); other may be a number."""
        return self._xlogy(other)

    def _xlogy(self, other, log1p=False, reflected=False):
        """x log(y) (log1p: x log(1 + y)) of x = self and y = other, or (reflected) of the number
        x = other and y = self; integers promoted to float32 as PyTorch does."""
        op = "xlog1py" if log1p else "xlogy"
        a, b = self._operands(other, op)
        a = a._floating(op)
        b = b._floating(op) if isinstance(b, TensorBase) else b
        return Xlogy.apply(*((b, a) if reflected else (a, b)), log1p=log1p)

    def lerp(self, end, weight):
        """self + weight * (end - self); weight a tensor or a number."""
        if not isinstance(end, TensorBase):
            raise TypeError(f"lerp(): argument 'end' must be Tensor, not {type(end).__name__}")
        if end.dtype != self.dtype or (isinstance(weight, TensorBase) and weight.dtype != self.dtype):
            raise RuntimeError(f"lerp: expected dtype {self.dtype} for `end` and `weight`")
        self._require_float("lerp")
        shape = broadcast_shapes("lerp", self.shape, end.shape)
        if isinstance(weight, TensorBase):
            broadcast_shapes("lerp", shape, weight.shape)
        return Lerp.apply(self, end, weight)

    def float_power(self, exponent):
        """self ** exponent in float64 (the gradient comes back in self's dtype)."""
        base = self.to(backend.float64)
        if isinstance(exponent, TensorBase):
            return base ** exponent.to(backend.float64)
        return base**exponent

    def true_divide(self, other):
        return self / other

    def ldexp(self, other):
        """self * 2 ** other (a float result for integer inputs, as PyTorch)."""
        other = self._tensor_arg(other, "ldexp")
        dtype = backend.result_type(self.dtype, other.dtype)
        dtype = dtype if backend.is_floating(dtype) else backend.float32
        broadcast_shapes("ldexp", self.shape, other.shape)
        exponent = other.to(dtype) if backend.is_floating(other.dtype) else other  # integers: no gradient
        return Ldexp.apply(self.to(dtype), exponent)

    def frexp(self):
        """(mantissa, exponent) with self = mantissa * 2^exponent, |mantissa| in [0.5, 1) (0, inf and
        nan keep exponent 0).  The mantissa is ldexp(self, -exponent), so its gradient is g 2^-exponent."""
        if not backend.is_floating(self.dtype):
            raise RuntimeError("torch.frexp() only supports floating-point dtypes")
        exponent = self._values("frexp", lambda xp, x: xp.frexp(x)[1])
        return FrexpResult(Ldexp.apply(self, -exponent), exponent)

    def clamp_min(self, min):  # noqa: A002 (PyTorch's name)
        return self.clamp(min=min)

    def clamp_max(self, max):  # noqa: A002 (PyTorch's name)
        return self.clamp(max=max)

    # ------------------------------------------------------------------ no gradient: bool and integer results
    def _values(self, op, fn, *others):
        """fn(xp, self's array, the others' arrays) as a tensor outside the graph; the others are
        tensors on self's device (broadcast against self) or numbers."""
        arrays = []
        for other in others:
            if isinstance(other, TensorBase):
                if other.device != self.device:
                    raise backend.DeviceError(
                        f"{op}: expected all tensors on the same device, got {self.device} and {other.device}"
                    )
                broadcast_shapes(op, self.shape, other.shape)
                arrays.append(other._data)
            else:
                arrays.append(other)
        xp = backend.namespace(self.device)
        with backend.quiet():
            out = fn(xp, self._data, *arrays)
        return self._make(backend.ensure_array(xp, out), self.device, False)

    def isnan(self):
        return self._values("isnan", lambda xp, x: xp.isnan(x))

    def isinf(self):
        return self._values("isinf", lambda xp, x: xp.isinf(x))

    def isfinite(self):
        return self._values("isfinite", lambda xp, x: xp.isfinite(x))

    def isposinf(self):
        return self._values("isposinf", lambda xp, x: x == xp.inf)

    def isneginf(self):
        return self._values("isneginf", lambda xp, x: x == -xp.inf)

    def isreal(self):
        """True everywhere: tensorgrad's tensors are real."""
        return self._values("isreal", lambda xp, x: xp.ones(x.shape, dtype=bool))

    def signbit(self):
        """Whether the sign bit is set (-0.0 and -nan included)."""
        return self._values(
            "signbit", lambda xp, x: xp.signbit(x) if x.dtype.kind != "b" else xp.zeros(x.shape, dtype=bool)
        )

    def _tensor_arg(self, other, op):
        if not isinstance(other, TensorBase):
            raise TypeError(f"{op}(): argument 'other' must be Tensor, not {type(other).__name__}")
        return other

    def logical_not(self):
        return self._values("logical_not", lambda xp, x: xp.logical_not(x))

    def logical_and(self, other):
        return self._values(
            "logical_and", lambda xp, x, y: xp.logical_and(x, y), self._tensor_arg(other, "logical_and")
        )

    def logical_or(self, other):
        return self._values("logical_or", lambda xp, x, y: xp.logical_or(x, y), self._tensor_arg(other, "logical_or"))

    def logical_xor(self, other):
        return self._values(
            "logical_xor", lambda xp, x, y: xp.logical_xor(x, y), self._tensor_arg(other, "logical_xor")
        )

    def heaviside(self, values):
        """0 where x < 0, 1 where x > 0 (nan too: it is not > 0), values where x == 0."""
        values = self._tensor_arg(values, "heaviside")
        if values.dtype != self.dtype:
            raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
        return self._values("heaviside", lambda xp, x, v: xp.where(x == 0, v, x > 0).astype(x.dtype), values)

    def nextafter(self, other):
        """The next float after self towards other."""
        a, b = self._other_tensor(other, "nextafter")
        a._require_float("nextafter")
        return NextAfter.apply(a, b)

    def _integers(self, other, op):
        """(self, other) in their common integer (or bool) dtype; floats refused, as in PyTorch."""
        a, b = self._operands(other, op)
        for t in (a, b):
            if isinstance(t, TensorBase) and backend.is_floating(t.dtype):
                raise RuntimeError(f'"{op}_cpu" not implemented for {t.dtype}')
        if isinstance(b, float):
            raise RuntimeError(f'"{op}_cpu" not implemented for float')
        return a, b

    def bitwise_xor(self, other):
        a, b = self._integers(other, "bitwise_xor")
        return a._values("bitwise_xor", lambda xp, x, y: xp.bitwise_xor(x, y), b)

    __xor__ = bitwise_xor

    def __rxor__(self, other):
        a, b = self._integers(other, "bitwise_xor")
        return a._values("bitwise_xor", lambda xp, x, y: xp.bitwise_xor(y, x), b)

    def __rand__(self, other):
        a, b = self._integers(other, "bitwise_and")
        return a._values("bitwise_and", lambda xp, x, y: xp.bitwise_and(y, x), b)

    def __ror__(self, other):
        a, b = self._integers(other, "bitwise_or")
        return a._values("bitwise_or", lambda xp, x, y: xp.bitwise_or(y, x), b)

    def _shift_operands(self, other, op):
        a, b = self._integers(other, op)
        if a.dtype == backend.bool_:  # PyTorch shifts no bools
            raise NotImplementedError(f'"{op}_cpu" not implemented for bool')
        return a, b

    def bitwise_left_shift(self, other):
        """self * 2 ** other in the integer dtype; a shift by a negative count or by the width or
        more gives 0 (PyTorch's rule; C leaves it undefined)."""
        a, b = self._shift_operands(other, "lshift")
        return a._values("bitwise_left_shift", _shift_left, b)

    def bitwise_right_shift(self, other):
        """self // 2 ** other; a shift by a negative count or by the width or more fills with the
        sign bit (0 or -1), as PyTorch does."""
        a, b = self._shift_operands(other, "rshift")
        return a._values("bitwise_right_shift", _shift_right, b)

    __lshift__, __rshift__ = bitwise_left_shift, bitwise_right_shift

    def gcd(self, other):
        a, b = self._integers(self._tensor_arg(other, "gcd"), "gcd")
        return a._values("gcd", lambda xp, x, y: xp.gcd(x, y), b)

    def lcm(self, other):
        a, b = self._integers(self._tensor_arg(other, "lcm"), "lcm")
        return a._values("lcm", lambda xp, x, y: xp.lcm(x, y), b)


def _shift_counts(xp, x, n):
    """(the shift counts with the out-of-range ones set to 0, which of them are in range, the width)."""
    bits = 8 * (x.dtype.itemsize if hasattr(x, "dtype") else 8)
    if isinstance(n, int):  # a number keeps x's dtype (a 0-d array would promote it)
        ok = 0 <= n < bits
        return (n if ok else 0), ok, bits
    ok = (n >= 0) & (n < bits)
    return xp.where(ok, n, 0), ok, bits


def _shift_left(xp, x, n):
    counts, ok, _ = _shift_counts(xp, x, n)
    if isinstance(ok, bool):  # a number count (CuPy's where needs an array condition)
        return xp.left_shift(x, counts) if ok else xp.zeros_like(x)
    return xp.where(ok, xp.left_shift(x, counts), 0)


def _shift_right(xp, x, n):
    counts, ok, bits = _shift_counts(xp, x, n)
    if isinstance(ok, bool):
        return xp.right_shift(x, counts if ok else bits - 1)
    return xp.where(ok, xp.right_shift(x, counts), xp.right_shift(x, bits - 1))
