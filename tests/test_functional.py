"""tg.autograd.functional (vjp, jvp, hvp, vhp, jacobian, hessian) and tg.func (grad,
grad_and_value, vjp, jvp, jacrev, jacfwd, hessian) against torch.autograd.functional and torch.func.

Each is run on a scalar function (f: (tanh x * exp x).sum()), a vector function of two inputs
(g: x * sin y), and a tiny MLP's cross-entropy loss, in float64, and compared with PyTorch in
value and in structure (a tuple where PyTorch returns one, a Tensor where it returns one).  The
forward-mode products (jvp, hvp, jacfwd) come from the double-vjp trick here and from forward AD
in PyTorch: the same numbers to summation order.  Nesting (grad of grad, a third derivative,
create_graph=True results differentiated again) and the functional contract (inputs that do not
require grad, detached results) are checked too.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional  # noqa: F401  (makes tg.nn.functional reachable as lib.nn.functional)

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.reference

import torch.autograd.functional as TAF  # noqa: E402 (after the importorskip)
import torch.func as TFN  # noqa: E402

TGAF = tg.autograd.functional

# float64 throughout, and the same formulas as PyTorch's derivatives: the differences are summation
# orders (a few ulps of values of order 1-10), far below 1e-10 relative.
TOL = dict(rtol=1e-10, atol=1e-12)

RNG = np.random.default_rng(0)
A, B, V, W = (RNG.standard_normal(4) for _ in range(4))


def f(x):
    return (x.tanh() * x.exp()).sum()


def g(x, y):
    return x * y.sin()


def h(x, y):
    return (x * y.exp()).sum() + (x * x * y).sum()


def tg_(a, requires_grad=False):
    return tg.tensor(a, dtype=tg.float64, requires_grad=requires_grad)


def th(a, requires_grad=False):
    return torch.tensor(a, dtype=torch.float64, requires_grad=requires_grad)


def check(ours, theirs, path="result", detached=True):
    """The same structure (tuple / list / dict / Tensor), the same values; detached unless not."""
    if isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), f"{path}: {type(ours)} vs {type(theirs)}"
        for i, (o, t) in enumerate(zip(ours, theirs)):
            check(o, t, f"{path}[{i}]", detached)
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and ours.keys() == theirs.keys(), path
        for k in theirs:
            check(ours[k], theirs[k], f"{path}[{k!r}]", detached)
    else:
        assert isinstance(ours, tg.Tensor), f"{path}: {type(ours)}"
        assert tuple(ours.shape) == tuple(theirs.shape), f"{path}: {ours.shape} vs {tuple(theirs.shape)}"
        if detached:
            assert not ours.requires_grad, f"{path} requires grad"
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), err_msg=path, **TOL)


# ------------------------------------------------------------------ a tiny MLP's loss
X = RNG.standard_normal((5, 3))
Y = np.array([0, 2, 1, 1, 0])
W1, B1, W2, B2 = (RNG.standard_normal(shape) for shape in ((4, 3), (4,), (3, 4), (3,)))


def mlp_loss(lib):
    """The loss of a 3-4-3 tanh MLP on a fixed batch, a function of its weights."""
    x, y = lib.tensor(X), lib.tensor(Y)

    def loss(w1, b1, w2, b2):
        hidden = lib.nn.functional.linear(x, w1, b1).tanh()
        return lib.nn.functional.cross_entropy(lib.nn.functional.linear(hidden, w2, b2), y)

    return loss


def weights(lib):
    return tuple(lib.tensor(w, dtype=lib.float64) for w in (W1, B1, W2, B2))


# ------------------------------------------------------------------ tg.autograd.functional
@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp(create_graph):
    kw = dict(create_graph=create_graph)
    check(TGAF.vjp(f, tg_(A), **kw), TAF.vjp(f, th(A), **kw), detached=not create_graph)
    check(TGAF.vjp(g, (tg_(A), tg_(B)), tg_(V), **kw), TAF.vjp(g, (th(A), th(B)), th(V), **kw), detached=False)
    check(TGAF.vjp(lambda x: g(x, tg_(B)), tg_(A), tg_(V)), TAF.vjp(lambda x: g(x, th(B)), th(A), th(V)))
    check(TGAF.vjp(mlp_loss(tg), weights(tg)), TAF.vjp(mlp_loss(torch), weights(torch)))


def test_jvp():
    check(TGAF.jvp(g, (tg_(A), tg_(B)), (tg_(V), tg_(W))), TAF.jvp(g, (th(A), th(B)), (th(V), th(W))))
    check(TGAF.jvp(f, tg_(A), tg_(V)), TAF.jvp(f, th(A), th(V)))
    two = lambda lib: lambda x: (x.sin(), (x * x).sum())  # a tuple of outputs: a tuple of products
    check(TGAF.jvp(two(tg), tg_(A), tg_(V)), TAF.jvp(two(torch), th(A), th(V)))
    check(TGAF.jvp(mlp_loss(tg), weights(tg), weights(tg)), TAF.jvp(mlp_loss(torch), weights(torch), weights(torch)))


def test_hvp_vhp():
    for name in ("hvp", "vhp"):
        ours, theirs = getattr(TGAF, name), getattr(TAF, name)
        check(ours(f, tg_(A), tg_(V)), theirs(f, th(A), th(V)))
        check(ours(h, (tg_(A), tg_(B)), (tg_(V), tg_(W))), theirs(h, (th(A), th(B)), (th(V), th(W))))
        check(ours(mlp_loss(tg), weights(tg), weights(tg)), theirs(mlp_loss(torch), weights(torch), weights(torch)))


def test_jacobian_structure_and_values():
    check(TGAF.jacobian(f, tg_(A)), TAF.jacobian(f, th(A)))  # (4,)
    check(TGAF.jacobian(g, (tg_(A), tg_(B))), TAF.jacobian(g, (th(A), th(B))))  # a tuple over inputs
    two = lambda lib: lambda x, y: (x * y, (x.exp() * y).sum())
    check(TGAF.jacobian(two(tg), (tg_(A), tg_(B))), TAF.jacobian(two(torch), (th(A), th(B))))  # tuple of tuples
    one_in = lambda lib: lambda x: (x.sin(), x.sum())
    check(TGAF.jacobian(one_in(tg), tg_(A)), TAF.jacobian(one_in(torch), th(A)))  # a tuple over outputs
    check(TGAF.jacobian(mlp_loss(tg), weights(tg)), TAF.jacobian(mlp_loss(torch), weights(torch)))
    unused = lambda lib: lambda x, y: x.exp()  # y unused: zeros
    check(TGAF.jacobian(unused(tg), (tg_(A), tg_(B))), TAF.jacobian(unused(torch), (th(A), th(B))))


def test_hessian():
    check(TGAF.hessian(f, tg_(A)), TAF.hessian(f, th(A)))
    check(TGAF.hessian(h, (tg_(A), tg_(B))), TAF.hessian(h, (th(A), th(B))))


def test_hessian_of_mlp_cross_entropy_wrt_weights():
    """Every block of the Hessian of a tiny MLP's cross-entropy with respect to its weights."""
    ours = TGAF.hessian(mlp_loss(tg), weights(tg))
    check(ours, TAF.hessian(mlp_loss(torch), weights(torch)))
    assert tuple(ours[0][2].shape) == (4, 3, 3, 4)
    check(tg.func.hessian(mlp_loss(tg), argnums=(0, 1, 2, 3))(*weights(tg)),
          TFN.hessian(mlp_loss(torch), argnums=(0, 1, 2, 3))(*weights(torch)))  # fmt: skip


