"""Every default argument of every name tensorgrad shares with PyTorch is PyTorch's default.

For each public name of tg, tg.Tensor, tg.nn.functional, tg.linalg and tg.special that PyTorch also
has, the default of each parameter both signatures name is compared.  tensorgrad's side is
inspect.signature.  PyTorch's side:

- inspect.signature where PyTorch's function is Python (most of torch.nn.functional, torch.functional);
- else the overloads of its type stubs (torch/_C/_VariableFunctions.pyi for torch.*, the TensorBase
  class of torch/_C/__init__.pyi for Tensor methods, torch/_C/_nn.pyi), generated from
  native_functions.yaml and so the operators' own defaults, together with the signature line that
  opens the builtin's docstring (torch.linalg and torch.special have no stubs);
- else the signature of torch.overrides.get_testing_overrides()'s stand-in.

A C++ operator has overloads (max(input) and max(input, dim, keepdim=False); sort(dim=-1) and
sort(*, stable, dim=-1)): a default here must be the default of the parameter in one of them, or, where
an overload goes without the parameter, it may be any value that stands for leaving it out.  A
parameter required here must be required in every overload that has it (histogram's bins is a
tensor of edges in one, and 100 bins by default in the other).  Where tensorgrad deliberately
differs, DELIBERATE names the parameter with the reason.
"""

from __future__ import annotations

import ast
import inspect
import pathlib
import re
import types
import warnings

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional as F

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.reference

import torch.nn.functional as TF  # noqa: E402 (after the importorskip)
from torch.overrides import get_testing_overrides  # noqa: E402

EMPTY = inspect.Parameter.empty
STUBS = pathlib.Path(torch.__file__).parent / "_C"

# (name, parameter) -> why tensorgrad's default differs from PyTorch's (the behaviour is PyTorch's).
_AXIS = (
    "None so that axis= (NumPy's spelling, which PyTorch accepts too) can stand for dim; with neither "
    "given it is the TypeError PyTorch raises for the missing dim"
)
_STEPS = (
    "required, as PyTorch requires it (torch.{}(0, 1) is a TypeError): the stub's first overload "
    "spells steps=None, a default PyTorch's argument parser does not accept"
)
DELIBERATE = {
    **{
        (f"{where}.{name}", "dim"): _AXIS
        for where in ("tg", "Tensor")
        for name in ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "logsumexp")
    },
    ("tg.arange", "end"): (
        "arange(end) and arange(start, end, step) in one signature: a lone argument is the end, as in "
        "PyTorch's overload arange(end)"
    ),
    ("tg.randint", "size"): (
        "randint(high, size) and randint(low, high, size) in one signature (*args, size=): the size is "
        "still required, as in PyTorch (a TypeError without it: test_randint_without_size_is_a_type_error)"
    ),
    ("tg.linspace", "steps"): _STEPS.format("linspace"),
    ("tg.logspace", "steps"): _STEPS.format("logspace"),
    ("Tensor.roll", "dims"): "None is PyTorch's documented default (the stub spells it ()): roll the flattened tensor",
}


# ------------------------------------------------------------------ PyTorch's signatures
def _literal(node):
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)  # a name: torch.strided, torch.preserve_format, ...


def _params(args: ast.arguments) -> dict:
    """Parameter name -> default (EMPTY when required) of a parsed signature, without self."""
    positional = args.posonlyargs + args.args
    defaults = [EMPTY] * (len(positional) - len(args.defaults)) + [_literal(d) for d in args.defaults]
    out = {a.arg: d for a, d in zip(positional, defaults)}
    out.update({a.arg: EMPTY if d is None else _literal(d) for a, d in zip(args.kwonlyargs, args.kw_defaults)})
    out.pop("self", None)
    return out


