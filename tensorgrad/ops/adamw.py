"""AdamW's update on backend arrays: the math of one optimizer step (optim/adamw.py), kept here
with the ops so that a device's fused kernel can replace it through the engine's kernel registry
(kernels/functions.py's AdamWUpdate), as it replaces an op."""

from __future__ import annotations


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
