"""AdamW's update on backend arrays: the math of one optimizer step (optim/adamw.py), kept here
with the ops so that a device's fused kernel can replace it through the engine's kernel registry
(kernels/functions.py's AdamWUpdate), as it replaces an op."""

from __future__ import annotations

from .. import autograd, backend


def adamw_update_(
    p, g, m, v, *, step: int, lr: float, beta1: float, beta2: float, eps: float, weight_decay: float, xp
) -> None:
    r"""One AdamW step on backend arrays, in place on $p$ (param), $m$ (`exp_avg`), $v$ (`exp_avg_sq`).

    $$
    \begin{aligned}
    p &\leftarrow p\, (1 - \mathrm{lr} \cdot \mathrm{wd})
      && \text{decoupled decay: not part of the gradient} \\
    m &\leftarrow m + (1 - \beta_1)(g - m) = \beta_1 m + (1 - \beta_1)\, g
      && (\text{torch's } \texttt{lerp\_}) \\
    v &\leftarrow v\, \beta_2 + (1 - \beta_2)\, g\, g = \beta_2 v + (1 - \beta_2)\, g^2
      && (\texttt{mul\_}, \texttt{addcmul\_}) \\
    \hat m &= m / (1 - \beta_1^t), \quad \hat v = v / (1 - \beta_2^t)
      && (\text{bias corrections}) \\
    p &\leftarrow p - \mathrm{lr} \cdot \hat m / (\sqrt{\hat v} + \varepsilon)
    \end{aligned}
    $$

    written in torch's order of operations (its single-tensor CPU path): the bias
    corrections are host floats, folded into $\mathrm{step\_size} = \mathrm{lr} / (1 - \beta_1^t)$ and
    a divisor $\sqrt{1 - \beta_2^t}$ of $\sqrt v$, so the arrays see only multiplies, adds, one sqrt
    and one divide, all in their own dtype (a Python float never upcasts a float32 array).
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
    after another in its order (`params[k]`'s part is `offsets[k]:offsets[k + 1]`).

    Made once for a list of arrays of one device (theirs) and one float dtype,
    `AdamWParamsUpdate(params)`, then called for any run `params[first:end]` of them, in place
    on those parameters and on the run's part of `m` and `v`:

    ```
    update(first, end, g, m, v, step=..., lr=..., beta1=..., beta2=..., eps=..., weight_decay=...)
    ```

    This is the reference: each parameter of the run is updated in its own array by `AdamWUpdate`
    (the device's `adamw_step` kernel where it takes the arrays, through the engine's kernel
    registry) with its parts of `g`, `m` and `v`, one parameter after another; the numbers are
    `adamw_update_`'s, element by element the same as on the concatenated arrays, and parameters that
    share storage are updated one after the other, as by the per-parameter loop.  A device's kernel
    op (kernels/functions.py) does the whole run in one pass through a table of the arrays' addresses."""

    __slots__ = ("device", "params", "offsets")

    def __init__(self, params):
        self.params = list(params)  # held: the arrays the update writes
        self.device = backend.device_of(self.params[0])
        self.offsets = [0]
        for p in self.params:
            self.offsets.append(self.offsets[-1] + p.size)

    def __reduce__(self):
        """A copy (copy.deepcopy, pickle) is made anew for the copied arrays: nothing made for the
        originals (a kernel op's table of their addresses) carries over."""
        return type(self), (self.params,)

    def __call__(self, first, end, g, m, v, *, step, lr, beta1, beta2, eps, weight_decay):
        xp = backend.namespace(self.device)
        hyper = {"step": step, "lr": lr, "beta1": beta1, "beta2": beta2, "eps": eps, "weight_decay": weight_decay}
        for k in range(first, end):
            p, part = self.params[k], slice(self.offsets[k], self.offsets[k + 1])
            arrays = (p, g[part].reshape(p.shape), m[part].reshape(p.shape), v[part].reshape(p.shape))
            autograd.dispatch(AdamWUpdate, self.device, *arrays, **hyper)(xp)(*arrays, **hyper)
