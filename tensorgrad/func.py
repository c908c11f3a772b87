"""tg.func: function transforms, as torch.func: grad, grad_and_value, vjp, jvp, jacrev, jacfwd,
hessian (no vmap).

Each transform takes a function and returns one (or, for vjp and jvp, evaluates it at once).  The
arguments need not require grad: the transform runs `func` under enable_grad on its own copies of
the differentiated arguments (Tensors, or tuples / lists / dicts of them), copies that require
grad, and returns its results detached, as torch.func does.

Nesting composes, for higher derivatives: when grad mode is on and an argument already requires
grad (inside an outer transform, or a tensor of the user's own graph), its copy is a clone of it
and the derivatives are taken with create_graph=True, so they stay differentiable with respect to
it: `tg.func.grad(tg.func.grad(f))(x)` is f''(x).  Likewise for a tensor that requires grad and
that `func` reads from its closure (a model's parameters): a walk of func's forward graph finds
whether its outputs reach such a tensor outside the transform, and only then is the graph of the
results kept.

tensorgrad is reverse-mode only: jvp and jacfwd use the double-vjp trick.  u -> u^T J (one reverse
pass, create_graph=True) is linear in u, so its vector-Jacobian product with respect to u is J v
(a second reverse pass, through the first's graph: the ops' Tensor-level formulas).  The values
are forward mode's; the cost is two reverse passes, and every op on the way needs a formula.
hessian is jacrev of jacrev (reverse over reverse; torch.func's is jacfwd of jacrev, the same
matrix), which needs second derivatives only.
"""

from __future__ import annotations

import functools

from .autograd import enable_grad, is_grad_enabled
from .creation import zeros, zeros_like
from .functions.shape import stack
from .hooks import grad as _grad
from .tensor import Tensor

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian"]


# ------------------------------------------------------------------ pytrees of Tensors
def _flatten(tree):
    """(leaves, spec): the leaves of nested tuples / lists / dicts, and how to rebuild them."""
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for t in tree:
            sub, spec = _flatten(t)
            leaves += sub
            specs.append((len(sub), spec))
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, spec = _flatten(tuple(tree.values()))
        return leaves, (dict, (tuple(tree.keys()), spec))
    return [tree], None


def _unflatten(leaves, spec):
    if spec is None:
        (leaf,) = leaves
        return leaf
    kind, specs = spec
    if kind is dict:
        keys, sub = specs
        return dict(zip(keys, _unflatten(leaves, sub)))
    out, i = [], 0
    for n, sub in specs:
        out.append(_unflatten(leaves[i : i + n], sub))
        i += n
    return kind(out)


def _map(fn, tree):
    leaves, spec = _flatten(tree)
    return _unflatten([fn(t) for t in leaves], spec)


def _detach(t):
    return t.detach() if isinstance(t, Tensor) else t


