"""Activation functions, each with its derivative: tanh, ReLU, GELU (exact and tanh form) and the
rest of PyTorch's (sigmoid, SiLU, softplus, ...).  Conditions at a kink follow PyTorch (e.g.
ELU's "x > 0" takes the left branch at 0), so the subgradient at the kink is PyTorch's too.
No branch of a `where` computes an overflowing exp: the exps take -|x| or are clipped to the
branch where they are used.
"""

from __future__ import annotations

import math

from .. import backend
from ..autograd import Function, graph_constant
from .masking import Where
from .shape import Cat


def sigmoid(xp, x):
    """1 / (1 + exp(-x)), without overflow: with e = exp(-|x|) <= 1,
    x >= 0: 1 / (1 + e);   x < 0: e / (1 + e)   (the same value, multiplied by e / e)."""
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1, e) / (1 + e)


def select(g, cond, a, b):
    """a where the constant mask `cond` (an array) holds, else b: a recorded Where of the Tensors
    a and b (each gets the gradient of its own places, the other places 0), for the formulas of
    the piecewise ops (their branch condition is piecewise constant in x)."""
    return Where.apply(graph_constant(g, cond), a, b)


def mask_of(g, mask):
    """The bool array `mask` as a constant tensor of g's dtype (1 where it holds, else 0)."""
    return graph_constant(g, mask.astype(g.dtype))


def softplus(xp, x):
    """log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)), without overflow."""
    return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))


class Tanh(Function):
    """z = tanh(x).   dz/dx = 1 - tanh(x)^2   =>   dx = g * (1 - z^2)."""

    def forward(self, x):
        z = self.xp.tanh(x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        return g * (1 - z * z)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g * (1 - z^2) with z = tanh(x) the output tensor, in the
        graph.  A second pass sees d(dx)/dg = 1 - z^2 and d(dx)/dz = -2 g z, which z's node carries
        on to x (dz/dx = 1 - z^2): d^2 tanh/dx^2 = -2 z (1 - z^2).  Every op used is itself
        differentiable, so third and higher orders follow."""
        return g * (1 - z * z)


class ReLU(Function):
    """z = max(x, 0).   dx = g where x > 0, else 0 (the subgradient 0 at x = 0, as PyTorch).

    As PyTorch's threshold_backward, the test is z <= 0 -> 0: a NaN input (z is NaN) passes g on."""

    def forward(self, x):
        z = self.xp.maximum(x, 0)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        return self.xp.where(z <= 0, self.xp.zeros((), dtype=g.dtype), g)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g where z > 0, else 0 (a recorded masked_fill with the
        mask z <= 0 as a constant, so a NaN input still passes g on).  The mask is piecewise
        constant in x: d(dx)/dx = 0 wherever it is defined (as PyTorch's threshold_backward
        double backward), and d(dx)/dg = the mask."""
        mask = type(g)._make(z._data <= 0, g.device, False)
        return g.masked_fill(mask, 0.0)


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

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g * dz/dx written with Tensor ops of the input tensor
        (`gelu_graph`): Phi(x) = (1 + erf(x / sqrt 2)) / 2 through a recorded Erf, phi(x) through a
        recorded Exp, or the tanh form through a recorded Tanh; each has its own formula."""
        return gelu_graph(g, self.parents[0], self.saved[2])


def gelu_graph(g, x, approximate):
    """GELU's dx = g * dz/dx (see GELU) as Tensor ops of the Tensors g and x, for create_graph
    (the reference op and its kernel both use it)."""
    if approximate == "tanh":
        t = (math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)).tanh()
        du = math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * x * x)
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du)
    cdf = 0.5 * (1 + (x * (1 / math.sqrt(2))).erf())
    pdf = (-0.5 * x * x).exp() * (1 / math.sqrt(2 * math.pi))
    return g * (cdf + x * pdf)


