"""The kernel ops: the reference ops (tensorgrad/ops/) with their math done by a device's kernel
functions (kernels/cpu.py or kernels/cuda.py, the contract in kernels/__init__.py).

Each class here names the reference op it `replaces` and says in `accepts(...)`, given the
arguments of the reference's forward, whether it takes them: the engine asks once, before forward
(autograd.Function.apply), and runs the reference op for inputs outside a kernel's contract
(integer dtypes, float16, an attention mask that is not (T, S), batch dims that broadcast, GELU's
tanh form).  A kernel op prepares arrays for the contract (fold batch axes into rows, make inputs
contiguous, draw dropout masks from the same generator as the reference) and leaves the math to
the kernels; GEMMs stay with the array library (BLAS, cuBLAS).

The kernel functions are the class attribute `kernels`: kernels/cpu_ops.py and
kernels/cuda_ops.py make these classes' subclasses for their device with `bind`, which sets it to
the device's module.
"""

from __future__ import annotations

import math
import operator

from .. import autograd, backend
from ..ops import activation as ref_activation
from ..ops import adamw as ref_adamw
from ..ops import attention as ref_attention
from ..ops import cross_entropy as ref_cross_entropy
from ..ops import dropout as ref_dropout
from ..ops import embedding as ref_embedding
from ..ops import layernorm as ref_layernorm
from ..ops import softmax as ref_softmax

_FLOATS = (backend.float32, backend.float64)
_writeable = operator.attrgetter("flags.writeable")  # read in C: AdamWParamsUpdate checks each parameter every step


def _contiguous(a):
    """a itself when C-contiguous, else a C-contiguous copy (keeps 0-d arrays 0-d, which
    ascontiguousarray does not)."""
    return a if a.flags.c_contiguous else a.copy()


def _fits(*arrays) -> bool:
    """Every array floating point of a kernel dtype (float32, float64), all one dtype."""
    return all(a.dtype == arrays[0].dtype for a in arrays) and arrays[0].dtype in _FLOATS


class _KernelOp:
    """Mixin of the kernel ops: `replaces` is the reference op, `kernels` the device's kernel module
    (set by `bind`)."""

    __slots__ = ()
    replaces = None
    kernels = None


def bind(kernels, module: str, *ops) -> tuple:
    """The kernel ops `ops` on one device: for each, a subclass of the same name whose `kernels` is
    the device's kernel module `kernels`, made in `module` (the caller's __name__, where it is
    assigned by that name: a pickle of an op finds its class there)."""
    made = {"__slots__": (), "__module__": module, "kernels": kernels}
    return tuple(type(op.__name__, (op,), {**made, "__qualname__": op.__name__}) for op in ops)


class LayerNorm(_KernelOp, ref_layernorm.LayerNorm):
    __slots__ = ()
    replaces = ref_layernorm.LayerNorm

    @staticmethod
    def accepts(x, weight, bias, k, eps=1e-5):
        """Both of weight and bias or neither, every array of one kernel dtype."""
        return (weight is None) == (bias is None) and _fits(x, *(a for a in (weight, bias) if a is not None))

    def forward(self, x, weight, bias, k, eps=1e-5):
        n = math.prod(x.shape[x.ndim - k :])
        x2 = _contiguous(x.reshape(-1, n))  # (rows, N)
        w = _contiguous(weight.reshape(-1)) if weight is not None else None
        b = _contiguous(bias.reshape(-1)) if bias is not None else None
        y, mean, rstd = self.kernels.layernorm_forward(x2, w, b, eps)
        self.save_for_backward(x2, mean, rstd, w, x.shape, x.shape[x.ndim - k :], eps)
        return y.reshape(x.shape)

    def backward(self, g):
        x2, mean, rstd, w, shape, norm_shape, _ = self.saved
        dy = _contiguous(g.reshape(x2.shape))
        dx, dw, db = self.kernels.layernorm_backward(dy, x2, mean, rstd, w)
        if dw is not None:
            dw, db = dw.reshape(norm_shape), db.reshape(norm_shape)
        return dx.reshape(shape), dw, db


