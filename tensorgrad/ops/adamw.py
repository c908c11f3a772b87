"""AdamW's update on backend arrays: the math of one optimizer step (optim/adamw.py), kept here
with the ops so that a device's fused kernel can replace it through the engine's kernel registry
(kernels/functions.py's AdamWUpdate), as it replaces an op."""

from __future__ import annotations

from .. import autograd, backend


def adamw_update_(
    p, g, m, v, *, step: int, lr: float, beta1: float, beta2: float, eps: float, weight_decay: float, xp
) -> None:
    """One AdamW step on backend arrays, in place on p (param), m (exp_avg), v (exp_avg_sq).

        p <- p * (1 - lr * wd)                       decoupled decay: not part of the gradient
        m <- m + (1 - b1) * (g - m)                  = b1 m + (1 - b1) g      (torch's lerp_)
        v <- v * b2 + (1 - b2) * g * g               = b2 v + (1 - b2) g^2    (mul_, addcmul_)
        mhat = m / (1 - b1^t),  vhat = v / (1 - b2^t)                       (bias corrections)
        p <- p - lr * mhat / (sqrt(vhat) + eps)

    written in torch's order of operations (its single-tensor CPU path): the bias
    corrections are host floats, folded into step_size = lr / (1 - b1^t) and a divisor
    sqrt(1 - b2^t) of sqrt(v), so the arrays see only multiplies, adds, one sqrt and one
    divide, all in their own dtype (a Python float never upcasts a float32 array).
    Arrays of any shape work, so a fused version can call this on one flat buffer.
    """
    if weight_decay != 0:
        p *= 1 - lr * weight_decay
    m += (g - m) * (1 - beta1)
    v *= beta2
    v += (1 - beta2) * g * g
    step_size = lr / (1 - beta1**step)
    bias_correction2_sqrt = (1 - beta2**step) ** 0.5
    denom = xp.sqrt(v) / bias_correction2_sqrt + eps
    p += (-step_size * m) / denom


class AdamWUpdate:
    """`adamw_update_` in the form the kernel registry dispatches: made with the arrays' namespace,
    then called on the arrays, `AdamWUpdate(xp)(p, g, m, v, step=..., lr=..., ...)`."""

    __slots__ = ("xp",)

    def __init__(self, xp):
        self.xp = xp

    def __call__(self, p, g, m, v, *, step, lr, beta1, beta2, eps, weight_decay):
        adamw_update_(p, g, m, v, step=step, lr=lr, beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
                      xp=self.xp)  # fmt: skip


class AdamWParamsUpdate:
    """AdamW on a list of parameters at once, each in its own array (the fused optimizer step,
    optim/adamw.py): a parameter keeps its storage, so everything that shares it sees the step.
    The gradients and the moments are flat arrays over the whole list, the parameters' parts one
    after another in its order (params[k]'s part is offsets[k]:offsets[k + 1]).

    Made once for a list of arrays of one device and one float dtype, `AdamWParamsUpdate(device,
    params)`, then called for any run params[first:end] of them, in place on those parameters and
    on the run's part of m and v:

        update(first, end, g, m, v, step=..., lr=..., beta1=..., beta2=..., eps=..., weight_decay=...)

    This is the reference: the run's values are copied into a flat array, updated there with the
    run's gradients and moments by `AdamWUpdate` (the device's adamw_step kernel where it takes them,
    through the engine's kernel registry), and copied back into each parameter's array; so the
    numbers are adamw_update_'s on the concatenated arrays.  A device's kernel op
    (kernels/functions.py) reads and writes each parameter's array where it is, without the copies."""

    __slots__ = ("device", "params", "offsets", "_values", "_parts")

    def __init__(self, device, params):
        self.device = device
        self.params = list(params)  # held: the arrays the update writes
        self.offsets = [0]
        for p in self.params:
            self.offsets.append(self.offsets[-1] + p.size)
        self._values = self._parts = None  # the flat copy, and each parameter's part of it: made at the first call

    def __reduce__(self):
        """A copy (copy.deepcopy, pickle) is made anew for the copied arrays: nothing made for the
        originals (a kernel op's table of their addresses) carries over."""
        return type(self), (self.device, self.params)

    def __call__(self, first, end, g, m, v, *, step, lr, beta1, beta2, eps, weight_decay):
        xp = backend.namespace(self.device)
        if self._values is None:
            self._values = xp.empty(self.offsets[-1], dtype=g.dtype)
            bounds = zip(self.offsets, self.offsets[1:])
            self._parts = [self._values[a:b].reshape(p.shape) for (a, b), p in zip(bounds, self.params)]
        for p, part in zip(self.params[first:end], self._parts[first:end]):
            part[...] = p
        run = slice(self.offsets[first], self.offsets[end])
        arrays = (self._values[run], g[run], m[run], v[run])
        hyper = {"step": step, "lr": lr, "beta1": beta1, "beta2": beta2, "eps": eps, "weight_decay": weight_decay}
        autograd.dispatch(AdamWUpdate, self.device, *arrays, **hyper)(xp)(*arrays, **hyper)
        for p, part in zip(self.params[first:end], self._parts[first:end]):
            p[...] = part
