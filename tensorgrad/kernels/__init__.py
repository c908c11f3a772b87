"""Fused kernels: the speed of tensorgrad, kept apart from the reference ops.

`tensorgrad/ops/` is the reference: plain array code that follows each derivation line for line
and runs on every device.  This package holds the same math as fused loops, one module per device:

```
kernels/cpu.py     Numba (@njit, parallel over rows, cache=True), on NumPy arrays
                   (kernels/cpu_attention.py: the packed attention of short sequences, a CPU
                   path of its own, called by cpu_ops.py and outside this contract;
                   kernels/cpu_gpt.py: the lecture's GPT fused by hand, each block's forward
                   and backward one compiled function, run as one op by kernels/fused_gpt.py
                   where gpt/fused.py asks for it, also outside this contract)
kernels/cuda.py    Numba-CUDA, on CuPy arrays (through __cuda_array_interface__, launched on
                   CuPy's current stream); imported only when a CUDA tensor meets a kernel op
```

`kernels/functions.py` holds the kernel ops: subclasses of the reference ops (a `LayerNorm` whose
forward and backward call `kernels.layernorm_forward` / `_backward`, ...), each naming the op it
`replaces` and the inputs it `accepts`; `kernels/cpu_ops.py` and `kernels/cuda_ops.py` bind them to
their device's kernel module, beside the device's own paths of some ops (each a kernel op of its
own, asked before the general one).  They reach the engine through its kernel registry
(kernel_registry.py, "the kernel seam"): this package registers a loader per device with the
engine, which runs it on that device's first op, so a device's kernels are imported (and compiled)
only when it is used, and `Function.apply` then runs the first of an op's kernel ops that accepts
the inputs in place of its reference.  GEMMs stay with BLAS (NumPy) and cuBLAS (CuPy).
kernels/thread_count.py keeps the CPU kernels' thread count (tg.set_num_threads).

The switch, one for the whole library (the default is "kernels"):

```
TENSORGRAD_KERNELS=reference python ...        # the environment, read at import
tg.kernels.use("reference")                    # from Python; use("kernels") switches back
with tg.kernels.reference(): ...               # for a block
"strict" always runs the reference (Numba cannot take its guarded arrays).
```

A kernel that fails to compile raises KernelError naming the kernel and the switch: there is no
silent fallback to the reference.  Both paths take dropout masks from `backend.rng(device)`, so a
seeded run draws the same masks on either path.

The kernel contract (every kernel module, cpu.py and cuda.py, has these functions with these
signatures; a device whose module leaves some out lists only the ops it can run in its *_ops.py):
arrays are the device's raw arrays (NumPy for cpu, CuPy for cuda), float32 or float64, inputs
C-contiguous (the caller makes them so), and results are new arrays unless said otherwise.

```
layernorm_forward(x, weight, bias, eps) -> (y, mean, rstd)
    x (N, C); weight, bias (C,) or None; y (N, C); mean, rstd (N,)
    reference: ops.layernorm.LayerNorm.forward
layernorm_backward(dy, x, mean, rstd, weight) -> (dx, dweight, dbias)
    dy, x (N, C); dweight, dbias (C,), both None when weight is None
    reference: ops.layernorm.LayerNorm.backward
attention_softmax_forward(scores, scale, mask, keep, keep_prob) -> (p, pd)
    scores (R, T, S) = q @ k^T unscaled (may be overwritten: p may be that same array);
    mask None or bool (T, S), True = may attend; keep None or the dropout keep mask (R, T, S),
    bool, as drawn by keep_mask (below); keep_prob = 1 - dropout_p
    p  = softmax(where(mask, scores * scale, -inf)) along S
    pd = p * keep / keep_prob, or None without dropout (keep is None)
    reference: the S, P, Pd lines of ops.attention.ScaledDotProductAttention.forward
attention_softmax_backward(dpd, p, keep, keep_prob) -> ds
    dP = dpd * keep / keep_prob (dpd itself when keep is None)
    ds = p * (dP - sum_S(dP * p)), (R, T, S); may overwrite dpd (ds may be that array)
    reference: the dP, dS lines of ops.attention.ScaledDotProductAttention.backward
cross_entropy_forward(logits, targets, ignore_index) -> (losses, lse)
    logits (N, C), targets (N,) int64; losses, lse (N,); losses are 0 where ignored
    reference: ops.cross_entropy.CrossEntropy.forward (with reduction="none")
cross_entropy_backward(logits, lse, targets, ignore_index, gscale) -> dlogits
    dlogits = (softmax(logits) - onehot(targets)) * gscale[n], 0 on ignored rows; gscale (N,)
    reference: ops.cross_entropy.CrossEntropy.backward
adamw_step(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps, weight_decay, step) -> None
    in place on 1-D arrays of one dtype, in torch's order of operations (hyperparameters are
    Python numbers; step counts from 1)
    reference: ops.adamw.adamw_update_
param_table(params) -> table                                             (cpu.py only)
adamw_step_params(table, first, end, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps,
                  weight_decay, step) -> None
    table: the addresses of a list of parameter arrays (C-contiguous, writable, one dtype), valid
    while the caller holds the arrays; adamw_step on params[first:end], each in place in its own
    array, with their parts of grad, exp_avg, exp_avg_sq (1-D, over the whole list, in its order)
    reference: ops.adamw.AdamWParamsUpdate
relu_forward(x) -> y;           relu_backward(g, y) -> dx              (reference: ops.activation.ReLU)
gelu_forward(x) -> y;           gelu_backward(g, x) -> dx              (exact erf GELU; ops.activation.GELU)
dropout_forward(x, keep, scale) -> x * keep * scale                      (reference: ops.dropout.Dropout)
    keep bool like x; its backward is the same call on the gradient
keep_mask(rng, shape, p) -> keep                                         (reference: ops.dropout.keep_mask)
    rng = backend.rng(device); keep bool of `shape`: the reference's draw bit for bit, and the
    generator left in the same state (so either path draws the same masks from a seed)
KeepRows(rng, rows, n, p).rows(r0, r1, out=None) -> keep[r0:r1] of keep_mask(rng, (rows, n), p)
    (cpu.py only: the attention's and a large dropout's row parts, kernels/cpu_threads.py, each
    draw their own rows; with dropout_forward_into(x, keep, scale, out), dropout_forward into out)
embedding_backward(ids, dout, num_embeddings) -> dweight                 (reference: ops.embedding.Embedding)
    ids (N,) int64 in range, dout (N, D), dweight (num_embeddings, D)
elementwise kernels take arrays of any shape (C-contiguous) and return the same shape.
```
"""