def test_create_graph_results_differentiate_again():
    """create_graph=True: the results stay in the graph of the inputs (a view of each)."""
    x, xt = tg_(A, True), th(A, True)
    for name, args in (("vjp", ()), ("hvp", (V,)), ("vhp", (V,))):
        v = (tg_(args[0]),) if args else ()
        vt = (th(args[0]),) if args else ()
        _, ours = getattr(TGAF, name)(f, x, *v, create_graph=True)
        _, theirs = getattr(TAF, name)(f, xt, *vt, create_graph=True)
        check(tg.autograd.grad((ours * tg_(W)).sum(), x), torch.autograd.grad((theirs * th(W)).sum(), xt))
    jac = TGAF.jacobian(lambda x: x.sin() * x, x, create_graph=True)
    jac_t = TAF.jacobian(lambda x: x.sin() * x, xt, create_graph=True)
    check(jac, jac_t, detached=False)
    check(tg.autograd.grad(jac.sum(), x), torch.autograd.grad(jac_t.sum(), xt))


def test_functional_errors_as_pytorch():
    def raises_like(ours, theirs):
        with pytest.raises(Exception) as t:
            theirs()
        with pytest.raises(type(t.value)) as o:
            ours()
        assert str(o.value) == str(t.value)

    raises_like(lambda: TGAF.vjp(g, (tg_(A), tg_(B))), lambda: TAF.vjp(g, (th(A), th(B))))  # v needed
    with pytest.raises(RuntimeError, match=r"^v has invalid size: should be \(4,\) but got \(2,\)\.$"):
        TGAF.vjp(g, (tg_(A), tg_(B)), tg_(B[:2]))  # PyTorch's message, with tensorgrad's sizes (tuples)
    raises_like(lambda: TGAF.hvp(g, (tg_(A), tg_(B)), (tg_(V), tg_(W))),
                lambda: TAF.hvp(g, (th(A), th(B)), (th(V), th(W))))  # fmt: skip
    raises_like(lambda: TGAF.jacobian(lambda x, y: x.exp(), (tg_(A), tg_(B)), strict=True),
                lambda: TAF.jacobian(lambda x, y: x.exp(), (th(A), th(B)), strict=True))  # fmt: skip
    raises_like(lambda: TGAF.vjp(lambda x: tg_(B), tg_(A), tg_(V), strict=True),
                lambda: TAF.vjp(lambda x: th(B), th(A), th(V), strict=True))  # fmt: skip
    raises_like(lambda: TGAF.jacobian(f, [tg_(A)]), lambda: TAF.jacobian(f, [th(A)]))
    raises_like(lambda: TGAF.hessian(g, (tg_(A), tg_(B))), lambda: TAF.hessian(g, (th(A), th(B))))
    with pytest.raises(NotImplementedError, match="vectorize=False"):
        TGAF.jacobian(f, tg_(A), vectorize=True)
    with pytest.raises(NotImplementedError, match='strategy="reverse-mode"'):
        TGAF.jacobian(f, tg_(A), strategy="forward-mode")
    with pytest.raises(NotImplementedError, match='outer_jacobian_strategy="reverse-mode"'):
        TGAF.hessian(f, tg_(A), outer_jacobian_strategy="forward-mode")