class ScaledDotProductAttention(_KernelOp, ref_attention.ScaledDotProductAttention):
    """The GEMMs by the array library, the scale, mask, softmax and dropout by one kernel pass
    over the scores (forward), and the dropout and softmax backward by another.

    Query blocks (`query_block` rows each; 0 turns them off): where the mask leaves a block of
    query rows only a prefix of the keys (a causal mask: the keys at or before the block), the
    block's scores, softmax and products run over that prefix alone.  The keys after it are
    masked for every row of the block, so their weights P are exactly 0 and they add nothing to
    the output or to any gradient: skipping them changes no value but the order of the sums.  A
    causal mask leaves about half the (T, S) scores, and so half the attention's work, out.

    `_attend` and `_attend_backward` run these lines on any rows of the batch: the CPU's attention
    in row parts (kernels/cpu_ops.py) runs them part by part."""

    __slots__ = ()
    replaces = ref_attention.ScaledDotProductAttention
    double_backward_reason = (
        "the attention kernel keeps its dropout mask in its own form; with dropout_p > 0 differentiate "
        "twice under tg.kernels.use('reference')"
    )
    query_block = 0  # rows per query block; kernels/cpu_ops.py sets it (the blocks need the mask on the host)

    @staticmethod
    def accepts(q, k, v, mask, scale, dropout_p=0.0):
        """q, k, v of one batch shape (none broadcast) and one kernel dtype; a mask of T * S
        elements in at least 2 dims ((T, S), (1, 1, T, S), ...) or none."""
        T, S = q.shape[-2], k.shape[-2]
        if mask is not None and not (mask.ndim >= 2 and mask.size == T * S):
            return False
        return q.shape[:-2] == k.shape[:-2] == v.shape[:-2] and _fits(q, k, v)

    def _mask_and_keep(self, q, k, mask, dropout_p):
        """The mask as one contiguous `(T, S)` array (from `(1, 1, T, S)` and the like) or None, and
        the dropout keep mask as `(R, T, S)` rows or None: the reference's draw over the weights'
        shape `batch + (T, S)`, from the inputs' device's generator, so a seed gives the same masks
        on every path (this op's, the CPU's and CUDA's flash)."""
        T, S = q.shape[-2], k.shape[-2]
        if mask is not None:
            mask = _contiguous(mask.reshape(T, S))
        keep = None
        if dropout_p > 0:
            keep = self.kernels.keep_mask(backend.rng(backend.device_of(q)), q.shape[:-2] + (T, S), dropout_p)
            keep = keep.reshape(math.prod(q.shape[:-2]), T, S)  # also for an empty batch or T, S = 0
        return mask, keep

    def forward(self, q, k, v, mask, scale, dropout_p=0.0):
        T, S = q.shape[-2], k.shape[-2]
        mask, keep = self._mask_and_keep(q, k, mask, dropout_p)
        blocks = self._query_blocks(mask, T, S)
        out, saved = self._attend(q, k, v, mask, keep, scale, 1 - dropout_p, blocks)
        self.save_for_backward(q, k, v, saved, scale, 1 - dropout_p, blocks)
        return out

    def backward(self, g):
        q, k, v, saved, scale, keep_prob, blocks = self.saved
        dq, dk, dv = self._attend_backward(g, q, k, v, saved, scale, keep_prob, blocks)
        return dq, dk, dv, None

    def graph_params(self):
        """The reference's formula needs the dropout mask as an array: without dropout there is none."""
        *_, scale, keep_prob, _ = self.saved
        return (None, scale, keep_prob) if keep_prob == 1 else None

    # ------------------------------------------------------------------ one part of the rows
    def _attend(self, q, k, v, mask, keep, scale, keep_prob, blocks):
        """The forward's lines on `q, k, v` `(..., T, d)` (the whole batch, or a part of its rows) and the
        keep mask `(..., T, S)` or None -> (`out` `(..., T, dv)`, what backward needs)."""
        xp = self.xp
        if blocks is not None:
            return self._blocked_forward(q, k, v, mask, scale, keep, keep_prob, blocks)
        batch, T, S = q.shape[:-2], q.shape[-2], k.shape[-2]
        R = math.prod(batch)
        keep = keep.reshape(R, T, S) if keep is not None else None
        scores = xp.matmul(q, k.swapaxes(-1, -2)).reshape(R, T, S)  # q k^T, unscaled
        p, pd = self.kernels.attention_softmax_forward(scores, scale, mask, keep, keep_prob)
        weights = (pd if pd is not None else p).reshape(batch + (T, S))
        out = xp.matmul(weights, v)  # Pd v
        return out, (p, weights, keep)

    def _attend_backward(self, g, q, k, v, saved, scale, keep_prob, blocks):
        """The backward's lines on `g, q, k, v` `(..., T, d)`, as `_attend` had them -> `(dq, dk, dv)`."""
        if blocks is not None:
            return self._blocked_backward(g, q, k, v, *saved, scale, keep_prob, blocks)
        xp = self.xp
        p, pd, keep = saved
        dv = xp.matmul(pd.swapaxes(-1, -2), g)  # Pd^T g
        dpd = xp.matmul(g, v.swapaxes(-1, -2)).reshape(p.shape)  # g v^T
        ds = self.kernels.attention_softmax_backward(dpd, p, keep, keep_prob).reshape(pd.shape)
        dq = xp.matmul(ds, k)
        dq *= scale  # dS k * scale
        dk = xp.matmul(ds.swapaxes(-1, -2), q)
        dk *= scale  # dS^T q * scale
        return dq, dk, dv

    # ------------------------------------------------------------------ query blocks
    def _query_blocks(self, mask, T, S):
        """`[(t0, t1, n)]`: the query rows `t0:t1` of each block and `n`, the number of leading keys any
        of its rows may attend; None where the blocks would leave out less than a fifth of the scores
        (no mask, a short sequence, a mask that lets the last keys be seen early)."""
        if not self.query_block or mask is None or T <= self.query_block or S == 0:
            return None
        # per row, 1 + the position of its last attended key (S for a row that attends none: its
        # softmax is NaN over all S keys, as in the reference)
        last = S - self.xp.argmax(mask[:, ::-1], axis=1)
        bounds = [*range(0, T, self.query_block), T]
        blocks = [(t0, t1, int(last[t0:t1].max())) for t0, t1 in zip(bounds, bounds[1:])]
        if sum((t1 - t0) * n for t0, t1, n in blocks) > 0.8 * T * S:
            return None
        return blocks

    def _blocked_forward(self, q, k, v, mask, scale, keep, keep_prob, blocks):
        r"""The forward's lines per query block, each over its $n$ keys:
        $S_b = q_b k_n^\top \cdot \mathrm{scale}$, masked; $P_b = \operatorname{softmax}(S_b)$;
        $P^d_b = P_b \odot R_b / \mathrm{keep\_prob}$; $\mathrm{out}_b = P^d_b v_n$."""
        xp = self.xp
        batch, R = q.shape[:-2], math.prod(q.shape[:-2])
        out = xp.empty(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
        ps, weights, keeps = [], [], []
        for t0, t1, n in blocks:
            scores = xp.matmul(q[..., t0:t1, :], k[..., :n, :].swapaxes(-1, -2)).reshape(R, t1 - t0, n)
            mask_b = _contiguous(mask[t0:t1, :n])
            keep_b = _contiguous(keep.reshape(R, *keep.shape[-2:])[:, t0:t1, :n]) if keep is not None else None
            p, pd = self.kernels.attention_softmax_forward(scores, scale, mask_b, keep_b, keep_prob)
            w = pd if pd is not None else p
            out[..., t0:t1, :] = xp.matmul(w.reshape(batch + (t1 - t0, n)), v[..., :n, :])
            ps.append(p)
            weights.append(w)
            keeps.append(keep_b)
        return out, (ps, weights, keeps)

    def _blocked_backward(self, g, q, k, v, ps, weights, keeps, scale, keep_prob, blocks):
        """The backward's lines per query block: each block adds its part of $dv$ and $dk$ (over its $n$
        keys) and writes its rows of $dq$."""
        xp = self.xp
        batch = q.shape[:-2]
        # C-ordered gradients, whatever the layout of q, k, v (k may be a transposed view of k^T):
        # each block's sums are added into them row by row
        dq = xp.empty(q.shape, dtype=q.dtype)
        dk, dv = xp.zeros(k.shape, dtype=k.dtype), xp.zeros(v.shape, dtype=v.dtype)
        for (t0, t1, n), p, w, keep_b in zip(blocks, ps, weights, keeps):
            rows = batch + (t1 - t0, n)
            g_b = g[..., t0:t1, :]
            dv[..., :n, :] += xp.matmul(w.reshape(rows).swapaxes(-1, -2), g_b)  # Pd_b^T g_b
            dpd = xp.matmul(g_b, v[..., :n, :].swapaxes(-1, -2)).reshape(p.shape)  # g_b v_n^T
            ds = self.kernels.attention_softmax_backward(dpd, p, keep_b, keep_prob).reshape(rows)
            dq_b = xp.matmul(ds, k[..., :n, :])
            dq_b *= scale
            dq[..., t0:t1, :] = dq_b  # dS_b k_n * scale
            dk_b = xp.matmul(ds.swapaxes(-1, -2), q[..., t0:t1, :])
            dk_b *= scale
            dk[..., :n, :] += dk_b  # dS_b^T q_b * scale
        return dq, dk, dv


class PackedSelfAttention(_KernelOp, ref_attention.PackedSelfAttention):
    r"""The reference op with $q$, $k^\top$ and $v$ laid out contiguously for the batched products (NumPy's
    stacked matmul of small matrices is slower on transposed views), and the heads' attention op
    taken from the kernel registry (the device's kernel where it accepts them, else the reference)."""

    __slots__ = ()
    replaces = ref_attention.PackedSelfAttention

    @staticmethod
    def accepts(qkv, mask, num_heads, scale, dropout_p=0.0):
        """Every input: the heads' attention op is dispatched again, on the heads' arrays."""
        return True

    def forward(self, qkv, mask, num_heads, scale, dropout_p=0.0):
        xp = self.xp
        B, T, three_hd = qkv.shape
        H, d = num_heads, three_hd // (3 * num_heads)
        parts = qkv.reshape(B, T, 3, H, d)
        q = _contiguous(parts[:, :, 0].transpose(0, 2, 1, 3))  # (B, H, T, d)
        k_t = _contiguous(parts[:, :, 1].transpose(0, 2, 3, 1))  # (B, H, d, T): k^T, contiguous
        v = _contiguous(parts[:, :, 2].transpose(0, 2, 1, 3))  # (B, H, T, d)
        k = k_t.swapaxes(-1, -2)
        op = autograd.dispatch(ref_attention.ScaledDotProductAttention, backend.device_of(qkv), q, k, v, mask, scale,
                               dropout_p)  # fmt: skip
        attention = op(xp)
        out = attention.forward(q, k, v, mask, scale, dropout_p)  # (B, H, T, d)
        self.save_for_backward(attention, H, d)
        return out.transpose(0, 2, 1, 3).reshape(B, T, H * d)

    def backward(self, g):
        attention, H, d = self.saved
        xp = self.xp
        B, T = g.shape[:2]
        g_heads = _contiguous(g.reshape(B, T, H, d).transpose(0, 2, 1, 3))  # (B, H, T, d)
        dq, dk, dv, _ = attention.backward(g_heads)
        dqkv = xp.empty((B, T, 3, H, d), dtype=dq.dtype)
        for i, part in enumerate((dq, dk, dv)):
            dqkv[:, :, i] = part.transpose(0, 2, 1, 3)  # (B, T, H, d)
        return dqkv.reshape(B, T, 3 * H * d), None


class Softmax(_KernelOp, ref_softmax.Softmax):
    """Softmax along the last dim: the attention softmax kernels with scale 1, no mask and no
    dropout, every row of x as one row of scores.  Other dims run the reference."""

    __slots__ = ()
    replaces = ref_softmax.Softmax

    @staticmethod
    def accepts(x, dim):
        """Along the last dim of a non-empty array of a kernel dtype."""
        return x.ndim != 0 and x.size != 0 and dim % x.ndim == x.ndim - 1 and _fits(x)

    def forward(self, x, dim):
        scores = x.copy().reshape(1, -1, x.shape[-1])  # one C-ordered copy: the kernel writes P over it
        p, _ = self.kernels.attention_softmax_forward(scores, 1.0, None, None, 1.0)
        y = p.reshape(x.shape)
        self.save_for_backward(y, dim)
        return y

    def backward(self, g):
        y, _ = self.saved
        rows = (1, -1, y.shape[-1])
        dy = g.copy().reshape(rows)  # one C-ordered copy: the kernel writes dx over it
        return self.kernels.attention_softmax_backward(dy, y.reshape(rows), None, 1.0).reshape(y.shape)


class CrossEntropy(_KernelOp, ref_cross_entropy.CrossEntropy):
    __slots__ = ()
    replaces = ref_cross_entropy.CrossEntropy

    @staticmethod
    def accepts(x, targets, reduction="mean", ignore_index=-100):
        return _fits(x)

    def forward(self, x, targets, reduction="mean", ignore_index=-100):
        x = _contiguous(x)
        targets = _contiguous(targets.astype(backend.int64, copy=False))
        losses, lse = self.kernels.cross_entropy_forward(x, targets, ignore_index)
        keep = targets != ignore_index
        count = None
        if reduction == "mean":
            count = keep.sum().astype(x.dtype)
            out = losses.sum() / count
        elif reduction == "sum":
            out = losses.sum()
        else:
            out = losses
        self.save_for_backward(x, lse, targets, keep, reduction, count, ignore_index)
        return out

    def backward(self, g):
        x, lse, targets, keep, reduction, count, ignore_index = self.saved
        xp = self.xp
        if reduction == "none":
            gscale = _contiguous(g.astype(x.dtype, copy=False))
        else:
            gscale = xp.empty(x.shape[0], x.dtype)
            gscale[...] = g / count if reduction == "mean" else g  # one factor for every row
        return self.kernels.cross_entropy_backward(x, lse, targets, ignore_index, gscale), None

    def backward_graph(self, g, z):
        """The reference's formula (ref_cross_entropy.cross_entropy_graph), from this kernel's saved
        layout."""
        x, _, targets, keep, reduction, count, _ = self.saved
        safe_t = self.xp.where(keep, targets, 0)
        return ref_cross_entropy.cross_entropy_graph(g, self.parents[0], safe_t, keep, reduction, count)


class ReLU(_KernelOp, ref_activation.ReLU):
    __slots__ = ()
    replaces = ref_activation.ReLU

    @staticmethod
    def accepts(x):
        return _fits(x)

    def forward(self, x):
        z = self.kernels.relu_forward(_contiguous(x))
        self.save_for_backward(z)
        return z

    def backward(self, g):
        (z,) = self.saved
        return self.kernels.relu_backward(_contiguous(g), z)


class GELU(_KernelOp, ref_activation.GELU):
    __slots__ = ()
    replaces = ref_activation.GELU

    @staticmethod
    def accepts(x, approximate="none"):
        """The exact (erf) form only."""
        return approximate == "none" and _fits(x)

    def forward(self, x, approximate="none"):
        x = _contiguous(x)
        self.save_for_backward(x)
        return self.kernels.gelu_forward(x)

    def backward(self, g):
        (x,) = self.saved
        return self.kernels.gelu_backward(_contiguous(g), x)

    def backward_graph(self, g, z):
        """The reference's formula (ref_activation.gelu_graph); this kernel saves only x, and takes
        only the exact form (`accepts`)."""
        return ref_activation.gelu_graph(g, self.parents[0], "none")


class Dropout(_KernelOp, ref_dropout.Dropout):
    __slots__ = ()
    replaces = ref_dropout.Dropout

    @staticmethod
    def accepts(x, p):
        return _fits(x)

    def forward(self, x, p):
        mask = self.kernels.keep_mask(backend.rng(backend.device_of(x)), x.shape, p)  # the reference's draw
        scale = 1.0 / (1.0 - p)
        self.save_for_backward(mask, scale)
        return self.kernels.dropout_forward(_contiguous(x), mask, scale)

    def backward(self, g):
        mask, scale = self.saved
        return self.kernels.dropout_forward(_contiguous(g), mask, scale)


class Embedding(_KernelOp, ref_embedding.Embedding):
    """The reference forward (a gather: no kernel needed) and the kernel backward."""

    __slots__ = ()
    replaces = ref_embedding.Embedding

    @staticmethod
    def accepts(idx, weight):
        return _fits(weight)

    def backward(self, g):
        idx, num_embeddings = self.saved
        ids = _contiguous(idx.reshape(-1).astype(backend.int64, copy=False))
        dout = _contiguous(g.reshape(-1, g.shape[-1]))
        return None, self.kernels.embedding_backward(ids, dout, num_embeddings)


class AdamWUpdate(_KernelOp, ref_adamw.AdamWUpdate):
    """The whole AdamW update in one pass of the device's adamw_step kernel."""

    __slots__ = ()
    replaces = ref_adamw.AdamWUpdate

    @staticmethod
    def accepts(p, g, m, v, **hyper):
        """Contiguous arrays of one kernel dtype."""
        return all(a.flags.c_contiguous for a in (p, g, m, v)) and _fits(p, g, m, v)

    def __call__(self, p, g, m, v, *, step, lr, beta1, beta2, eps, weight_decay):
        self.kernels.adamw_step(
            p.reshape(-1), g.reshape(-1), m.reshape(-1), v.reshape(-1), lr, beta1, beta2, eps, weight_decay, step
        )


class AdamWParamsUpdate(_KernelOp, ref_adamw.AdamWParamsUpdate):
    """A run of parameters updated in one pass of the device's adamw_step_params kernel, which reads
    and writes each parameter's own array through a table of their addresses (param_table, made
    once for the list): none of the reference's copies."""

    __slots__ = ("table",)
    replaces = ref_adamw.AdamWParamsUpdate

    @staticmethod
    def accepts(params):
        """C-contiguous, writable, aligned arrays of one kernel dtype: the kernel writes each one
        through its address."""
        return _fits(*params) and all(p.flags.c_contiguous and p.flags.writeable and p.flags.aligned for p in params)

    def __init__(self, params):
        super().__init__(params)
        self.table = self.kernels.param_table(self.params)  # valid while self.params holds the arrays

    def __call__(self, first, end, g, m, v, *, step, lr, beta1, beta2, eps, weight_decay):
        if not all(map(_writeable, self.params[first:end])):  # made read-only since the table was made
            raise ValueError("AdamW: a parameter's array is read-only (assignment destination is read-only); "
                             "give the parameter a writable array (p.data = p.data.clone())")  # fmt: skip
        self.kernels.adamw_step_params(self.table, first, end, g, m, v, lr, beta1, beta2, eps, weight_decay, step)