from __future__ import annotations

import contextlib
import importlib
import os

from .. import autograd

MODES = ("kernels", "reference")
_ENV = "TENSORGRAD_KERNELS"


class KernelError(RuntimeError):
    """A kernel that cannot run here (failed to compile, its package is missing)."""


def _mode_from_env() -> str:
    value = os.environ.get(_ENV, "kernels").strip().lower() or "kernels"
    if value not in MODES:
        raise ValueError(f"{_ENV} must be 'kernels' (the default) or 'reference', got {value!r}")
    return value


_mode = _mode_from_env()  # process-wide: tg.kernels.use switches every thread's ops (it empties the shared tables)
_KERNEL_MODULES = {"cpu": "cpu", "cuda": "cuda"}  # device -> module of this package ("strict": none)


def mode() -> str:
    """'kernels' (fused kernels where a device has them) or 'reference' (the plain ops)."""
    return _mode


def use(new_mode: str):
    """Switch the whole library to 'kernels' or 'reference' (as TENSORGRAD_KERNELS does)."""
    global _mode
    if new_mode not in MODES:
        raise ValueError(f"tg.kernels.use: mode must be 'kernels' or 'reference', got {new_mode!r}")
    _mode = new_mode
    autograd.clear_kernels()  # each device loads its table again (kernel_ops) at its next op


@contextlib.contextmanager
def reference():
    """Run the reference ops inside the block: `with tg.kernels.reference(): ...`."""
    previous = _mode
    use("reference")
    try:
        yield
    finally:
        use(previous)


def module(device: str):
    """The kernel module of a device, or None (no kernels for it, or the reference is switched on)."""
    if _mode == "reference" or device not in _KERNEL_MODULES:
        return None
    name = f"{__name__}.{_KERNEL_MODULES[device]}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name == name:  # this device has no kernel module (yet): the reference runs
            return None
        raise KernelError(
            f"the {device} kernels need {e.name!r}, which is not installed ({e}); install it "
            f"(pip install 'tensorgrad-gpt[cuda12]' for CUDA) or run the reference ops with "
            f"{_ENV}=reference or tg.kernels.use('reference')"
        ) from None


def kernel_ops(device: str) -> tuple:
    """The kernel ops of a device in the current mode, in the order the engine asks them (empty: all
    reference): its *_ops.py's KERNEL_OPS.  The engine calls this on the device's first op (and
    after use())."""
    mod = module(device)
    if mod is None:
        return ()
    return importlib.import_module(f"{mod.__name__}_ops").KERNEL_OPS  # cpu_ops.py, cuda_ops.py


def substitutes(device: str) -> dict:
    """{reference class: (kernel op, ...)} for a device in the current mode, each op's kernels in the
    order the engine asks them (the first that accepts the inputs runs); empty: all reference."""
    table = {}
    for kernel in kernel_ops(device):
        table[kernel.replaces] = (*table.get(kernel.replaces, ()), kernel)
    return table


for _device in _KERNEL_MODULES:
    autograd.register_kernel_loader(_device, kernel_ops)


def compile_error(kernel: str, error: Exception) -> KernelError:
    """The error raised when a kernel fails to compile: it names the kernel and the switch."""
    first_line = (str(error).strip().splitlines() or [""])[0]
    return KernelError(
        f"kernel {kernel!r} failed to compile ({type(error).__name__}: {first_line}); "
        f"run the reference ops instead with {_ENV}=reference or tg.kernels.use('reference')"
    )


__all__ = ["MODES", "KernelError", "compile_error", "kernel_ops", "mode", "module", "reference", "substitutes", "use"]
