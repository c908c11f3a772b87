"""Arithmetic: + - * / and powers, fmod / remainder, copysign, abs, clamp, the piecewise-constant
ops (sign, round, floor, ceil, trunc, division with rounding), whose derivative is 0 wherever it
exists (as in PyTorch), and the copies (clone, a dtype cast).

inf - inf, 0 / 0, x % 0, inf ** 0 and the like are NaN or inf silently, as in PyTorch: those
expressions are computed in `backend.quiet()`, where NumPy does not warn.

Binary ops broadcast like NumPy; each backward returns the gradient shaped like the broadcast
output and the engine sums it back to each input's shape (autograd.unbroadcast).  Either input
of a binary op may be a Python number, whose gradient is not needed.
"""

from __future__ import annotations

from .. import backend
from ..autograd import Function


def sign(xp, x):
    """PyTorch's sign: [x > 0] - [x < 0], so sign(nan) = 0 (NumPy's np.sign gives nan) and sign(-0.0) = 0."""
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


class Sub(Function):
    """z = x - y.   dx = g, dy = -g."""

    def forward(self, x, y):
        with backend.quiet():  # inf - inf = nan
            return x - y

    def backward(self, g):
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


class Neg(Function):
    """z = -x.   dx = -g."""

    def forward(self, x):
        return -x

    def backward(self, g):
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
            return self.xp.zeros_like(g)
        with backend.quiet():  # as in the forward
            if p == 2:
                return g * 2 * x
            return g * p * x ** (p - 1)


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


class Abs(Function):
    """z = |x|.   dz/dx = sign(x), and 0 at x = 0 (PyTorch's subgradient)   =>   dx = g sign(x)
    (PyTorch's sign, 0 at NaN too)."""

    def forward(self, x):
        self.save_for_backward(x)
        return self.xp.abs(x)

    def backward(self, g):
        (x,) = self.saved
        return g * sign(self.xp, x)


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


class Piecewise(Function):
    """sign, round, floor, ceil, trunc, and division rounded to an integer: each is constant
    between its jumps, so dz/dx = 0 (PyTorch returns zeros too, not an error).

    rounding `trunc` division of integers: x - fmod(x, y) is an exact multiple of y.
    """

    def forward(self, x, y=None, mode="floor", decimals=0):
        xp = self.xp
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
        return zero, zero


class Clone(Function):
    """z = a copy of x.   dx = g."""

    def forward(self, x):
        return x.copy()

    def backward(self, g):
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
