"""Elementwise kernels for CUDA (and the embedding's backward): one thread per element.

Each kernel walks a flat array with a grid-stride loop: thread $i$ of the grid does elements
$i$, $i$ + (threads in the grid), ...  The arrays are flattened by the wrappers in cuda.py, so any
shape works.  Arithmetic stays in the arrays' dtype (constants made with `x.dtype.type(...)`,
scalars passed in that dtype).

The GPU compiler fuses $a b + c$ into one rounding (fused multiply-add) where the reference
NumPy code rounds twice, so a GPU result can differ from the reference in its last bit.
"""

from __future__ import annotations

import math

from numba import cuda

INV_SQRT2 = 1 / math.sqrt(2)
INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


# --------------------------------------------------------------------------- AdamW
@cuda.jit(cache=True)
def adamw_elements(param, grad, exp_avg, exp_avg_sq, decay, one_minus_beta1, beta2, one_minus_beta2,
                   neg_step_size, bias_correction2_sqrt, eps):  # fmt: skip
    r"""One AdamW step, in place, per element.  Must equal `optim.adamw.adamw_update_`, in torch's
    order of operations (the host folds the hyperparameters:
    $\mathrm{decay} = 1 - \mathrm{lr} \cdot \mathrm{wd}$,
    $\mathrm{neg\_step\_size} = -\mathrm{lr} / (1 - \beta_1^t)$,
    $\mathrm{bias\_correction2\_sqrt} = \sqrt{1 - \beta_2^t}$):

    $$
    \begin{aligned}
    p &\leftarrow p \cdot \mathrm{decay} \\
    m &\leftarrow m + (g - m)(1 - \beta_1) \\
    v &\leftarrow v\, \beta_2 + (g\, (1 - \beta_2))\, g \\
    p &\leftarrow p + (m \cdot \mathrm{neg\_step\_size}) \,/\,
      (\sqrt v / \mathrm{bias\_correction2\_sqrt} + \varepsilon)
    \end{aligned}
    $$
    """
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, param.shape[0], stride):
        g = grad[i]
        p = param[i] * decay
        m = exp_avg[i]
        m = m + (g - m) * one_minus_beta1
        v = exp_avg_sq[i] * beta2 + (g * one_minus_beta2) * g
        denom = math.sqrt(v) / bias_correction2_sqrt + eps
        param[i] = p + (m * neg_step_size) / denom
        exp_avg[i] = m
        exp_avg_sq[i] = v


# --------------------------------------------------------------------------- ReLU, GELU, dropout
@cuda.jit(cache=True)
def relu_forward_elements(x, y):
    r"""$y = \max(x, 0)$ (NaN stays NaN).  Must equal `ops.activation.ReLU.forward`."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    zero = x.dtype.type(0)
    for i in range(start, x.shape[0], stride):
        v = x[i]
        y[i] = zero if v < zero else v


@cuda.jit(cache=True)
def relu_backward_elements(g, y, dx):
    r"""$dx = 0$ where $y \le 0$, else $g$ (a NaN input passes $g$ on).  Must equal
    `ops.activation.ReLU.backward`."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    zero = g.dtype.type(0)
    for i in range(start, g.shape[0], stride):
        dx[i] = zero if y[i] <= zero else g[i]


@cuda.jit(cache=True)
def gelu_forward_elements(x, y):
    r"""$y = x\, \Phi(x)$, $\Phi(x) = (1 + \operatorname{erf}(x / \sqrt 2)) / 2$ (the exact GELU).
    Must equal `ops.activation.GELU.forward` with `approximate="none"`."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    half = x.dtype.type(0.5)
    one = x.dtype.type(1)
    inv_sqrt2 = x.dtype.type(INV_SQRT2)
    for i in range(start, x.shape[0], stride):
        v = x[i]
        y[i] = v * (half * (one + math.erf(v * inv_sqrt2)))


@cuda.jit(cache=True)
def gelu_backward_elements(g, x, dx):
    r"""$dx = g\, (\Phi(x) + x\, \varphi(x))$, $\varphi(x) = \exp(-x^2 / 2) / \sqrt{2 \pi}$.  Must equal
    `ops.activation.GELU.backward` with `approximate="none"`."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    half = x.dtype.type(0.5)
    one = x.dtype.type(1)
    inv_sqrt2 = x.dtype.type(INV_SQRT2)
    inv_sqrt_2pi = x.dtype.type(INV_SQRT_2PI)
    for i in range(start, x.shape[0], stride):
        v = x[i]
        cdf = half * (one + math.erf(v * inv_sqrt2))
        pdf = math.exp(-half * v * v) * inv_sqrt_2pi
        dx[i] = g[i] * (cdf + v * pdf)


@cuda.jit(cache=True)
def dropout_elements(x, keep, scale, y):
    r"""$y = x \cdot \mathrm{keep} \cdot \mathrm{scale}$ (inverted dropout; `keep` is bool).  Must equal
    `ops.dropout.Dropout`'s forward, and its backward when $x$ is the gradient."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    zero = x.dtype.type(0)
    for i in range(start, x.shape[0], stride):
        y[i] = x[i] * scale if keep[i] else zero


# --------------------------------------------------------------------------- embedding backward
@cuda.jit(cache=True)
def embedding_backward_rows(order, starts, dout, dweight):
    r"""$d\mathrm{weight}[v, :] = \sum_{n:\ \mathrm{ids}_n = v} d\mathrm{out}[n, :]$, added in
    increasing $n$.  Must equal `ops.embedding.Embedding.backward` (a scatter-add).

    `order` is the positions sorted by id (a stable sort: equal ids keep increasing $n$) and
    positions `starts[v] .. starts[v + 1]` of it hold id $v$.  Each thread owns one (v, column) and
    sums its rows in order: no atomics, so the result is the same on every run.
    Grid: `(V, column blocks)`."""
    v = cuda.blockIdx.x
    d = cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.x
    if d >= dout.shape[1]:
        return
    s = dout.dtype.type(0)
    for k in range(starts[v], starts[v + 1]):
        s += dout[order[k], d]
    dweight[v, d] = s
