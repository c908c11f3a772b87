"""The CPU kernels: Numba loops over NumPy arrays, one fused pass where NumPy makes several.

Each public function follows the contract in kernels/__init__.py: it allocates its results and
calls one compiled loop (`_name`), compiled twice: parallel over rows, and serial for small work.
The loops read like llm.c's C: an outer loop over rows (`prange`: in the parallel compilation rows
are split over Numba's threads), inner loops over a row, sums kept in float64
accumulators named as in the reference op's derivation.  Each row is computed by one thread from
start to end, so the results do not depend on the number of threads; the sums over rows (a
layernorm's dweight) are taken over a fixed number of row blocks, added up in order.

Compiled code is cached on disk (`cache=True`): the first run compiles each kernel for each dtype
(a few seconds in all), later runs load it.  `fastmath` allows only reassociation and fused
multiply-add (so that the compiler can vectorise the row sums); infinities and NaNs keep their
meaning (a masked score is `-inf`).

A kernel that fails to compile raises kernels.KernelError naming it and the way to run the
reference ops instead.
"""

from __future__ import annotations

import contextlib
import math
import types

import numpy as np
from numba import carray, njit, prange
from numba.core import types as nb_types
from numba.core.errors import NumbaError
from numba.extending import intrinsic

from . import compile_error, thread_count

_FAST = {"reassoc", "contract"}
_BLOCKS = 16  # row blocks of a sum over rows (dweight, dbias): fixed, so sums never depend on the thread count
# Below this many elements a kernel runs its serial compilation on the calling thread.  Numba's
# threads are a second pool beside OpenBLAS's, whose threads keep spinning for a while after each
# product: a parallel kernel right after a GEMM shares the cores with them and waits for its
# slowest thread, so only large work is worth splitting (docs/results.md, "Speed", has the
# timings behind this threshold).
_PARALLEL_MIN = 1 << 22


class _Loop:
    """One loop compiled twice: `parallel` splits its prange over Numba's threads, `serial` runs
    it as a plain range on the calling thread (no thread pool to start and join)."""

    __slots__ = ("parallel", "serial")

    def __init__(self, fn, **options):
        # error_model="numpy": x / 0.0 is inf or NaN, as in NumPy (a fully masked row's softmax is
        # NaN), where Numba's default for serial code would raise ZeroDivisionError.  nogil: the loop
        # runs without Python's lock, so that threads of kernels/cpu_threads.py run at once.
        options = dict(options, cache=True, error_model="numpy", nogil=True)
        self.parallel = njit(parallel=True, **options)(fn)
        # A copy of the function under its own name: Numba's on-disk cache is keyed by the name,
        # not by the compile options, so the two compilations must not share one.
        serial = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "_serial", fn.__defaults__)
        serial.__qualname__ = fn.__qualname__ + "_serial"
        self.serial = njit(**options)(serial)


def _jit(fn):
    return _Loop(fn, fastmath=_FAST)


# > 0 inside serial_kernels(): every kernel runs its serial compilation.  Process-wide on purpose:
# the worker threads of an op that splits its work (cpu_threads.py) must see it; another thread's
# kernels meanwhile run serially too (slower, the same results).
_serial_only = 0


@contextlib.contextmanager
def serial_kernels():
    """Inside, every kernel runs serially on its calling thread: an op that splits its own work over
    threads (kernels/cpu_threads.py) runs one part per thread, and Numba's pool is not entered from
    two threads at once.  The results are the same (each row is computed start to end by one thread)."""
    global _serial_only
    _serial_only += 1
    try:
        yield
    finally:
        _serial_only -= 1


def _run(name, loop, work, *args):
    """Call a compiled loop over `work` elements, serially when small or on one thread (the count
    tg.set_num_threads chose, made the calling thread's: thread_count.kernel_threads_here); a
    compile failure becomes a KernelError that names the kernel."""
    serial = work < _PARALLEL_MIN or _serial_only or thread_count.kernel_threads_here() == 1
    compiled = loop.serial if serial else loop.parallel
    try:
        return compiled(*args)
    except NumbaError as e:
        raise compile_error(name, e) from e


def _none_or(a, like):
    """Numba gets an empty array instead of None (one compiled version for both)."""
    return a if a is not None else np.empty(0, like.dtype)


