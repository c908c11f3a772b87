"""Arithmetic: + - * / and powers, fmod / remainder, copysign, abs, clamp, the piecewise-constant
ops (sign, round, floor, ceil, trunc, division with rounding), whose derivative is 0 wherever it
exists (as in PyTorch), frac and nan_to_num, the binary functions of two reals (atan2, hypot,
logaddexp, lerp, fmax / fmin), and the copies (clone, a dtype cast).

inf - inf, 0 / 0, x % 0, inf ** 0 and the like are NaN or inf silently, as in PyTorch: those
expressions are computed in `backend.quiet()`, where NumPy does not warn.

Binary ops broadcast like NumPy; each backward returns the gradient shaped like the broadcast
output and the engine sums it back to each input's shape (autograd.unbroadcast).  Either input
of a binary op may be a Python number, whose gradient is not needed.
"""

from __future__ import annotations

import math

from .. import backend
from ..autograd import Function, graph_constant
from ..tensor_base import TensorBase


def _const(xp, g, array):
    """A constant of a formula (a mask, a rounded quotient: piecewise constant in the inputs, so
    its derivative is 0) as a tensor of g's dtype."""
    return graph_constant(g, xp.asarray(array, dtype=g._data.dtype))


def _zeros(xp, g):
    """A constant zero gradient shaped like g, for an input the output does not depend on (its
    derivative is 0 too: the true value, not a stub)."""
    return graph_constant(g, xp.zeros_like(g._data))


def sign(xp, x):
    """PyTorch's sign: [x > 0] - [x < 0], so sign(nan) = 0 (NumPy's np.sign gives nan) and sign(-0.0) = 0;
    a bool is its own sign."""
    if x.dtype.kind == "b":
        return x.copy()
    if x.dtype.kind != "f":
        return xp.sign(x)
    return (x > 0).astype(x.dtype) - (x < 0)


class Add(Function):
    """z = x + y.   dz/dx = 1, dz/dy = 1   =>   dx = g, dy = g."""

    def forward(self, x, y):
        with backend.quiet():  # inf + -inf = nan
            return x + y

    def backward(self, g):
        return g, g

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = dy = g, linear in g and free of x, y: a second pass
        carries a gradient of dx or dy back to g alone (d(dx)/dg = 1)."""
        return g, g


class Sub(Function):
    """z = x - y.   dx = g, dy = -g."""

    def forward(self, x, y):
        with backend.quiet():  # inf - inf = nan
            return x - y

    def backward(self, g):
        return g, -g

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g, dy = -g (a recorded Neg): linear in g, free of x, y."""
        return g, -g


class Mul(Function):
    """z = x * y.   dx = g * y, dy = g * x."""

    def forward(self, x, y):
        self.save_for_backward(x, y)
        with backend.quiet():  # 0 * inf = nan
            return x * y

    def backward(self, g):
        x, y = self.saved
        with backend.quiet():  # 0 * inf = nan
            dx = g * y if self.needs_grad(0) else None
            dy = g * x if self.needs_grad(1) else None
        return dx, dy

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g * y, dy = g * x as recorded Muls of the input tensors,
        so a second pass sees d(dx)/dg = y, d(dx)/dy = g, d(dy)/dg = x, d(dy)/dx = g (the cross
        term x.grad picks up from dy: of x * x, the 2 in d^2/dx^2 = 2 comes from both)."""
        x, y = self.parents
        return (g * y if self.needs_grad(0) else None), (g * x if self.needs_grad(1) else None)


class Div(Function):
    """z = x / y.   dx = g / y,  dy = -g * x / y**2 = -g * z / y."""

    def forward(self, x, y):
        with backend.quiet():  # x / 0 = +-inf, 0 / 0 = nan
            z = x / y
        self.save_for_backward(y, z)
        return z

    def backward(self, g):
        y, z = self.saved
        with backend.quiet():  # as in the forward
            dx = g / y
            dy = -dx * z if self.needs_grad(1) else None
        return dx, dy

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g / y, dy = -dx * z with z = x / y the output tensor (in
        the graph: its node carries d/dz on to x and y), = -g x / y^2.  A second pass then sees
        d(dx)/dg = 1/y, d(dx)/dy = -g/y^2, d(dy)/dz = -g/y, ... each through recorded ops."""
        x, y = self.parents
        dx = g / y
        return dx, (-dx * z if self.needs_grad(1) else None)


