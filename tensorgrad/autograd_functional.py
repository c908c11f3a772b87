"""tg.autograd.functional: vjp, jvp, hvp, vhp, jacobian and hessian of a function, as
torch.autograd.functional (the same signatures, errors and return conventions).

Each takes `func` and `inputs` (a Tensor or a tuple of Tensors) and works on fresh copies of the
inputs that require grad (with create_graph=True an input that requires grad is taken through a
clone, so the results stay differentiable with respect to it); func's outputs and the results are
returned detached unless create_graph=True.  A result is a single Tensor where the argument was
one, a tuple where it was a tuple (the Jacobian: a tuple over outputs of tuples over inputs, each
collapsed where that side was a single Tensor).  Unused inputs get zeros, or, with strict=True,
an error naming the input.

tensorgrad is reverse-mode only, so the forward-mode products come from reverse passes:

- jvp (J v) and hvp (H v) by the double-vjp trick.  The vector-Jacobian product
  g(u) = u^T J = autograd.grad(f(x), x, u, create_graph=True) is linear in u, so its own
  vector-Jacobian product with respect to u, at any u (zeros here), is d(v . g(u))/du = J v:
  two reverse passes, the second through the first's graph (the ops' Tensor-level formulas).
  hvp is the same trick on the gradient: H v = (v^T H)^T = the vjp of the gradient, H symmetric
  for a twice continuously differentiable f, and computed as the trick says to keep PyTorch's
  error messages (vhp is the direct v^T H).
- jacobian and hessian row by row: one reverse pass per output element (the one-hot cotangent of
  each), the Hessian as the Jacobian of the Jacobian (reverse over reverse).  vectorize=True
  (vmap) and strategy="forward-mode" are not available: NotImplementedError names the default.
"""

from __future__ import annotations

from .autograd import enable_grad, is_grad_enabled, set_grad_enabled
from .creation import zeros, zeros_like
from .functions.shape import stack
from .hooks import grad as _grad
from .tensor import Tensor

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# ------------------------------------------------------------------ helpers (PyTorch's, on Tensors)
def _as_tuple(inp, arg_name, fn_name):
    """(whether inp was a tuple, inp as a tuple of Tensors), with PyTorch's TypeError otherwise."""
    is_tuple = isinstance(inp, tuple)
    if not is_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                f"{where} has type {type(el)}."
            )
    return is_tuple, inp


def _tuple_postprocess(res, to_unpack):
    """Undo _as_tuple: to_unpack is one flag, or (outer, inner) for a tuple of tuples."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    """New Tensor objects for the inputs: a differentiable copy of an input that requires grad
    when create_graph (PyTorch takes a view; tensorgrad's view_as of the same shape is the tensor
    itself, so a clone), else a detached copy requiring grad as need_graph says.  Always a new
    object, so the inputs are told apart from the same tensors captured by func's closure."""
    return tuple(
        inp.clone() if create_graph and inp.requires_grad else inp.detach().requires_grad_(need_graph) for inp in inputs
    )


def _grad_postprocess(inputs, create_graph):
    """Detach what is returned unless the caller asked for its graph."""
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.shape != el_other.shape:
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


def _check_requires_grad(inputs, input_type, strict):
    """strict=True: every output (gradient, Jacobian) must depend on the inputs."""
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}."
                " This is not allowed in strict mode."
            )
        if inp.requires_grad:
            continue
        if input_type == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i}"
                " is independent of the input. This is not allowed in strict mode."
                " You should ensure that your function is thrice differentiable and that"
                " the hessian depends on the inputs."
            )
        if input_type == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided"
                f" function with respect to input {i} is independent of the input. This is not"
                " allowed in strict mode. You should ensure that your function is twice"
                " differentiable and that the jacobian depends on the inputs (this would be"
                " violated by a linear function for example)."
            )
        if input_type == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the"
                " user-provided function. This is not allowed in strict mode."
            )
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients."
            " The outputs must be computed in a differentiable manner from the input"
            " when running in strict mode."
        )


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that require grad (None for every input when none does),
    unused inputs None."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad(
        [o for o, _ in pairs], inputs, [g for _, g in pairs],
        retain_graph=retain_graph, create_graph=create_graph, allow_unused=True,
    )  # fmt: skip