# --------------------------------------------------------------------------- layernorm
@_jit
def _layernorm_forward(x, weight, bias, eps, y, mean, rstd):
    N, C = x.shape
    has_w, has_b = weight.shape[0] > 0, bias.shape[0] > 0
    for i in prange(N):
        # pass 1: the mean
        s = 0.0
        for j in range(C):
            s += x[i, j]
        m = s / C
        # pass 2: the (biased) variance, of x - mean
        v = 0.0
        for j in range(C):
            d = x[i, j] - m
            v += d * d
        r = 1.0 / math.sqrt(v / C + eps)
        # pass 3: xhat = (x - mean) * rstd, y = xhat * w + b
        for j in range(C):
            xhat = (x[i, j] - m) * r
            if has_w:
                xhat = xhat * weight[j]
            if has_b:
                xhat = xhat + bias[j]
            y[i, j] = xhat
        mean[i] = m
        rstd[i] = r


def layernorm_forward(x, weight, bias, eps):
    """Reference: ops.layernorm.LayerNorm.forward.  x (N, C) -> y (N, C), mean (N,), rstd (N,)."""
    y = np.empty_like(x)
    mean = np.empty(x.shape[0], x.dtype)
    rstd = np.empty(x.shape[0], x.dtype)
    w, b = _none_or(weight, x), _none_or(bias, x)
    _run("layernorm_forward", _layernorm_forward, x.size, x, w, b, float(eps), y, mean, rstd)
    return y, mean, rstd


@_jit
def _layernorm_backward(dy, x, mean, rstd, weight, dx, dweight_blocks, dbias_blocks):
    N, C = x.shape
    has_w = weight.shape[0] > 0
    nblocks = dweight_blocks.shape[0]
    for blk in prange(nblocks):
        for i in range(blk * N // nblocks, (blk + 1) * N // nblocks):
            m, r = mean[i], rstd[i]
            # pass 1: mean(dxhat) and mean(dxhat * xhat), dxhat = dy * w; this block's dbias, dweight
            sum_dxhat = 0.0
            sum_dxhat_xhat = 0.0
            for j in range(C):
                xhat = (x[i, j] - m) * r
                dxhat = dy[i, j] * weight[j] if has_w else dy[i, j]
                sum_dxhat += dxhat
                sum_dxhat_xhat += dxhat * xhat
                if has_w:
                    dbias_blocks[blk, j] += dy[i, j]
                    dweight_blocks[blk, j] += dy[i, j] * xhat
            mean_dxhat = sum_dxhat / C
            mean_dxhat_xhat = sum_dxhat_xhat / C
            # pass 2: dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
            for j in range(C):
                xhat = (x[i, j] - m) * r
                dxhat = dy[i, j] * weight[j] if has_w else dy[i, j]
                dx[i, j] = r * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat)


def layernorm_backward(dy, x, mean, rstd, weight):
    """Reference: ops.layernorm.LayerNorm.backward.  -> dx (N, C), dweight (C,), dbias (C,)
    (dweight and dbias are None when weight is None)."""
    N, C = x.shape
    dx = np.empty_like(x)
    nblocks = max(1, min(_BLOCKS, N))
    blocks = (nblocks, C) if weight is not None else (nblocks, 0)
    dweight_blocks = np.zeros(blocks, np.float64)  # float64 partial sums, one row per block of rows
    dbias_blocks = np.zeros(blocks, np.float64)
    _run(
        "layernorm_backward", _layernorm_backward, x.size, dy, x, mean, rstd, _none_or(weight, x), dx,
        dweight_blocks, dbias_blocks,
    )  # fmt: skip
    if weight is None:
        return dx, None, None
    return dx, dweight_blocks.sum(axis=0).astype(x.dtype), dbias_blocks.sum(axis=0).astype(x.dtype)


# --------------------------------------------------------------------------- attention softmax
@_jit
def _attention_softmax_shift(scores, scale, neg_inf, mask):
    # scale and neg_inf come in the scores' dtype, so that float32 scores stay float32; the
    # loops are branch-free (a select per element), so that the compiler vectorises them
    R, T, S = scores.shape
    has_mask = mask.shape[0] > 0
    for row in prange(R * T):
        b, t = row // T, row % T
        s = scores[b, t]  # this row of scores: overwritten by S * scale - max (-inf where masked)
        if has_mask:
            m = mask[t]
            # pass 1: the row's maximum of the scaled, masked scores
            maxval = neg_inf
            for j in range(S):
                maxval = max(maxval, s[j] * scale if m[j] else neg_inf)
            # pass 2: S * scale - max, and -inf where masked (exp then gives 0 there)
            for j in range(S):
                s[j] = s[j] * scale - maxval if m[j] else neg_inf
        else:
            maxval = neg_inf
            for j in range(S):
                maxval = max(maxval, s[j] * scale)
            for j in range(S):
                s[j] = s[j] * scale - maxval