class Neg(Function):
    """z = -x.   dx = -g."""

    def forward(self, x):
        return -x

    def backward(self, g):
        return -g

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = -g, a recorded Neg (linear in g, free of x)."""
        return -g


class Pow(Function):
    """z = x ** p for a Python number p.   dx = g * p * x ** (p - 1).

    For p = 0, z = 1 is constant and dx = 0 (also at x = 0, where 0 * x ** -1 would be nan).
    """

    def forward(self, x, exponent):
        self.save_for_backward(x, exponent)
        with backend.quiet():  # 0 ** -1 = inf, (-1) ** 0.5 = nan, overflow = inf
            return x**exponent

    def backward(self, g):
        x, p = self.saved
        if p == 0:
            return self.xp.zeros_like(g), None  # None: the exponent is a number
        with backend.quiet():  # as in the forward
            if p == 2:
                return g * 2 * x, None
            return g * p * x ** (p - 1), None

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g * p * x^(p-1) as recorded ops on the input tensor, so
        a second pass sees d(dx)/dx = g p (p-1) x^(p-2) through the recorded Pow (whose own
        formula is this one: every order works).  p = 0: z = 1 is constant, dx = 0 exactly,
        a zero tensor (its derivatives are 0 too: constant here is the true value, not a stub)."""
        x, p = self.parents[0], self.saved[1]
        if p == 0:
            return type(g)._make(self.xp.zeros_like(g._data), g.device, False), None
        if p == 2:
            return g * 2 * x, None
        return g * p * x ** (p - 1), None