# ------------------------------------------------------------------ argnums and the copies
def _argnum(argnum, num_args):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _argnums(argnums, num_args):
    if isinstance(argnums, int):
        return _argnum(argnums, num_args)
    if not isinstance(argnums, tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if len(argnums) == 0:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return tuple(_argnum(a, num_args) for a in argnums)


def _requires_grad(*trees) -> bool:
    """Whether some Tensor in the trees requires grad."""
    return any(isinstance(t, Tensor) and t.requires_grad for tree in trees for t in _flatten(tree)[0])


def _reaches_outside(outputs, copies) -> bool:
    """Whether func's outputs depend on a tensor outside the transform that requires grad: an
    argument that already required grad (its copy is a clone of it), or one func read from its
    closure (a model's parameters).  Then the results must stay differentiable (create_graph=True):
    nested in an outer transform, or in the user's own graph, as torch.func composes.  A walk of
    the forward graph, from the outputs to its leaves."""
    inside = {id(c) for c in copies}
    seen, stack_ = set(), [o for o in outputs if isinstance(o, Tensor) and o.requires_grad]
    while stack_:
        t = stack_.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        node = t._ctx
        if node is None:
            if id(t) not in inside:
                return True
            continue
        stack_.extend(p for p in node.parents if isinstance(p, Tensor) and p.requires_grad)
    return False


def _differentiable(t, api, outer):
    """The transform's own copy of an argument: a differentiable copy (clone) when it requires
    grad and grad mode is on outside (so the outer graph continues through it), else a detached
    copy that requires grad."""
    if not isinstance(t, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")
    if t.dtype.kind != "f":
        raise RuntimeError(f"{api}: only floating-point Tensors can be differentiated, got {t.dtype}")
    # a new Tensor object either way, told apart from the same tensor read from func's closure
    # (x in `grad(lambda x: grad(lambda y: x * y * y)(x))`); clone, as view_as(t) here is t itself
    return t.clone() if outer and t.requires_grad else t.detach().requires_grad_()


def _prepare(args, argnums, api, outer):
    """(args with the differentiated ones replaced by the copies, the copies' pytree)."""
    argnums = _argnums(argnums, len(args))
    nums = (argnums,) if isinstance(argnums, int) else argnums
    args = list(args)
    for i in nums:
        args[i] = _map(functools.partial(_differentiable, api=api, outer=outer), args[i])
    diff = args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in nums)
    return args, diff


def _gradients(outputs, inputs, grad_outputs, create_graph, retain_graph=None):
    """autograd.grad over the outputs that require grad; zeros for inputs they do not reach."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if pairs:
        grads = _grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=retain_graph,
                      create_graph=create_graph, allow_unused=True)  # fmt: skip
    else:
        grads = (None,) * len(inputs)
    return [zeros_like(x) if g is None else g for g, x in zip(grads, inputs)]


def _split_aux(output, has_aux, api):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


def _tensor_outputs(output, api):
    leaves, spec = _flatten(output)
    if not leaves or (len(leaves) == 1 and leaves[0] is None):
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = {leaves})")
    for o in leaves:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")
    return leaves, spec


# ------------------------------------------------------------------ grad and grad_and_value
def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (the gradient of func with respect to the argument(s) at argnums,
    func's value); with has_aux, func returns (value, aux) and the result is (grad, (value, aux)).
    func must return a scalar (0-d) Tensor.  The gradient has the structure of the argument (a
    tuple over argnums when argnums is a tuple)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        outer = is_grad_enabled()
        with enable_grad():
            args, diff = _prepare(args, argnums, "grad_and_value(f)(*args)", outer)
            output, aux = _split_aux(func(*args, **kwargs), has_aux, "grad_and_value(f)(*args)")
            if not isinstance(output, Tensor):
                raise RuntimeError(
                    f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(output)}"
                )
            if output.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                    f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
                )
            leaves, spec = _flatten(diff)
            nested = outer and _reaches_outside([output], leaves)
            grads = _gradients([output], leaves, [None], create_graph=nested)
        grads = _unflatten(grads if nested else [g.detach() for g in grads], spec)
        value = output if nested else output.detach()
        if has_aux:
            return grads, (value, aux if nested else _map(_detach, aux))
        return grads, value

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of func (which returns a scalar Tensor) with respect to
    the argument(s) at argnums; with has_aux, func returns (value, aux) and the result is
    (grad, aux).  Nested, it differentiates again: grad(grad(f))(x) is f''(x)."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = inner(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


# ------------------------------------------------------------------ vjp and jvp
def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) returns the vector-Jacobian products,
    a tuple with one entry per primal; it may be called more than once (retain_graph=True by
    default; create_graph defaults to whether grad mode is on, as torch.func's)."""
    api = "vjp(f, *primals)"
    outer = is_grad_enabled()
    with enable_grad():
        _, diff = _prepare(primals, tuple(range(len(primals))), api, outer)
        out, aux = _split_aux(func(*diff), has_aux, api)
        flat_out, out_spec = _tensor_outputs(out, api)
        nested = outer and _reaches_outside(flat_out, _flatten(diff)[0])
        for o in flat_out:
            if o.dtype.kind != "f":
                raise RuntimeError(
                    f"vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor with dtype "
                    f"{o.dtype}"
                )
    flat_primals, primals_spec = _flatten(diff)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        if create_graph is None:
            create_graph = is_grad_enabled()
        flat_ct, ct_spec = _flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of outputs to the "
                f"function. cotangents: {ct_spec}, primal output: {out_spec}"
            )
        # a graph only where something outside the transform can use it: the primals' or cotangents'
        create_graph = create_graph and (nested or any(isinstance(c, Tensor) and c.requires_grad for c in flat_ct))
        with enable_grad():
            grads = _gradients(flat_out, flat_primals, flat_ct, create_graph=create_graph, retain_graph=retain_graph)
        if not create_graph:
            grads = [g.detach() for g in grads]
        return _unflatten(grads, primals_spec)

    result = _unflatten(flat_out if nested else [o.detach() for o in flat_out], out_spec)
    if has_aux:
        return result, vjp_fn, (aux if nested else _map(_detach, aux))
    return result, vjp_fn


