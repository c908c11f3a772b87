r"""nn.Linear's products on the CPU's threads: each thread its own block of rows, on one BLAS thread.

A product the BLAS library splits over its own threads leaves those threads spinning for a while
after it returns (OpenBLAS's wait before they sleep is $2^{28}$ CPU cycles, about 0.1 s, unless
`OPENBLAS_THREAD_TIMEOUT` says less).  With as many threads as cores, the work that comes next, the
attention's parts (kernels/cpu_threads.py) and the fused kernels' parallel loops, shares its cores
with them: in the `large` step each attention ran 35-40 ms slower forward and backward right after a
product than alone, and the layer norms and ReLUs about twice as slow (benchmarks/NOTES-timing.md).
Here a large product runs in blocks of rows, one per thread, each block on one BLAS thread, as the
attention's parts do (`cpu_threads.run_parts`): the same GEMM rate, and the library's own threads are
never woken, so nothing spins after it.

The math is the reference's (ops/linear.py).  The blocks split the outputs, never a sum: each
output element is one thread's dot product, as in the single call (the BLAS library may block a
smaller matrix's sums otherwise, so the two agree to rounding, and in practice to the bit at the
`large` model's sizes):

$$
\begin{aligned}
Y &= X W^\top + b && \text{blocks of } Y\text{'s rows (positions)} \\
dX &= G\, W && \text{blocks of } dX\text{'s rows (positions)} \\
dW &= G^\top X && \text{blocks of } dW\text{'s rows (output features): } G_{:, o}^\top X \\
db &= \mathbf{1}^\top G && \text{blocks of } db\text{'s entries (output features)}
\end{aligned}
$$

Products under `MIN_SPLIT_FLOPS` (the `small` model's), other dtypes, or one thread: the reference
runs as it is.
"""

from __future__ import annotations

import numpy as np

from ..ops import linear as ref_linear
from . import cpu_threads
from .functions import _FLOATS

MIN_SPLIT_FLOPS = 1 << 26  # 64M: smaller products run faster on one thread than on several (gpt/threads.py)


class Linear(ref_linear.Linear):
    __slots__ = ()
    replaces = ref_linear.Linear
    threads = cpu_threads  # thread_parts(rows), even_split(n, count), run_parts(fn, parts)

    @staticmethod
    def accepts(x, weight, bias=None):
        """Every input: forward and backward decide by size and dtype whether to split."""
        return True

    def _parts(self, n, k, out, *arrays):
        """Blocks of the `n` rows, one per thread, for a product of `(n, k)` by `(k, out)` of one kernel
        dtype worth splitting; one block (the reference runs) otherwise."""
        if 2 * n * k * out < MIN_SPLIT_FLOPS:  # first: the `small` model's products stop here
            return [slice(0, n)]
        dtype = arrays[0].dtype
        if dtype not in _FLOATS or any(a.dtype != dtype for a in arrays):
            return [slice(0, n)]
        return self.threads.thread_parts(n)

    def forward(self, x, weight, bias=None):
        x2 = x.reshape(-1, x.shape[-1])  # (N, in)
        n, k = x2.shape
        out = weight.shape[0]
        parts = self._parts(n, k, out, x2, weight, *(() if bias is None else (bias,)))
        if len(parts) == 1:
            return super().forward(x, weight, bias)
        y = np.empty((n, out), dtype=x2.dtype)

        def rows(part):  # Y = X W^T + b, these rows
            np.matmul(x2[part], weight.T, out=y[part])
            if bias is not None:
                y[part] += bias

        self.threads.run_parts(rows, parts)
        self.save_for_backward(x2, weight, x.shape)
        return y.reshape(x.shape[:-1] + (out,))  # (..., out)

    def backward(self, g):
        x2, weight, shape = self.saved
        g2 = g.reshape(-1, g.shape[-1])  # (N, out)
        n, k = x2.shape
        out = weight.shape[0]
        parts = self._parts(n, k, out, g2, x2, weight)
        if len(parts) == 1:
            return super().backward(g)
        dx = np.empty((n, k), dtype=g2.dtype) if self.needs_grad(0) else None
        dw = np.empty((out, k), dtype=g2.dtype) if self.needs_grad(1) else None
        db = np.empty(out, dtype=g2.dtype) if self.needs_grad(2) else None
        ones = np.ones(n, dtype=g2.dtype)
        features = self.threads.even_split(out, len(parts))  # each thread's output features

        def blocks(i):  # this thread's rows of dX and its output features' rows of dW and entries of db
            rows, cols = parts[i], features[i]
            if dx is not None:
                np.matmul(g2[rows], weight, out=dx[rows])  # dX = G W
            if dw is not None:
                np.matmul(g2[:, cols].T, x2, out=dw[cols])  # dW = G^T X
            if db is not None:
                np.matmul(ones, g2[:, cols], out=db[cols])  # db = 1^T G

        self.threads.run_parts(blocks, list(range(len(parts))))
        return (dx.reshape(shape) if dx is not None else None), dw, db