class Sigmoid(Function):
    """z = 1 / (1 + exp(-x)).   dz/dx = exp(-x) / (1 + exp(-x))^2 = z (1 - z)   =>   dx = g z (1 - z)."""

    def forward(self, x):
        z = sigmoid(self.xp, x)
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        return g * z * (1 - z)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g z (1 - z) with z = sigmoid(x) the output tensor, in the
        graph: a second pass sees d(dx)/dz = g (1 - 2z), carried on to x by z's node (dz/dx =
        z (1 - z)): d^2 sigmoid/dx^2 = z (1 - z)(1 - 2z)."""
        return g * z * (1 - z)


class SiLU(Function):
    """z = x s, s = sigmoid(x).   dz/dx = s + x s (1 - s) = s (1 + x (1 - s))."""

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
        """Tensor-level (create_graph): dx = g s (1 + x (1 - s)), s = sigmoid(x) recomputed as a
        recorded Sigmoid of the input tensor (what the forward saved as an array), so every factor
        is in the graph."""
        x = self.parents[0]
        s = x.sigmoid()
        return g * s * (1 + x * (1 - s))


class Softplus(Function):
    """z = log(1 + exp(beta x)) / beta, and z = x where beta x > threshold (PyTorch's linear regime).

    dz/dx = exp(beta x) / (1 + exp(beta x)) = sigmoid(beta x);  1 in the linear regime.
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
        """Tensor-level (create_graph): dx = g where beta x > threshold (the constant mask), else
        g sigmoid(beta x), with beta x a recorded Mul of the input tensor and a recorded Sigmoid:
        a second pass sees d(dx)/dx = g beta s (1 - s) off the linear regime, 0 in it (PyTorch's
        softplus_backward double backward)."""
        _, linear, beta = self.saved
        bx = self.parents[0] * beta
        return select(g, linear, g, g * bx.sigmoid())


class Hardtanh(Function):
    """z = min(max(x, lo), hi).   dz/dx = 1 strictly inside (lo, hi), 0 outside and at the ends."""

    def forward(self, x, min_val=-1.0, max_val=1.0):
        self.save_for_backward(x, min_val, max_val)
        return self.xp.clip(x, min_val, max_val)

    def backward(self, g):
        x, lo, hi = self.saved
        return g * ((x > lo) & (x < hi))

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g times the constant 0/1 mask lo < x < hi (piecewise
        constant in x: d(dx)/dx = 0, d(dx)/dg = the mask)."""
        x, lo, hi = self.saved
        return g * mask_of(g, (x > lo) & (x < hi))


class Hardsigmoid(Function):
    """z = min(max(x / 6 + 1/2, 0), 1).   dz/dx = 1/6 for -3 < x < 3, else 0."""

    def forward(self, x):
        self.save_for_backward(x)
        return self.xp.clip(x / 6 + 0.5, 0, 1)

    def backward(self, g):
        (x,) = self.saved
        return g * ((x > -3) & (x < 3)) / 6

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g [-3 < x < 3] / 6, the mask a constant (d(dx)/dx = 0)."""
        (x,) = self.saved
        return g * mask_of(g, (x > -3) & (x < 3)) / 6


class Softsign(Function):
    """z = x / (1 + |x|).   dz/dx = ((1 + |x|) - x sign(x)) / (1 + |x|)^2 = 1 / (1 + |x|)^2.

    At x = +-inf PyTorch's softsign (x / (|x| + 1), differentiated as that quotient) gives
    inf / inf = nan for z and for dz/dx; so do these.
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
        """Tensor-level (create_graph): dx = g / d^2 with d = 1 + |x| a recorded Abs of the input
        tensor, nan where d is inf (the constant mask, as the array backward): a second pass sees
        d(dx)/dx = -2 g sign(x) / d^3 (PyTorch's composite x / (|x| + 1) differentiated twice)."""
        (d_array,) = self.saved
        d = 1 + self.parents[0].abs()
        return (g / (d * d)).masked_fill(graph_constant(g, d_array == self.xp.inf), float("nan"))


class ELU(Function):
    """z = x for x > 0, alpha (exp(x) - 1) otherwise.

    dz/dx = 1 for x > 0;  alpha exp(x) = z + alpha otherwise (NaN at a NaN x, as PyTorch's
    vectorized CPU loop gives; its scalar loop, which short arrays take, passes g on instead).
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
        """Tensor-level (create_graph): dx = g where x > 0 (the constant mask), else g (z + alpha)
        with z the output tensor, in the graph: a second pass sees d(dx)/dz = g off the positive
        side, carried on to x by z's node (dz/dx = z + alpha = alpha exp(x)): d^2 elu/dx^2 =
        alpha exp(x) for x <= 0, 0 above (PyTorch's elu_backward double backward, is_result)."""
        pos, _, alpha = self.saved
        return select(g, pos, g, g * (z + alpha))


class CELU(Function):
    """z = x for x > 0, alpha (exp(x / alpha) - 1) otherwise (continuously differentiable at 0).

    dz/dx = 1 for x > 0;  exp(x / alpha) = z / alpha + 1 otherwise (NaN at a NaN x, as ELU).
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
        """Tensor-level (create_graph): dx = g where x > 0 (the constant mask), else g (z / alpha + 1)
        with z the output tensor, in the graph: a second pass sees d(dx)/dz = g / alpha, carried on
        to x by z's node (dz/dx = exp(x / alpha)): d^2 celu/dx^2 = exp(x / alpha) / alpha for x <= 0."""
        pos, _, alpha = self.saved
        return select(g, pos, g, g * (z / alpha + 1))


class LeakyReLU(Function):
    """z = x for x > 0, slope * x otherwise.   dx = g for x > 0, slope * g otherwise."""

    def forward(self, x, negative_slope=0.01):
        pos = x > 0
        self.save_for_backward(pos, negative_slope)
        return self.xp.where(pos, x, x * negative_slope)

    def backward(self, g):
        pos, slope = self.saved
        return self.xp.where(pos, g, g * slope)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g where x > 0, else g slope (the mask a constant):
        linear in g, free of x (d(dx)/dx = 0)."""
        pos, slope = self.saved
        return select(g, pos, g, g * slope)


class Mish(Function):
    """z = x tanh(sp), sp = softplus(x) = log(1 + exp(x)).

    dsp/dx = sigmoid(x), dtanh(u)/du = 1 - tanh(u)^2, so with t = tanh(sp):
    dz/dx = t + x (1 - t^2) sigmoid(x).
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
        """Tensor-level (create_graph): dx = g (t + x (1 - t^2) s), t = tanh(softplus(x)) and
        s = sigmoid(x) recomputed as recorded ops of the input tensor (Softplus with no linear
        regime, so t is the forward's value exactly, then Tanh and Sigmoid), each with its own
        formula: a second pass differentiates every factor."""
        x = self.parents[0]
        t = Softplus.apply(x, beta=1.0, threshold=math.inf).tanh()
        return g * (t + x * (1 - t * t) * x.sigmoid())


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


class SELU(Function):
    """z = scale * x for x > 0, scale * alpha * (exp(x) - 1) otherwise (alpha, scale: SELU's constants).

    dz/dx = scale for x > 0;  scale * alpha * exp(x) = z + scale * alpha otherwise.
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
        """Tensor-level (create_graph): dx = g scale where x > 0 (the constant mask), else
        g (z + scale alpha) with z the output tensor, in the graph: a second pass sees d(dx)/dz = g
        off the positive side, carried on to x by z's node (dz/dx = scale alpha exp(x))."""
        pos, _ = self.saved
        return select(g, pos, g * SELU_SCALE, g * (z + SELU_SCALE * SELU_ALPHA))


class LogSigmoid(Function):
    """z = log sigmoid(x) = -softplus(-x) = min(x, 0) - log1p(exp(-|x|))   (no overflow).

    dz/dx = sigmoid'(x) / sigmoid(x) = 1 - sigmoid(x) = sigmoid(-x).
    """

    def forward(self, x):
        self.save_for_backward(x)
        return self.xp.minimum(x, 0) - self.xp.log1p(self.xp.exp(-self.xp.abs(x)))

    def backward(self, g):
        (x,) = self.saved
        return g * sigmoid(self.xp, -x)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g sigmoid(-x), a recorded Neg and Sigmoid of the input
        tensor: a second pass sees d(dx)/dx = -g s (1 - s), s = sigmoid(-x)."""
        return g * (-self.parents[0]).sigmoid()


class Hardswish(Function):
    """z = x * min(max(x + 3, 0), 6) / 6:  0 for x <= -3,  x for x >= 3,  x (x + 3) / 6 between.

    dz/dx = 0 for x <= -3,  (2x + 3) / 6 = x / 3 + 1/2 for -3 < x < 3,  1 for x >= 3
    (PyTorch's branches at the kinks: x = -3 takes the left one, 0, and x = 3 the right one, 1).
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
        """Tensor-level (create_graph): dx = g (x / 3 + 1/2) for -3 < x < 3 with x the input tensor,
        g for x >= 3, 0 for x <= -3 (constant masks, PyTorch's branches): a second pass sees
        d(dx)/dx = g / 3 strictly between -3 and 3, 0 elsewhere (PyTorch's hardswish_backward
        double backward)."""
        (x_array,) = self.saved
        mid = select(g, x_array < 3, g * (self.parents[0] / 3 + 0.5), g)
        return mid.masked_fill(graph_constant(g, x_array <= -3), 0.0)


class Hardshrink(Function):
    """z = 0 for -lambd <= x <= lambd, x otherwise (a NaN input stays NaN).

    dz/dx = 0 inside [-lambd, lambd], 1 outside.  At a NaN input the gradient is 0, as PyTorch's
    vectorised CPU kernel gives (its scalar tail, the last few elements, would pass g on).
    """

    def forward(self, x, lambd=0.5):
        self.save_for_backward((x < -lambd) | (x > lambd))
        return self.xp.where((x >= -lambd) & (x <= lambd), self.xp.zeros((), dtype=x.dtype), x)

    def backward(self, g):
        (outside,) = self.saved
        return self.xp.where(outside, g, self.xp.zeros((), dtype=g.dtype))

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g outside [-lambd, lambd], 0 inside (a recorded
        MaskedFill with the constant mask): linear in g, free of x (d(dx)/dx = 0)."""
        (outside,) = self.saved
        return g.masked_fill(graph_constant(g, ~outside), 0.0)


class Softshrink(Function):
    """z = 0 for -lambd <= x <= lambd, x - lambd above, x + lambd below (x moved lambd towards 0).

    dz/dx = 0 inside [-lambd, lambd], 1 outside (0 at a NaN input, as Hardshrink).
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
        """Tensor-level (create_graph): dx = g outside [-lambd, lambd], 0 inside (a recorded
        MaskedFill with the constant mask): linear in g, free of x (d(dx)/dx = 0)."""
        (outside,) = self.saved
        return g.masked_fill(graph_constant(g, ~outside), 0.0)


class Tanhshrink(Function):
    """z = x - tanh(x).   dz/dx = 1 - (1 - tanh(x)^2) = tanh(x)^2."""

    def forward(self, x):
        t = self.xp.tanh(x)
        self.save_for_backward(t)
        return x - t

    def backward(self, g):
        (t,) = self.saved
        return g * t * t

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g t^2 with t = tanh(x) a recorded Tanh of the input
        tensor: a second pass sees d(dx)/dx = 2 g t (1 - t^2)."""
        t = self.parents[0].tanh()
        return g * t * t


class Threshold(Function):
    """z = value where x <= threshold, x elsewhere (a NaN input stays NaN, as PyTorch).

    dz/dx = 0 where x <= threshold (z is the constant value there), 1 elsewhere.
    """

    def forward(self, x, threshold, value):
        below = x <= threshold
        self.save_for_backward(below)
        return self.xp.where(below, self.xp.asarray(value, dtype=x.dtype), x)

    def backward(self, g):
        (below,) = self.saved
        return self.xp.where(below, self.xp.zeros((), dtype=g.dtype), g)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g where x > threshold, 0 elsewhere (a recorded
        MaskedFill with the constant mask): linear in g, free of x."""
        (below,) = self.saved
        return g.masked_fill(graph_constant(g, below), 0.0)


class GLU(Function):
    """The gated linear unit: x split in halves a, b along dim, z = a * s, s = sigmoid(b).

    dz/da = s,  dz/db = a * s (1 - s), and dx is [da, db] joined back along dim:
        da = g * s,   db = g * a * s * (1 - s)
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
        """Tensor-level (create_graph): a, b = the halves of the input tensor (recorded slices),
        s = sigmoid(b) (a recorded Sigmoid), dx = cat([g s, g a s (1 - s)], dim) (a recorded Cat):
        a second pass sees d(da)/db = g s (1 - s), d(db)/da = g s (1 - s), d(db)/db =
        g a s (1 - s)(1 - 2 s), each through the recorded ops."""
        dim = self.saved[2]
        a, b = self.parents[0].chunk(2, dim)
        s = b.sigmoid()
        return Cat.apply(g * s, g * a * s * (1 - s), axis=dim)


class PReLU(Function):
    """z = x for x > 0, w * x otherwise, w a learned slope (one, or one per channel, broadcast).

    dz/dx = 1 for x > 0, w otherwise;  dz/dw = 0 for x > 0, x otherwise:
        dx = where(x > 0, g, w g),   dw = where(x > 0, 0, g x)   (summed to w's shape by the engine)
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
        """Tensor-level (create_graph): dx = g where x > 0 else g w, dw = 0 where x > 0 else g x,
        with the input tensors x and w and the constant mask: a second pass sees the cross terms
        d(dx)/dw = g and d(dw)/dx = g off the positive side (and d(dx)/dx = d(dw)/dw = 0)."""
        x, w = self.parents
        pos = self.saved[2]
        dx = select(g, pos, g, g * w) if self.needs_grad(0) else None
        dw = (g * x).masked_fill(graph_constant(g, pos), 0.0) if self.needs_grad(1) else None
        return dx, dw


class RReLU(Function):
    """Randomized leaky ReLU (training): z = x for x > 0, a * x otherwise, with a fresh slope
    a ~ U(lower, upper) per element from the device's seeded generator (1 where x > 0, as PyTorch's
    noise).  dz/dx = a:   dx = g * a   (the forward's slopes, stored).
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
        """Tensor-level (create_graph): dx = g a, the forward's slopes a constant (drawn, not a
        function of x: d(dx)/dx = 0)."""
        (slope,) = self.saved
        return g * graph_constant(g, slope)