def _stub(name: str, cls: str | None = None) -> dict:
    """Function name -> the parameter tables of its overloads, from a type stub of torch._C."""
    path = STUBS / name
    if not path.exists():
        return {}
    body = ast.parse(path.read_text()).body
    if cls is not None:
        body = next(n.body for n in body if isinstance(n, ast.ClassDef) and n.name == cls)
    table: dict = {}
    for node in body:
        if isinstance(node, ast.FunctionDef):
            table.setdefault(node.name, []).append(_params(node.args))
    return table


VARIABLE_FUNCTIONS = _stub("_VariableFunctions.pyi")
TENSOR_METHODS = _stub("__init__.pyi", "TensorBase")
NN_FUNCTIONS = _stub("_nn.pyi")
OVERRIDES = get_testing_overrides()
STUB_TABLES = {
    "tg": (VARIABLE_FUNCTIONS, ""),
    "Tensor": (TENSOR_METHODS, ""),
    "F": ({**VARIABLE_FUNCTIONS, **NN_FUNCTIONS}, ""),
    "linalg": (VARIABLE_FUNCTIONS, "linalg_"),
    "special": (VARIABLE_FUNCTIONS, "special_"),
}


def _docstring_signatures(obj, name: str) -> list:
    """The signature lines that open a builtin's docstring ("norm(A, ord=None, dim=None, ...) -> Tensor")."""
    found = []
    for line in (getattr(obj, "__doc__", None) or "").strip().splitlines()[:3]:
        m = re.match(r"^[\w.]*?(\w+)\((.*)\)\s*(->.*)?$", line.strip())
        if m and m.group(1) == name:
            try:
                found.append(_params(ast.parse(f"def f({m.group(2)}): pass").body[0].args))
            except SyntaxError:
                pass
    return found


def _plain(sig: inspect.Signature) -> dict:
    kinds = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    out = {p.name: p.default for p in sig.parameters.values() if p.kind not in kinds}
    out.pop("self", None)
    return out


def torch_overloads(obj, name: str, where: str) -> list:
    """The parameter tables of PyTorch's overloads of `obj` (see the module's docstring)."""
    try:
        sig = inspect.signature(obj)
        if not any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()):
            return [_plain(sig)]
    except (TypeError, ValueError):
        pass
    table, prefix = STUB_TABLES[where]
    found = list(table.get(prefix + name, [])) + _docstring_signatures(obj, name)
    if not found and obj in OVERRIDES:
        found = [_plain(inspect.signature(OVERRIDES[obj]))]
    return found


# ------------------------------------------------------------------ the names both have
def _shared(ours_module, theirs_module, where):
    for name in sorted(dir(ours_module)):
        ours, theirs = getattr(ours_module, name), getattr(theirs_module, name, None)
        if name.startswith("_") or theirs is None or isinstance(ours, property | types.ModuleType):
            continue
        if inspect.isclass(ours) or inspect.isclass(theirs) or not callable(ours) or not callable(theirs):
            continue
        yield f"{where}.{name}", name, ours, theirs, where


def shared_names():
    yield from _shared(tg, torch, "tg")
    yield from _shared(tg.Tensor, torch.Tensor, "Tensor")
    yield from _shared(F, TF, "F")
    yield from _shared(tg.linalg, torch.linalg, "linalg")
    yield from _shared(tg.special, torch.special, "special")


def same_default(ours, theirs) -> bool:
    if isinstance(ours, bool) or isinstance(theirs, bool):
        return type(ours) is type(theirs) and ours == theirs
    if isinstance(ours, int | float) and isinstance(theirs, int | float):
        return ours == theirs
    if isinstance(ours, tuple | list) and isinstance(theirs, tuple | list):
        return len(ours) == len(theirs) and all(same_default(a, b) for a, b in zip(ours, theirs))
    if ours is None or theirs is None:
        return ours is theirs
    if isinstance(theirs, str) and not isinstance(ours, str):  # a name in the stub: torch.strided, ...
        return str(ours).rsplit(".", 1)[-1] == theirs.rsplit(".", 1)[-1]
    return ours == theirs