@_jit
def _attention_softmax_normalize(e, keep, inv_keep_prob, pd):
    R, T, S = e.shape
    has_keep = keep.shape[0] > 0
    for row in prange(R * T):
        b, t = row // T, row % T
        s = e[b, t]  # this row of exp(S - max): overwritten by P
        # pass 3: the sum of e
        total = 0.0
        for j in range(S):
            total += s[j]
        # pass 4: P = e / sum(e), as e * (1 / sum(e)); Pd = P * R / keep_prob (dropout's kept entries)
        inv_total = s.dtype.type(1.0 / total)
        for j in range(S):
            s[j] = s[j] * inv_total
        if has_keep:
            r = keep[b, t]
            d = pd[b, t]
            for j in range(S):
                d[j] = s[j] * inv_keep_prob if r[j] else 0.0


def attention_softmax_forward(scores, scale, mask, keep, keep_prob):
    r"""Reference: the $S$, $P$, $P^d$ lines of `ops.attention.ScaledDotProductAttention.forward`.

    `scores` `(R, T, S)` $= q k^\top$, unscaled; overwritten by $P$, which is returned (`p` is
    `scores`).  `mask` None or bool `(T, S)`; `keep` None or bool `(R, T, S)`.  -> `(p, pd)`, `pd`
    None without `keep`.

    Three passes: the shift by each row's max (a loop), exp by NumPy, whose exp runs in SIMD
    registers (Numba's calls the C library's once per element, several times slower), and the
    normalisation with dropout (a loop).  A fully masked row is NaN, as in the reference."""
    pd = np.empty_like(scores) if keep is not None else np.empty((0, 0, 0), scores.dtype)
    mask_ = mask if mask is not None else np.empty((0, 0), np.bool_)
    keep_ = keep if keep is not None else np.empty((0, 0, 0), np.bool_)
    f = scores.dtype.type
    _run("attention_softmax_forward", _attention_softmax_shift, scores.size, scores, f(scale), f(-np.inf), mask_)
    np.exp(scores, out=scores)
    _run("attention_softmax_forward", _attention_softmax_normalize, scores.size, scores, keep_, f(1.0 / keep_prob), pd)
    return scores, (pd if keep is not None else None)


@_jit
def _attention_softmax_backward(dpd, p, keep, inv_keep_prob):
    R, T, S = p.shape
    has_keep = keep.shape[0] > 0
    for row in prange(R * T):
        b, t = row // T, row % T
        d = dpd[b, t]  # this row of dPd: overwritten by dS
        # pass 1: dP = dPd * R / keep_prob, and sum_S(dP * P)
        total = 0.0
        for j in range(S):
            dp = d[j] * keep[b, t, j] * inv_keep_prob if has_keep else d[j]
            d[j] = dp
            total += dp * p[b, t, j]
        # pass 2: dS = P * (dP - sum_S(dP * P))
        for j in range(S):
            d[j] = p[b, t, j] * (d[j] - total)


def attention_softmax_backward(dpd, p, keep, keep_prob):
    """Reference: the $dP$, $dS$ lines of `ops.attention.ScaledDotProductAttention.backward`.

    `dpd` `(R, T, S)` is overwritten by $dS$, which is returned.  `keep` None or bool `(R, T, S)`."""
    keep_ = keep if keep is not None else np.empty((0, 0, 0), np.bool_)
    f = p.dtype.type  # in p's dtype: float32 stays float32
    _run("attention_softmax_backward", _attention_softmax_backward, p.size, dpd, p, keep_, f(1.0 / keep_prob))
    return dpd


# --------------------------------------------------------------------------- cross-entropy
# As the attention softmax: the loops around the exponentials are Numba's, the exponentials
# NumPy's (SIMD), in the logits' dtype as in the reference.
@_jit
def _cross_entropy_shift(logits, shifted, lse):
    N, C = logits.shape
    for i in prange(N):
        x, out = logits[i], shifted[i]  # this row, and its x - max
        # pass 1: the row's maximum (a NaN is never picked: it makes its exp, and so the loss, NaN)
        maxval = x[0] if C > 0 else x.dtype.type(0)
        for j in range(C):
            maxval = x[j] if x[j] > maxval else maxval
        # pass 2: x - max
        for j in range(C):
            out[j] = x[j] - maxval
        lse[i] = maxval  # the max, for the next loop


