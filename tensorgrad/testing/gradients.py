"""check_gradients: gradcheck for any inputs, with a random cotangent."""

from __future__ import annotations

from .. import backend
from ..gradcheck import gradcheck
from ..tensor import Tensor

FAST_MODE_ABOVE = 512  # elements in all: past this, one random direction per input instead of every element


def check_gradients(fn, *inputs, eps=1e-6, atol=1e-5, rtol=1e-3, fast_mode=None, seed=0) -> bool:
    """True if fn's backward matches central differences at `inputs`; raises GradcheckError
    naming the input and element otherwise.

    Every floating-point Tensor among `inputs` is copied to float64 with requires_grad=True and
    checked (so float32 tensors drawn by a strategy can be passed as they are); other arguments
    (integer tensors, numbers) are passed through.  The backward pass is driven by a random
    cotangent v (tg.gradcheck): checking v . fn(x), not fn(x).sum(), whose gradient is zero for
    softmax or layernorm whatever the backward does.  `fast_mode=None` picks fast mode (one random
    direction per input) when the inputs hold more than FAST_MODE_ABOVE elements.
    """
    args = []
    for x in inputs:
        if isinstance(x, Tensor) and x.is_floating_point():
            x = x.detach().to(backend.float64)
            x = Tensor(x._data.copy(), device=x.device, requires_grad=True)
        args.append(x)
    if not any(isinstance(x, Tensor) and x.requires_grad for x in args):
        raise ValueError("check_gradients: no floating-point Tensor among the inputs")
    if fast_mode is None:
        fast_mode = sum(x.numel() for x in args if isinstance(x, Tensor) and x.requires_grad) > FAST_MODE_ABOVE
    return gradcheck(fn, args, eps=eps, atol=atol, rtol=rtol, fast_mode=fast_mode, seed=seed)