def default_mismatches():
    """(name, parameter, what differs) for every shared parameter whose default is not PyTorch's."""
    rows = []
    for label, name, ours_fn, theirs_fn, where in shared_names():
        ours = _plain(inspect.signature(ours_fn))
        overloads = torch_overloads(theirs_fn, name, where)
        for param, default in ours.items():
            seen = [o[param] for o in overloads if param in o]
            if not seen:
                continue
            defaults = [d for d in seen if d is not EMPTY]
            absent_somewhere = len(seen) < len(overloads)
            if default is EMPTY:
                if defaults:
                    rows.append((label, param, f"required here, PyTorch's default is {defaults[0]!r}"))
            elif absent_somewhere:
                continue  # an overload without it: the default stands for leaving it out
            elif not defaults:
                rows.append((label, param, f"default {default!r} here, required in PyTorch"))
            elif not any(same_default(default, d) for d in defaults):
                rows.append((label, param, f"default {default!r} here, PyTorch's {defaults!r}"))
    return rows


# ------------------------------------------------------------------ the tests
def test_the_comparison_covers_the_surface():
    """Hundreds of shared names, and PyTorch's side found for nearly all of them."""
    names = list(shared_names())
    assert len(names) > 600
    missing = [label for label, name, _, theirs, where in names if not torch_overloads(theirs, name, where)]
    assert len(missing) < 10, missing


def test_every_default_is_pytorchs():
    rows = default_mismatches()
    unexplained = [r for r in rows if (r[0], r[1]) not in DELIBERATE]
    assert not unexplained, "\n".join(" | ".join(r) for r in unexplained)


def test_every_deliberate_difference_is_still_one():
    """An entry of DELIBERATE that no longer differs is stale: remove it."""
    differing = {(r[0], r[1]) for r in default_mismatches()}
    assert set(DELIBERATE) <= differing, set(DELIBERATE) - differing


def test_the_comparison_finds_a_wrong_default(monkeypatch):
    """The check itself: a default changed here is reported."""

    def histogram(input, bins, *, range=None, weight=None, density=True):  # noqa: A002
        raise AssertionError("not called")

    monkeypatch.setattr(tg, "histogram", histogram)
    rows = {(r[0], r[1]) for r in default_mismatches()}
    assert {("tg.histogram", "bins"), ("tg.histogram", "density")} <= rows


# ------------------------------------------------------------------ defaults found wrong, behaviour checked
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (2, 3, 4), (2, 3, 4, 5)])
def test_softmax_without_dim_is_pytorchs_implicit_dim(name, shape):
    """F.softmax(x) (dim=None): PyTorch's deprecated implicit dim (0 for 0-, 1- and 3-d, else 1) and its warning."""
    x = np.random.default_rng(0).standard_normal(shape)
    with pytest.warns(UserWarning) as theirs_warned:
        theirs = getattr(TF, name)(torch.tensor(x))
    with pytest.warns(UserWarning) as ours_warned:
        ours = getattr(F, name)(tg.tensor(x))
    assert [str(w.message) for w in ours_warned] == [str(w.message) for w in theirs_warned]
    assert ours_warned[0].filename == __file__  # at the caller's line, as PyTorch's _stacklevel=3 puts it
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=0)  # float64, one exp and sum


def test_logsumexp_requires_dim_as_torch():
    for lib in (torch, tg):
        with pytest.raises(TypeError):
            lib.ones(2, 3).logsumexp()
        with pytest.raises(TypeError):
            lib.logsumexp(lib.ones(2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(tg.ones(2, 3).logsumexp((0, 1)).item(), np.log(6.0) + 1, rtol=1e-6)  # float32


def test_randint_without_size_is_a_type_error():
    for args in [(5,), (), (1, 2, 3, 4)]:
        for lib in (torch, tg):
            with pytest.raises(TypeError):
                lib.randint(*args)
    assert tg.randint(5, (3,)).shape == (3,) and tg.randint(2, 5, size=(2, 2)).shape == (2, 2)
