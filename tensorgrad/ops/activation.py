r"""Activation functions, each with its derivative: tanh, ReLU, GELU (exact and tanh form) and the
rest of PyTorch's (sigmoid, SiLU, softplus, ...).  Conditions at a kink follow PyTorch (e.g.
ELU's "$x > 0$" takes the left branch at 0), so the subgradient at the kink is PyTorch's too.
No branch of a `where` computes an overflowing exp: the exps take $-|x|$ or are clipped to the
branch where they are used.  $\sigma$ is the sigmoid.
"""

from __future__ import annotations

import math

from .. import backend
from ..autograd import Function
from ..graph_walk import graph_constant
from .masking import Where
from .shape import Cat


def sigmoid(xp, x):
    r"""$1 / (1 + e^{-x})$, without overflow: with $e = e^{-|x|} \le 1$,
    $x \ge 0$: $1 / (1 + e)$;   $x < 0$: $e / (1 + e)$   (the same value, multiplied by $e / e$)."""
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1, e) / (1 + e)


def select(g, cond, a, b):
    """`a` where the constant mask `cond` (an array) holds, else `b`: a recorded `Where` of the Tensors
    `a` and `b` (each gets the gradient of its own places, the other places 0), for the formulas of
    the piecewise ops (their branch condition is piecewise constant in $x$)."""
    return Where.apply(graph_constant(g, cond), a, b)


def mask_of(g, mask):
    """The bool array `mask` as a constant tensor of $g$'s dtype (1 where it holds, else 0)."""
    return graph_constant(g, mask.astype(g.dtype))


def softplus(xp, x):
    r"""$\log(1 + e^{x}) = \max(x, 0) + \mathrm{log1p}(e^{-|x|})$, without overflow."""
    return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))