def test_functional_import_spelling():
    from tensorgrad.autograd.functional import jacobian

    assert jacobian is TGAF.jacobian and TGAF.__all__ == TAF.__all__


# ------------------------------------------------------------------ tg.func
def test_func_grad_and_grad_and_value():
    check(tg.func.grad(f)(tg_(A)), TFN.grad(f)(th(A)))
    check(tg.func.grad_and_value(f)(tg_(A)), TFN.grad_and_value(f)(th(A)))
    check(tg.func.grad(h, argnums=1)(tg_(A), tg_(B)), TFN.grad(h, argnums=1)(th(A), th(B)))
    check(tg.func.grad(h, argnums=(0, -1))(tg_(A), tg_(B)), TFN.grad(h, argnums=(0, -1))(th(A), th(B)))
    loss = mlp_loss
    check(tg.func.grad(loss(tg), argnums=(0, 1, 2, 3))(*weights(tg)),
          TFN.grad(loss(torch), argnums=(0, 1, 2, 3))(*weights(torch)))  # fmt: skip
    # a pytree argument, and has_aux
    tree = lambda lib: lambda p: ((p["w"] * p["b"][0].exp()).sum(), {"aux": p["w"] * 2})
    ours = tg.func.grad_and_value(tree(tg), has_aux=True)({"w": tg_(A), "b": [tg_(B)]})
    theirs = TFN.grad_and_value(tree(torch), has_aux=True)({"w": th(A), "b": [th(B)]})
    check(ours, theirs)
    check(tg.func.grad(tree(tg), has_aux=True)({"w": tg_(A), "b": [tg_(B)]}),
          TFN.grad(tree(torch), has_aux=True)({"w": th(A), "b": [th(B)]}))  # fmt: skip


def test_func_nested_grad_is_higher_order():
    s = lambda x: x.sin() * x.exp()
    x, xt = tg_(1.3), th(1.3)
    check(tg.func.grad(tg.func.grad(s))(x), TFN.grad(TFN.grad(s))(xt))
    check(tg.func.grad(tg.func.grad(tg.func.grad(s)))(x), TFN.grad(TFN.grad(TFN.grad(s)))(xt))
    # d/dx of f'(x) . w: the gradient of a function of a gradient
    gw = lambda lib, w: lambda x: (tg.func.grad(f)(x) * w).sum() if lib is tg else (TFN.grad(f)(x) * w).sum()
    check(tg.func.grad(gw(tg, tg_(W)))(tg_(A)), TFN.grad(gw(torch, th(W)))(th(A)))


