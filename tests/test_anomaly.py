"""Anomaly mode (issue 20, item 4): tg.autograd.detect_anomaly / set_detect_anomaly, compared with
torch.autograd's on the same NaN-making graphs, and a property over random graphs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorgrad as tg
from tensorgrad.testing import strategies as S

torch = pytest.importorskip("torch")  # the reference these tests compare with

# the NaN is the point of these tests: NumPy's "invalid value" warning from the op is expected
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def sqrt_at_zero(lib):
    """d sqrt(x) at x = 0 is inf; times the 0 that the product by 0 sends back: NaN in SqrtBackward0."""
    x = lib.zeros(3, requires_grad=True)
    y = x.sqrt()  # the op to blame
    return x, (y * 0).sum()


def log_of_negative(lib):
    """log(-1) is NaN in the forward; Mul's backward for w multiplies by it: its 1th output is NaN."""
    a = lib.tensor([-1.0, 2.0], requires_grad=True)
    w = lib.tensor([2.0, 3.0], requires_grad=True)
    return w, (a.log() * w).sum()  # the op to blame


def run_in_anomaly_mode(lib, graph):
    """(the error message, the anomaly warning's text) of backward through `graph` in anomaly mode."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly():
            _, loss = graph(lib)
            with pytest.raises(RuntimeError) as error:
                loss.backward()
    found = [str(w.message) for w in caught if "Error detected in" in str(w.message)]
    assert len(found) == 1
    return str(error.value), found[0]


@pytest.mark.parametrize("graph, op", [(sqrt_at_zero, "SqrtBackward0"), (log_of_negative, "MulBackward0")])
def test_nan_gradient_raises_as_in_torch(graph, op):
    ours, our_warning = run_in_anomaly_mode(tg, graph)
    theirs, their_warning = run_in_anomaly_mode(torch, graph)
    assert ours == theirs and op in ours
    # both warnings name the op and quote the line of this file that made it
    line = "y = x.sqrt()" if graph is sqrt_at_zero else "return w, (a.log() * w).sum()"
    for text in (our_warning, their_warning):
        assert text.startswith(f"Error detected in {op}. Traceback of forward call that caused the error:")
        assert __file__ in text and line in text
    assert "tensorgrad" + "/" not in our_warning.split("caused the error:")[1]  # tensorgrad's own frames trimmed


@pytest.mark.parametrize("graph", [sqrt_at_zero, log_of_negative])
def test_without_anomaly_mode_nan_passes_as_in_torch(graph):
    (ours, loss), (theirs, their_loss) = graph(tg), graph(torch)
    loss.backward()
    their_loss.backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())  # NaN where torch has NaN
    assert np.isnan(ours.grad.numpy()).any()


def test_inf_gradient_passes_as_in_torch():
    """PyTorch checks for NaN only: an inf gradient is a value (d sqrt at 0)."""
    for lib in (tg, torch):
        with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"), lib.autograd.detect_anomaly():
            x = lib.zeros(2, requires_grad=True)
            x.sqrt().sum().backward()
        assert np.isinf(np.asarray(x.grad)).all()


def test_modes_as_in_torch():
    for lib in (tg, torch):
        assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
        lib.autograd.set_detect_anomaly(True)
        assert lib.is_anomaly_enabled()
        lib.autograd.set_detect_anomaly(False)
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
        assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()


def test_check_nan_false_records_but_does_not_raise():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tg.autograd.detect_anomaly(check_nan=False):
            x, loss = sqrt_at_zero(tg)
            assert loss._ctx.stack  # recorded
            loss.backward()
    assert np.isnan(x.grad.numpy()).all()


def test_detect_anomaly_as_a_decorator():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):

        @tg.autograd.detect_anomaly()
        def step():
            assert tg.is_anomaly_enabled()
            sqrt_at_zero(tg)[1].backward()

    with pytest.warns(UserWarning, match="Error detected in"), pytest.raises(RuntimeError, match="SqrtBackward0"):
        step()
    assert not tg.is_anomaly_enabled()


def test_no_record_when_off():
    """Off, a node records nothing (its `stack` keeps the class default) and anomaly mode is not on
    the engine's observer hook (whose empty list is the engine's only cost); on, it is, and only then."""
    from tensorgrad import anomaly, observers

    _, loss = sqrt_at_zero(tg)
    assert loss._ctx.stack is None and "stack" not in vars(loss._ctx)
    assert anomaly._OBSERVER not in observers.observing
    with tg.autograd.set_detect_anomaly(True):
        assert anomaly._OBSERVER in observers.observing
        _, loss = sqrt_at_zero(tg)
        assert loss._ctx.stack is not None
    assert anomaly._OBSERVER not in observers.observing


UNARY = [
    lambda h: h.tanh(),  # op: tanh
    lambda h: h * 1.5,  # op: mul
    lambda h: h.sin(),  # op: sin
    lambda h: (h * h + 1).sqrt(),  # op: sqrt away from 0
    lambda h: h.exp() * 0.5,  # op: exp
]


def nan_op(h):
    return h + (h - h.detach()).sqrt() * 0  # the NaN op: sqrt at exactly 0, its gradient 0 / 0


def random_graph(x, steps, at):
    """x through `steps` (indices into UNARY), with the NaN op inserted after step `at` (None: none)."""
    h = x
    for i, k in enumerate(steps):
        h = UNARY[k](h)
        if i == at:
            h = nan_op(h)
    return h.sum()


@given(S.float_arrays(), st.lists(st.integers(0, len(UNARY) - 1), min_size=1, max_size=6), st.data())
def test_anomaly_names_the_inserted_op_property(array, steps, data):
    """With the NaN op inserted anywhere in a random chain, the error names SqrtBackward0 and the
    warning's traceback ends at the NaN op's line; without the NaN op, anomaly mode changes no
    gradient (and raises nothing)."""
    at = data.draw(st.integers(0, len(steps) - 1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tg.autograd.detect_anomaly():
            x = tg.tensor(array, requires_grad=True)
            with pytest.raises(
                RuntimeError, match=r"^Function 'SqrtBackward0' returned nan values in its 0th output\.$"
            ):
                random_graph(x, steps, at).backward()
    text = next(str(w.message) for w in caught if "Error detected in" in str(w.message))
    assert text.rstrip().endswith("# the NaN op: sqrt at exactly 0, its gradient 0 / 0")

    grads = []
    for mode in (False, True):
        with tg.autograd.set_detect_anomaly(mode):
            x = tg.tensor(array, requires_grad=True)
            random_graph(x, steps, None).backward()
            grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
