r"""Losses other than the fused cross-entropy (`ops/cross_entropy.py`), `F.normalize` and the p-norm of the distances.

The elementwise losses (binary cross-entropy, squared and absolute error) return one loss per
element; `F.*` reduces them with `mean()` or `sum()`, whose backward spreads $g$ evenly (mean: $g / n$).
`NLLLoss` reduces itself, because its mean divides by a sum of class weights.
The sums here (`NLLLoss`'s, the norms') accumulate float16 in float32 (`backend.widen`, `backend.sum`)
and round once, as PyTorch's.  Below, $\ell$ is the loss.
"""

from __future__ import annotations

import math

from .. import backend
from ..autograd import Function
from ..graph_walk import graph_constant
from .activation import Softplus
from .arithmetic import sign
from .masking import Where
from .reduce import _expand_back
from .scan import widened


def _cast(t, dtype):
    """$t$ in `dtype` (a recorded `Cast` when it differs): a formula computed in the widened dtype
    rounds once at the end, as the array backward."""
    return t if t.dtype == dtype else t.to(dtype)


class NLLLoss(Function):
    r"""$\ell_n = -w_{t_n}\, x_{n, t_n}$ for log-probabilities $x$ $(M, C)$, class ids $t$ $(M,)$ and class
    weights $w$ $(C,)$ (all ones without `weight`); rows whose $t_n$ is `ignore_index` have $w = 0$.
    `"mean"` divides the sum by $W = \sum_n w_{t_n}$, `"sum"` does not, `"none"` keeps $(M,)$.

    Each loss reads one element of its row: $dx_{n, t_n} = -w_{t_n}\, s_n$, zero elsewhere, with
    $s_n = g / W$ (`"mean"`), $g$ (`"sum"`) or $g_n$ (`"none"`).
    """

    def forward(self, x, t, weight, ignore_index, reduction):
        xp = self.xp
        rows = xp.arange(x.shape[0])
        keep = t != ignore_index
        safe_t = xp.where(keep, t, 0)
        w = (weight[safe_t] if weight is not None else xp.ones(t.shape, dtype=x.dtype)) * keep  # w[t_n]
        losses = -w * x[rows, safe_t]
        total = backend.sum(xp, backend.widen(w)) if reduction == "mean" else None
        self.save_for_backward(x.shape, rows, safe_t, w, total, reduction)
        if reduction == "mean":
            return backend.narrow(backend.sum(xp, backend.widen(losses)) / total, x.dtype)
        return backend.sum(xp, losses) if reduction == "sum" else losses

    def backward(self, g):
        shape, rows, safe_t, w, total, reduction = self.saved
        dx = self.xp.zeros(shape, dtype=w.dtype)
        dx[rows, safe_t] = -w * (g / total if reduction == "mean" else g)
        return dx, None, None

    def backward_graph(self, g, z):
        """Tensor-level (`create_graph`): $dx = -w_{t_n} s_n$ at $(n, t_n)$, 0 elsewhere: the constant
        $-w$ placed at the targets (a one-hot of the weights) times $s$ ($g / W$, $g$, or $g_n$ as a
        column), then 0 off the targets (a recorded `MaskedFill`, so an inf or NaN $s$ stays in its
        own row's target, as the array backward's scatter).  Linear in $g$, free of $x$."""
        xp = self.xp
        shape, rows, safe_t, w, total, reduction = self.saved
        placed = xp.zeros(shape, dtype=w.dtype)
        placed[rows, safe_t] = -w
        hit = xp.zeros(shape, dtype=bool)
        hit[rows, safe_t] = True
        s = g / graph_constant(g, xp.asarray(total)) if reduction == "mean" else g
        if reduction == "none":
            s = s.reshape(-1, 1)
        dx = (graph_constant(g, placed) * s).masked_fill(graph_constant(g, ~hit), 0.0)
        return _cast(dx, w.dtype), None, None