class PowTensor(Function):
    """z = x ** y with a tensor exponent, or a number base (2 ** x).

    dz/dx = y x^(y-1)             =>  dx = g y x^(y-1), and 0 where y = 0 (z = 1 does not depend on x,
                                      even at x = 0)
    dz/dy = x^y log(x) = z log(x)  =>  dy = g z log(x), and 0 where x = 0 and y >= 0 (PyTorch's
                                      limit: z is 0 or 1 there)
    Elsewhere IEEE arithmetic decides, as in PyTorch's formulas: a negative base to a fractional
    power is nan (and so are its gradients), 0 to a negative power is inf, log(0) = -inf, so
    dy = g * inf * -inf = -inf there; computed in `backend.quiet()`, where NumPy does not warn.
    """

    def forward(self, x, y):
        xp = self.xp
        dtype = x.dtype if hasattr(x, "dtype") else y.dtype
        x, y = (xp.asarray(v, dtype=dtype) if isinstance(v, (int, float)) else v for v in (x, y))  # a number base
        with backend.quiet():
            z = x**y
        self.save_for_backward(x, y, z)
        return z

    def backward(self, g):
        xp = self.xp
        x, y, z = self.saved
        dx = dy = None
        with backend.quiet():
            if self.needs_grad(0):
                dx = xp.where(y == 0, 0, g * y * x ** (y - 1))
            if self.needs_grad(1):
                dy = xp.where((x == 0) & (y >= 0), 0, g * z * xp.log(x))
        return dx, dy

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g y x^(y-1), dy = g z log(x) as recorded ops of the
        input tensors and the output z (in the graph), each set to 0 where the array backward sets
        it by a recorded masked_fill with a constant mask (where z does not depend on that input)."""
        xp = self.xp
        x, y = self.parents
        xa, ya, _ = self.saved
        dx = dy = None
        with backend.quiet():
            if self.needs_grad(0):
                dx = (g * y * x ** (y - 1)).masked_fill(graph_constant(g, ya == 0), 0.0)
            if self.needs_grad(1):
                log_x = x.log() if isinstance(x, TensorBase) else graph_constant(g, xp.log(xa))
                dy = (g * z * log_x).masked_fill(graph_constant(g, (xa == 0) & (ya >= 0)), 0.0)
        return dx, dy


class Fmod(Function):
    """z = fmod(x, y) = x - trunc(x / y) y  (the sign of x; C's fmod).

    Between the jumps of trunc(x / y):  dx = g,  dy = -g trunc(x / y).
    """

    def forward(self, x, y):
        self.save_for_backward(x, y)
        with backend.quiet():  # fmod(x, 0) = nan, fmod(inf, y) = nan
            return self.xp.fmod(x, y)

    def backward(self, g):
        x, y = self.saved
        with backend.quiet():  # x / 0 = +-inf, 0 / 0 = nan
            dy = -g * self.xp.trunc(x / y) if self.needs_grad(1) else None
        return g, dy

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g, dy = -g trunc(x / y), the rounded quotient a
        constant (piecewise constant in x and y): linear in g, so a second pass sees
        d(dy)/dg = -trunc(x / y) and nothing else (as PyTorch's fmod double backward)."""
        x, y = self.saved
        with backend.quiet():  # as the array backward
            dy = -g * _const(self.xp, g, self.xp.trunc(x / y)) if self.needs_grad(1) else None
        return g, dy


class Remainder(Function):
    """z = remainder(x, y) = x - floor(x / y) y  (the sign of y; Python's %).

    Between the jumps of floor(x / y):  dx = g,  dy = -g floor(x / y).
    """

    def forward(self, x, y):
        self.save_for_backward(x, y)
        with backend.quiet():  # remainder(x, 0) = nan, remainder(inf, y) = nan
            return self.xp.remainder(x, y)

    def backward(self, g):
        x, y = self.saved
        with backend.quiet():  # floor(x / 0) = +-inf, floor(0 / 0) = nan
            dy = -g * self.xp.floor_divide(x, y) if self.needs_grad(1) else None
        return g, dy

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g, dy = -g floor(x / y), the rounded quotient a
        constant (piecewise constant in x and y): linear in g."""
        x, y = self.saved
        with backend.quiet():  # as the array backward
            dy = -g * _const(self.xp, g, self.xp.floor_divide(x, y)) if self.needs_grad(1) else None
        return g, dy


class Copysign(Function):
    """z = |x| with the sign of y.   dz/dx = z / x = +-1 (0 at x = 0, as PyTorch);  dz/dy = 0."""

    def forward(self, x, y):
        z = self.xp.copysign(x, y)
        self.save_for_backward(x, z)
        return z

    def backward(self, g):
        x, z = self.saved
        with backend.quiet():  # inf / inf = nan: set just below
            ratio = self.xp.where(x == 0, 0, z / self.xp.where(x == 0, 1, x))
        return g * ratio, (self.xp.zeros_like(g) if self.needs_grad(1) else None)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g z / x (+-1, 0 at x = 0), the ratio a constant
        (piecewise constant in x and y); dy = 0, a constant zero."""
        x, z_array = self.saved
        xp = self.xp
        with backend.quiet():  # as the array backward
            ratio = xp.where(x == 0, 0, z_array / xp.where(x == 0, 1, x))
        return g * _const(xp, g, ratio), (_zeros(xp, g) if self.needs_grad(1) else None)


class Abs(Function):
    """z = |x|.   dz/dx = sign(x), and 0 at x = 0 (PyTorch's subgradient)   =>   dx = g sign(x)
    (PyTorch's sign, 0 at NaN too)."""

    def forward(self, x):
        self.save_for_backward(x)
        return self.xp.abs(x)

    def backward(self, g):
        (x,) = self.saved
        return g * sign(self.xp, x)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g sign(x), the sign a constant (piecewise constant in
        x: d(dx)/dx = 0, as PyTorch's abs double backward)."""
        (x,) = self.saved
        return g * graph_constant(g, sign(self.xp, x))


class Clamp(Function):
    """z = min(max(x, lo), hi); lo and hi are tensors or numbers, None for no bound.

    z is x where lo <= x <= hi, lo where x < lo, hi where max(x, lo) > hi (also when lo > hi,
    as in PyTorch).  Each input gets g where it is the one z equals:
        dx = g [lo <= x <= hi],   dlo = g [x < lo <= hi],   dhi = g [max(x, lo) > hi].
    """

    def forward(self, x, lo, hi):
        xp = self.xp
        low = x if lo is None else xp.maximum(x, lo)
        z = low if hi is None else xp.minimum(low, hi)
        self.save_for_backward(x, lo, hi, low)
        return z

    def backward(self, g):
        x, lo, hi, low = self.saved
        keep_x = True if lo is None else x >= lo
        if hi is not None:
            keep_x = keep_x & (x <= hi)
        dx = g * keep_x
        dlo = g * ((x < lo) & (True if hi is None else lo <= hi)) if self.needs_grad(1) else None
        dhi = g * (low > hi) if self.needs_grad(2) else None
        return dx, dlo, dhi

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): each gradient is g times its constant 0/1 mask (the masks
        are piecewise constant in the inputs: their derivatives are 0, as PyTorch's)."""
        x, lo, hi, low = self.saved
        xp = self.xp
        keep_x = xp.ones(x.shape, dtype=bool) if lo is None else x >= lo
        if hi is not None:
            keep_x = keep_x & (x <= hi)
        dx = g * graph_constant(g, keep_x.astype(g.dtype))
        dlo = dhi = None
        if self.needs_grad(1):
            dlo = g * graph_constant(g, ((x < lo) & (True if hi is None else lo <= hi)).astype(g.dtype))
        if self.needs_grad(2):
            dhi = g * graph_constant(g, (low > hi).astype(g.dtype))
        return dx, dlo, dhi


class Piecewise(Function):
    """sign, round, floor, ceil, trunc, and division rounded to an integer: each is constant
    between its jumps, so dz/dx = 0 (PyTorch returns zeros too, not an error).

    rounding `trunc` division of integers: x - fmod(x, y) is an exact multiple of y.
    """

    def forward(self, x, y=None, mode="floor", decimals=0):
        xp = self.xp
        self.inputs = 1 if y is None else 2  # backward returns one gradient per input
        if mode == "sign":
            return sign(xp, x)
        if mode == "round":
            return xp.round(x, decimals)
        if mode in ("floor", "ceil", "trunc"):
            return getattr(xp, mode)(x) if x.dtype.kind == "f" else x.copy()
        with backend.quiet():  # x / 0 = +-inf, 0 / 0 = nan
            if mode == "div_floor":
                return xp.floor_divide(x, y)
            if mode == "div_trunc":
                floating = (x.dtype if hasattr(x, "dtype") else y.dtype).kind == "f"
                return xp.trunc(x / y) if floating else (x - xp.fmod(x, y)) // y
        raise ValueError(f"unknown rounding mode {mode!r}")

    def backward(self, g):
        zero = self.xp.zeros_like(g)
        return (zero,) * self.inputs

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = 0 (and dy = 0), constant zeros: the true derivative of
        a piecewise-constant function, at every order."""
        zero = _zeros(self.xp, g)
        return (zero,) * self.inputs


class Clone(Function):
    """z = a copy of x.   dx = g."""

    def forward(self, x):
        return x.copy()

    def backward(self, g):
        return g

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g (the identity is linear)."""
        return g


class Cast(Function):
    """z = x converted to another dtype.   dx = g converted back to x's dtype.

    float64 to float16 goes through float32, as PyTorch's conversion does (c10::Half is made from a
    float): rounding twice, which differs from NumPy's direct rounding in the last bit near a tie.
    A float cast to an integer that cannot hold it (NaN, inf, out of range) is what the hardware
    gives, and an overflowing float cast is inf, silently as in PyTorch (`backend.quiet()`).
    """

    def forward(self, x, dtype):
        self.save_for_backward(x.dtype)
        if x.dtype.kind == "f" and (dtype.kind != "f" or dtype.itemsize < x.dtype.itemsize):
            with backend.quiet():
                if dtype.itemsize == 2 and dtype.kind == "f" and x.dtype.itemsize == 8:
                    x = x.astype(backend.float32)
                return x.astype(dtype)
        return x.astype(dtype)

    def backward(self, g):
        (dtype,) = self.saved
        return g.astype(dtype)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g cast back to x's dtype, a recorded Cast (linear; its
        own formula is this one)."""
        (dtype,) = self.saved
        return g.to(dtype)


class Frac(Function):
    """z = x - trunc(x), the fractional part (the sign of x).   Between the jumps at the integers
    dz/dx = 1   =>   dx = g."""

    def forward(self, x):
        with backend.quiet():  # inf - inf = nan for x = +-inf, as in PyTorch
            return x - self.xp.trunc(x)

    def backward(self, g):
        return g

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g (the identity between the jumps): linear in g."""
        return g


class NanToNum(Function):
    """z = x, with nan, +inf and -inf replaced by the numbers nan, posinf, neginf.
    z is x where x is finite and a constant elsewhere   =>   dx = g [x is finite]."""

    def forward(self, x, nan=0.0, posinf=None, neginf=None):
        xp = self.xp
        self.save_for_backward(x)
        if x.dtype.kind != "f":
            return x.copy()
        return xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    def backward(self, g):
        (x,) = self.saved
        return g * self.xp.isfinite(x)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g [x is finite], the mask a constant: linear in g."""
        (x,) = self.saved
        return g * _const(self.xp, g, self.xp.isfinite(x))


class Atan2(Function):
    """z = atan2(y, x), the angle of the point (x, y), in (-pi, pi].
    With r^2 = x^2 + y^2:  dz/dy = x / r^2,  dz/dx = -y / r^2
    =>   dy = g x / r^2,  dx = -g y / r^2  (0 at the origin, PyTorch's choice)."""

    def forward(self, y, x):
        self.save_for_backward(y, x)
        return self.xp.arctan2(y, x)

    def backward(self, g):
        y, x = self.saved
        xp = self.xp
        with backend.quiet():
            r2 = x * x + y * y
            recip = xp.where(r2 == 0, 0, 1 / r2)  # PyTorch's 0 where r^2 is 0 (or underflows to 0)
            dy = g * x * recip if self.needs_grad(0) else None  # x * 0 = 0 for a finite x when r = inf
            dx = -g * y * recip if self.needs_grad(1) else None
        return dy, dx

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): recip = 1 / (x^2 + y^2) of the input tensors, 0 where
        x^2 + y^2 is 0 (a constant mask; the denominator is 1 there, so no inf enters the graph),
        then dy = g x recip, dx = -g y recip: a second pass differentiates recip through the
        recorded Reciprocal (d recip = -2 (x dx + y dy) recip^2)."""
        y, x = self.parents
        ya, xa = self.saved
        with backend.quiet():
            origin = graph_constant(g, xa * xa + ya * ya == 0)
        recip = (x * x + y * y).masked_fill(origin, 1.0).reciprocal().masked_fill(origin, 0.0)
        dy = g * x * recip if self.needs_grad(0) else None
        dx = -g * y * recip if self.needs_grad(1) else None
        return dy, dx


class Hypot(Function):
    """z = sqrt(x^2 + y^2) (without overflow).   dz/dx = x / z,  dz/dy = y / z
    =>   dx = g x / z,  dy = g y / z  (nan at the origin, as in PyTorch)."""

    def forward(self, x, y):
        z = self.xp.hypot(x, y)
        self.save_for_backward(x, y, z)
        return z

    def backward(self, g):
        x, y, z = self.saved
        with backend.quiet():
            dx = g * x / z if self.needs_grad(0) else None
            dy = g * y / z if self.needs_grad(1) else None
        return dx, dy

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g x / z, dy = g y / z with the input tensors and z the
        output tensor, in the graph (its node carries d/dz on to x and y: d^2 z/dx^2 = y^2 / z^3)."""
        x, y = self.parents
        dx = g * x / z if self.needs_grad(0) else None
        dy = g * y / z if self.needs_grad(1) else None
        return dx, dy


class LogAddExp(Function):
    """z = log(exp(x) + exp(y)) (base e), or log2(2^x + 2^y) (base 2), without overflow.

    dz/dx = exp(x) / (exp(x) + exp(y)) = 1 / (1 + exp(y - x)), and for base 2 likewise
    2^x / (2^x + 2^y) = 1 / (1 + 2^(y - x))   =>   dx = g / (1 + b^(y - x)),  dy = g / (1 + b^(x - y)).
    """

    def forward(self, x, y, base="e"):
        xp = self.xp
        self.save_for_backward(x, y, base)
        with backend.quiet():  # -inf - -inf inside NumPy's logaddexp: the answer is -inf
            return xp.logaddexp(x, y) if base == "e" else xp.logaddexp2(x, y)

    def backward(self, g):
        xp = self.xp
        x, y, base = self.saved
        power = xp.exp if base == "e" else xp.exp2
        with backend.quiet():
            dx = g / (1 + power(y - x)) if self.needs_grad(0) else None
            dy = g / (1 + power(x - y)) if self.needs_grad(1) else None
        return dx, dy

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g / (1 + b^(y - x)), dy = g / (1 + b^(x - y)) as recorded
        ops of the input tensors (Exp or Exp2 of the difference): a second pass sees
        d(dx)/dx = g s (1 - s) ln b with s = 1 / (1 + b^(y - x)), and the cross terms."""
        x, y = self.parents
        power = (lambda t: t.exp()) if self.saved[2] == "e" else (lambda t: t.exp2())
        dx = g / (1 + power(y - x)) if self.needs_grad(0) else None
        dy = g / (1 + power(x - y)) if self.needs_grad(1) else None
        return dx, dy


class Lerp(Function):
    """z = x + w (y - x), the linear interpolation from x (w = 0) to y (w = 1); w a tensor or a
    number.  Computed as y - (y - x)(1 - w) for w >= 1/2 (as PyTorch: exact at w = 1).

    dz/dx = 1 - w,  dz/dy = w,  dz/dw = y - x   =>   dx = g (1 - w),  dy = g w,  dw = g (y - x).
    """

    def forward(self, x, y, w):
        xp = self.xp
        self.save_for_backward(x, y, w)
        with backend.quiet():
            if isinstance(w, (int, float)):  # a number weight picks one formula (CuPy's where needs arrays)
                return x + w * (y - x) if abs(w) < 0.5 else y - (y - x) * (1 - w)
            return xp.where(xp.abs(w) < 0.5, x + w * (y - x), y - (y - x) * (1 - w))

    def backward(self, g):
        x, y, w = self.saved
        with backend.quiet():
            dx = g * (1 - w) if self.needs_grad(0) else None
            dy = g * w if self.needs_grad(1) else None
            dw = g * (y - x) if self.needs_grad(2) else None
        return dx, dy, dw

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g (1 - w), dy = g w, dw = g (y - x) with the input
        tensors (w a tensor or a number): a second pass sees the cross terms d(dx)/dw = -g,
        d(dy)/dw = g, d(dw)/dy = g, d(dw)/dx = -g (z is bilinear)."""
        x, y, w = self.parents
        dx = g * (1 - w) if self.needs_grad(0) else None
        dy = g * w if self.needs_grad(1) else None
        dw = g * (y - x) if self.needs_grad(2) else None
        return dx, dy, dw


class FMax(Function):
    """z = fmax(x, y) (mode "max") or fmin(x, y) (mode "min"): the larger (smaller) of the two,
    the number where one is nan.  z is x where x wins (ties and a nan y included), else y
    =>   dx = g [x wins],  dy = g [y wins]  (PyTorch's split: a tie goes to x)."""

    def forward(self, x, y, mode="max"):
        xp = self.xp
        x_wins = ((x >= y) if mode == "max" else (x <= y)) | xp.isnan(y)
        self.save_for_backward(x_wins)
        return xp.fmax(x, y) if mode == "max" else xp.fmin(x, y)

    def backward(self, g):
        (x_wins,) = self.saved
        dx = g * x_wins if self.needs_grad(0) else None
        dy = g * ~x_wins if self.needs_grad(1) else None
        return dx, dy

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g [x wins], dy = g [y wins], the masks constants:
        linear in g (d(dx)/dx = 0, as PyTorch's)."""
        (x_wins,) = self.saved
        dx = g * _const(self.xp, g, x_wins) if self.needs_grad(0) else None
        dy = g * _const(self.xp, g, ~x_wins) if self.needs_grad(1) else None
        return dx, dy


class NextAfter(Function):
    """z = nextafter(x, y), the float next to x in the direction of y (y itself where x == y).
    PyTorch's derivative treats z as x where it moves x by an ulp, as the constant y elsewhere:
        dx = g [x != y],  dy = 0."""

    def forward(self, x, y):
        self.save_for_backward(x != y)
        return self.xp.nextafter(x, y)

    def backward(self, g):
        (moved,) = self.saved
        return g * moved, (self.xp.zeros_like(g) if self.needs_grad(1) else None)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g [x != y], the mask a constant; dy = 0, a constant."""
        (moved,) = self.saved
        return g * _const(self.xp, g, moved), (_zeros(self.xp, g) if self.needs_grad(1) else None)


class Ldexp(Function):
    """z = x 2^n (n a float or an integer tensor).   dz/dx = 2^n,  dz/dn = x 2^n ln 2 = z ln 2
    =>   dx = g 2^n,  dn = g z ln 2 (none for an integer n)."""

    def forward(self, x, n):
        xp = self.xp
        with backend.quiet():
            scale = xp.exp2(n.astype(x.dtype) if n.dtype.kind != "f" else n)
            z = x * scale
        self.save_for_backward(scale, z)
        return z

    def backward(self, g):
        scale, z = self.saved
        with backend.quiet():
            dx = g * scale if self.needs_grad(0) else None
            dn = g * z * math.log(2) if self.needs_grad(1) else None
        return dx, dn

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g 2^n, dn = g z ln 2 with z the output tensor, in the
        graph; 2^n is a recorded Exp2 of n when n is a float tensor (so a second pass sees
        d(dx)/dn = g 2^n ln 2), the forward's constant when n is an integer tensor."""
        scale, _ = self.saved
        n = self.parents[1]
        if n._data.dtype.kind == "f":  # the same dtype as x (Tensor.ldexp casts it)
            scale = n.exp2()
        else:
            scale = graph_constant(g, scale)
        dx = g * scale if self.needs_grad(0) else None
        dn = g * z * math.log(2) if self.needs_grad(1) else None
        return dx, dn
