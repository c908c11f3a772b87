"""Every op's second derivative against central differences of its first (tg.autograd.gradgradcheck).

The table of ops is tests/op_table.py:OPS, as for test_gradcheck_ops.py, on every path of the
`device` fixture.  gradgradcheck differentiates (inputs, grad_outputs) -> the first gradients
(create_graph=True): its analytic side is the Tensor-level formulas (`backward_graph`), its numeric
side central differences of the first backward.  An op without a formula raises "double backward
is not implemented for <op>" (lazily, when the second pass reaches it): that case is skipped with
the message, so `-rs` lists the ops still lacking one; every other case must pass, element by
element (the table's small inputs keep the ~1700 checks within seconds).  Tolerances are gradcheck's defaults, sized for
float64 (see test_gradcheck_ops.py), widened where the case's own gradcheck arguments say.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_table import OPS, Case, make_inputs

import tensorgrad as tg

NO_FORMULA = "double backward is not implemented"


def _leaves(arrays, device):
    return [tg.tensor(a, device=device, requires_grad=True) for a in arrays]


def gradgradcheck_or_skip(fn, inputs, **kwargs):
    """gradgradcheck, skipping (with the op's message) where an op has no Tensor-level formula."""
    try:
        return tg.autograd.gradgradcheck(fn, inputs, **kwargs)
    except (RuntimeError, NotImplementedError) as e:
        if NO_FORMULA in str(e):
            pytest.skip(str(e))
        raise


@pytest.mark.parametrize("case", OPS, ids=lambda c: c.name)
def test_gradgradcheck_op(case: Case, device):
    inputs = _leaves(make_inputs(case), device)
    assert gradgradcheck_or_skip(lambda *xs: case.fn(tg, *xs), inputs, **case.gradcheck)


# ------------------------------------------------------------------ fast mode, a few ops
@pytest.mark.parametrize("case", [c for c in OPS if c.name in ("sigmoid", "softmax", "layer_norm_affine",
                                                               "matmul_batched", "self_mul")],
                         ids=lambda c: c.name)  # fmt: skip
def test_gradgradcheck_fast_mode(case: Case, device):
    """Fast mode: one random direction per input and grad_output."""
    inputs = _leaves(make_inputs(case), device)
    assert gradgradcheck_or_skip(lambda *xs: case.fn(tg, *xs), inputs, fast_mode=True, **case.gradcheck)


# ------------------------------------------------------------------ it must be able to fail
class CubeDetached(tg.autograd.Function):
    """x^3 with a backward right to first order and wrong to second: 3 x^2 computed from
    x.detach(), so the second pass sees a constant and the x^3's 6x g term is lost."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x.detach() ** 2


def _x(device="cpu"):
    return tg.tensor(np.random.default_rng(0).uniform(0.5, 2, (2, 3)), device=device, requires_grad=True)


def test_gradgradcheck_catches_detached_backward(device):
    x = _x(device)
    assert tg.autograd.gradcheck(CubeDetached.apply, [x])  # the first derivative is right
    with pytest.raises(tg.GradcheckError, match=r"input 0 .*element \(0, 0\).*analytic gradient 0"):
        tg.autograd.gradgradcheck(CubeDetached.apply, [x])
    assert tg.autograd.gradgradcheck(CubeDetached.apply, [x], raise_exception=False) is False
    with pytest.raises(tg.GradcheckError, match="fast mode"):
        tg.autograd.gradgradcheck(CubeDetached.apply, [x], fast_mode=True)


def test_gradgradcheck_passes_with_the_right_formula(device):
    class Cube(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x**2

    assert tg.autograd.gradgradcheck(Cube.apply, [_x(device)])


class RawSquare(tg.Function):
    """x^2 on raw arrays, with no Tensor-level formula (as a user's raw-array op may be)."""

    def forward(self, x):
        self.save_for_backward(x)
        return x * x

    def backward(self, g):
        (x,) = self.saved
        return 2 * g * x


def test_gradgradcheck_op_without_formula_raises():
    x = _x()
    assert tg.autograd.gradcheck(RawSquare.apply, [x])
    with pytest.raises(RuntimeError, match="double backward is not implemented for RawSquareBackward0"):
        tg.autograd.gradgradcheck(RawSquare.apply, [x])


def test_gradgradcheck_given_grad_outputs_and_constants():
    """grad_outputs given (one without requires_grad: not checked), an input without grad (a
    constant), two outputs."""
    rng = np.random.default_rng(1)
    x, y = _x(), tg.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    c = tg.tensor(rng.standard_normal((2, 3)))
    go = (tg.tensor(rng.standard_normal((2, 3)), requires_grad=True), tg.tensor(rng.standard_normal(())))
    assert tg.autograd.gradgradcheck(lambda x, y, c: (x * y.sin() * c, (x.exp() * y).sum()), [x, y, c], go)


def test_gradgradcheck_options():
    x = _x()
    f = lambda x: x.tanh()  # noqa: E731
    assert tg.autograd.gradgradcheck(f, x, gen_non_contig_grad_outputs=True, check_grad_dtypes=True, masked=True)
    with pytest.raises(NotImplementedError, match="vmap"):
        tg.autograd.gradgradcheck(f, x, check_batched_grad=True)
    with pytest.raises(NotImplementedError, match="forward-mode"):
        tg.autograd.gradgradcheck(f, x, check_fwd_over_rev=True)
    with pytest.raises(AssertionError, match="at least one"):
        tg.autograd.gradgradcheck(f, x, check_rev_over_rev=False, check_undefined_grad=False)


@pytest.mark.reference
def test_gradgradcheck_signature_is_torchs():
    import inspect

    torch = pytest.importorskip("torch")
    ours = inspect.signature(tg.autograd.gradgradcheck)
    theirs = inspect.signature(torch.autograd.gradgradcheck)
    assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == [
        (p.name, p.kind, p.default) for p in theirs.parameters.values()
    ]
