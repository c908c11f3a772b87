"""The elementary functions of one variable: exp, log (and their base-2 and base-10 forms), sqrt
and the trigonometric functions,
each with its derivative.  (tanh, also elementary, is with the activations.)

Outside their domain they are NaN or inf, silently, as in PyTorch: log(-1) = nan, log(0) = -inf,
sqrt(-1) = nan, exp(1000) = inf, sin(inf) = nan, and the derivatives there too (1 / 0 = inf).
Those expressions are computed in `backend.quiet()`, where NumPy does not warn."""

from __future__ import annotations

import math

from .. import backend
from ..autograd import Function


class Exp(Function):
    """z = exp(x).   dx = g * exp(x) = g * z (the output is reused)."""

    def forward(self, x):
        with backend.quiet():  # overflow: inf
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
        with backend.quiet():  # log(0) = -inf, log(x < 0) = nan
            return self.xp.log(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():  # g / 0 = +-inf
            return g / x


class Exp2(Function):
    """z = 2^x = exp(x ln 2).   dz/dx = ln 2 * 2^x   =>   dx = g * z * ln 2 (the output is reused)."""

    def forward(self, x):
        with backend.quiet():  # overflow: inf
            z = self.xp.exp2(x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        return g * z * math.log(2)


class Log2(Function):
    """z = log2(x) = ln(x) / ln 2.   dz/dx = 1 / (x ln 2)   =>   dx = g / (x ln 2)."""

    def forward(self, x):
        self.save_for_backward(x)
        with backend.quiet():  # log2(0) = -inf, log2(x < 0) = nan
            return self.xp.log2(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():  # g / 0 = +-inf
            return g / (x * math.log(2))


class Log10(Function):
    """z = log10(x) = ln(x) / ln 10.   dz/dx = 1 / (x ln 10)   =>   dx = g / (x ln 10)."""

    def forward(self, x):
        self.save_for_backward(x)
        with backend.quiet():  # log10(0) = -inf, log10(x < 0) = nan
            return self.xp.log10(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():  # g / 0 = +-inf
            return g / (x * math.log(10))


class Sqrt(Function):
    """z = sqrt(x).   dz/dx = 1 / (2 sqrt(x))   =>   dx = g / (2 z)."""

    def forward(self, x):
        with backend.quiet():  # sqrt(x < 0) = nan
            z = self.xp.sqrt(x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        with backend.quiet():  # g / 0 = +-inf
            return g / (2 * z)


class Sin(Function):
    """z = sin(x).   dx = g cos(x)."""

    def forward(self, x):
        self.save_for_backward(x)
        with backend.quiet():  # sin(+-inf) = nan
            return self.xp.sin(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():  # cos(+-inf) = nan
            return g * self.xp.cos(x)


class Cos(Function):
    """z = cos(x).   dx = -g sin(x)."""

    def forward(self, x):
        self.save_for_backward(x)
        with backend.quiet():  # cos(+-inf) = nan
            return self.xp.cos(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():  # sin(+-inf) = nan
            return -g * self.xp.sin(x)


class Tan(Function):
    """z = tan(x).   dz/dx = 1 / cos^2(x) = 1 + tan^2(x)   =>   dx = g (1 + z^2)."""

    def forward(self, x):
        with backend.quiet():  # tan(+-inf) = nan
            z = self.xp.tan(x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        with backend.quiet():  # nan and inf pass on
            return g * (1 + z * z)