@_jit
def _cross_entropy_losses(logits, e, targets, ignore_index, losses, lse):
    N, C = logits.shape
    for i in prange(N):
        x, ex = logits[i], e[i]  # this row, and its exp(x - max)
        # logsumexp = max + log(sum exp(x - max)), the sum in float64; lse holds the max
        total = 0.0
        for j in range(C):
            total += ex[j]
        lse[i] = lse[i] + math.log(total)
        # loss = logsumexp - x[target], 0 where the target is ignored
        t = targets[i]
        losses[i] = 0.0 if t == ignore_index else lse[i] - x[t]


def cross_entropy_forward(logits, targets, ignore_index):
    """Reference: ops.cross_entropy.CrossEntropy.forward (reduction "none").  -> losses (N,), lse (N,).

    Three passes: x - max per row (a loop), exp by NumPy, then each row's logsumexp and loss (a
    loop).  A row holding NaN, or +inf, gives NaN, as in the reference."""
    losses = np.empty(logits.shape[0], logits.dtype)
    lse = np.empty(logits.shape[0], logits.dtype)
    e = np.empty_like(logits)
    _run("cross_entropy_forward", _cross_entropy_shift, logits.size, logits, e, lse)
    np.exp(e, out=e)
    _run(
        "cross_entropy_forward", _cross_entropy_losses, logits.size, logits, e, targets, int(ignore_index), losses, lse
    )  # fmt: skip
    return losses, lse


@_jit
def _cross_entropy_grad(p, targets, ignore_index, gscale):
    N, C = p.shape
    for i in prange(N):
        row = p[i]  # softmax(x) = exp(x - logsumexp) of this row: overwritten by its gradient
        t = targets[i]
        if t == ignore_index:
            for j in range(C):
                row[j] = 0.0
            continue
        # dx = (softmax(x) - onehot(t)) * gscale
        g = gscale[i]
        for j in range(C):
            row[j] = row[j] * g
        row[t] -= g


def cross_entropy_backward(logits, lse, targets, ignore_index, gscale):
    r"""Reference: `ops.cross_entropy.CrossEntropy.backward`.  `gscale` `(N,)`: each row's upstream factor.

    $\operatorname{softmax}(x) = \exp(x - \operatorname{logsumexp})$ by NumPy (its SIMD exp), then one
    loop makes it the gradient."""
    dlogits = np.subtract(logits, lse[:, None])
    np.exp(dlogits, out=dlogits)
    _run(
        "cross_entropy_backward", _cross_entropy_grad, logits.size, dlogits, targets, int(ignore_index),
        gscale.astype(logits.dtype, copy=False),
    )  # fmt: skip
    return dlogits


# --------------------------------------------------------------------------- AdamW
def _adamw_step(param, grad, exp_avg, exp_avg_sq, decay, one_minus_beta1, beta2, one_minus_beta2,
                neg_step_size, bias_correction2_sqrt, eps):  # fmt: skip
    # One pass over the flat arrays, each element in torch's order of operations (its scalars
    # already in the arrays' dtype, so float32 stays float32 as in torch's CPU path).
    for i in prange(param.shape[0]):
        g = grad[i]
        p = param[i] * decay  # p * (1 - lr * wd)
        m = exp_avg[i] + (g - exp_avg[i]) * one_minus_beta1  # lerp: m + (1 - b1) * (g - m)
        v = exp_avg_sq[i] * beta2 + g * one_minus_beta2 * g  # v * b2 + ((1 - b2) * g) * g
        denom = math.sqrt(v) / bias_correction2_sqrt + eps
        param[i] = p + m * neg_step_size / denom  # p + (-step_size * m) / denom
        exp_avg[i] = m
        exp_avg_sq[i] = v


_adamw_step = _Loop(_adamw_step)  # no fastmath: torch rounds every operation, so must we