_STRICT_NONE = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict mode.",
    "back_trick": (
        "The gradient with respect to the input is independent of entry {i} in the grad_outputs when using the "
        "double backward trick to compute forward mode gradients. This is not allowed in strict mode."
    ),
    "double_back": (
        "The jacobian of the user-provided function is independent of input {i}. This is not allowed in strict mode."
    ),
    "double_back_trick": (
        "The hessian of the user-provided function is independent of entry {i} in the grad_jacobian. This is not "
        "allowed in strict mode as it prevents from using the double backward trick to replace forward mode AD."
    ),
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """None gradients as zeros shaped as refs (an error in strict mode, naming the stage)."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STRICT_NONE[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. "
                "This is not allowed in strict mode when create_graph=True."
            )
        res.append(g)
    return tuple(res)


def _single_scalar_output(outputs, is_outputs_tuple, name):
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain a single element")


def _prepare_v(v, refs, is_refs_tuple, create_graph, fn_name, none_message):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, refs, is_refs_tuple)
        return v
    if len(refs) != 1 or refs[0].nelement() != 1:
        raise RuntimeError(none_message)
    return None


_V_NONE_INPUT = (
    "The vector v can only be None if the input to the user-provided function is a single Tensor with a single element."
)


# ------------------------------------------------------------------ the products
def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product, one reverse pass.  v may be None only
    when func returns a single one-element Tensor."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        v = _prepare_v(
            v, outputs, is_outputs_tuple, create_graph, "vjp",
            "The vector v can only be None if the user-provided function returns a single Tensor with a single "
            "element.",
        )  # fmt: skip
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by the double-vjp trick (the module's
    docstring): u^T J is linear in u, so its vjp with respect to u (taken at u = 0) is J v.
    v may be None only when the input is a single one-element Tensor."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp", _V_NONE_INPUT)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        # the first backward is linear in u, so u's value does not reach the result (zeros: finite)
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_outputs_tuple)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H): the vector-Hessian product of a scalar function, the vjp of its
    gradient (two reverse passes)."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "vhp", _V_NONE_INPUT)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vhp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        _single_scalar_output(outputs, is_outputs_tuple, "vhp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v): the Hessian-vector product of a scalar function, by the double-vjp
    trick on its gradient (three reverse passes; equal to vhp's v^T H where H is symmetric)."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "hvp", _V_NONE_INPUT)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "hvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        _single_scalar_output(outputs, is_outputs_tuple, "hvp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)


# ------------------------------------------------------------------ Jacobian and Hessian
def _no_vectorize(name, vectorize, strategy, strategy_arg):
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if vectorize:
        raise NotImplementedError(
            f"tg.autograd.functional.{name}: vectorize=True needs vmap, which tensorgrad does not have; "
            "use vectorize=False (one reverse pass per output element, the same values)"
        )
    if strategy == "forward-mode":
        raise NotImplementedError(
            f'tg.autograd.functional.{name}: {strategy_arg}="forward-mode" needs forward-mode AD, which tensorgrad '
            f'does not have; use {strategy_arg}="reverse-mode" (the same values), or tg.func.jacfwd (double-vjp trick)'
        )


def _one_hot(out, j):
    """The j-th element of out's standard basis, shaped as out (a constant)."""
    e = zeros(out.nelement(), dtype=out.dtype, device=out.device)
    e[j] = 1
    return e.reshape(out.shape)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of func at inputs: for output i and input j a Tensor of shape
    output_i.shape + input_j.shape, one reverse pass per output element (its one-hot cotangent).
    A tuple over outputs of tuples over inputs, each level a single Tensor where func returned
    one / inputs was one (as PyTorch).  vectorize=True and strategy="forward-mode" raise
    NotImplementedError (tensorgrad has no vmap nor forward-mode AD)."""
    if strategy == "forward-mode" and create_graph and not vectorize:
        raise NotImplementedError(
            "torch.autograd.functional.jacobian: `create_graph=True` "
            'and `strategy="forward-mode"` are not supported together (yet). '
            "Please either set `create_graph=False` or "
            '`strategy="reverse-mode"`.'
        )
    _no_vectorize("jacobian", vectorize, strategy, "strategy")
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        jacobian = []
        for i, out in enumerate(outputs):
            rows = tuple([] for _ in inputs)
            for j in range(out.nelement()):
                vj = _autograd_grad((out,), inputs, (_one_hot(out, j),), retain_graph=True, create_graph=create_graph)
                for k, (rows_k, vj_k, inp) in enumerate(zip(rows, vj, inputs)):
                    if vj_k is not None:
                        if strict and create_graph and not vj_k.requires_grad:
                            raise RuntimeError(
                                "The jacobian of the user-provided function is "
                                f"independent of input {i}. This is not allowed in "
                                "strict mode when create_graph=True."
                            )
                        rows_k.append(vj_k)
                    else:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is "
                                f"independent of input {k}. This is not allowed in "
                                "strict mode."
                            )
                        rows_k.append(zeros_like(inp))
            jacobian.append(
                tuple(
                    stack(rows_k, 0).reshape((*out.shape, *inp.shape))
                    if rows_k
                    else zeros((*out.shape, *inp.shape), dtype=inp.dtype, device=inp.device)
                    for rows_k, inp in zip(rows, inputs)
                )
            )
        jacobian = _grad_postprocess(tuple(jacobian), create_graph)
        return _tuple_postprocess(jacobian, (is_outputs_tuple, is_inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: the Jacobian (reverse mode) of its gradient, computed
    with create_graph=True.  For inputs i, j a Tensor of shape input_i.shape + input_j.shape; a
    tuple of tuples where inputs is a tuple, a single Tensor where it is one."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    _no_vectorize("hessian", vectorize, outer_jacobian_strategy, "outer_jacobian_strategy")

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))
