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
from .autograd import enable_grad, no_grad
from .hooks import grad as autograd_grad
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


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    gen_non_contig_grad_outputs=False,
    raise_exception=True,
    nondet_tol=0.0,
    check_undefined_grad=True,
    check_grad_dtypes=False,
    check_batched_grad=False,
    check_fwd_over_rev=False,
    check_rev_over_rev=True,
    fast_mode=False,
    masked=False,
) -> bool:
    """True if the gradients of func's gradients match central differences, as
    torch.autograd.gradgradcheck: `gradcheck` of the function

        (inputs, grad_outputs) -> autograd.grad(func(inputs), inputs, grad_outputs, create_graph=True)

    whose analytic gradient is the second backward pass (each op's Tensor-level formula,
    autograd.py) and whose numeric one is central differences of the first.  `grad_outputs`,
    when None, are random (uniform in [-1, 1), seeded, as PyTorch's torch.testing.make_tensor
    draws them) and require grad, so both the Hessian-vector product and the first backward's
    linearity in the cotangent are checked.  Fails (GradcheckError, or False with
    raise_exception=False) where a formula is wrong (its message numbers the checked function's
    inputs: func's inputs, then the grad_outputs); an op without a formula raises its
    "double backward is not implemented for <op>" error.

    Of PyTorch's options: check_batched_grad and check_fwd_over_rev need vmap and forward-mode AD,
    which tensorgrad does not have (NotImplementedError when True).  gen_non_contig_grad_outputs
    and masked change nothing here (every tensor is contiguous and dense); nondet_tol and
    check_undefined_grad are met by construction (the backward is computed once, and the engine
    never hands a backward an undefined gradient: it materialises zeros).  check_grad_dtypes=True
    checks each first gradient has its input's dtype.
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad:
        raise NotImplementedError(
            "gradgradcheck: check_batched_grad=True needs vmap, which tensorgrad does not have; "
            "leave it False (the unbatched check covers the same derivatives)"
        )
    if check_fwd_over_rev:
        raise NotImplementedError(
            "gradgradcheck: check_fwd_over_rev=True needs forward-mode AD, which tensorgrad does not have; "
            "use check_rev_over_rev=True (the default), or tg.autograd.functional.jvp (double-vjp trick)"
        )
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        with enable_grad():  # the outputs that depend on an input requiring grad, as in the check
            outputs = [o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor) and o.requires_grad]
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            Tensor(
                rng.uniform(-1.0, 1.0, o.shape),
                dtype=o.dtype if o.dtype.kind == "f" else backend.float64,
                device=o.device,
                requires_grad=True,
            )
            for o in outputs
        )
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)
    diff_inputs = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def first_gradients(*args):
        xs, gos = args[: len(args) - n_out], args[len(args) - n_out :]
        with enable_grad():  # gradcheck's numeric evaluations run under no_grad
            outs = [o for o in _as_tuple(func(*xs)) if isinstance(o, Tensor) and o.requires_grad]
            if len(outs) != n_out:
                raise RuntimeError(
                    f"gradgradcheck: func has {len(outs)} differentiable outputs but {n_out} grad_outputs were given"
                )
            grads = autograd_grad(outs, [xs[i] for i in diff_inputs], gos, create_graph=True, allow_unused=True)
        if check_grad_dtypes:
            for i, g in zip(diff_inputs, grads):
                if g is not None and g.dtype != xs[i].dtype:
                    raise GradcheckError(f"gradgradcheck: the gradient of input {i} is {g.dtype}, not {xs[i].dtype}")
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_gradients, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     fast_mode=fast_mode, raise_exception=raise_exception)  # fmt: skip
