"""Elementwise ops.  Binary ops broadcast like NumPy; each backward returns the
gradient shaped like the broadcast output and the engine sums it back to each
input's shape (autograd.unbroadcast).  Either input of a binary op may be a
Python number, whose gradient is not needed.
"""

from __future__ import annotations

import math

from .. import backend
from ..autograd import Function


class Add(Function):
    """z = x + y.   dz/dx = 1, dz/dy = 1   =>   dx = g, dy = g."""

    def forward(self, x, y):
        return x + y

    def backward(self, g):
        return g, g


class Sub(Function):
    """z = x - y.   dx = g, dy = -g."""

    def forward(self, x, y):
        return x - y

    def backward(self, g):
        return g, -g


class Mul(Function):
    """z = x * y.   dx = g * y, dy = g * x."""

    def forward(self, x, y):
        self.save_for_backward(x, y)
        return x * y

    def backward(self, g):
        x, y = self.saved
        dx = g * y if self.needs_grad(0) else None
        dy = g * x if self.needs_grad(1) else None
        return dx, dy


class Div(Function):
    """z = x / y.   dx = g / y,  dy = -g * x / y**2 = -g * z / y."""

    def forward(self, x, y):
        z = x / y
        self.save_for_backward(y, z)
        return z

    def backward(self, g):
        y, z = self.saved
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
        return x**exponent

    def backward(self, g):
        x, p = self.saved
        if p == 0:
            return self.xp.zeros_like(g)
        if p == 2:
            return g * 2 * x
        return g * p * x ** (p - 1)


class Exp(Function):
    """z = exp(x).   dx = g * exp(x) = g * z (the output is reused)."""

    def forward(self, x):
        z = self.xp.exp(x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        return g * z


class Log(Function):
    """z = log(x).   dx = g / x."""

    def forward(self, x):
        self.save_for_backward(x)
        return self.xp.log(x)

    def backward(self, g):
        (x,) = self.saved
        return g / x


class Sqrt(Function):
    """z = sqrt(x).   dz/dx = 1 / (2 sqrt(x))   =>   dx = g / (2 z)."""

    def forward(self, x):
        z = self.xp.sqrt(x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        return g / (2 * z)


class Tanh(Function):
    """z = tanh(x).   dz/dx = 1 - tanh(x)^2   =>   dx = g * (1 - z^2)."""

    def forward(self, x):
        z = self.xp.tanh(x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        return g * (1 - z * z)


class ReLU(Function):
    """z = max(x, 0).   dx = g where x > 0, else 0 (the subgradient 0 at x = 0, as PyTorch)."""

    def forward(self, x):
        z = self.xp.maximum(x, 0)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        return g * (z > 0)


class GELU(Function):
    """z = x * Phi(x), Phi the standard normal CDF = (1 + erf(x / sqrt 2)) / 2.

    dz/dx = Phi(x) + x * phi(x),  phi(x) = exp(-x^2 / 2) / sqrt(2 pi).

    approximate="tanh":  z = x/2 (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3)
    dz/dx = (1 + tanh u)/2 + x/2 (1 - tanh^2 u) sqrt(2/pi) (1 + 3 * 0.044715 x^2).
    """

    def forward(self, x, approximate="none"):
        xp = self.xp
        if approximate == "tanh":
            t = xp.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))
            self.save_for_backward(x, t, approximate)
            return 0.5 * x * (1 + t)
        if approximate != "none":
            raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        cdf = 0.5 * (1 + backend.erf(xp, x * (1 / math.sqrt(2))))
        self.save_for_backward(x, cdf, approximate)
        return x * cdf

    def backward(self, g):
        x, s, approximate = self.saved
        if approximate == "tanh":
            du = math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * x * x)
            return g * (0.5 * (1 + s) + 0.5 * x * (1 - s * s) * du)
        pdf = self.xp.exp(-0.5 * x * x) * (1 / math.sqrt(2 * math.pi))
        return g * (s + x * pdf)


class Clone(Function):
    """z = a copy of x.   dx = g."""

    def forward(self, x):
        return x.copy()

    def backward(self, g):
        return g


class Cast(Function):
    """z = x converted to another dtype.   dx = g converted back to x's dtype."""

    def forward(self, x, dtype):
        self.save_for_backward(x.dtype)
        return x.astype(dtype)

    def backward(self, g):
        (dtype,) = self.saved
        return g.astype(dtype)