class Tanh(Function):
    r"""$z = \tanh(x)$.

    $$
    \frac{dz}{dx} = 1 - \tanh(x)^2 \quad\Longrightarrow\quad dx = g\, (1 - z^2).
    $$"""

    def forward(self, x):
        z = self.xp.tanh(x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        return g * (1 - z * z)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, (1 - z^2)$ with $z = \tanh(x)$ the output tensor, in the
        graph.  A second pass sees $\partial(dx)/\partial g = 1 - z^2$ and $\partial(dx)/\partial z = -2 g z$,
        which $z$'s node carries on to $x$ ($dz/dx = 1 - z^2$):
        $d^2 \tanh / dx^2 = -2 z\, (1 - z^2)$.  Every op used is itself differentiable, so third and higher
        orders follow."""
        return g * (1 - z * z)


class ReLU(Function):
    r"""$z = \max(x, 0)$.   $dx = g$ where $x > 0$, else 0 (the subgradient 0 at $x = 0$, as PyTorch).

    As PyTorch's `threshold_backward`, the test is $z \le 0 \to 0$: a NaN input ($z$ is NaN) passes $g$ on."""

    def forward(self, x):
        z = self.xp.maximum(x, 0)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        return self.xp.where(z <= 0, self.xp.zeros((), dtype=g.dtype), g)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g$ where $z > 0$, else 0 (a recorded `masked_fill` with the
        mask $z \le 0$ as a constant, so a NaN input still passes $g$ on).  The mask is piecewise
        constant in $x$: $\partial(dx)/\partial x = 0$ wherever it is defined (as PyTorch's
        `threshold_backward` double backward), and $\partial(dx)/\partial g$ = the mask."""
        mask = type(g)._make(z._data <= 0, g.device, False)
        return g.masked_fill(mask, 0.0)


class GELU(Function):
    r"""$z = x\, \Phi(x)$, $\Phi$ the standard normal CDF $= \big(1 + \mathrm{erf}(x / \sqrt 2)\big) / 2$.

    $$
    \frac{dz}{dx} = \Phi(x) + x\, \varphi(x), \qquad \varphi(x) = \frac{e^{-x^2 / 2}}{\sqrt{2 \pi}}.
    $$

    `approximate="tanh"`:

    $$
    \begin{aligned}
    z &= \frac{x}{2} \big(1 + \tanh(u)\big), \qquad u = \sqrt{2/\pi}\, (x + 0.044715\, x^3), \\
    \frac{dz}{dx} &= \frac{1 + \tanh u}{2} + \frac{x}{2} (1 - \tanh^2 u)\, \sqrt{2/\pi}\, (1 + 3 \cdot 0.044715\, x^2).
    \end{aligned}
    $$
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

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, dz/dx$ written with Tensor ops of the input tensor
        (`gelu_graph`): $\Phi(x) = (1 + \mathrm{erf}(x / \sqrt 2)) / 2$ through a recorded `Erf`, $\varphi(x)$
        through a recorded `Exp`, or the tanh form through a recorded `Tanh`; each has its own formula."""
        return gelu_graph(g, self.parents[0], self.saved[2])


def gelu_graph(g, x, approximate):
    r"""GELU's $dx = g\, dz/dx$ (see `GELU`) as Tensor ops of the Tensors `g` and `x`, for `create_graph`
    (the reference op and its kernel both use it)."""
    if approximate == "tanh":
        t = (math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)).tanh()
        du = math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * x * x)
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du)
    cdf = 0.5 * (1 + (x * (1 / math.sqrt(2))).erf())
    pdf = (-0.5 * x * x).exp() * (1 / math.sqrt(2 * math.pi))
    return g * (cdf + x * pdf)


class Sigmoid(Function):
    r"""$z = \sigma(x) = 1 / (1 + e^{-x})$.

    $$
    \frac{dz}{dx} = \frac{e^{-x}}{(1 + e^{-x})^2} = z\, (1 - z) \quad\Longrightarrow\quad dx = g\, z\, (1 - z).
    $$"""

    def forward(self, x):
        z = sigmoid(self.xp, x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        return g * z * (1 - z)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, z\, (1 - z)$ with $z = \sigma(x)$ the output tensor, in the
        graph: a second pass sees $\partial(dx)/\partial z = g\, (1 - 2z)$, carried on to $x$ by $z$'s node
        ($dz/dx = z\, (1 - z)$): $d^2 \sigma / dx^2 = z\, (1 - z)(1 - 2z)$."""
        return g * z * (1 - z)


class SiLU(Function):
    r"""$z = x\, s$, $s = \sigma(x)$.

    $$
    \frac{dz}{dx} = s + x\, s\, (1 - s) = s\, \big(1 + x\, (1 - s)\big).
    $$"""

    def forward(self, x):
        s = sigmoid(self.xp, x)
        self.save_for_backward(x, s)
        with backend.quiet():  # x = -inf: -inf * 0 = nan, as in PyTorch
            return x * s

    def backward(self, g):
        x, s = self.saved
        with backend.quiet():  # x = +-inf: 0 * inf = nan, as in PyTorch
            return g * s * (1 + x * (1 - s))

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, s\, (1 + x\, (1 - s))$, $s = \sigma(x)$ recomputed as a
        recorded `Sigmoid` of the input tensor (what the forward saved as an array), so every factor
        is in the graph."""
        x = self.parents[0]
        s = x.sigmoid()
        return g * s * (1 + x * (1 - s))


class Softplus(Function):
    r"""$z = \log(1 + e^{\beta x}) / \beta$, and $z = x$ where $\beta x >$ `threshold` (PyTorch's linear regime).

    $$
    \frac{dz}{dx} = \frac{e^{\beta x}}{1 + e^{\beta x}} = \sigma(\beta x);
    $$

    1 in the linear regime.
    """

    def forward(self, x, beta=1.0, threshold=20.0):
        bx = x * beta
        linear = bx > threshold
        self.save_for_backward(bx, linear, beta)
        return self.xp.where(linear, x, softplus(self.xp, bx) / beta)

    def backward(self, g):
        bx, linear, _ = self.saved
        return self.xp.where(linear, g, g * sigmoid(self.xp, bx))

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g$ where $\beta x >$ `threshold` (the constant mask), else
        $g\, \sigma(\beta x)$, with $\beta x$ a recorded `Mul` of the input tensor and a recorded `Sigmoid`:
        a second pass sees $\partial(dx)/\partial x = g\, \beta\, s\, (1 - s)$ off the linear regime, 0 in it
        (PyTorch's `softplus_backward` double backward)."""
        _, linear, beta = self.saved
        bx = self.parents[0] * beta
        return select(g, linear, g, g * bx.sigmoid())


class Hardtanh(Function):
    r"""$z = \min(\max(x, \mathit{lo}), \mathit{hi})$.   $dz/dx = 1$ strictly inside $(\mathit{lo}, \mathit{hi})$,
    0 outside and at the ends."""

    def forward(self, x, min_val=-1.0, max_val=1.0):
        self.save_for_backward(x, min_val, max_val)
        return self.xp.clip(x, min_val, max_val)

    def backward(self, g):
        x, lo, hi = self.saved
        return g * ((x > lo) & (x < hi))

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g$ times the constant 0/1 mask $\mathit{lo} < x < \mathit{hi}$
        (piecewise constant in $x$: $\partial(dx)/\partial x = 0$, $\partial(dx)/\partial g$ = the mask)."""
        x, lo, hi = self.saved
        return g * mask_of(g, (x > lo) & (x < hi))


class Hardsigmoid(Function):
    r"""$z = \min(\max(x / 6 + 1/2, 0), 1)$.   $dz/dx = 1/6$ for $-3 < x < 3$, else 0."""

    def forward(self, x):
        self.save_for_backward(x)
        return self.xp.clip(x / 6 + 0.5, 0, 1)

    def backward(self, g):
        (x,) = self.saved
        return g * ((x > -3) & (x < 3)) / 6

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, [-3 < x < 3] / 6$, the mask a constant
        ($\partial(dx)/\partial x = 0$)."""
        (x,) = self.saved
        return g * mask_of(g, (x > -3) & (x < 3)) / 6


class Softsign(Function):
    r"""$z = x / (1 + |x|)$.

    $$
    \frac{dz}{dx} = \frac{(1 + |x|) - x\, \mathrm{sign}(x)}{(1 + |x|)^2} = \frac{1}{(1 + |x|)^2}.
    $$

    At $x = \pm\infty$ PyTorch's softsign ($x / (|x| + 1)$, differentiated as that quotient) gives
    $\infty / \infty$ = NaN for $z$ and for $dz/dx$; so do these.
    """

    def forward(self, x):
        d = 1 + self.xp.abs(x)
        self.save_for_backward(d)
        with backend.quiet():  # inf / inf = nan
            return x / d

    def backward(self, g):
        (d,) = self.saved
        with backend.quiet():  # d * d overflows to inf for |x| > 1e154: the gradient is 0 there
            return self.xp.where(d == self.xp.inf, self.xp.nan, g / (d * d))

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g / d^2$ with $d = 1 + |x|$ a recorded `Abs` of the input
        tensor, NaN where $d$ is inf (the constant mask, as the array backward): a second pass sees
        $\partial(dx)/\partial x = -2 g\, \mathrm{sign}(x) / d^3$ (PyTorch's composite $x / (|x| + 1)$
        differentiated twice)."""
        (d_array,) = self.saved
        d = 1 + self.parents[0].abs()
        return (g / (d * d)).masked_fill(graph_constant(g, d_array == self.xp.inf), float("nan"))


class ELU(Function):
    r"""$z = x$ for $x > 0$, $\alpha\, (e^{x} - 1)$ otherwise.

    $dz/dx = 1$ for $x > 0$;  $\alpha\, e^{x} = z + \alpha$ otherwise (NaN at a NaN $x$, as PyTorch's
    vectorized CPU loop gives; its scalar loop, which short arrays take, passes $g$ on instead).
    """

    def forward(self, x, alpha=1.0):
        pos = x > 0
        z = self.xp.where(pos, x, alpha * self.xp.expm1(self.xp.minimum(x, 0)))
        self.save_for_backward(pos, z, alpha)
        return z

    def backward(self, g):
        pos, z, alpha = self.saved
        return self.xp.where(pos, g, g * (z + alpha))

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g$ where $x > 0$ (the constant mask), else $g\, (z + \alpha)$
        with $z$ the output tensor, in the graph: a second pass sees $\partial(dx)/\partial z = g$ off the
        positive side, carried on to $x$ by $z$'s node ($dz/dx = z + \alpha = \alpha\, e^{x}$):
        $d^2 \mathrm{elu} / dx^2 = \alpha\, e^{x}$ for $x \le 0$, 0 above (PyTorch's `elu_backward` double
        backward, `is_result`)."""
        pos, _, alpha = self.saved
        return select(g, pos, g, g * (z + alpha))


class CELU(Function):
    r"""$z = x$ for $x > 0$, $\alpha\, (e^{x / \alpha} - 1)$ otherwise (continuously differentiable at 0).

    $dz/dx = 1$ for $x > 0$;  $e^{x / \alpha} = z / \alpha + 1$ otherwise (NaN at a NaN $x$, as `ELU`).
    """

    def forward(self, x, alpha=1.0):
        pos = x > 0
        z = self.xp.where(pos, x, alpha * self.xp.expm1(self.xp.minimum(x, 0) / alpha))
        self.save_for_backward(pos, z, alpha)
        return z

    def backward(self, g):
        pos, z, alpha = self.saved
        return self.xp.where(pos, g, g * (z / alpha + 1))

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g$ where $x > 0$ (the constant mask), else $g\, (z / \alpha + 1)$
        with $z$ the output tensor, in the graph: a second pass sees $\partial(dx)/\partial z = g / \alpha$,
        carried on to $x$ by $z$'s node ($dz/dx = e^{x / \alpha}$):
        $d^2 \mathrm{celu} / dx^2 = e^{x / \alpha} / \alpha$ for $x \le 0$."""
        pos, _, alpha = self.saved
        return select(g, pos, g, g * (z / alpha + 1))


class LeakyReLU(Function):
    r"""$z = x$ for $x > 0$, $\mathit{slope} \cdot x$ otherwise.   $dx = g$ for $x > 0$, $\mathit{slope} \cdot g$
    otherwise."""

    def forward(self, x, negative_slope=0.01):
        pos = x > 0
        self.save_for_backward(pos, negative_slope)
        return self.xp.where(pos, x, x * negative_slope)

    def backward(self, g):
        pos, slope = self.saved
        return self.xp.where(pos, g, g * slope)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g$ where $x > 0$, else $g \cdot \mathit{slope}$ (the mask a
        constant): linear in $g$, free of $x$ ($\partial(dx)/\partial x = 0$)."""
        pos, slope = self.saved
        return select(g, pos, g, g * slope)


class Mish(Function):
    r"""$z = x \tanh(\mathit{sp})$, $\mathit{sp} = \mathrm{softplus}(x) = \log(1 + e^{x})$.

    $d\,\mathit{sp}/dx = \sigma(x)$, $d \tanh(u)/du = 1 - \tanh(u)^2$, so with $t = \tanh(\mathit{sp})$:

    $$
    \frac{dz}{dx} = t + x\, (1 - t^2)\, \sigma(x).
    $$
    """

    def forward(self, x):
        t = self.xp.tanh(softplus(self.xp, x))
        self.save_for_backward(x, t)
        with backend.quiet():  # x = -inf: -inf * 0 = nan, as in PyTorch
            return x * t

    def backward(self, g):
        x, t = self.saved
        with backend.quiet():  # x = +-inf: inf * 0 = nan, as in PyTorch
            return g * (t + x * (1 - t * t) * sigmoid(self.xp, x))

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, (t + x\, (1 - t^2)\, s)$, $t = \tanh(\mathrm{softplus}(x))$
        and $s = \sigma(x)$ recomputed as recorded ops of the input tensor (`Softplus` with no linear
        regime, so $t$ is the forward's value exactly, then `Tanh` and `Sigmoid`), each with its own
        formula: a second pass differentiates every factor."""
        x = self.parents[0]
        t = Softplus.apply(x, beta=1.0, threshold=math.inf).tanh()
        return g * (t + x * (1 - t * t) * x.sigmoid())


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


class SELU(Function):
    r"""$z = \mathit{scale} \cdot x$ for $x > 0$, $\mathit{scale} \cdot \alpha\, (e^{x} - 1)$ otherwise
    ($\alpha$, $\mathit{scale}$: SELU's constants).

    $dz/dx = \mathit{scale}$ for $x > 0$;  $\mathit{scale} \cdot \alpha\, e^{x} = z + \mathit{scale} \cdot \alpha$
    otherwise.
    A NaN input takes the second branch (gradient NaN), as PyTorch's vectorised CPU kernel does
    (its scalar tail, the last few elements, takes the first).
    """

    def forward(self, x):
        pos = x > 0
        z = SELU_SCALE * self.xp.where(pos, x, SELU_ALPHA * self.xp.expm1(self.xp.minimum(x, 0)))
        self.save_for_backward(pos, z)
        return z

    def backward(self, g):
        pos, z = self.saved
        return self.xp.where(pos, g * SELU_SCALE, g * (z + SELU_SCALE * SELU_ALPHA))

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g \cdot \mathit{scale}$ where $x > 0$ (the constant mask), else
        $g\, (z + \mathit{scale} \cdot \alpha)$ with $z$ the output tensor, in the graph: a second pass sees
        $\partial(dx)/\partial z = g$ off the positive side, carried on to $x$ by $z$'s node
        ($dz/dx = \mathit{scale} \cdot \alpha\, e^{x}$)."""
        pos, _ = self.saved
        return select(g, pos, g * SELU_SCALE, g * (z + SELU_SCALE * SELU_ALPHA))


class LogSigmoid(Function):
    r"""$z = \log \sigma(x) = -\mathrm{softplus}(-x) = \min(x, 0) - \mathrm{log1p}(e^{-|x|})$   (no overflow).

    $$
    \frac{dz}{dx} = \frac{\sigma'(x)}{\sigma(x)} = 1 - \sigma(x) = \sigma(-x).
    $$
    """

    def forward(self, x):
        self.save_for_backward(x)
        return self.xp.minimum(x, 0) - self.xp.log1p(self.xp.exp(-self.xp.abs(x)))

    def backward(self, g):
        (x,) = self.saved
        return g * sigmoid(self.xp, -x)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, \sigma(-x)$, a recorded `Neg` and `Sigmoid` of the input
        tensor: a second pass sees $\partial(dx)/\partial x = -g\, s\, (1 - s)$, $s = \sigma(-x)$."""
        return g * (-self.parents[0]).sigmoid()


class Hardswish(Function):
    r"""$z = x \min(\max(x + 3, 0), 6) / 6$: 0 for $x \le -3$, $x$ for $x \ge 3$, $x (x + 3) / 6$ between.

    $$
    \frac{dz}{dx} = \begin{cases}
    0 & x \le -3 \\
    (2x + 3) / 6 = x / 3 + 1/2 & -3 < x < 3 \\
    1 & x \ge 3
    \end{cases}
    $$

    (PyTorch's branches at the kinks: $x = -3$ takes the left one, 0, and $x = 3$ the right one, 1).
    """

    def forward(self, x):
        self.save_for_backward(x)
        return x * self.xp.clip(x + 3, 0, 6) / 6

    def backward(self, g):
        (x,) = self.saved
        xp = self.xp
        zero = xp.zeros((), dtype=g.dtype)
        return xp.where(x <= -3, zero, xp.where(x < 3, g * (x / 3 + 0.5), g))

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, (x / 3 + 1/2)$ for $-3 < x < 3$ with $x$ the input tensor,
        $g$ for $x \ge 3$, 0 for $x \le -3$ (constant masks, PyTorch's branches): a second pass sees
        $\partial(dx)/\partial x = g / 3$ strictly between $-3$ and 3, 0 elsewhere (PyTorch's
        `hardswish_backward` double backward)."""
        (x_array,) = self.saved
        mid = select(g, x_array < 3, g * (self.parents[0] / 3 + 0.5), g)
        return mid.masked_fill(graph_constant(g, x_array <= -3), 0.0)


class Hardshrink(Function):
    r"""$z = 0$ for $-\lambda \le x \le \lambda$, $x$ otherwise (a NaN input stays NaN); $\lambda$ is `lambd`.

    $dz/dx = 0$ inside $[-\lambda, \lambda]$, 1 outside.  At a NaN input the gradient is 0, as PyTorch's
    vectorised CPU kernel gives (its scalar tail, the last few elements, would pass $g$ on).
    """

    def forward(self, x, lambd=0.5):
        self.save_for_backward((x < -lambd) | (x > lambd))
        return self.xp.where((x >= -lambd) & (x <= lambd), self.xp.zeros((), dtype=x.dtype), x)

    def backward(self, g):
        (outside,) = self.saved
        return self.xp.where(outside, g, self.xp.zeros((), dtype=g.dtype))

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g$ outside $[-\lambda, \lambda]$, 0 inside (a recorded
        `MaskedFill` with the constant mask): linear in $g$, free of $x$ ($\partial(dx)/\partial x = 0$)."""
        (outside,) = self.saved
        return g.masked_fill(graph_constant(g, ~outside), 0.0)


class Softshrink(Function):
    r"""$z = 0$ for $-\lambda \le x \le \lambda$, $x - \lambda$ above, $x + \lambda$ below ($x$ moved $\lambda$
    towards 0); $\lambda$ is `lambd`.

    $dz/dx = 0$ inside $[-\lambda, \lambda]$, 1 outside (0 at a NaN input, as `Hardshrink`).
    """

    def forward(self, x, lambd=0.5):
        xp = self.xp
        inside = (x >= -lambd) & (x <= lambd)
        self.save_for_backward((x < -lambd) | (x > lambd))
        return xp.where(inside, xp.zeros((), dtype=x.dtype), xp.where(x > lambd, x - lambd, x + lambd))

    def backward(self, g):
        (outside,) = self.saved
        return self.xp.where(outside, g, self.xp.zeros((), dtype=g.dtype))

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g$ outside $[-\lambda, \lambda]$, 0 inside (a recorded
        `MaskedFill` with the constant mask): linear in $g$, free of $x$ ($\partial(dx)/\partial x = 0$)."""
        (outside,) = self.saved
        return g.masked_fill(graph_constant(g, ~outside), 0.0)


class Tanhshrink(Function):
    r"""$z = x - \tanh(x)$.   $dz/dx = 1 - (1 - \tanh(x)^2) = \tanh(x)^2$."""

    def forward(self, x):
        t = self.xp.tanh(x)
        self.save_for_backward(t)
        return x - t

    def backward(self, g):
        (t,) = self.saved
        return g * t * t

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, t^2$ with $t = \tanh(x)$ a recorded `Tanh` of the input
        tensor: a second pass sees $\partial(dx)/\partial x = 2 g\, t\, (1 - t^2)$."""
        t = self.parents[0].tanh()
        return g * t * t


class Threshold(Function):
    r"""$z$ = `value` where $x \le$ `threshold`, $x$ elsewhere (a NaN input stays NaN, as PyTorch).

    $dz/dx = 0$ where $x \le$ `threshold` ($z$ is the constant `value` there), 1 elsewhere.
    """

    def forward(self, x, threshold, value):
        below = x <= threshold
        self.save_for_backward(below)
        return self.xp.where(below, self.xp.asarray(value, dtype=x.dtype), x)

    def backward(self, g):
        (below,) = self.saved
        return self.xp.where(below, self.xp.zeros((), dtype=g.dtype), g)

    def backward_graph(self, g, z):
        """Tensor-level (`create_graph`): $dx = g$ where $x >$ `threshold`, 0 elsewhere (a recorded
        `MaskedFill` with the constant mask): linear in $g$, free of $x$."""
        (below,) = self.saved
        return g.masked_fill(graph_constant(g, below), 0.0)


class GLU(Function):
    r"""The gated linear unit: $x$ split in halves $a$, $b$ along `dim`, $z = a\, s$, $s = \sigma(b)$.

    $\partial z / \partial a = s$, $\partial z / \partial b = a\, s\, (1 - s)$, and $dx$ is $[da, db]$
    joined back along `dim`:

    $$
    da = g\, s, \qquad db = g\, a\, s\, (1 - s).
    $$
    """

    def forward(self, x, dim):
        xp = self.xp
        a, b = xp.split(x, 2, axis=dim)
        s = sigmoid(xp, b)
        self.save_for_backward(a, s, dim)
        return a * s

    def backward(self, g):
        a, s, dim = self.saved
        return self.xp.concatenate([g * s, g * a * s * (1 - s)], axis=dim)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $a, b$ = the halves of the input tensor (recorded slices),
        $s = \sigma(b)$ (a recorded `Sigmoid`), $dx = \mathrm{cat}([g\, s,\ g\, a\, s\, (1 - s)], \mathit{dim})$
        (a recorded `Cat`): a second pass sees $\partial(da)/\partial b = g\, s\, (1 - s)$,
        $\partial(db)/\partial a = g\, s\, (1 - s)$, $\partial(db)/\partial b = g\, a\, s\, (1 - s)(1 - 2 s)$,
        each through the recorded ops."""
        dim = self.saved[2]
        a, b = self.parents[0].chunk(2, dim)
        s = b.sigmoid()
        return Cat.apply(g * s, g * a * s * (1 - s), axis=dim)


class PReLU(Function):
    r"""$z = x$ for $x > 0$, $w x$ otherwise, $w$ a learned slope (one, or one per channel, broadcast).

    $dz/dx = 1$ for $x > 0$, $w$ otherwise;  $dz/dw = 0$ for $x > 0$, $x$ otherwise:

    $$
    dx = \begin{cases} g & x > 0 \\ w\, g & \text{otherwise} \end{cases}
    \qquad
    dw = \begin{cases} 0 & x > 0 \\ g\, x & \text{otherwise} \end{cases}
    $$

    ($dw$ summed to $w$'s shape by the engine).
    """

    def forward(self, x, w):
        pos = x > 0
        self.save_for_backward(x, w, pos)
        return self.xp.where(pos, x, w * x)

    def backward(self, g):
        x, w, pos = self.saved
        xp = self.xp
        dx = xp.where(pos, g, g * w) if self.needs_grad(0) else None
        dw = xp.where(pos, xp.zeros((), dtype=g.dtype), g * x) if self.needs_grad(1) else None
        return dx, dw

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g$ where $x > 0$ else $g\, w$, $dw = 0$ where $x > 0$ else
        $g\, x$, with the input tensors $x$ and $w$ and the constant mask: a second pass sees the cross
        terms $\partial(dx)/\partial w = g$ and $\partial(dw)/\partial x = g$ off the positive side (and
        $\partial(dx)/\partial x = \partial(dw)/\partial w = 0$)."""
        x, w = self.parents
        pos = self.saved[2]
        dx = select(g, pos, g, g * w) if self.needs_grad(0) else None
        dw = (g * x).masked_fill(graph_constant(g, pos), 0.0) if self.needs_grad(1) else None
        return dx, dw


class RReLU(Function):
    r"""Randomized leaky ReLU (training): $z = x$ for $x > 0$, $a\, x$ otherwise, with a fresh slope
    $a \sim U(\mathit{lower}, \mathit{upper})$ per element from the device's seeded generator (1 where
    $x > 0$, as PyTorch's noise).  $dz/dx = a$: $dx = g\, a$   (the forward's slopes, stored).
    """

    def forward(self, x, lower, upper):
        u = backend.rng(backend.device_of(x)).uniform(x.shape, x.dtype)
        slope = self.xp.where(x > 0, self.xp.ones((), dtype=x.dtype), lower + (upper - lower) * u)
        self.save_for_backward(slope)
        return x * slope

    def backward(self, g):
        (slope,) = self.saved
        return g * slope

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, a$, the forward's slopes $a$ a constant (drawn, not a
        function of $x$: $\partial(dx)/\partial x = 0$)."""
        (slope,) = self.saved
        return g * graph_constant(g, slope)
