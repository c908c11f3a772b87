"""Tensor methods, arithmetic: the operators, their named spellings (add, div, remainder, ...),
the matrix product, comparisons, and elementwise math.  Each calls one op's `apply`
(ops/arithmetic.py, elementary.py, activation.py, matmul.py, selection.py)."""

from __future__ import annotations

from .. import backend
from ..backend import ShapeError
from ..ops.activation import GELU, ReLU, Sigmoid, Tanh
from ..ops.arithmetic import Abs, Add, Clamp, Copysign, Div, Fmod, Mul, Neg, Piecewise, Pow, PowTensor, Remainder, Sub
from ..ops.elementary import Cos, Exp, Exp2, Log, Log2, Log10, Sin, Sqrt, Tan
from ..ops.matmul import MatMul
from ..ops.selection import Maximum, Minimum
from .common import TensorBase, broadcast_shapes


class ArithmeticMixin(TensorBase):
    __slots__ = ()

    # ------------------------------------------------------------------ operators and binary functions
    def _operands(self, other, op: str, true_divide=False):
        """Bring (self, other) to a common dtype and check devices/shapes for a binary op."""
        a = self
        if isinstance(other, TensorBase):
            b = other
            dtype = backend.result_type(a.dtype, b.dtype)
            if true_divide and not backend.is_floating(dtype):
                dtype = backend.float32
            if a.dtype != dtype:
                a = a.to(dtype)
            if b.dtype != dtype:
                b = b.to(dtype)
            if a.shape != b.shape:
                broadcast_shapes(op, a.shape, b.shape)
            return a, b
        if isinstance(other, (bool, int, float)):
            if (isinstance(other, float) or true_divide) and not backend.is_floating(a.dtype):
                a = a.to(backend.float32)
            return a, other
        # NumPy arrays, lists: a constant on self's device
        b = self._constant(other)
        return self._operands(b, op, true_divide)

    def __add__(self, other):
        return Add.apply(*self._operands(other, "add"))

    def __radd__(self, other):
        a, b = self._operands(other, "add")
        return Add.apply(b, a)

    def __sub__(self, other):
        return Sub.apply(*self._operands(other, "sub"))

    def __rsub__(self, other):
        a, b = self._operands(other, "sub")
        return Sub.apply(b, a)

    def __mul__(self, other):
        return Mul.apply(*self._operands(other, "mul"))

    def __rmul__(self, other):
        a, b = self._operands(other, "mul")
        return Mul.apply(b, a)

    def __truediv__(self, other):
        return Div.apply(*self._operands(other, "div", true_divide=True))

    def __rtruediv__(self, other):
        a, b = self._operands(other, "div", true_divide=True)
        return Div.apply(b, a)

    def __neg__(self):
        return Neg.apply(self)

    def __pos__(self):
        """+x is x itself (PyTorch's positive: no copy, no graph node); refused for bool tensors."""
        if self.dtype == backend.bool_:
            raise RuntimeError("positive: the + operator is not supported on a bool tensor")
        return self

    def __pow__(self, exponent):
        if isinstance(exponent, TensorBase):
            return PowTensor.apply(*self._operands(exponent, "pow"))
        if not isinstance(exponent, (int, float)):
            raise TypeError(f"pow: the exponent must be a number or a tensor, got {type(exponent).__name__}")
        if not backend.is_floating(self.dtype) and isinstance(exponent, int) and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")  # PyTorch's error
        a = self if backend.is_floating(self.dtype) or isinstance(exponent, int) else self.float()
        return Pow.apply(a, exponent)

    def __rpow__(self, base):
        """base ** x: a Python number base, or a tensor base (as `base.__pow__(x)`, PyTorch's answer)."""
        if isinstance(base, TensorBase):
            return base.__pow__(self)
        if not isinstance(base, (int, float)):
            raise TypeError(f"pow: the base must be a number or a tensor, got {type(base).__name__}")
        a, b = self._operands(base, "pow")
        return PowTensor.apply(b, a)

    def pow(self, exponent):
        return self**exponent

    def div(self, other, *, rounding_mode=None):
        """x / y; rounding_mode "trunc" or "floor" rounds the quotient (integers stay integers, and
        the gradient is zero, as in PyTorch)."""
        if rounding_mode is None:
            return self / other
        if rounding_mode not in ("trunc", "floor"):
            raise RuntimeError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
        return Piecewise.apply(*self._operands(other, "div"), mode="div_" + rounding_mode)

    divide = div

    def __floordiv__(self, other):
        return self.div(other, rounding_mode="floor")

    def __rfloordiv__(self, other):
        a, b = self._operands(other, "floor_divide")
        return Piecewise.apply(b, a, mode="div_floor")

    def fmod(self, other):
        """x - trunc(x / y) * y: the sign of x (C's fmod)."""
        return Fmod.apply(*self._operands(other, "fmod"))

    def remainder(self, other):
        """x - floor(x / y) * y: the sign of y (Python's %)."""
        return Remainder.apply(*self._operands(other, "remainder"))

    __mod__ = remainder

    def __rmod__(self, other):
        a, b = self._operands(other, "remainder")
        return Remainder.apply(b, a)

    def copysign(self, other):
        a, b = self._operands(other, "copysign")
        return Copysign.apply(a._floating("copysign"), b)

    def add(self, other, *, alpha=1):
        return self + (other * alpha if alpha != 1 else other)

    def sub(self, other, *, alpha=1):
        return self - (other * alpha if alpha != 1 else other)

    subtract = sub

    def mul(self, other):
        return self * other

    multiply = mul

    def _other_tensor(self, other, op):
        if not isinstance(other, TensorBase):
            raise TypeError(f"{op}(): argument 'other' must be a Tensor, not {type(other).__name__}")
        return self._operands(other, op)

    def maximum(self, other):
        """Elementwise max; a tie splits the gradient in halves (as PyTorch)."""
        return Maximum.apply(*self._other_tensor(other, "maximum"))

    def minimum(self, other):
        return Minimum.apply(*self._other_tensor(other, "minimum"))

    # ------------------------------------------------------------------ matrix product
    def __matmul__(self, other):
        return self.matmul(other)

    def __rmatmul__(self, other):
        """other @ self (a tensor `other` keeps its gradient: it is not wrapped as a constant)."""
        return (other if isinstance(other, TensorBase) else self._constant(other)).matmul(self)

    def matmul(self, other):
        """Matrix product; 1-d operands get a unit axis added and removed, as in PyTorch."""
        if not isinstance(other, TensorBase):
            other = self._constant(other)
        if self.ndim == 0 or other.ndim == 0:
            raise ShapeError(f"matmul: both arguments need at least 1 dim, got shapes {self.shape} and {other.shape}")
        rows = other.shape[-2] if other.ndim > 1 else other.shape[0]
        if self.shape[-1] != rows:  # checked before 1-d operands are reshaped: the user's shapes
            raise ShapeError(
                f"matmul: shapes {self.shape} and {other.shape} cannot be multiplied "
                f"({self.shape[-1]} columns vs {rows} rows)"
            )
        a, b = self, other
        if a.dtype != b.dtype:  # promoted as elementwise ops are (PyTorch refuses); no broadcast check here
            dtype = backend.result_type(a.dtype, b.dtype)
            a, b = a.to(dtype), b.to(dtype)
        if a.ndim == 1:
            out = a.unsqueeze(0).matmul(b)  # (..., 1, m); (1,) when b is 1-d too
            return out.squeeze(-2) if b.ndim > 1 else out.squeeze(-1)
        if b.ndim == 1:
            return a.matmul(b.unsqueeze(-1)).squeeze(-1)
        if a.shape[:-2] != b.shape[:-2]:
            broadcast_shapes("matmul (batch dims)", a.shape[:-2], b.shape[:-2])
        return MatMul.apply(a, b)

    # ----------------------------------------------------------- comparisons: bool tensors, outside the graph
    def _compare(self, other, fn):
        b = other._data if isinstance(other, TensorBase) else other
        if isinstance(other, TensorBase) and other.device != self.device:
            raise backend.DeviceError(f"comparison: tensors on {self.device} and {other.device}")
        return self._make(backend.ensure_array(backend.namespace(self.device), fn(self._data, b)), self.device, False)

    def __eq__(self, other):
        if not _comparable(other):
            return NotImplemented  # None, a list, a string, another object: Python's identity (False), as PyTorch
        return self._compare(other, lambda a, b: a == b)

    def __ne__(self, other):
        if not _comparable(other):
            return NotImplemented  # (True)
        return self._compare(other, lambda a, b: a != b)

    __hash__ = object.__hash__  # defining __eq__ unsets it; tensors are hashed by identity, as in PyTorch

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    def __invert__(self):
        """~x: logical not of a bool tensor, bitwise not of an integer one (no gradient)."""
        if self.dtype.kind not in "biu":
            raise TypeError(f"~ (bitwise_not) is only implemented on integer and bool tensors, got {self.dtype}")
        xp = backend.namespace(self.device)
        return self._make(backend.ensure_array(xp, ~self._data), self.device, False)  # 0-d: an array, not a scalar

    def __and__(self, other):
        return self._compare(other, lambda a, b: a & b)

    def __or__(self, other):
        return self._compare(other, lambda a, b: a | b)

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        """|self - other| <= atol + rtol * |other|, elementwise; a bool tensor (as torch.isclose)."""
        if not isinstance(other, TensorBase):
            raise TypeError(f"isclose(): argument 'other' must be a Tensor, not {type(other).__name__}")
        if other.dtype != self.dtype:
            raise RuntimeError(f"isclose(): the inputs must have the same dtype, got {self.dtype} and {other.dtype}")
        for name, tol in (("rtol", rtol), ("atol", atol)):
            if tol < 0:
                raise RuntimeError(f"isclose(): {name} must be greater than or equal to zero, got {tol}")
        xp = backend.namespace(self.device)
        return self._compare(other, lambda a, b: xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
        return bool(self.isclose(other, rtol, atol, equal_nan).all().item())

    # ------------------------------------------------------------------ elementwise math
    def exp(self):
        return Exp.apply(self._floating("exp"))

    def log(self):
        return Log.apply(self._floating("log"))

    def exp2(self):
        return Exp2.apply(self._floating("exp2"))

    def log2(self):
        return Log2.apply(self._floating("log2"))

    def log10(self):
        return Log10.apply(self._floating("log10"))

    def sqrt(self):
        return Sqrt.apply(self._floating("sqrt"))

    def tanh(self):
        return Tanh.apply(self._floating("tanh"))

    def relu(self):
        return ReLU.apply(self)

    def gelu(self, approximate="none"):
        return GELU.apply(self._floating("gelu"), approximate=approximate)

    def sigmoid(self):
        return Sigmoid.apply(self._floating("sigmoid"))

    def abs(self):
        return Abs.apply(self)

    __abs__ = abs

    def sin(self):
        return Sin.apply(self._floating("sin"))

    def cos(self):
        return Cos.apply(self._floating("cos"))

    def tan(self):
        return Tan.apply(self._floating("tan"))

    def sign(self):
        """-1, 0 or 1; the gradient is zero (as in PyTorch)."""
        return Piecewise.apply(self, mode="sign")

    def round(self, decimals=0):
        """Half to even, as in PyTorch; the gradient is zero."""
        return Piecewise.apply(self, mode="round", decimals=decimals)

    def floor(self):
        return Piecewise.apply(self, mode="floor")

    def ceil(self):
        return Piecewise.apply(self, mode="ceil")

    def trunc(self):
        return Piecewise.apply(self, mode="trunc")

    def clamp(self, min=None, max=None):  # noqa: A002 (PyTorch's names)
        """Each element limited to [min, max]; the bounds are numbers or tensors (broadcast), None
        for none.  The gradient goes to whichever of x, min, max the output equals."""
        if min is None and max is None:
            raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
        x = self
        for bound in (min, max):
            if bound is not None:
                x = x._operands(bound, "clamp")[0]  # x in the common dtype
        lo, hi = (None if b is None else x._operands(b, "clamp")[1] for b in (min, max))
        return Clamp.apply(x, lo, hi)

    clip = clamp


def _comparable(other) -> bool:
    """Whether `==` and `!=` compare with `other` elementwise: a tensor, a number or an array, as
    PyTorch's.  For anything else (None, a list, a string, another object) they return
    NotImplemented and Python compares identities, as for PyTorch's tensors: `t == None` is False,
    `t == [1.0, 2.0]` too, and `None in [t]` or `[t, None].index(None)` work on lists of tensors,
    where an elementwise result's truth value raised.  (Two tensors still compare elementwise: `in`
    and `==` between lists of tensors compare values, in PyTorch too; compare identities with `is`.)"""
    return isinstance(other, (TensorBase, bool, int, float, complex, *backend.SCALAR_TYPES)) or backend.is_array(other)