def adamw_step(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps, weight_decay, step):
    """Reference: optim.adamw.adamw_update_.  In place on 1-D arrays of one dtype."""
    f = param.dtype.type  # the scalars in the arrays' dtype: a float64 scalar would widen float32 math
    _run(
        "adamw_step", _adamw_step, param.size, param, grad, exp_avg, exp_avg_sq, f(1 - lr * weight_decay), f(1 - beta1),
        f(beta2), f(1 - beta2), f(-lr / (1 - beta1**step)), f((1 - beta2**step) ** 0.5), f(eps),
    )  # fmt: skip


# AdamW on a list of parameters, each in its own array (PyTorch's multi-tensor apply: a table of
# the tensors' addresses).  The moments and gradients are flat arrays over the list; the work is
# cut into tiles of at most _TILE elements of one parameter, so that a large list splits over the
# threads with every element computed as _adamw_step computes it.
_TILE = 1 << 16


@intrinsic
def _pointer(typingctx, address, like):
    """A pointer to `like`'s dtype at `address` (an int64 from param_table)."""
    sig = nb_types.CPointer(like.dtype)(address, like)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))

    return sig, codegen


def _adamw_step_params(addresses, offsets, tiles, t0, t1, grad, exp_avg, exp_avg_sq, decay, one_minus_beta1, beta2,
                       one_minus_beta2, neg_step_size, bias_correction2_sqrt, eps):  # fmt: skip
    # Tiles t0..t1-1, each (k, lo, hi): elements lo..hi-1 of parameter k, whose array is at
    # addresses[k] and whose part of the flat arrays starts at offsets[k].  Each element as in
    # _adamw_step, line for line.
    for t in prange(t0, t1):
        k, lo, hi = tiles[t, 0], tiles[t, 1], tiles[t, 2]
        a, b = offsets[k] + lo, offsets[k] + hi  # the tile's part of the flat arrays
        param = carray(_pointer(addresses[k], grad), offsets[k + 1] - offsets[k])[lo:hi]
        gs, ms, vs = grad[a:b], exp_avg[a:b], exp_avg_sq[a:b]
        for i in range(hi - lo):  # (slices indexed from 0: a loop the compiler vectorises)
            g = gs[i]
            p = param[i] * decay
            m = ms[i] + (g - ms[i]) * one_minus_beta1
            v = vs[i] * beta2 + g * one_minus_beta2 * g
            denom = math.sqrt(v) / bias_correction2_sqrt + eps
            param[i] = p + m * neg_step_size / denom
            ms[i] = m
            vs[i] = v


_adamw_step_params = _Loop(_adamw_step_params)  # no fastmath, as _adamw_step


def param_table(params, tile=_TILE):
    """What adamw_step_params needs of a list of parameter arrays (C-contiguous, writable, one
    dtype): their addresses, their parts' offsets in the flat arrays, and the tiles.  The addresses
    are valid while the arrays live: the caller holds them as long as it uses the table."""
    sizes = [p.size for p in params]
    offsets = np.zeros(len(params) + 1, np.int64)
    offsets[1:] = np.cumsum(sizes)
    tiles, first_tile = [], [0]
    for k, n in enumerate(sizes):
        tiles.extend((k, lo, min(lo + tile, n)) for lo in range(0, n, tile))
        first_tile.append(len(tiles))
    addresses = np.array([p.ctypes.data for p in params], np.int64)
    return addresses, offsets, np.array(tiles, np.int64).reshape(-1, 3), first_tile


def adamw_step_params(table, first, end, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps, weight_decay, step):
    """Reference: ops.adamw.AdamWParamsUpdate.  adamw_step on parameters first..end-1 of a
    `param_table`, each in place in its own array, with their parts of the flat `grad`, `exp_avg` and
    `exp_avg_sq` (1-D arrays of the parameters' dtype over the whole table)."""
    addresses, offsets, tiles, first_tile = table
    f = grad.dtype.type  # the scalars in the arrays' dtype, as adamw_step
    _run(
        "adamw_step_params", _adamw_step_params, int(offsets[end] - offsets[first]), addresses, offsets, tiles,
        first_tile[first], first_tile[end], grad, exp_avg, exp_avg_sq, f(1 - lr * weight_decay), f(1 - beta1),
        f(beta2), f(1 - beta2), f(-lr / (1 - beta1**step)), f((1 - beta2**step) ** 0.5), f(eps),
    )  # fmt: skip


# --------------------------------------------------------------------------- elementwise
@_jit
def _relu_forward(x, y):
    for i in prange(x.shape[0]):
        y[i] = 0.0 if x[i] < 0 else x[i]  # NaN stays NaN, as in the reference and PyTorch


