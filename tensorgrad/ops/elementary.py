r"""The elementary functions of one variable: `exp`, `log` (and their base-2 and base-10 forms),
`sqrt` and the trigonometric functions, their inverses and the hyperbolic ones, `expm1` / `log1p`,
`rsqrt`, `reciprocal`, `sinc`, `logit` and the degree-radian conversions, each with its derivative.
(`tanh`, also elementary, is with the activations.)

Outside their domain they are NaN or inf, silently, as in PyTorch: $\log(-1)$ = NaN,
$\log 0 = -\infty$, $\sqrt{-1}$ = NaN, $e^{1000} = \infty$, $\sin \infty$ = NaN, $\arccos 2$ = NaN,
$\mathrm{rsqrt}(0) = \infty$, and the derivatives there too ($1 / 0 = \infty$).  Those expressions
are computed in `backend.quiet()`, where NumPy does not warn (CuPy never does)."""

from __future__ import annotations

import math

from .. import backend
from ..autograd import Function
from ..graph_walk import graph_constant


class Exp(Function):
    r"""$z = e^{x}$.   $dx = g\, e^{x} = g\, z$ (the output is reused)."""

    def forward(self, x):
        with backend.quiet():  # overflow: inf
            z = self.xp.exp(x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        return g * z

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, z$ with $z = e^{x}$ the output tensor, in the graph, so
        a second pass sees $\partial(dx)/\partial g = z$ and $\partial(dx)/\partial z = g$, which $z$'s node
        carries on to $x$ ($dz/dx = z$): $d^2 \exp / dx^2 = \exp$, and so on at every order."""
        return g * z


class Log(Function):
    r"""$z = \log x$.   $dx = g / x$."""

    def forward(self, x):
        self.save_for_backward(x)
        with backend.quiet():  # log(0) = -inf, log(x < 0) = nan
            return self.xp.log(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():  # g / 0 = +-inf
            return g / x

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g / x$, a recorded `Div` of the input tensor: a second pass
        sees $\partial(dx)/\partial g = 1/x$, $\partial(dx)/\partial x = -g/x^2$ (`Div`'s own formula)."""
        return g / self.parents[0]


class Exp2(Function):
    r"""$z = 2^x = e^{x \ln 2}$.   $dz/dx = \ln 2 \cdot 2^x$, so $dx = g\, z \ln 2$ (the output is reused)."""

    def forward(self, x):
        with backend.quiet():  # overflow: inf
            z = self.xp.exp2(x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        return g * z * math.log(2)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, z \ln 2$ with $z = 2^x$ the output tensor, in the graph
        (its node carries $d/dz$ on to $x$): each order multiplies by $\ln 2$ once more."""
        return g * z * math.log(2)


class Log2(Function):
    r"""$z = \log_2 x = \ln x / \ln 2$.   $dz/dx = 1 / (x \ln 2)$, so $dx = g / (x \ln 2)$."""

    def forward(self, x):
        self.save_for_backward(x)
        with backend.quiet():  # log2(0) = -inf, log2(x < 0) = nan
            return self.xp.log2(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():  # g / 0 = +-inf
            return g / (x * math.log(2))

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g / (x \ln 2)$, recorded `Mul` and `Div` of the input tensor."""
        x = self.parents[0]
        return g / (x * math.log(2))


class Log10(Function):
    r"""$z = \log_{10} x = \ln x / \ln 10$.   $dz/dx = 1 / (x \ln 10)$, so $dx = g / (x \ln 10)$."""

    def forward(self, x):
        self.save_for_backward(x)
        with backend.quiet():  # log10(0) = -inf, log10(x < 0) = nan
            return self.xp.log10(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():  # g / 0 = +-inf
            return g / (x * math.log(10))

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g / (x \ln 10)$, recorded `Mul` and `Div` of the input tensor."""
        x = self.parents[0]
        return g / (x * math.log(10))


class Sqrt(Function):
    r"""$z = \sqrt{x}$.   $dz/dx = 1 / (2 \sqrt{x})$, so $dx = g / (2 z)$."""

    def forward(self, x):
        with backend.quiet():  # sqrt(x < 0) = nan
            z = self.xp.sqrt(x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        with backend.quiet():  # g / 0 = +-inf
            return g / (2 * z)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g / (2 z)$ with $z = \sqrt{x}$ the output tensor, in the graph:
        $\partial(dx)/\partial z = -g / (2 z^2)$, carried on to $x$ by $z$'s node ($dz/dx = 1 / (2z)$)."""
        return g / (2 * z)


class Sin(Function):
    r"""$z = \sin x$.   $dx = g \cos x$."""

    def forward(self, x):
        self.save_for_backward(x)
        with backend.quiet():  # sin(+-inf) = nan
            return self.xp.sin(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():  # cos(+-inf) = nan
            return g * self.xp.cos(x)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g \cos x$, a recorded `Cos` (whose formula gives $-\sin$: every
        order)."""
        x = self.parents[0]
        return g * x.cos()


class Cos(Function):
    r"""$z = \cos x$.   $dx = -g \sin x$."""

    def forward(self, x):
        self.save_for_backward(x)
        with backend.quiet():  # cos(+-inf) = nan
            return self.xp.cos(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():  # sin(+-inf) = nan
            return -g * self.xp.sin(x)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = -g \sin x$, a recorded `Sin`."""
        x = self.parents[0]
        return -g * x.sin()


class Tan(Function):
    r"""$z = \tan x$.   $dz/dx = 1 / \cos^2 x = 1 + \tan^2 x$, so $dx = g\, (1 + z^2)$."""

    def forward(self, x):
        with backend.quiet():  # tan(+-inf) = nan
            z = self.xp.tan(x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        with backend.quiet():  # nan and inf pass on
            return g * (1 + z * z)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, (1 + z^2)$ with $z = \tan x$ the output tensor, in the graph."""
        return g * (1 + z * z)


class Asin(Function):
    r"""$z = \arcsin x$.   $dz/dx = 1 / \cos z = 1 / \sqrt{1 - x^2}$, so $dx = g / \sqrt{1 - x^2}$."""

    def forward(self, x):
        self.save_for_backward(x)
        with backend.quiet():
            return self.xp.arcsin(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():
            return g / self.xp.sqrt(1 - x * x)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g / \sqrt{1 - x^2}$, recorded ops of the input tensor."""
        x = self.parents[0]
        return g / (1 - x * x).sqrt()


class Acos(Function):
    r"""$z = \arccos x = \pi/2 - \arcsin x$.   $dx = -g / \sqrt{1 - x^2}$."""

    def forward(self, x):
        self.save_for_backward(x)
        with backend.quiet():
            return self.xp.arccos(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():
            return -g / self.xp.sqrt(1 - x * x)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = -g / \sqrt{1 - x^2}$, recorded ops of the input tensor."""
        x = self.parents[0]
        return -g / (1 - x * x).sqrt()


class Atan(Function):
    r"""$z = \arctan x$.   $dz/dx = \cos^2 z = 1 / (1 + \tan^2 z) = 1 / (1 + x^2)$, so $dx = g / (1 + x^2)$."""

    def forward(self, x):
        self.save_for_backward(x)
        return self.xp.arctan(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():  # x^2 overflows to inf for huge x: dx = 0, the limit
            return g / (1 + x * x)

    def backward_graph(self, g, z):
        """Tensor-level (`create_graph`): $dx = g / (1 + x^2)$, recorded ops of the input tensor."""
        x = self.parents[0]
        return g / (1 + x * x)


class Sinh(Function):
    r"""$z = \sinh x = (e^{x} - e^{-x}) / 2$.   $dz/dx = (e^{x} + e^{-x}) / 2 = \cosh x$, so $dx = g \cosh x$."""

    def forward(self, x):
        self.save_for_backward(x)
        with backend.quiet():  # overflows to +-inf past |x| ~ 710, as in PyTorch
            return self.xp.sinh(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():
            return g * self.xp.cosh(x)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g \cosh x$, a recorded `Cosh` (whose formula gives $\sinh$)."""
        x = self.parents[0]
        return g * x.cosh()


class Cosh(Function):
    r"""$z = \cosh x = (e^{x} + e^{-x}) / 2$.   $dz/dx = \sinh x$, so $dx = g \sinh x$."""

    def forward(self, x):
        self.save_for_backward(x)
        with backend.quiet():
            return self.xp.cosh(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():
            return g * self.xp.sinh(x)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g \sinh x$, a recorded `Sinh`."""
        x = self.parents[0]
        return g * x.sinh()


class Asinh(Function):
    r"""$z = \operatorname{asinh} x = \log(x + \sqrt{x^2 + 1})$.
    $dz/dx = 1 / \cosh z = 1 / \sqrt{x^2 + 1}$, so $dx = g / \sqrt{x^2 + 1}$."""

    def forward(self, x):
        self.save_for_backward(x)
        return self.xp.arcsinh(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():
            return g / self.xp.sqrt(x * x + 1)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g / \sqrt{x^2 + 1}$, recorded ops of the input tensor."""
        x = self.parents[0]
        return g / (x * x + 1).sqrt()


class Acosh(Function):
    r"""$z = \operatorname{acosh} x = \log(x + \sqrt{x^2 - 1})$ for $x \ge 1$.
    $dz/dx = 1 / \sinh z = 1 / \sqrt{x^2 - 1}$, so $dx = g / \sqrt{x^2 - 1}$ (inf at $x = 1$, NaN below,
    as in PyTorch)."""

    def forward(self, x):
        self.save_for_backward(x)
        with backend.quiet():
            return self.xp.arccosh(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():
            return g / self.xp.sqrt(x * x - 1)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g / \sqrt{x^2 - 1}$, recorded ops of the input tensor."""
        x = self.parents[0]
        return g / (x * x - 1).sqrt()


class Atanh(Function):
    r"""$z = \operatorname{atanh} x = \log\big((1 + x) / (1 - x)\big) / 2$ for $|x| < 1$.
    $dz/dx = 1 / (1 - x^2)$, so $dx = g / (1 - x^2)$."""

    def forward(self, x):
        self.save_for_backward(x)
        with backend.quiet():
            return self.xp.arctanh(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():
            return g / (1 - x * x)

    def backward_graph(self, g, z):
        """Tensor-level (`create_graph`): $dx = g / (1 - x^2)$, recorded ops of the input tensor."""
        x = self.parents[0]
        return g / (1 - x * x)


class Expm1(Function):
    r"""$z = e^{x} - 1$, exact for small $x$.   $dz/dx = e^{x} = z + 1$, so $dx = g\, (z + 1)$."""

    def forward(self, x):
        with backend.quiet():
            z = self.xp.expm1(x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        with backend.quiet():
            return g * (z + 1)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, (z + 1)$ with $z = \mathrm{expm1}(x)$ the output tensor, in
        the graph ($dz/dx = z + 1$: every order)."""
        return g * (z + 1)


class Log1p(Function):
    r"""$z = \log(1 + x)$, exact for small $x$.   $dx = g / (1 + x)$."""

    def forward(self, x):
        self.save_for_backward(x)
        with backend.quiet():
            return self.xp.log1p(x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():
            return g / (1 + x)

    def backward_graph(self, g, z):
        """Tensor-level (`create_graph`): $dx = g / (1 + x)$, recorded ops of the input tensor."""
        x = self.parents[0]
        return g / (1 + x)


class Rsqrt(Function):
    r"""$z = 1 / \sqrt{x} = x^{-1/2}$.   $dz/dx = -x^{-3/2} / 2 = -z^3 / 2$, so $dx = -g\, z^3 / 2$."""

    def forward(self, x):
        with backend.quiet():
            z = 1 / self.xp.sqrt(x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        with backend.quiet():
            return -0.5 * g * z * z * z

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = -g\, z^3 / 2$ with $z = x^{-1/2}$ the output tensor, in the graph."""
        return -0.5 * g * z * z * z


class Reciprocal(Function):
    r"""$z = 1 / x$.   $dz/dx = -1 / x^2 = -z^2$, so $dx = -g\, z^2$."""

    def forward(self, x):
        with backend.quiet():
            z = 1 / x
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        with backend.quiet():
            return -g * z * z

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = -g\, z^2$ with $z = 1/x$ the output tensor, in the graph
        ($\partial(dx)/\partial z = -2 g z$, carried on to $x$ by $z$'s node: $d^2(1/x)/dx^2 = 2/x^3$)."""
        return -g * z * z


class Sinc(Function):
    r"""$z = \sin(\pi x) / (\pi x)$, and 1 at $x = 0$ (the limit).

    $$
    \frac{dz}{dx} = \frac{\pi x \cos(\pi x)\, \pi - \sin(\pi x)\, \pi}{(\pi x)^2}
    = \frac{\pi x \cos(\pi x) - \sin(\pi x)}{\pi x^2},
    $$

    and 0 at $x = 0$ ($z$ is even there), so

    $$
    dx = g\, \frac{\pi x \cos(\pi x) - \sin(\pi x)}{\pi x^2},
    $$

    and 0 where $\pi x^2$ is 0 in floating point (as PyTorch).
    """

    def forward(self, x):
        self.save_for_backward(x)
        with backend.quiet():
            return self.xp.sinc(x)

    def backward(self, g):
        xp = self.xp
        (x,) = self.saved
        px = math.pi * x
        denominator = px * x  # 0 also where x^2 underflows: there the slope is ~ -pi^2 x / 3, i.e. 0
        with backend.quiet():
            slope = (px * xp.cos(px) - xp.sin(px)) / denominator
        return g * xp.where(denominator == 0, 0, slope)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): the same slope as recorded ops of the input tensor
        (`Mul`, `Cos`, `Sin`, `Div`), 0 where $\pi x^2$ is 0 (a constant mask; the denominator is 1 there,
        so no $0 / 0$ enters the graph): a second pass sees
        $\partial(dx)/\partial x = g\, d(\mathit{slope})/dx$ off $x = 0$, and 0 at $x = 0$ (PyTorch's
        where-based `sinc_backward` gives NaN there; the true value is $-\pi^2 / 3$)."""
        (xa,) = self.saved
        x = self.parents[0]
        at_zero = graph_constant(g, math.pi * xa * xa == 0)
        px = math.pi * x
        slope = (px * px.cos() - px.sin()) / (px * x).masked_fill(at_zero, 1.0)
        return g * slope.masked_fill(at_zero, 0.0)


class Scale(Function):
    r"""$z = c\, x$ for a constant $c$ (`deg2rad`: $c = \pi / 180$, `rad2deg`: $c = 180 / \pi$).   $dx = g\, c$."""

    def forward(self, x, factor):
        self.save_for_backward(factor)
        return x * factor

    def backward(self, g):
        (factor,) = self.saved
        return g * factor

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, c$, linear in $g$."""
        (factor,) = self.saved
        return g * factor


class Logit(Function):
    r"""$z = \log\big(x / (1 - x)\big)$, with $x$ first clamped to $[\epsilon, 1 - \epsilon]$ when `eps` is given.

    $$
    \frac{dz}{dx} = \frac{1}{x} + \frac{1}{1 - x} = \frac{1}{x (1 - x)}
    \quad\Longrightarrow\quad dx = \frac{g}{x (1 - x)},
    $$

    and 0 where the clamp holds $x$ at a bound ($x < \epsilon$ or $x > 1 - \epsilon$); without `eps`, NaN
    outside $[0, 1]$ (PyTorch's values).
    """

    def forward(self, x, eps=None):
        xp = self.xp
        self.save_for_backward(x, eps)
        xc = x if eps is None else xp.clip(x, eps, 1 - eps)
        with backend.quiet():
            return xp.log(xc / (1 - xc))

    def backward(self, g):
        xp = self.xp
        x, eps = self.saved
        with backend.quiet():
            dx = g / (x * (1 - x))
        outside = (x < 0) | (x > 1) if eps is None else (x < eps) | (x > 1 - eps)
        return xp.where(outside, xp.nan if eps is None else 0, dx)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g / (x (1 - x))$ as recorded ops of the input tensor,
        replaced by NaN (no `eps`) or 0 (`eps`) outside the range, the mask a constant: a second pass
        sees $\partial(dx)/\partial x = -g\, (1 - 2x) / (x (1 - x))^2$ inside, and 0 outside (PyTorch's
        `logit_backward` double backward)."""
        xa, eps = self.saved
        x = self.parents[0]
        outside = (xa < 0) | (xa > 1) if eps is None else (xa < eps) | (xa > 1 - eps)
        return (g / (x * (1 - x))).masked_fill(graph_constant(g, outside), float("nan") if eps is None else 0.0)