def test_func_inner_argument_is_told_apart_from_the_closure():
    """d/dx [d/dy (x y^2)] at y = x is d/dx 2x^2 = 4x, not 6x: the inner transform's copy of x is
    a new tensor, distinct from the outer x its function reads from the closure."""
    ours = tg.func.grad(lambda x: tg.func.grad(lambda y: (x * y * y).sum())(x).sum())(tg_(A))
    theirs = TFN.grad(lambda x: TFN.grad(lambda y: (x * y * y).sum())(x).sum())(th(A))
    check(ours, theirs)
    np.testing.assert_allclose(ours.numpy(), 4 * A, **TOL)
    xt = th(A, True)  # the same in torch.autograd.functional, with create_graph=True
    x = tg_(A, True)
    inner = TGAF.vjp(lambda y: (x * y * y).sum(), x, create_graph=True)[1]
    inner_t = TAF.vjp(lambda y: (xt * y * y).sum(), xt, create_graph=True)[1]
    check(tg.autograd.grad(inner.sum(), x), torch.autograd.grad(inner_t.sum(), xt))


def test_func_composes_with_the_users_graph():
    """An argument that requires grad (outside any transform): the gradient stays differentiable
    with respect to it, as with torch.func."""
    x, xt = tg_(A, True), th(A, True)
    d, dt = tg.func.grad(f)(x), TFN.grad(f)(xt)
    assert d.requires_grad and dt.requires_grad
    check(tg.autograd.grad((d * tg_(W)).sum(), x), torch.autograd.grad((dt * th(W)).sum(), xt))
    with tg.no_grad():  # no graph is wanted: detached
        assert not tg.func.grad(f)(x).requires_grad


def test_func_closure_tensors_that_require_grad_stay_in_the_graph():
    """A tensor func reads from its closure (a parameter) that requires grad: the transform's
    results stay differentiable with respect to it, as torch.func's do; the arguments need not."""
    w, wt = tg_(W, True), th(W, True)
    for name in ("grad", "jacrev", "jacfwd"):
        ours = getattr(tg.func, name)(lambda x: (x * w).tanh().sum())(tg_(A))
        theirs = getattr(TFN, name)(lambda x: (x * wt).tanh().sum())(th(A))
        assert ours.requires_grad and theirs.requires_grad
        check(tg.autograd.grad((ours * tg_(V)).sum(), w), torch.autograd.grad((theirs * th(V)).sum(), wt))
    out, fn = tg.func.vjp(lambda x: x * w.exp(), tg_(A))
    out_t, fn_t = TFN.vjp(lambda x: x * wt.exp(), th(A))
    assert out.requires_grad and out_t.requires_grad
    check(tg.autograd.grad(fn(tg_(V))[0].sum(), w), torch.autograd.grad(fn_t(th(V))[0].sum(), wt))
    _, tangent = tg.func.jvp(lambda x: x * w.exp(), (tg_(A),), (tg_(V),))
    _, tangent_t = TFN.jvp(lambda x: x * wt.exp(), (th(A),), (th(V),))
    check(tg.autograd.grad(tangent.sum(), w), torch.autograd.grad(tangent_t.sum(), wt))


def test_func_arguments_need_not_require_grad_and_are_untouched():
    x = tg_(A)
    tg.func.grad(f)(x)
    assert not x.requires_grad and x.grad is None and x.grad_fn is None


def test_func_vjp():
    ours, fn = tg.func.vjp(g, tg_(A), tg_(B))
    theirs, fn_t = TFN.vjp(g, th(A), th(B))
    check(ours, theirs)
    check(fn(tg_(V)), fn_t(th(V)))
    check(fn(tg_(W)), fn_t(th(W)))  # again: the graph is retained
    two = lambda lib: lambda x: ((x.sin(), x * x), x.cos())
    ours, fn, aux = tg.func.vjp(two(tg), tg_(A), has_aux=True)
    theirs, fn_t, aux_t = TFN.vjp(two(torch), th(A), has_aux=True)
    check((ours, aux), (theirs, aux_t))
    check(fn((tg_(V), tg_(W))), fn_t((th(V), th(W))))


