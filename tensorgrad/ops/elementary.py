"""The elementary functions of one variable: exp, log, sqrt and the trigonometric functions,
each with its derivative.  (tanh, also elementary, is with the activations.)"""

from __future__ import annotations

from ..autograd import Function


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


class Sin(Function):
    """z = sin(x).   dx = g cos(x)."""

    def forward(self, x):
        self.save_for_backward(x)
        return self.xp.sin(x)

    def backward(self, g):
        (x,) = self.saved
        return g * self.xp.cos(x)


class Cos(Function):
    """z = cos(x).   dx = -g sin(x)."""

    def forward(self, x):
        self.save_for_backward(x)
        return self.xp.cos(x)

    def backward(self, g):
        (x,) = self.saved
        return -g * self.xp.sin(x)


class Tan(Function):
    """z = tan(x).   dz/dx = 1 / cos^2(x) = 1 + tan^2(x)   =>   dx = g (1 + z^2)."""

    def forward(self, x):
        z = self.xp.tan(x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        return g * (1 + z * z)
