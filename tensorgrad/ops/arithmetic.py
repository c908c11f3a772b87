r"""Arithmetic: `+ - * /` and powers, `fmod` / `remainder`, `copysign`, `abs`, `clamp`, the
piecewise-constant ops (`sign`, `round`, `floor`, `ceil`, `trunc`, division with rounding), whose
derivative is 0 wherever it exists (as in PyTorch), `frac` and `nan_to_num`, the binary functions
of two reals (`atan2`, `hypot`, `logaddexp`, `lerp`, `fmax` / `fmin`), and the copies (`clone`, a
dtype cast).

$\infty - \infty$, $0 / 0$, `x % 0`, $\infty^0$ and the like are NaN or inf silently, as in PyTorch:
those expressions are computed in `backend.quiet()`, where NumPy does not warn.

Binary ops broadcast like NumPy; each backward returns the gradient shaped like the broadcast
output and the engine sums it back to each input's shape (`autograd.unbroadcast`).  Either input
of a binary op may be a Python number, whose gradient is not needed.
"""

from __future__ import annotations

import math

from .. import backend
from ..autograd import Function
from ..graph_walk import graph_constant
from ..tensor_base import TensorBase


def _const(xp, g, array):
    """A constant of a formula (a mask, a rounded quotient: piecewise constant in the inputs, so
    its derivative is 0) as a tensor of $g$'s dtype."""
    return graph_constant(g, xp.asarray(array, dtype=g._data.dtype))


def _zeros(xp, g):
    """A constant zero gradient shaped like $g$, for an input the output does not depend on (its
    derivative is 0 too: the true value, not a stub)."""
    return graph_constant(g, xp.zeros_like(g._data))


def sign(xp, x):
    """PyTorch's sign: $[x > 0] - [x < 0]$, so `sign(nan)` = 0 (NumPy's `np.sign` gives NaN) and
    `sign(-0.0)` = 0; a bool is its own sign."""
    if x.dtype.kind == "b":
        return x.copy()
    if x.dtype.kind != "f":
        return xp.sign(x)
    return (x > 0).astype(x.dtype) - (x < 0)


class Add(Function):
    r"""$z = x + y$.   $\partial z / \partial x = 1$, $\partial z / \partial y = 1$, so $dx = g$, $dy = g$."""

    def forward(self, x, y):
        with backend.quiet():  # inf + -inf = nan
            return x + y

    def backward(self, g):
        return g, g

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = dy = g$, linear in $g$ and free of $x$, $y$: a second pass
        carries a gradient of $dx$ or $dy$ back to $g$ alone ($\partial(dx)/\partial g = 1$)."""
        return g, g


class Sub(Function):
    """$z = x - y$.   $dx = g$, $dy = -g$."""

    def forward(self, x, y):
        with backend.quiet():  # inf - inf = nan
            return x - y

    def backward(self, g):
        return g, -g

    def backward_graph(self, g, z):
        """Tensor-level (`create_graph`): $dx = g$, $dy = -g$ (a recorded `Neg`): linear in $g$, free of $x$, $y$."""
        return g, -g


class Mul(Function):
    r"""$z = x\, y$.   $dx = g\, y$, $dy = g\, x$."""

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
        r"""Tensor-level (`create_graph`): $dx = g\, y$, $dy = g\, x$ as recorded `Mul`s of the input tensors,
        so a second pass sees $\partial(dx)/\partial g = y$, $\partial(dx)/\partial y = g$,
        $\partial(dy)/\partial g = x$, $\partial(dy)/\partial x = g$ (the cross term `x.grad` picks up from
        $dy$: of $x \cdot x$, the 2 in $d^2/dx^2 = 2$ comes from both)."""
        x, y = self.parents
        return (g * y if self.needs_grad(0) else None), (g * x if self.needs_grad(1) else None)


class Div(Function):
    r"""$z = x / y$.   $dx = g / y$,  $dy = -g\, x / y^2 = -g\, z / y$."""

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
        r"""Tensor-level (`create_graph`): $dx = g / y$, $dy = -dx \cdot z$ with $z = x / y$ the output tensor (in
        the graph: its node carries $d/dz$ on to $x$ and $y$), $= -g\, x / y^2$.  A second pass then sees
        $\partial(dx)/\partial g = 1/y$, $\partial(dx)/\partial y = -g/y^2$, $\partial(dy)/\partial z = -g/y$,
        ... each through recorded ops."""
        x, y = self.parents
        dx = g / y
        return dx, (-dx * z if self.needs_grad(1) else None)


class Neg(Function):
    """$z = -x$.   $dx = -g$."""

    def forward(self, x):
        return -x

    def backward(self, g):
        return -g

    def backward_graph(self, g, z):
        """Tensor-level (`create_graph`): $dx = -g$, a recorded `Neg` (linear in $g$, free of $x$)."""
        return -g


class Pow(Function):
    r"""$z = x^p$ for a Python number $p$.   $dx = g\, p\, x^{p - 1}$.

    For $p = 0$, $z = 1$ is constant and $dx = 0$ (also at $x = 0$, where $0 \cdot x^{-1}$ would be NaN).
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
        r"""Tensor-level (`create_graph`): $dx = g\, p\, x^{p-1}$ as recorded ops on the input tensor, so
        a second pass sees $\partial(dx)/\partial x = g\, p\, (p-1)\, x^{p-2}$ through the recorded `Pow` (whose
        own formula is this one: every order works).  $p = 0$: $z = 1$ is constant, $dx = 0$ exactly,
        a zero tensor (its derivatives are 0 too: constant here is the true value, not a stub)."""
        x, p = self.parents[0], self.saved[1]
        if p == 0:
            return type(g)._make(self.xp.zeros_like(g._data), g.device, False), None
        if p == 2:
            return g * 2 * x, None
        return g * p * x ** (p - 1), None


