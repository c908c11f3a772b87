"""The special functions: the error function and its relatives (`erfc`, `erfinv`, `erfcx`, the normal
distribution's `ndtr`, `ndtri`, `log_ndtr`), the log-gamma and digamma functions, the modified Bessel
functions `i0`, `i1` and their exponentially scaled forms `i0e`, `i1e`, and the entropy terms `entr`,
`xlogy`, `xlog1py`, each with its derivative.

NumPy has none of them: they come from SciPy on the host and from `cupyx.scipy.special` on the GPU,
through `backend.special(xp, name, ...)` (and `backend.erf`).  Poles and the edges of a domain give
inf or NaN, as in PyTorch; the math around them runs inside `backend.quiet` (NumPy does not warn).
"""

from __future__ import annotations

import math

from .. import backend
from ..autograd import Function
from ..graph_walk import graph_constant

SQRT_PI = math.sqrt(math.pi)
SQRT_2PI = math.sqrt(2 * math.pi)


class Erf(Function):
    r"""$z = \mathrm{erf}(x) = \frac{2}{\sqrt\pi} \int_0^x e^{-t^2}\, dt$.

    $$
    \frac{dz}{dx} = \frac{2}{\sqrt\pi}\, e^{-x^2} \quad\Longrightarrow\quad dx = g\, \frac{2}{\sqrt\pi}\, e^{-x^2}.
    $$"""

    def forward(self, x):
        self.save_for_backward(x)
        return backend.erf(self.xp, x)

    def backward(self, g):
        (x,) = self.saved
        return g * (2 / SQRT_PI) * self.xp.exp(-x * x)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, \frac{2}{\sqrt\pi}\, e^{-x^2}$, recorded ops of the input
        tensor."""
        x = self.parents[0]
        return g * (2 / SQRT_PI) * (-(x * x)).exp()


class Erfc(Function):
    r"""$z = \mathrm{erfc}(x) = 1 - \mathrm{erf}(x)$, exact where $\mathrm{erf}(x)$ is near 1.
    $dx = -g\, \frac{2}{\sqrt\pi}\, e^{-x^2}$."""

    def forward(self, x):
        self.save_for_backward(x)
        return backend.special(self.xp, "erfc", x)

    def backward(self, g):
        (x,) = self.saved
        return g * (-2 / SQRT_PI) * self.xp.exp(-x * x)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = -g\, \frac{2}{\sqrt\pi}\, e^{-x^2}$, recorded ops of the input
        tensor."""
        x = self.parents[0]
        return g * (-2 / SQRT_PI) * (-(x * x)).exp()


