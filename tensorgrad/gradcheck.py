"""Checking hand-written backward passes against finite differences.

For f: inputs -> output and a random cotangent v (shaped like the output), the
backward pass computes, for each input x, the vector-Jacobian product

    analytic[x] = v^T J_x = d(v . f)/dx.

Central differences give the same numbers independently of any backward:

    numeric[x]_i = ((v . f)(x + eps e_i) - (v . f)(x - eps e_i)) / (2 eps)     error O(eps^2)

A random v matters: with v = ones (i.e. checking `f(x).sum()`), the gradient of
softmax or layernorm is identically zero and a wrong backward would pass.

The fast mode replaces the loop over every element i by one random direction u
per input, comparing v^T J u (analytic: sum of analytic[x] * u) with the central
difference along u: two evaluations instead of 2N, for large inputs.
"""

from __future__ import annotations

from . import backend
from .autograd import no_grad
from .tensor import Tensor

np = backend.namespace("cpu")  # gradcheck works on host copies, in float64


class GradcheckError(AssertionError):
    """The analytic and the numeric gradient disagree."""


def _as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _dot(outputs, cotangents) -> float:
    return float(sum(np.sum(o.numpy().astype(np.float64) * v) for o, v in zip(outputs, cotangents)))


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, fast_mode=False, seed=0, raise_exception=True) -> bool:
    """True if fn's backward matches central differences; otherwise raises GradcheckError
    naming the input, the element and both values (or returns False, with raise_exception=False,
    as torch.autograd.gradcheck).

    `inputs` is a tensor or a sequence of tensors; those with requires_grad=True are checked
    and must be float64 (float32 differences at eps=1e-6 are rounding noise).
    """
    if not raise_exception:
        try:
            return gradcheck(fn, inputs, eps, atol, rtol, fast_mode, seed)
        except GradcheckError:
            return False
    inputs = _as_tuple(inputs)
    checked = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise ValueError("gradcheck: no input has requires_grad=True")
    for i in checked:
        if inputs[i].dtype != backend.float64:
            raise TypeError(f"gradcheck: input {i} is {inputs[i].dtype}; use float64 (tensor.double())")
    rng = np.random.default_rng(seed)

    # analytic: one backward of v . f
    for i in checked:
        inputs[i].grad = None
    outputs = _as_tuple(fn(*inputs))
    cotangents = [rng.standard_normal(o.shape) for o in outputs]
    total = None
    for o, v in zip(outputs, cotangents):
        if not o.requires_grad:
            continue
        term = (o * Tensor(v, dtype=o.dtype, device=o.device)).sum()
        total = term if total is None else total + term
    if total is None:
        raise GradcheckError("gradcheck: no output depends on an input that requires grad")
    total.backward()
    analytic = {
        i: (inputs[i].grad.numpy() if inputs[i].grad is not None else np.zeros(inputs[i].shape)) for i in checked
    }

    def value_at(i, host):
        """(v . f) with input i's data replaced by `host`."""
        t = inputs[i]
        saved = t._data
        t._data = backend.from_host(host, saved.dtype, t.device)
        try:
            with no_grad():
                return _dot(_as_tuple(fn(*inputs)), cotangents)
        finally:
            t._data = saved

    for i in checked:
        x0 = inputs[i].numpy()
        if fast_mode:
            u = rng.standard_normal(x0.shape)
            numeric = (value_at(i, x0 + eps * u) - value_at(i, x0 - eps * u)) / (2 * eps)
            exact = float(np.sum(analytic[i] * u))
            if not abs(exact - numeric) <= atol + rtol * abs(numeric):
                raise GradcheckError(
                    f"gradcheck (fast mode): input {i} of shape {x0.shape}: along a random direction the "
                    f"analytic v^T J u = {exact:.10g} but the numeric one = {numeric:.10g}"
                )
            continue
        flat = x0.reshape(-1)
        for k in range(flat.size):
            plus, minus = flat.copy(), flat.copy()
            plus[k] += eps
            minus[k] -= eps
            numeric = (value_at(i, plus.reshape(x0.shape)) - value_at(i, minus.reshape(x0.shape))) / (2 * eps)
            exact = analytic[i].reshape(-1)[k]
            if not abs(exact - numeric) <= atol + rtol * abs(numeric):
                where = np.unravel_index(k, x0.shape) if x0.ndim else ()
                raise GradcheckError(
                    f"gradcheck: input {i} (shape {x0.shape}), element {tuple(int(w) for w in where)}: "
                    f"analytic gradient {exact:.10g}, numeric {numeric:.10g} (difference {exact - numeric:.3g})"
                )
    return True