class PowTensor(Function):
    r"""$z = x^y$ with a tensor exponent, or a number base ($2^x$).

    $$
    \begin{aligned}
    \frac{\partial z}{\partial x} &= y\, x^{y-1} & \Longrightarrow\quad dx &= g\, y\, x^{y-1}, \\
    \frac{\partial z}{\partial y} &= x^y \log x = z \log x & \Longrightarrow\quad dy &= g\, z \log x;
    \end{aligned}
    $$

    $dx$ is 0 where $y = 0$ ($z = 1$ does not depend on $x$, even at $x = 0$), and $dy$ is 0 where
    $x = 0$ and $y \ge 0$ (PyTorch's limit: $z$ is 0 or 1 there).
    Elsewhere IEEE arithmetic decides, as in PyTorch's formulas: a negative base to a fractional
    power is NaN (and so are its gradients), 0 to a negative power is inf, $\log 0 = -\infty$, so
    $dy = g \cdot \infty \cdot (-\infty) = -\infty$ there; computed in `backend.quiet()`, where NumPy
    does not warn.
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
        r"""Tensor-level (`create_graph`): $dx = g\, y\, x^{y-1}$, $dy = g\, z \log x$ as recorded ops of the
        input tensors and the output $z$ (in the graph), each set to 0 where the array backward sets
        it by a recorded `masked_fill` with a constant mask (where $z$ does not depend on that input)."""
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
    r"""$z = \mathrm{fmod}(x, y) = x - \mathrm{trunc}(x / y)\, y$  (the sign of $x$; C's `fmod`).

    Between the jumps of $\mathrm{trunc}(x / y)$:  $dx = g$,  $dy = -g\, \mathrm{trunc}(x / y)$.
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
        r"""Tensor-level (`create_graph`): $dx = g$, $dy = -g\, \mathrm{trunc}(x / y)$, the rounded quotient a
        constant (piecewise constant in $x$ and $y$): linear in $g$, so a second pass sees
        $\partial(dy)/\partial g = -\mathrm{trunc}(x / y)$ and nothing else (as PyTorch's fmod double backward)."""
        x, y = self.saved
        with backend.quiet():  # as the array backward
            dy = -g * _const(self.xp, g, self.xp.trunc(x / y)) if self.needs_grad(1) else None
        return g, dy


class Remainder(Function):
    r"""$z = \mathrm{remainder}(x, y) = x - \lfloor x / y \rfloor\, y$  (the sign of $y$; Python's `%`).

    Between the jumps of $\lfloor x / y \rfloor$:  $dx = g$,  $dy = -g\, \lfloor x / y \rfloor$.
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
        r"""Tensor-level (`create_graph`): $dx = g$, $dy = -g\, \lfloor x / y \rfloor$, the rounded quotient a
        constant (piecewise constant in $x$ and $y$): linear in $g$."""
        x, y = self.saved
        with backend.quiet():  # as the array backward
            dy = -g * _const(self.xp, g, self.xp.floor_divide(x, y)) if self.needs_grad(1) else None
        return g, dy


class Copysign(Function):
    r"""$z = |x|$ with the sign of $y$.   $\partial z / \partial x = z / x = \pm 1$ (0 at $x = 0$, as
    PyTorch);  $\partial z / \partial y = 0$."""

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
        r"""Tensor-level (`create_graph`): $dx = g\, z / x$ ($\pm 1$, 0 at $x = 0$), the ratio a constant
        (piecewise constant in $x$ and $y$); $dy = 0$, a constant zero."""
        x, z_array = self.saved
        xp = self.xp
        with backend.quiet():  # as the array backward
            ratio = xp.where(x == 0, 0, z_array / xp.where(x == 0, 1, x))
        return g * _const(xp, g, ratio), (_zeros(xp, g) if self.needs_grad(1) else None)


class Abs(Function):
    r"""$z = |x|$.   $dz/dx = \mathrm{sign}(x)$, and 0 at $x = 0$ (PyTorch's subgradient), so
    $dx = g\, \mathrm{sign}(x)$ (PyTorch's sign, 0 at NaN too)."""

    def forward(self, x):
        self.save_for_backward(x)
        return self.xp.abs(x)

    def backward(self, g):
        (x,) = self.saved
        return g * sign(self.xp, x)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, \mathrm{sign}(x)$, the sign a constant (piecewise constant in
        $x$: $\partial(dx)/\partial x = 0$, as PyTorch's abs double backward)."""
        (x,) = self.saved
        return g * graph_constant(g, sign(self.xp, x))


class Clamp(Function):
    r"""$z = \min(\max(x, \mathit{lo}), \mathit{hi})$; `lo` and `hi` are tensors or numbers, None for no bound.

    $z$ is $x$ where $\mathit{lo} \le x \le \mathit{hi}$, $\mathit{lo}$ where $x < \mathit{lo}$, $\mathit{hi}$
    where $\max(x, \mathit{lo}) > \mathit{hi}$ (also when $\mathit{lo} > \mathit{hi}$, as in PyTorch).  Each
    input gets $g$ where it is the one $z$ equals:

    $$
    dx = g\, [\mathit{lo} \le x \le \mathit{hi}], \qquad
    d\mathit{lo} = g\, [x < \mathit{lo} \le \mathit{hi}], \qquad
    d\mathit{hi} = g\, [\max(x, \mathit{lo}) > \mathit{hi}].
    $$
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
        """Tensor-level (`create_graph`): each gradient is $g$ times its constant 0/1 mask (the masks
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
    r"""`sign`, `round`, `floor`, `ceil`, `trunc`, and division rounded to an integer: each is constant
    between its jumps, so $dz/dx = 0$ (PyTorch returns zeros too, not an error).

    Mode `div_trunc` (division rounded by `trunc`) of integers: $x - \mathrm{fmod}(x, y)$ is an exact multiple of $y$.
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
        """Tensor-level (`create_graph`): $dx = 0$ (and $dy = 0$), constant zeros: the true derivative of
        a piecewise-constant function, at every order."""
        zero = _zeros(self.xp, g)
        return (zero,) * self.inputs


class Clone(Function):
    """$z$ = a copy of $x$.   $dx = g$."""

    def forward(self, x):
        return x.copy()

    def backward(self, g):
        return g

    def backward_graph(self, g, z):
        """Tensor-level (`create_graph`): $dx = g$ (the identity is linear)."""
        return g


class Cast(Function):
    """$z$ = $x$ converted to another dtype.   $dx$ = $g$ converted back to $x$'s dtype.

    float64 to float16 goes through float32, as PyTorch's conversion does (`c10::Half` is made from a
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
        """Tensor-level (`create_graph`): $dx$ = $g$ cast back to $x$'s dtype, a recorded `Cast` (linear; its
        own formula is this one)."""
        (dtype,) = self.saved
        return g.to(dtype)


class Frac(Function):
    r"""$z = x - \mathrm{trunc}(x)$, the fractional part (the sign of $x$).   Between the jumps at the
    integers $dz/dx = 1$, so $dx = g$."""

    def forward(self, x):
        with backend.quiet():  # inf - inf = nan for x = +-inf, as in PyTorch
            return x - self.xp.trunc(x)

    def backward(self, g):
        return g

    def backward_graph(self, g, z):
        """Tensor-level (`create_graph`): $dx = g$ (the identity between the jumps): linear in $g$."""
        return g


class NanToNum(Function):
    r"""$z = x$, with NaN, $+\infty$ and $-\infty$ replaced by the numbers `nan`, `posinf`, `neginf`.
    $z$ is $x$ where $x$ is finite and a constant elsewhere, so $dx = g\, [x \text{ is finite}]$."""

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
        r"""Tensor-level (`create_graph`): $dx = g\, [x \text{ is finite}]$, the mask a constant: linear in $g$."""
        (x,) = self.saved
        return g * _const(self.xp, g, self.xp.isfinite(x))


class Atan2(Function):
    r"""$z = \mathrm{atan2}(y, x)$, the angle of the point $(x, y)$, in $(-\pi, \pi]$.
    With $r^2 = x^2 + y^2$:

    $$
    \frac{\partial z}{\partial y} = \frac{x}{r^2}, \quad \frac{\partial z}{\partial x} = -\frac{y}{r^2}
    \quad\Longrightarrow\quad dy = \frac{g\, x}{r^2}, \quad dx = -\frac{g\, y}{r^2}
    $$

    (0 at the origin, PyTorch's choice)."""

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
        r"""Tensor-level (`create_graph`): $\mathit{recip} = 1 / (x^2 + y^2)$ of the input tensors, 0 where
        $x^2 + y^2$ is 0 (a constant mask; the denominator is 1 there, so no inf enters the graph),
        then $dy = g\, x\, \mathit{recip}$, $dx = -g\, y\, \mathit{recip}$: a second pass differentiates
        $\mathit{recip}$ through the recorded `Reciprocal`
        ($d\,\mathit{recip} = -2\, (x\, dx + y\, dy)\, \mathit{recip}^2$)."""
        y, x = self.parents
        ya, xa = self.saved
        with backend.quiet():
            origin = graph_constant(g, xa * xa + ya * ya == 0)
        recip = (x * x + y * y).masked_fill(origin, 1.0).reciprocal().masked_fill(origin, 0.0)
        dy = g * x * recip if self.needs_grad(0) else None
        dx = -g * y * recip if self.needs_grad(1) else None
        return dy, dx


class Hypot(Function):
    r"""$z = \sqrt{x^2 + y^2}$ (without overflow).

    $$
    \frac{\partial z}{\partial x} = \frac{x}{z}, \quad \frac{\partial z}{\partial y} = \frac{y}{z}
    \quad\Longrightarrow\quad dx = \frac{g\, x}{z}, \quad dy = \frac{g\, y}{z}
    $$

    (NaN at the origin, as in PyTorch)."""

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
        r"""Tensor-level (`create_graph`): $dx = g\, x / z$, $dy = g\, y / z$ with the input tensors and $z$ the
        output tensor, in the graph (its node carries $d/dz$ on to $x$ and $y$:
        $\partial^2 z / \partial x^2 = y^2 / z^3$)."""
        x, y = self.parents
        dx = g * x / z if self.needs_grad(0) else None
        dy = g * y / z if self.needs_grad(1) else None
        return dx, dy


class LogAddExp(Function):
    r"""$z = \log(e^{x} + e^{y})$ (base $e$), or $\log_2(2^x + 2^y)$ (base 2), without overflow.

    $$
    \frac{\partial z}{\partial x} = \frac{e^{x}}{e^{x} + e^{y}} = \frac{1}{1 + e^{y - x}},
    $$

    and for base 2 likewise $2^x / (2^x + 2^y) = 1 / (1 + 2^{y - x})$, so with $b$ the base

    $$
    dx = \frac{g}{1 + b^{y - x}}, \qquad dy = \frac{g}{1 + b^{x - y}}.
    $$
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
        r"""Tensor-level (`create_graph`): $dx = g / (1 + b^{y - x})$, $dy = g / (1 + b^{x - y})$ as recorded
        ops of the input tensors (`Exp` or `Exp2` of the difference): a second pass sees
        $\partial(dx)/\partial x = g\, s\, (1 - s) \ln b$ with $s = 1 / (1 + b^{y - x})$, and the cross terms."""
        x, y = self.parents
        power = (lambda t: t.exp()) if self.saved[2] == "e" else (lambda t: t.exp2())
        dx = g / (1 + power(y - x)) if self.needs_grad(0) else None
        dy = g / (1 + power(x - y)) if self.needs_grad(1) else None
        return dx, dy


class Lerp(Function):
    r"""$z = x + w\, (y - x)$, the linear interpolation from $x$ ($w = 0$) to $y$ ($w = 1$); $w$ a tensor or a
    number.  Computed as $y - (y - x)(1 - w)$ for $w \ge 1/2$ (as PyTorch: exact at $w = 1$).

    $$
    \frac{\partial z}{\partial x} = 1 - w, \quad \frac{\partial z}{\partial y} = w, \quad
    \frac{\partial z}{\partial w} = y - x
    \quad\Longrightarrow\quad dx = g\, (1 - w), \quad dy = g\, w, \quad dw = g\, (y - x).
    $$
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
        r"""Tensor-level (`create_graph`): $dx = g\, (1 - w)$, $dy = g\, w$, $dw = g\, (y - x)$ with the input
        tensors ($w$ a tensor or a number): a second pass sees the cross terms
        $\partial(dx)/\partial w = -g$, $\partial(dy)/\partial w = g$, $\partial(dw)/\partial y = g$,
        $\partial(dw)/\partial x = -g$ ($z$ is bilinear)."""
        x, y, w = self.parents
        dx = g * (1 - w) if self.needs_grad(0) else None
        dy = g * w if self.needs_grad(1) else None
        dw = g * (y - x) if self.needs_grad(2) else None
        return dx, dy, dw


class FMax(Function):
    r"""$z = \mathrm{fmax}(x, y)$ (mode `"max"`) or $\mathrm{fmin}(x, y)$ (mode `"min"`): the larger (smaller)
    of the two, the number where one is NaN.  $z$ is $x$ where $x$ wins (ties and a NaN $y$ included),
    else $y$, so $dx = g\, [x \text{ wins}]$, $dy = g\, [y \text{ wins}]$ (PyTorch's split: a tie goes to $x$)."""

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
        r"""Tensor-level (`create_graph`): $dx = g\, [x \text{ wins}]$, $dy = g\, [y \text{ wins}]$, the masks
        constants: linear in $g$ ($\partial(dx)/\partial x = 0$, as PyTorch's)."""
        (x_wins,) = self.saved
        dx = g * _const(self.xp, g, x_wins) if self.needs_grad(0) else None
        dy = g * _const(self.xp, g, ~x_wins) if self.needs_grad(1) else None
        return dx, dy


class NextAfter(Function):
    r"""$z = \mathrm{nextafter}(x, y)$, the float next to $x$ in the direction of $y$ ($y$ itself where $x = y$).
    PyTorch's derivative treats $z$ as $x$ where it moves $x$ by an ulp, as the constant $y$ elsewhere:

    $$
    dx = g\, [x \ne y], \qquad dy = 0.
    $$"""

    def forward(self, x, y):
        self.save_for_backward(x != y)
        return self.xp.nextafter(x, y)

    def backward(self, g):
        (moved,) = self.saved
        return g * moved, (self.xp.zeros_like(g) if self.needs_grad(1) else None)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, [x \ne y]$, the mask a constant; $dy = 0$, a constant."""
        (moved,) = self.saved
        return g * _const(self.xp, g, moved), (_zeros(self.xp, g) if self.needs_grad(1) else None)


class Ldexp(Function):
    r"""$z = x\, 2^n$ ($n$ a float or an integer tensor).

    $$
    \frac{\partial z}{\partial x} = 2^n, \quad \frac{\partial z}{\partial n} = x\, 2^n \ln 2 = z \ln 2
    \quad\Longrightarrow\quad dx = g\, 2^n, \quad dn = g\, z \ln 2
    $$

    (none for an integer $n$)."""

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
        r"""Tensor-level (`create_graph`): $dx = g\, 2^n$, $dn = g\, z \ln 2$ with $z$ the output tensor, in the
        graph; $2^n$ is a recorded `Exp2` of $n$ when $n$ is a float tensor (so a second pass sees
        $\partial(dx)/\partial n = g\, 2^n \ln 2$), the forward's constant when $n$ is an integer tensor."""
        scale, _ = self.saved
        n = self.parents[1]
        if n._data.dtype.kind == "f":  # the same dtype as x (Tensor.ldexp casts it)
            scale = n.exp2()
        else:
            scale = graph_constant(g, scale)
        dx = g * scale if self.needs_grad(0) else None
        dn = g * z * math.log(2) if self.needs_grad(1) else None
        return dx, dn