def test_func_jvp():
    check(tg.func.jvp(g, (tg_(A), tg_(B)), (tg_(V), tg_(W))), TFN.jvp(g, (th(A), th(B)), (th(V), th(W))))
    check(tg.func.jvp(f, (tg_(A),), (tg_(V),)), TFN.jvp(f, (th(A),), (th(V),)))
    check(tg.func.jvp(mlp_loss(tg), weights(tg), weights(tg)), TFN.jvp(mlp_loss(torch), weights(torch), weights(torch)))
    aux = lambda x: (x.exp(), x * 3)
    check(tg.func.jvp(aux, (tg_(A),), (tg_(V),), has_aux=True), TFN.jvp(aux, (th(A),), (th(V),), has_aux=True))
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        tg.func.jvp(f, tg_(A), tg_(V))
    with pytest.raises(RuntimeError, match="strict=True"):
        tg.func.jvp(lambda x: tg_(B), (tg_(A),), (tg_(V),), strict=True)


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
def test_func_jacobians(name):
    ours, theirs = getattr(tg.func, name), getattr(TFN, name)
    check(ours(g)(tg_(A), tg_(B)), theirs(g)(th(A), th(B)))
    check(ours(g, argnums=(0, 1))(tg_(A), tg_(B)), theirs(g, argnums=(0, 1))(th(A), th(B)))
    check(ours(f)(tg_(A)), theirs(f)(th(A)))
    two = lambda x, y: {"p": x * y, "s": (x.exp() * y).sum()}
    check(ours(two, argnums=1)(tg_(A), tg_(B)), theirs(two, argnums=1)(th(A), th(B)))
    check(ours(mlp_loss(tg), argnums=(0, 3))(*weights(tg)), theirs(mlp_loss(torch), argnums=(0, 3))(*weights(torch)))
    aux = lambda x: (x.sin() * x, x.cos())
    check(ours(aux, has_aux=True)(tg_(A)), theirs(aux, has_aux=True)(th(A)))


def test_func_hessian():
    check(tg.func.hessian(f)(tg_(A)), TFN.hessian(f)(th(A)))
    check(tg.func.hessian(h, argnums=(0, 1))(tg_(A), tg_(B)), TFN.hessian(h, argnums=(0, 1))(th(A), th(B)))
    check(tg.func.jacfwd(tg.func.jacrev(f))(tg_(A)), TFN.hessian(f)(th(A)))  # torch.func's composition


def test_func_errors():
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor"):
        tg.func.grad(g)(tg_(A), tg_(B))
    with pytest.raises(RuntimeError, match="Got argnum=2, but only 2 positional inputs"):
        tg.func.grad(h, argnums=2)(tg_(A), tg_(B))
    with pytest.raises(RuntimeError, match="argnums elements must be unique"):
        tg.func.grad(h, argnums=(0, 0))(tg_(A), tg_(B))
    with pytest.raises(ValueError, match="chunk_size"):
        tg.func.jacrev(f, chunk_size=0)
    with pytest.raises(RuntimeError, match="randomness"):
        tg.func.jacfwd(f, randomness="sometimes")


# ------------------------------------------------------------------ the surface
@pytest.mark.parametrize(
    "ours, theirs",
    [(getattr(TGAF, n), getattr(TAF, n)) for n in TAF.__all__]
    + [(getattr(tg.func, n), getattr(TFN, n)) for n in tg.func.__all__],
    ids=lambda fn: getattr(fn, "__module__", "").split(".")[-1] + "." + getattr(fn, "__name__", ""),
)
def test_signatures_are_pytorchs(ours, theirs):
    """The same parameters, kinds and defaults (jacrev's private _preallocate_and_copy aside)."""

    def params(fn):
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()
                if not p.name.startswith("_")]  # fmt: skip

    assert params(ours) == params(theirs)


def test_every_path_gives_the_same_numbers(device):
    """The transforms on each device path (the fused CPU kernels, the reference, the strict guard)."""
    x, y = tg.tensor(A, device=device), tg.tensor(B, device=device)
    for ours, theirs in (
        (TGAF.jacobian(g, (x, y)), TAF.jacobian(g, (th(A), th(B)))),
        (TGAF.hessian(h, (x, y)), TAF.hessian(h, (th(A), th(B)))),
        (TGAF.jvp(g, (x, y), (x, y)), TAF.jvp(g, (th(A), th(B)), (th(A), th(B)))),
        (tg.func.jacfwd(g, argnums=(0, 1))(x, y), TFN.jacfwd(g, argnums=(0, 1))(th(A), th(B))),
        (tg.func.hessian(f)(x), TFN.hessian(f)(th(A))),
    ):
        for o in ours if isinstance(ours, tuple) else (ours,):
            for t in o if isinstance(o, tuple) else (o,):
                assert t.device == device
        check(ours, theirs)