def relu_forward(x):
    r"""Reference: `ops.activation.ReLU.forward`.  $y = \max(x, 0)$."""
    y = np.empty_like(x)
    _run("relu_forward", _relu_forward, x.size, x.reshape(-1), y.reshape(-1))
    return y


@_jit
def _relu_backward(g, y, dx):
    for i in prange(g.shape[0]):
        dx[i] = 0.0 if y[i] <= 0 else g[i]  # a NaN input passes g on, as in the reference


def relu_backward(g, y):
    r"""Reference: `ops.activation.ReLU.backward`.  $dx = 0$ where $y \le 0$, else $g$ (NaN inputs pass
    $g$ on)."""
    dx = np.empty_like(g)
    _run("relu_backward", _relu_backward, g.size, g.reshape(-1), y.reshape(-1), dx.reshape(-1))
    return dx


_SQRT_HALF = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


@_jit
def _gelu_forward(x, y):
    for i in prange(x.shape[0]):
        cdf = 0.5 * (1.0 + math.erf(x[i] * _SQRT_HALF))  # Phi(x)
        y[i] = x[i] * cdf


def gelu_forward(x):
    r"""Reference: `ops.activation.GELU.forward` (`approximate="none"`).  $y = x\, \Phi(x)$."""
    y = np.empty_like(x)
    _run("gelu_forward", _gelu_forward, x.size, x.reshape(-1), y.reshape(-1))
    return y


@_jit
def _gelu_backward(g, x, dx):
    for i in prange(x.shape[0]):
        cdf = 0.5 * (1.0 + math.erf(x[i] * _SQRT_HALF))  # Phi(x)
        pdf = math.exp(-0.5 * x[i] * x[i]) * _INV_SQRT_2PI  # phi(x)
        dx[i] = g[i] * (cdf + x[i] * pdf)  # dz/dx = Phi(x) + x phi(x)


def gelu_backward(g, x):
    """Reference: ops.activation.GELU.backward (approximate="none")."""
    dx = np.empty_like(g)
    _run("gelu_backward", _gelu_backward, g.size, g.reshape(-1), x.reshape(-1), dx.reshape(-1))
    return dx


@_jit
def _dropout_forward(x, keep, scale, y):
    for i in prange(x.shape[0]):
        y[i] = x[i] * keep[i] * scale


def dropout_forward(x, keep, scale):
    r"""Reference: `ops.dropout.Dropout`.  $y = x \cdot \mathrm{keep} \cdot \mathrm{scale}$ (its backward:
    the same call on $g$)."""
    return dropout_forward_into(x, keep, scale, np.empty_like(x))


def dropout_forward_into(x, keep, scale, out):
    """dropout_forward written into `out` (C-contiguous, like x): a part of a large dropout's rows
    (cpu_ops.DropoutOnThreads).  Returns out."""
    scale = x.dtype.type(scale)  # in x's dtype: float32 stays float32
    _run("dropout_forward", _dropout_forward, x.size, x.reshape(-1), keep.reshape(-1), scale, out.reshape(-1))
    return out


@njit(cache=True, nogil=True)
def _keep_from_halves(first, halves, threshold, keep):
    # keep[i] = (u_i >= p), u_i = (h_i >> 8) * 2**-24: as an integer compare, (h_i >> 8) >= threshold
    start = 0
    if first >= 0:  # the half the generator kept from its last 32-bit draw comes first
        keep[0] = (np.uint32(first) >> 8) >= threshold
        start = 1
    for i in range(keep.size - start):
        keep[start + i] = (halves[i] >> 8) >= threshold


def _keep_threshold(p):
    r"""$u \ge p$ for $u = (h \gg 8) \cdot 2^{-24}$ and $p$ in float32 is $(h \gg 8) \ge$ this."""
    return np.uint32(math.ceil(float(np.float32(p)) * 2**24))