class BinaryCrossEntropy(Function):
    r"""$\ell = -w \big(y \log x + (1 - y) \log(1 - x)\big)$, each log clamped at $-100$ (as PyTorch, so that
    $x = 0$ or $1$ gives a finite loss); $x$ are probabilities, $y$ targets in $[0, 1]$, $w$ weights.

    $$
    \begin{aligned}
    dx &= \frac{w\, (x - y)}{x (1 - x)} && \text{(the denominator kept} \ge 10^{-12}\text{, as PyTorch)} \\
    dy &= -w \big(\log x - \log(1 - x)\big) && \text{(the clamped logs)} \\
    dw &= -\big(y \log x + (1 - y) \log(1 - x)\big)
    \end{aligned}
    $$
    """

    def forward(self, x, y, w):
        xp = self.xp
        log_x = xp.maximum(xp.log(x), -100)
        log_1mx = xp.maximum(xp.log1p(-x), -100)
        nll = -(y * log_x + (1 - y) * log_1mx)
        self.save_for_backward(x, y, w, log_x, log_1mx, nll)
        return nll if w is None else w * nll

    def backward(self, g):
        x, y, w, log_x, log_1mx, nll = self.saved
        gw = g if w is None else g * w
        dx = gw * (x - y) / self.xp.maximum(x * (1 - x), 1e-12)
        dy = -gw * (log_x - log_1mx) if self.needs_grad(1) else None
        dw = g * nll if w is not None and self.needs_grad(2) else None
        return dx, dy, dw

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): the three gradients above with the input tensors, the
        clamps recorded (`Clamp` of the logs at $-100$, of $x (1 - x)$ at $10^{-12}$: their masks carry the
        second pass's zeros where a clamp holds): a second pass sees

        $$
        \frac{\partial(dx)}{\partial x} = \frac{g w\, (x^2 - 2 x y + y)}{(x (1 - x))^2}
        $$

        (PyTorch's `binary_cross_entropy_double_backward`, whose eps sits in the denominator instead),
        $\partial(dx)/\partial y = -g w / (x (1 - x))$, and so on."""
        x, y, w = self.parents
        gw = g if w is None else g * w
        dx = gw * (x - y) / (x * (1 - x)).clamp(min=1e-12)
        dy = dw = None
        if self.needs_grad(1) or (w is not None and self.needs_grad(2)):
            log_x = x.log().clamp(min=-100)
            log_1mx = (-x).log1p().clamp(min=-100)
            if self.needs_grad(1):
                dy = -gw * (log_x - log_1mx)
            if w is not None and self.needs_grad(2):
                dw = g * -(y * log_x + (1 - y) * log_1mx)
        return dx, dy, dw


class BCEWithLogits(Function):
    r"""Binary cross-entropy of $\sigma(x)$ from the logits $x$, without forming $\sigma(x)$:

    $$
    \ell = w \big((1 - y)\, x + l\, \mathrm{softplus}(-x)\big), \qquad l = 1 + (\mathit{pos\_weight} - 1)\, y
    $$

    ($-\log \sigma(x) = \mathrm{softplus}(-x)$ and $-\log(1 - \sigma(x)) = x + \mathrm{softplus}(-x)$), with the
    stable $\mathrm{softplus}(-x) = \mathrm{log1p}(e^{-|x|}) + \max(-x, 0)$.  `pos_weight` (default 1) weighs
    the positives.

    With $\mathrm{softplus}(-x)' = -\sigma(-x) = \sigma(x) - 1$:

    $$
    \begin{aligned}
    dx &= w \big((1 - y) - l\, (1 - \sigma(x))\big)
    && \big(= w\, (\sigma(x) - y) \text{ without } \mathit{pos\_weight}\big) \\
    dy &= w \big(-x + (\mathit{pos\_weight} - 1)\, \mathrm{softplus}(-x)\big) \\
    d\mathit{pos\_weight} &= w\, y\, \mathrm{softplus}(-x) \\
    dw &= (1 - y)\, x + l\, \mathrm{softplus}(-x)
    \end{aligned}
    $$
    """

    def forward(self, x, y, w, pos_weight):
        xp = self.xp
        sp = xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(-x, 0)  # softplus(-x)
        lw = 1 if pos_weight is None else 1 + (pos_weight - 1) * y
        per = (1 - y) * x + lw * sp
        self.save_for_backward(x, y, w, pos_weight, sp, lw, per)
        return per if w is None else w * per

    def backward(self, g):
        xp = self.xp
        x, y, w, pos_weight, sp, lw, per = self.saved
        gw = g if w is None else g * w
        sig = 1 / (1 + xp.exp(-x))
        dx = gw * ((1 - y) - lw * (1 - sig))
        dy = gw * (-x + (0 if pos_weight is None else (pos_weight - 1) * sp)) if self.needs_grad(1) else None
        dw = g * per if w is not None and self.needs_grad(2) else None
        dpw = gw * y * sp if pos_weight is not None and self.needs_grad(3) else None
        return dx, dy, dw, dpw

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): the four gradients above with the input tensors: $\sigma(x)$
        as $1 / (1 + e^{-x})$ and $\mathrm{softplus}(-x)$ as a recorded `Softplus` (no linear regime: the
        forward's value, with its derivative $-\sigma(-x)$ everywhere, kinks included).  A second
        pass sees $\partial(dx)/\partial x = g w\, l\, s (1 - s)$ (with $s = \sigma(x)$) and the cross terms in
        $y$, $w$ and `pos_weight`."""
        x, y, w, pos_weight = self.parents
        gw = g if w is None else g * w
        sp = Softplus.apply(-x, beta=1.0, threshold=math.inf)
        lw = 1 if pos_weight is None else 1 + (pos_weight - 1) * y
        sig = 1 / (1 + (-x).exp())
        dx = gw * ((1 - y) - lw * (1 - sig))
        dy = gw * (-x + (0 if pos_weight is None else (pos_weight - 1) * sp)) if self.needs_grad(1) else None
        dw = g * ((1 - y) * x + lw * sp) if w is not None and self.needs_grad(2) else None
        dpw = gw * y * sp if pos_weight is not None and self.needs_grad(3) else None
        return dx, dy, dw, dpw


class SquaredError(Function):
    r"""$\ell = (x - y)^2$.   $dx = 2 (x - y)\, g$,   $dy = -dx$."""

    def forward(self, x, y):
        d = x - y
        self.save_for_backward(d)
        return d * d

    def backward(self, g):
        (d,) = self.saved
        dx = 2 * d * g
        return dx, -dx

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = 2 (x - y)\, g$ with the input tensors, $dy = -dx$: a second
        pass sees $\partial(dx)/\partial x = 2 g$, $\partial(dx)/\partial y = -2 g$."""
        x, y = self.parents
        dx = 2 * (x - y) * g
        return dx, -dx


class AbsoluteError(Function):
    r"""$\ell = |x - y|$.   $dx = \mathrm{sign}(x - y)\, g$ (0 where $x = y$, and where $x - y$ is NaN, as
    PyTorch),   $dy = -dx$."""

    def forward(self, x, y):
        d = x - y
        self.save_for_backward(d)
        return self.xp.abs(d)

    def backward(self, g):
        (d,) = self.saved
        dx = sign(self.xp, d) * g
        return dx, -dx

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = \mathrm{sign}(x - y)\, g$, the sign a constant (piecewise
        constant: $\partial(dx)/\partial x = 0$), $dy = -dx$."""
        (d,) = self.saved
        dx = graph_constant(g, sign(self.xp, d)) * g
        return dx, -dx


class Normalize(Function):
    r"""$y = x / d$ along `dim`, with $n = \|x\|_p = \big(\sum |x|^p\big)^{1/p}$ and $d = \max(n, \epsilon)$.

    Where $n \ge \epsilon$, $d = n$ and
    $\partial n / \partial x_i = \mathrm{sign}(x_i)\, |x_i|^{p-1} / n^{p-1}$ ($= x_i / n$ for $p = 2$), so

    $$
    dx_i = \frac{g_i}{d} - \frac{\sum_j g_j x_j}{d^2}\, \frac{\partial n}{\partial x_i};
    $$

    where $n < \epsilon$, $d = \epsilon$ is a constant and $dx = g / \epsilon$ (at $n = \epsilon$ the gradient
    goes through $n$, as through PyTorch's `clamp_min`).
    PyTorch's other norms: $p = 0$ counts the nonzero $x_i$ ($n$ is piecewise constant:
    $\partial n / \partial x = 0$); for $p < 1$ (negative too) a zero $x_i$ makes $|x_i|^p$ infinite, so
    $n = 0$, and its $\partial n / \partial x_i$ is taken as 0 (PyTorch's norm backward), computed as
    $\mathrm{sign}(x_i)\, |x_i|^{p-1} n^{1-p}$.
    """

    def forward(self, x, p, dim, eps):
        xp = self.xp
        dtype, x = x.dtype, backend.widen(x)
        if p == 0:
            n = (x != 0).sum(axis=dim, keepdims=True).astype(x.dtype)
        else:
            with backend.quiet():  # p < 0: |0|^p = inf, and inf^(1/p) = 0
                n = backend.sum(xp, xp.abs(x) ** p, dim, keepdims=True) ** (1 / p)
        d = xp.maximum(n, eps)
        self.save_for_backward(x, n, d, p, dim, eps, dtype)
        return backend.narrow(x / d, dtype)

    def backward(self, g):
        xp = self.xp
        x, n, d, p, dim, eps, dtype = self.saved
        g = backend.widen(g)
        if p == 0:
            dn = xp.zeros_like(x)
        elif p < 1:
            with backend.quiet():  # |0|^(p-1) = inf: masked to 0; n = 0: n^(1-p) = 0
                dn = sign(xp, x) * xp.where(x == 0, 0, xp.abs(x) ** (p - 1)) * n ** (1 - p)
        else:
            dn = xp.sign(x) * (xp.abs(x) / xp.where(n > 0, n, 1)) ** (p - 1)  # dn/dx (n >= eps rows)
        gx = backend.sum(xp, g * x, dim, keepdims=True)
        return backend.narrow(g / d - xp.where(n >= eps, gx / (d * d), 0) * dn, dtype)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): the backward above with $n$, $d$ and $\partial n / \partial x$
        recomputed from the input tensor as recorded ops, in the array backward's order (`Abs`, `Pow`,
        `Sum`, `Pow`, a `Clamp` at $\epsilon$ for $d$), the sign and the masks ($n > 0$, $n \ge \epsilon$,
        $x = 0$) constants; the widened dtype, cast back once.  A second pass differentiates $d$,
        $\partial n / \partial x$ and $\sum g\, x$."""
        xp = self.xp
        xa, na, _, p, dim, eps, dtype = self.saved
        x, g = widened(self.parents[0]), widened(g)
        const = lambda array: graph_constant(g, array)  # noqa: E731
        if p == 0:
            n = const(na)
            dn = const(xp.zeros_like(xa))
        else:
            with backend.quiet():
                n = (x.abs() ** p).sum(dim, keepdim=True) ** (1 / p)
                if p < 1:
                    at_zero = const(xa == 0)
                    power = (x.abs().masked_fill(at_zero, 1.0) ** (p - 1)).masked_fill(at_zero, 0.0)
                    dn = const(sign(xp, xa)) * power * n ** (1 - p)
                else:
                    safe = n.masked_fill(const(~(na > 0)), 1.0)
                    dn = const(xp.sign(xa)) * (x.abs() / safe) ** (p - 1)
        d = n.clamp(min=eps)
        gx = (g * x).sum(dim, keepdim=True)
        dx = g / d - (gx / (d * d)).masked_fill(const(~(na >= eps)), 0.0) * dn
        return _cast(dx, dtype)


class HuberError(Function):
    r"""$\ell = d^2 / 2$ for $|d| < \delta$, $\delta\, (|d| - \delta / 2)$ otherwise, $d = x - y$ (quadratic
    near 0, linear beyond $\delta$; the two pieces meet with equal slope at $|d| = \delta$).

    $$
    \frac{\partial \ell}{\partial d} =
    \begin{cases} d & |d| < \delta \\ \delta\, \mathrm{sign}(d) & \text{otherwise} \end{cases}
    \quad\Longrightarrow\quad dx = g\, \frac{\partial \ell}{\partial d}, \quad dy = -dx.
    $$

    `F.smooth_l1_loss(beta)` is this loss with $\delta = \beta$, divided by $\beta$.
    """

    def forward(self, x, y, delta):
        xp = self.xp
        d = x - y
        a = xp.abs(d)
        small = a < delta
        self.save_for_backward(d, small, delta)
        return xp.where(small, 0.5 * d * d, delta * (a - 0.5 * delta))

    def backward(self, g):
        d, small, delta = self.saved
        dx = g * self.xp.where(small, d, delta * self.xp.sign(d))
        return dx, -dx

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, (x - y)$ where $|x - y| < \delta$,
        $g\, \delta\, \mathrm{sign}(x - y)$ elsewhere (a recorded `Where` with the constant mask; the sign a
        constant), $dy = -dx$: a second pass sees $\partial(dx)/\partial x = g$ on the quadratic piece, 0 on
        the linear ones."""
        x, y = self.parents
        d, small, delta = self.saved
        dx = g * Where.apply(graph_constant(g, small), x - y, graph_constant(g, delta * self.xp.sign(d)))
        return dx, -dx