class Erfinv(Function):
    r"""$z = \mathrm{erfinv}(x)$, the inverse of erf on $(-1, 1)$: $\mathrm{erf}(z) = x$.
    Differentiating $x = \mathrm{erf}(z)$:

    $$
    1 = \frac{2}{\sqrt\pi}\, e^{-z^2}\, \frac{dz}{dx} \quad\Longrightarrow\quad dx = g\, \frac{\sqrt\pi}{2}\, e^{z^2}.
    $$"""

    def forward(self, x):
        z = backend.special(self.xp, "erfinv", x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        with backend.quiet():  # z = +-inf at x = +-1: an infinite slope
            return g * (SQRT_PI / 2) * self.xp.exp(z * z)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, \frac{\sqrt\pi}{2}\, e^{z^2}$ with $z$ the output tensor, in the
        graph (its node carries $d/dz$ on to $x$: $d^2 \mathrm{erfinv} / dx^2 = 2 z\, (dz/dx)^2$)."""
        return g * (SQRT_PI / 2) * (z * z).exp()


class Erfcx(Function):
    r"""$z = \mathrm{erfcx}(x) = e^{x^2} \mathrm{erfc}(x)$, the scaled complement (finite where erfc underflows).

    $$
    \frac{dz}{dx} = 2x\, e^{x^2} \mathrm{erfc}(x) + e^{x^2} \Big(-\frac{2}{\sqrt\pi}\, e^{-x^2}\Big)
    = 2x\, z - \frac{2}{\sqrt\pi}
    \quad\Longrightarrow\quad dx = g\, \Big(2x\, z - \frac{2}{\sqrt\pi}\Big).
    $$"""

    def forward(self, x):
        z = backend.special(self.xp, "erfcx", x)
        self.save_for_backward(x, z)
        return z

    def backward(self, g):
        x, z = self.saved
        with backend.quiet():  # -inf * inf for x = -inf
            return g * (2 * x * z - 2 / SQRT_PI)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, (2 x z - 2/\sqrt\pi)$ with the input tensor and $z$ the
        output tensor, in the graph ($\partial(dx)/\partial x = 2 g\, (z + x\, dz/dx)$)."""
        return g * (2 * self.parents[0] * z - 2 / SQRT_PI)


class Ndtr(Function):
    r"""$z = \mathrm{ndtr}(x) = \Phi(x)$, the standard normal CDF $= \big(1 + \mathrm{erf}(x / \sqrt 2)\big) / 2$.
    $dz/dx$ = the normal density $e^{-x^2 / 2} / \sqrt{2 \pi}$, so $dx = g\, e^{-x^2 / 2} / \sqrt{2 \pi}$."""

    def forward(self, x):
        self.save_for_backward(x)
        return backend.special(self.xp, "ndtr", x)

    def backward(self, g):
        (x,) = self.saved
        return g * self.xp.exp(-0.5 * x * x) / SQRT_2PI

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, e^{-x^2 / 2} / \sqrt{2 \pi}$, recorded ops of the input tensor."""
        x = self.parents[0]
        return g * (-0.5 * x * x).exp() / SQRT_2PI


class Ndtri(Function):
    r"""$z = \mathrm{ndtri}(x)$, the inverse of ndtr on $(0, 1)$: $\mathrm{ndtr}(z) = x$.
    Differentiating $x = \mathrm{ndtr}(z)$:

    $$
    1 = \frac{e^{-z^2 / 2}}{\sqrt{2 \pi}}\, \frac{dz}{dx} \quad\Longrightarrow\quad dx = g \sqrt{2 \pi}\, e^{z^2 / 2}.
    $$"""

    def forward(self, x):
        z = backend.special(self.xp, "ndtri", x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        with backend.quiet():  # z = +-inf at x = 0, 1
            return g * SQRT_2PI * self.xp.exp(0.5 * z * z)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g \sqrt{2 \pi}\, e^{z^2 / 2}$ with $z$ the output tensor, in
        the graph."""
        return g * SQRT_2PI * (0.5 * z * z).exp()


class LogNdtr(Function):
    r"""$z = \log \mathrm{ndtr}(x)$, accurate far into the left tail.

    $$
    \frac{dz}{dx} = \frac{\mathrm{ndtr}'(x)}{\mathrm{ndtr}(x)} = \frac{e^{-x^2 / 2}}{\sqrt{2 \pi}\, e^{z}}
    = \frac{e^{-x^2 / 2 - z}}{\sqrt{2 \pi}}
    \quad\Longrightarrow\quad dx = g\, \frac{e^{-(z + x^2 / 2)}}{\sqrt{2 \pi}}
    $$

    (the one exp: no $0/0$ where $\mathrm{ndtr}(x)$ underflows)."""

    def forward(self, x):
        z = backend.special(self.xp, "log_ndtr", x)
        self.save_for_backward(x, z)
        return z

    def backward(self, g):
        x, z = self.saved
        with backend.quiet():  # inf - inf for x = -inf
            return g * self.xp.exp(-(z + 0.5 * x * x)) / SQRT_2PI

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, e^{-(z + x^2 / 2)} / \sqrt{2 \pi}$ with the input tensor
        and $z$ the output tensor, in the graph ($\partial(dx)/\partial x = -dx\, (dz/dx + x)$)."""
        x = self.parents[0]
        return g * (-(z + 0.5 * x * x)).exp() / SQRT_2PI


class Lgamma(Function):
    r"""$z = \log |\Gamma(x)|$.   $dz/dx = \Gamma'(x) / \Gamma(x) = \psi(x)$ (digamma), so $dx = g\, \psi(x)$."""

    def forward(self, x):
        self.save_for_backward(x)
        return backend.special(self.xp, "gammaln", x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():
            return g * _digamma(self.xp, x)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, \psi(x)$, a recorded `Digamma` of the input tensor
        (whose own formula is trigamma: $\psi^{(n)}$ has $\psi^{(n + 1)}$ at every order)."""
        return g * Digamma.apply(self.parents[0])


class Digamma(Function):
    r"""$z = \psi(x) = \frac{d}{dx} \log \Gamma(x)$.   $dz/dx = \psi^{(1)}(x)$, the trigamma function, so
    $dx = g\, \psi^{(1)}(x)$ (computed as PyTorch does: see `_trigamma`)."""

    def forward(self, x):
        self.save_for_backward(x)
        return _digamma(self.xp, x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():
            return g * _trigamma(self.xp, x)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, \psi^{(1)}(x)$ (trigamma), a recorded `Polygamma(1)` of the
        input tensor."""
        return g * Polygamma.apply(self.parents[0], n=1)


def _digamma(xp, x):
    r"""digamma, with PyTorch's value $-\infty$ at $x = 0$ (SciPy's sign depends on the zero's sign)."""
    return xp.where(x == 0, -xp.inf, backend.special(xp, "digamma", x))


class Polygamma(Function):
    r"""$z = \psi^{(n)}(x)$ (`polygamma(n, x)`), the $n$-th derivative of digamma ($n = 0$: digamma itself).
    $dz/dx = \psi^{(n + 1)}(x)$, so $dx = g\, \psi^{(n + 1)}(x)$."""

    def forward(self, x, n):
        self.save_for_backward(x, n)
        with backend.quiet():
            return _polygamma(self.xp, n, x)

    def backward(self, g):
        x, n = self.saved
        with backend.quiet():
            return g * _polygamma(self.xp, n + 1, x)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, \psi^{(n + 1)}(x)$, a recorded `Polygamma` of the input
        tensor (its formula is `Polygamma(n + 2)`: every order)."""
        return g * Polygamma.apply(self.parents[0], n=self.saved[1] + 1)


def _polygamma(xp, n, x):
    r"""`polygamma(n, x)` as PyTorch computes it: digamma and trigamma by their own rules (below),
    $n \ge 2$ as $(-1)^{n+1}\, n!\, \zeta(n + 1, x)$, which is SciPy's polygamma."""
    if n == 0:
        return _digamma(xp, x)
    if n == 1:
        return _trigamma(xp, x)
    return xp.where(x == xp.inf, xp.nan, backend.special(xp, "polygamma", n, x))  # zeta(s, inf): PyTorch's nan


def zeta(xp, s, q):
    r"""The Hurwitz zeta function $\sum_k (k + q)^{-s}$, SciPy's, and NaN where $q = \infty$ as in PyTorch
    (whose series meets $\infty \cdot 0$ there); $s$ or $q$ may be a number.  No derivative (PyTorch has
    none)."""
    z = backend.special(xp, "zeta", s, q)
    if isinstance(q, (int, float)):
        return z if q != math.inf else xp.full_like(z, math.nan)
    return xp.where(q == xp.inf, xp.nan, z)


def _trigamma(xp, x):
    r"""$\psi_1(x) = \sum_k 1 / (x + k)^2$, PyTorch's way (so the poles give its huge finite values):
    for $x < 1/2$ the reflection $\psi_1(x) = \pi^2 / \sin^2(\pi x) - \psi_1(1 - x)$; then six terms of
    the sum, $\psi_1(x) = \sum_{k<6} 1/(x+k)^2 + \psi_1(x + 6)$, and the asymptotic series at $x + 6$:

    $$
    \psi_1(y) \sim \Big(1 + \frac{1}{2y} + \frac{1}{6y^2} - \frac{1}{30y^4} + \frac{1}{42y^6}\Big) \Big/ y.
    $$"""
    reflect = x < 0.5
    sign = xp.where(reflect, -1.0, 1.0)
    result = xp.where(reflect, -(math.pi**2) / xp.sin(math.pi * x) ** 2, 0.0)
    y = xp.where(reflect, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (y * y)
        y = y + 1
    iyy = 1 / (y * y)
    result = result + (1 + 1 / (2 * y) + iyy * (1 / 6 - iyy * (1 / 30 - iyy * (1 / 42)))) / y
    return (sign * result).astype(x.dtype, copy=False)


class I0(Function):
    r"""$z = I_0(x)$, the modified Bessel function of the first kind of order 0.
    $dI_0/dx = I_1(x)$, so $dx = g\, I_1(x)$."""

    def forward(self, x):
        self.save_for_backward(x)
        return backend.special(self.xp, "i0", x)

    def backward(self, g):
        (x,) = self.saved
        return g * backend.special(self.xp, "i1", x)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, I_1(x)$, a recorded `I1` of the input tensor (whose
        formula is I1's: $I_0(x) - I_1(x) / x$)."""
        return g * I1.apply(self.parents[0])


class I0e(Function):
    r"""$z = \mathrm{I0e}(x) = e^{-|x|} I_0(x)$.

    $$
    \frac{dz}{dx} = e^{-|x|} I_1(x) - \mathrm{sign}(x)\, e^{-|x|} I_0(x) = \mathrm{I1e}(x) - \mathrm{sign}(x)\, z
    \quad\Longrightarrow\quad dx = g\, \big(\mathrm{I1e}(x) - \mathrm{sign}(x)\, z\big).
    $$"""

    def forward(self, x):
        z = backend.special(self.xp, "i0e", x)
        self.save_for_backward(x, z)
        return z

    def backward(self, g):
        x, z = self.saved
        return g * (backend.special(self.xp, "i1e", x) - self.xp.sign(x) * z)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, (\mathrm{I1e}(x) - \mathrm{sign}(x)\, z)$: a recorded `I1e` of
        the input tensor, $z$ the output tensor, the sign a constant (piecewise constant)."""
        x_array = self.saved[0]
        return g * (I1e.apply(self.parents[0]) - graph_constant(g, self.xp.sign(x_array)) * z)


class I1(Function):
    r"""$z = I_1(x)$, the modified Bessel function of order 1.   $dI_1/dx = I_0(x) - I_1(x) / x$, whose
    limit at $x = 0$ is $1/2$, so $dx = g\, (I_0(x) - z / x)$, and $g / 2$ where $|x|$ is not above the
    dtype's eps (NaN included: PyTorch's rule, which keeps $1/x$ finite)."""

    def forward(self, x):
        z = backend.special(self.xp, "i1", x)
        self.save_for_backward(x, z)
        return z

    def backward(self, g):
        xp = self.xp
        x, z = self.saved
        tiny, safe = _tiny(xp, x)
        with backend.quiet():
            slope = backend.special(xp, "i0", safe) - z / safe
        return g * xp.where(tiny, 0.5, slope)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, (I_0(x) - z / x)$ with a recorded `I0` of the input tensor
        and $z$ the output tensor, and $g / 2$ where $|x| \le \epsilon$ (constant masks; $x$ is $\epsilon$ there,
        so no $1/0$ enters the graph): a second pass sees
        $\partial(dx)/\partial x = g\, (I_1(x) - (dz/dx) / x + z / x^2)$."""
        tiny, _ = _tiny(self.xp, self.saved[0])
        tiny = graph_constant(g, tiny)
        safe = self.parents[0].masked_fill(tiny, float(self.xp.finfo(self.saved[0].dtype).eps))
        return g * (I0.apply(safe) - z / safe).masked_fill(tiny, 0.5)


class I1e(Function):
    r"""$z = \mathrm{I1e}(x) = e^{-|x|} I_1(x)$.

    $$
    \frac{dz}{dx} = e^{-|x|} \big(I_0(x) - I_1(x) / x\big) - \mathrm{sign}(x)\, z
    = \mathrm{I0e}(x) - z\, \big(\mathrm{sign}(x) + 1 / x\big),
    $$

    $1/2$ at $x = 0$, so $dx = g\, \big(\mathrm{I0e}(x) - z\, (\mathrm{sign}(x) + 1/x)\big)$, and $g / 2$ where
    $|x|$ is not above eps (as `I1`)."""

    def forward(self, x):
        z = backend.special(self.xp, "i1e", x)
        self.save_for_backward(x, z)
        return z

    def backward(self, g):
        xp = self.xp
        x, z = self.saved
        tiny, safe = _tiny(xp, x)
        with backend.quiet():
            slope = backend.special(xp, "i0e", safe) - z * (xp.sign(safe) + 1 / safe)
        return g * xp.where(tiny, 0.5, slope)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, \big(\mathrm{I0e}(x) - z\, (\mathrm{sign}(x) + 1/x)\big)$ with a
        recorded `I0e` of the input tensor and $z$ the output tensor, the sign a constant, and $g / 2$
        where $|x| \le \epsilon$ (as I1's formula)."""
        tiny_array, safe_array = _tiny(self.xp, self.saved[0])
        tiny = graph_constant(g, tiny_array)
        safe = self.parents[0].masked_fill(tiny, float(self.xp.finfo(self.saved[0].dtype).eps))
        sign = graph_constant(g, self.xp.sign(safe_array))
        return g * (I0e.apply(safe) - z * (sign + 1 / safe)).masked_fill(tiny, 0.5)


def _tiny(xp, x):
    """(where $|x|$ is not above the dtype's eps, NaN included; $x$ with those set to eps)."""
    eps = xp.finfo(x.dtype).eps
    tiny = ~(xp.abs(x) > eps)
    return tiny, xp.where(tiny, eps, x)


class Entr(Function):
    r"""$z = -x \log x$ for $x > 0$, 0 at $x = 0$, $-\infty$ for $x < 0$ (the entropy term; SciPy's `entr`).
    $dz/dx = -(\log x + 1)$, so $dx = -g\, (1 + \log x)$ (inf at 0, NaN below: PyTorch's values)."""

    def forward(self, x):
        self.save_for_backward(x)
        return backend.special(self.xp, "entr", x)

    def backward(self, g):
        (x,) = self.saved
        with backend.quiet():
            return -g * (1 + self.xp.log(x))

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = -g\, (1 + \log x)$, a recorded `Log` of the input tensor
        ($\partial(dx)/\partial x = -g / x$)."""
        return -g * (1 + self.parents[0].log())


class Xlogy(Function):
    r"""$z = x \log y$, and 0 where $x = 0$ (even for $y = 0$), unless $y$ is NaN; either may be a number.

    $$
    \frac{\partial z}{\partial x} = \log y, \quad \frac{\partial z}{\partial y} = \frac{x}{y}
    \quad\Longrightarrow\quad dx = g \log y, \quad dy = \frac{g\, x}{y},
    $$

    $dx$ being 0 where $x = 0$ and $y \le 0$ (PyTorch: there $z$ is 0 on a neighbourhood of $x = 0$ only
    in the limit).
    `log1p=True` is `xlog1py`: $z = x \log(1 + y)$, $dx = g \log(1 + y)$ (0 where $x = 0$, $y \le -1$),
    $dy = g\, x / (1 + y)$.
    """

    def forward(self, x, y, log1p=False):
        self.save_for_backward(x, y, log1p)
        return backend.special(self.xp, "xlog1py" if log1p else "xlogy", x, y)

    def backward(self, g):
        xp = self.xp
        x, y, log1p = self.saved
        dx = dy = None
        with backend.quiet():
            if self.needs_grad(0):
                dx = backend.special(xp, "xlog1py" if log1p else "xlogy", g, y)
                dx = xp.where((x == 0) & (y <= (-1 if log1p else 0)), 0, dx)
            if self.needs_grad(1):
                dy = g * x / ((1 + y) if log1p else y)
        return dx, dy

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = \mathrm{xlogy}(g, y)$ (a recorded `Xlogy` of $g$ and the input
        $y$, so 0 where $g$ is 0, as the array backward), 0 where $x = 0$ and $y \le 0$ ($-1$ for `xlog1py`;
        a constant mask); $dy = g\, x / y$ (or $/ (1 + y)$) with the input tensors: a second pass sees
        $\partial(dx)/\partial y = g / y$ and $\partial(dy)/\partial x = g / y$,
        $\partial(dy)/\partial y = -g\, x / y^2$."""
        xp = self.xp
        x_array, y_array, log1p = self.saved
        x, y = self.parents[:2]
        dx = dy = None
        if self.needs_grad(0):
            with backend.quiet():
                off = (x_array == 0) & (y_array <= (-1 if log1p else 0))
            dx = Xlogy.apply(g, y, log1p=log1p).masked_fill(graph_constant(g, xp.asarray(off)), 0.0)
        if self.needs_grad(1):
            dy = g * x / ((1 + y) if log1p else y)
        return dx, dy