def _double_vjp_setup(flat_out, flat_in):
    """The first pass of the double-vjp trick: (u, u^T J) with u zeros requiring grad (the first
    backward is linear in u, so u's value never reaches a result: zeros keep it finite)."""
    us = [zeros_like(o, requires_grad=True) for o in flat_out]
    firsts = _gradients(flat_out, flat_in, us, create_graph=True)
    return us, firsts


def _double_vjp(us, firsts, flat_out, tangents, create_graph):
    """J v for the tangents v (one per input): the vjp of u -> u^T J with respect to u."""
    pairs = [(f, t) for f, t in zip(firsts, tangents) if f.requires_grad]
    if not pairs:
        return [zeros_like(o) for o in flat_out]
    grads = _grad([f for f, _ in pairs], us, [t for _, t in pairs], retain_graph=True, create_graph=create_graph,
                  allow_unused=True)  # fmt: skip
    return [zeros_like(o) if g is None else g for g, o in zip(grads, flat_out)]


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J @ tangents[, aux]): the Jacobian-vector product, by the double-vjp trick
    (the module's docstring: two reverse passes, not forward mode).  primals is a tuple, and
    tangents has its structure.  strict=True: an output independent of the primals is an error."""
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{api}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    flat_p, p_spec = _flatten(primals)
    flat_t, t_spec = _flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(
            f"{api}: Expected primals and tangents to have the same python structure. For example, if primals is "
            f"a tuple of 3 tensors, tangents also must be. Got primals with structure {p_spec} and tangents with "
            f"structure {t_spec}"
        )
    for name, flat in (("primals", flat_p), ("tangents", flat_t)):
        if not flat:
            raise RuntimeError(f"{api}: Expected {name} to contain at least one Tensor.")
        for t in flat:
            if not isinstance(t, Tensor):
                raise RuntimeError(f"{api}: Expected {name} to only contain Tensors, got {type(t)}")
    outer = is_grad_enabled()
    with enable_grad():
        _, diff = _prepare(primals, tuple(range(len(primals))), api, outer)
        out, aux = _split_aux(func(*diff), has_aux, api)
        flat_out, out_spec = _tensor_outputs(out, api)
        flat_in = _flatten(diff)[0]
        nested = outer and (_reaches_outside(flat_out, flat_in) or _requires_grad(tangents))
        if strict and not any(o.requires_grad for o in flat_out):
            raise RuntimeError(
                "jvp(f, primals, tangents, strict=True): The output of f is independent of the inputs. "
                "This is not allowed with strict=True."
            )
        us, firsts = _double_vjp_setup(flat_out, flat_in)
        tangents_out = _double_vjp(us, firsts, flat_out, flat_t, create_graph=nested)
    if not nested:
        flat_out = [o.detach() for o in flat_out]
        tangents_out = [t.detach() for t in tangents_out]
    result = (_unflatten(flat_out, out_spec), _unflatten(tangents_out, out_spec))
    if has_aux:
        return (*result, aux if nested else _map(_detach, aux))
    return result


# ------------------------------------------------------------------ Jacobians and the Hessian
def _one_hot(like, j):
    e = zeros(like.nelement(), dtype=like.dtype, device=like.device)
    e[j] = 1
    return e.reshape(like.shape)


def _assemble(per_output, flat_in, in_spec, out_spec):
    """The Jacobian's structure: func's output's, each leaf the argnums' structure of blocks."""
    return _unflatten([_unflatten(blocks, in_spec) for blocks in per_output], out_spec)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """A function returning the Jacobian of func with respect to the argument(s) at argnums, by
    reverse mode: one reverse pass per output element (its one-hot cotangent).  Each block has
    shape output.shape + input.shape; the result has the output's structure, each leaf the
    argnums' (a tuple when argnums is a tuple); with has_aux, (jacobian, aux).  chunk_size, a
    batching control of vmap, is checked and otherwise changes nothing here (one row at a time)."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    api = "jacrev(f, argnums)"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        outer = is_grad_enabled()
        with enable_grad():
            args, diff = _prepare(args, argnums, api, outer)
            out, aux = _split_aux(func(*args, **kwargs), has_aux, api)
            flat_out, out_spec = _tensor_outputs(out, api)
            flat_in, in_spec = _flatten(diff)
            nested = outer and _reaches_outside(flat_out, flat_in)
            per_output = []
            for o in flat_out:
                rows = [[] for _ in flat_in]
                for j in range(o.nelement() if o.requires_grad else 0):
                    for rows_k, g in zip(rows, _gradients([o], flat_in, [_one_hot(o, j)], nested, retain_graph=True)):
                        rows_k.append(g)
                per_output.append([
                    stack(r, 0).reshape((*o.shape, *x.shape)) if r else zeros((*o.shape, *x.shape), dtype=x.dtype,
                                                                               device=x.device)
                    for r, x in zip(rows, flat_in)
                ])  # fmt: skip
        if not nested:
            per_output = [[b.detach() for b in blocks] for blocks in per_output]
        jac = _assemble(per_output, flat_in, in_spec, out_spec)
        return (jac, aux if nested else _map(_detach, aux)) if has_aux else jac

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """A function returning the Jacobian of func with respect to the argument(s) at argnums,
    column by column (one Jacobian-vector product per input element) by the double-vjp trick (the
    module's docstring): the same blocks and structure as jacrev.  randomness, vmap's control of
    random ops across the batch, is checked and otherwise changes nothing here: func runs once."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    api = "jacfwd(f, argnums)"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        outer = is_grad_enabled()
        with enable_grad():
            args, diff = _prepare(args, argnums, api, outer)
            out, aux = _split_aux(func(*args, **kwargs), has_aux, api)
            flat_out, out_spec = _tensor_outputs(out, api)
            flat_in, in_spec = _flatten(diff)
            nested = outer and _reaches_outside(flat_out, flat_in)
            us, firsts = _double_vjp_setup(flat_out, flat_in)
            columns = [[[] for _ in flat_in] for _ in flat_out]  # [output][input] -> columns
            for k, x in enumerate(flat_in):
                for j in range(x.nelement()):
                    column = _double_vjp(us, [firsts[k]], flat_out, [_one_hot(x, j)], nested)  # J e_j
                    for cols, col in zip(columns, column):
                        cols[k].append(col)
            per_output = [
                [
                    stack(c, -1).reshape((*o.shape, *x.shape)) if c else zeros((*o.shape, *x.shape), dtype=x.dtype,
                                                                               device=x.device)
                    for c, x in zip(cols, flat_in)
                ]
                for cols, o in zip(columns, flat_out)
            ]  # fmt: skip
        if not nested:
            per_output = [[b.detach() for b in blocks] for blocks in per_output]
        jac = _assemble(per_output, flat_in, in_spec, out_spec)
        return (jac, aux if nested else _map(_detach, aux)) if has_aux else jac

    return wrapper


def hessian(func, argnums=0):
    """A function returning the Hessian of func (a scalar) with respect to the argument(s) at
    argnums: jacrev of jacrev (reverse over reverse; torch.func's jacfwd of jacrev gives the same
    blocks, and forward-over-reverse here would need third derivatives through the double-vjp
    trick).  Blocks of shape input_i.shape + input_j.shape."""
    return jacrev(jacrev(func, argnums), argnums)