class KLDiv(Function):
    r"""The pointwise Kullback-Leibler term of log-probabilities $x$ against a target $t$:

    - probabilities $t$: $\ell = t\, (\log t - x)$ (0 where $t = 0$, the limit of $t \log t$);
    - `log_target` ($t = \log q$): $\ell = e^{t} (t - x)$.

    Backward:

    - probabilities: $dx = -g\, t$, $dt = g\, (\log t + 1 - x)$ ($t > 0$; PyTorch's NaN at $t = 0$ is 0 here);
    - `log_target`: $dx = -g\, e^{t}$, $dt = g\, e^{t} (t - x + 1)$.
    """

    def forward(self, x, t, log_target):
        xp = self.xp
        if log_target:
            q = xp.exp(t)
            self.save_for_backward(x, t, q, log_target)
            return q * (t - x)
        pos = t > 0
        log_t = xp.log(xp.where(pos, t, 1))  # log t where t > 0; t log t -> 0 as t -> 0
        self.save_for_backward(x, t, log_t, log_target)
        zero, nan = xp.zeros((), dtype=t.dtype), xp.full((), xp.nan, dtype=t.dtype)  # t < 0 (or NaN): NaN
        return xp.where(pos, t * log_t, xp.where(t == 0, zero, nan)) - t * x

    def backward(self, g):
        x, t, s, log_target = self.saved
        if log_target:  # s = exp(t)
            return -g * s, g * s * (t - x + 1) if self.needs_grad(1) else None
        return -g * t, g * (s + 1 - x) if self.needs_grad(1) else None

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): the same with the input tensors, $e^{t}$ a recorded `Exp` and
        $\log t$ a recorded `Log` of $t$ with 1 where $t \le 0$ (a constant mask, as the forward): a second
        pass sees $\partial(dx)/\partial t = -g\, e^{t}$ (or $-g$), $\partial(dt)/\partial x = -g\, e^{t}$ (or $-g$),
        $\partial(dt)/\partial t = g\, e^{t} (t - x + 2)$ (or $g / t$)."""
        x, t = self.parents[:2]
        t_array, log_target = self.saved[1], self.saved[3]
        if log_target:
            q = t.exp()
            return -g * q, g * q * (t - x + 1) if self.needs_grad(1) else None
        dt = None
        if self.needs_grad(1):
            dt = g * (t.masked_fill(graph_constant(g, ~(t_array > 0)), 1.0).log() + 1 - x)
        return -g * t, dt


class PNorm(Function):
    r"""$n = \|x\|_p$ along `dim` (a tuple of axes), as PyTorch's vector norm:

    - $p > 0$ finite: $n = \big(\sum |x|^p\big)^{1/p}$,
      $\partial n / \partial x = \mathrm{sign}(x)\, |x|^{p-1} / n^{p-1}$ ($x / n$ for $p = 2$);
    - $p = \infty$: $n = \max |x|$, $\partial n / \partial x = \mathrm{sign}(x) / k$ at the $k$ elements
      where $|x| = n$, 0 elsewhere;
    - $p = -\infty$: $n = \min |x|$, likewise at the minima;
    - $p = 0$: $n$ = the number of nonzero $x$ (piecewise constant: $\partial n / \partial x = 0$).

    Where $n = 0$ the gradient is 0 (PyTorch's choice: the norm's subgradient at 0).

    $$
    dx = g\, \frac{\partial n}{\partial x},
    $$

    $g$ broadcast over the reduced axes.
    """

    def forward(self, x, p, dim, keepdim):
        xp = self.xp
        dtype, x = x.dtype, backend.widen(x)
        a = xp.abs(x)
        if p == float("inf"):
            n = a.max(axis=dim, keepdims=True)
        elif p == float("-inf"):
            n = a.min(axis=dim, keepdims=True)
        elif p == 0:
            n = (a != 0).sum(axis=dim, keepdims=True).astype(x.dtype)
        elif p == 1:
            n = backend.sum(xp, a, dim, keepdims=True)
        elif p == 2:
            n = xp.sqrt(backend.sum(xp, a * a, dim, keepdims=True))
        else:
            n = backend.sum(xp, a**p, dim, keepdims=True) ** (1 / p)
        self.save_for_backward(x, a, n, p, dim, keepdim, dtype)
        out = backend.narrow(n, dtype)
        return out if keepdim else out.squeeze(axis=dim)

    def backward(self, g):
        xp = self.xp
        x, a, n, p, dim, keepdim, dtype = self.saved
        g = backend.widen(g)
        if not keepdim:
            g = xp.expand_dims(g, dim)
        if p == 0:
            return xp.zeros_like(x, dtype=dtype)
        if p in (float("inf"), float("-inf")):
            hit = a == n
            dn = xp.sign(x) * hit / hit.sum(axis=dim, keepdims=True)
        elif p == 1:
            dn = xp.sign(x)
        else:
            safe = xp.where(n > 0, n, 1)
            dn = x / safe if p == 2 else xp.sign(x) * (a / safe) ** (p - 1)
        return backend.narrow(xp.where(n > 0, g * dn, xp.zeros((), dtype=g.dtype)), dtype)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, \partial n / \partial x$, 0 where $n = 0$ (a constant mask),
        with $n$ and $\partial n / \partial x$ recomputed from the input tensor as recorded ops in the array
        backward's order for $1 < p < \infty$ ($\sqrt{\sum |x|^2}$ for $p = 2$); for $p = 1$, $\pm\infty$ and 0,
        $\partial n / \partial x$ is piecewise constant ($\mathrm{sign}(x)$, the shared maxima, 0): a constant.
        Widened, cast back once."""
        xp = self.xp
        xa, a, na, p, dim, keepdim, dtype = self.saved
        x, g = widened(self.parents[0]), widened(g)
        g = _expand_back(g, xa.shape, dim, keepdim)
        if p == 0:
            return graph_constant(g, xp.zeros_like(xa, dtype=dtype))
        if p in (float("inf"), float("-inf")):
            hit = a == na
            dn = graph_constant(g, xp.sign(xa) * hit / hit.sum(axis=dim, keepdims=True))
        elif p == 1:
            dn = graph_constant(g, xp.sign(xa))
        else:
            absx = x.abs()
            n = (absx * absx).sum(dim, keepdim=True).sqrt() if p == 2 else (absx**p).sum(dim, keepdim=True) ** (1 / p)
            safe = n.masked_fill(graph_constant(g, ~(na > 0)), 1.0)
            dn = x / safe if p == 2 else graph_constant(g, xp.sign(xa)) * (absx / safe) ** (p - 1)
        return _cast((g * dn).masked_fill(graph_constant(g, ~(na > 0)), 0.0), dtype)