def keep_mask(rng, shape, p):
    r"""Reference: `ops.dropout.keep_mask`, bit for bit: `rng.uniform(shape, float32) >= p`, without
    making the floats.  NumPy's `Generator.random(float32)` takes each uniform from the next 32-bit
    half $h$ of the PCG64 stream (the low half of a 64-bit word first; the high half is kept in the
    bit generator's state for the next draw) as $u = (h \gg 8) \cdot 2^{-24}$; $p$ is compared in
    float32; so $u \ge p$ is $(h \gg 8) \ge \lceil \mathrm{float32}(p) \cdot 2^{24}\rceil$, on the raw
    words, and the state is left as `Generator.random` would leave it."""
    bits = rng.generator.bit_generator
    n = math.prod(shape)
    keep = np.empty(n, dtype=np.bool_)
    if n == 0:
        return keep.reshape(shape)
    state = bits.state
    first = state["uinteger"] if state["has_uint32"] else -1
    need = n - (first >= 0)  # halves still to draw
    halves = bits.random_raw((need + 1) // 2).view(np.uint32)  # little-endian: low half, then high
    _keep_from_halves(first, halves, _keep_threshold(p), keep)
    state = bits.state
    state["has_uint32"], state["uinteger"] = (1, int(halves[-1])) if need % 2 else (0, 0)
    bits.state = state
    return keep.reshape(shape)


class KeepRows:
    """keep_mask(rng, (rows, n), p), bit for bit, drawn a range of rows at a time: by the threads of
    kernels/cpu_threads.py, each for its own part of an attention's rows, in any order.

    Element e of the mask takes half e of the stream (after the half the generator held, if it held
    one), so rows r0:r1 take the words from (r0 * n - held) // 2 on: a copy of the generator advanced
    there (PCG64.advance, as if that many words had been drawn) draws them.  The generator itself
    is left at once as keep_mask would leave it, so whatever it draws next is the same either way."""

    def __init__(self, rng, rows, n, p):
        bits = rng.generator.bit_generator
        self.n = n = int(n)
        rows = int(rows)
        self.threshold = _keep_threshold(p)
        self.state = bits.state  # before the draw: every range starts from it
        self.first = self.state["uinteger"] if self.state["has_uint32"] else -1
        self.held = int(self.first >= 0)
        if rows * n == 0:  # keep_mask draws nothing
            return
        need = rows * n - self.held  # halves to draw
        words = (need + 1) // 2
        last = self._words(words - 1, words)[1] if need % 2 else 0  # the high half the generator keeps
        bits.advance(words)
        state = bits.state
        state["has_uint32"], state["uinteger"] = (1, int(last)) if need % 2 else (0, 0)
        bits.state = state

    def _words(self, w0, w1):
        """Words w0:w1 of the draw, as 32-bit halves (little-endian: low half, then high)."""
        g = np.random.PCG64(0)
        g.state = self.state
        g.advance(w0)
        return g.random_raw(w1 - w0).view(np.uint32)

    def rows(self, r0, r1, out=None):
        """Rows r0:r1 of the mask, (r1 - r0, n) bool (written into `out`, C-contiguous, when given)."""
        e0, e1 = int(r0) * self.n, int(r1) * self.n  # their elements (PCG64.advance takes Python ints)
        keep = np.empty(e1 - e0, dtype=np.bool_) if out is None else out.reshape(-1)
        first = self.first if e0 == 0 else -1  # element 0 takes the held half
        h0, h1 = e0 + (first >= 0) - self.held, e1 - self.held  # the halves of the others
        if h1 > h0:
            w0 = h0 // 2
            halves = self._words(w0, (h1 + 1) // 2)[h0 - 2 * w0 : h1 - 2 * w0]
        else:
            halves = np.empty(0, np.uint32)
        if keep.size:
            _keep_from_halves(first, halves, self.threshold, keep)
        return keep.reshape(r1 - r0, self.n)


# --------------------------------------------------------------------------- embedding
@_jit
def _embedding_backward(ids, dout, dweight, nblocks):
    N, D = dout.shape
    # Columns are split over the threads: each thread adds every row of its columns, in row
    # order (deterministic, no two threads write the same place).
    for blk in prange(nblocks):
        lo, hi = blk * D // nblocks, (blk + 1) * D // nblocks
        for i in range(N):
            v = ids[i]
            for j in range(lo, hi):
                dweight[v, j] += dout[i, j]  # dW[ids[i]] += dout[i]


def embedding_backward(ids, dout, num_embeddings):
    r"""Reference: `ops.embedding.Embedding.backward`.  $dW_v = \sum_{i:\ \mathrm{ids}_i = v} d\mathrm{out}_i$."""
    dweight = np.zeros((num_embeddings, dout.shape[1]), dout.dtype)
    nblocks = max(1, min(_BLOCKS, dout.shape[1] // 16))
    _run("embedding_backward", _embedding_backward, dout.size, ids, dout, dweight, nblocks)
    return dweight
