"""The table of public names (tensorgrad/_public_names.py): it drives tg's namespace, `__all__` and
the generated forwarders (tensorgrad/functions/forwarders.py), and no public name was lost or added
when the names moved into it.

tests/public_names.json is the snapshot of every public name of tg, the Tensor, tg.nn,
tg.nn.functional, tg.optim, tg.linalg, tg.special, tg.testing and tg.distributed taken before the
table existed (`dir()` without the `_` names, and `__all__`).  A name added or removed on purpose
is added to or removed from the snapshot in the same commit."""

from __future__ import annotations

import ast
import collections
import inspect
import json
import pathlib
import subprocess
import sys

import pytest

import tensorgrad as tg
from tensorgrad import _public_names as table
from tensorgrad.functions import forwarders

ROOT = pathlib.Path(__file__).resolve().parents[1]
SNAPSHOT = pathlib.Path(__file__).with_name("public_names.json")

# the snapshot's namespaces, as a fresh interpreter sees them after importing these modules
_SNAPSHOT_SCRIPT = """
import json
import tensorgrad as tg
import tensorgrad.distributed, tensorgrad.nn.functional, tensorgrad.testing
spaces = {"tg": tg, "Tensor": tg.Tensor, "tg.nn": tg.nn, "tg.nn.functional": tg.nn.functional,
          "tg.optim": tg.optim, "tg.linalg": tg.linalg, "tg.special": tg.special, "tg.testing": tg.testing,
          "tg.distributed": tg.distributed}
out = {}
for key, ns in spaces.items():
    out[key] = {"dir": sorted(n for n in dir(ns) if not n.startswith("_"))}
    if not isinstance(ns, type):
        out[key]["__all__"] = sorted(ns.__all__)
print(json.dumps(out))
"""

FORWARDED = [(public, attr) for _, source, public, attr in table.entries() if source == table.FORWARD]


def test_every_public_name_is_the_one_before_the_table():
    """dir() and __all__ of every namespace, in a fresh interpreter (this session's other tests import
    more submodules, which dir(tg) would show), against the snapshot."""
    out = subprocess.run([sys.executable, "-c", _SNAPSHOT_SCRIPT], cwd=ROOT, capture_output=True, text=True, check=True)
    now, before = json.loads(out.stdout), json.loads(SNAPSHOT.read_text())
    assert now.keys() == before.keys()
    for space in before:
        for kind in before[space]:
            lost = sorted(set(before[space][kind]) - set(now[space][kind]))
            added = sorted(set(now[space][kind]) - set(before[space][kind]))
            assert not lost and not added, f"{space} {kind}: lost {lost}, added {added}"


def test_all_is_the_table_in_its_order():
    assert tg.__all__ == [public for _, _, public, _ in table.entries()]


def test_the_table_names_each_name_once():
    counts = collections.Counter(public for _, _, public, _ in table.entries())
    assert not [name for name, n in counts.items() if n > 1]


def test_every_name_of_the_table_resolves_and_is_documented():
    """Each name is what its source says, and has a docstring (a value without one of its own, a
    dtype or memory format, is described by its family's line)."""
    import importlib

    for family, source, public, attr in table.entries():
        assert family.title and family.about, family
        value = getattr(tg, public)
        if source == table.MODULES:
            assert value is importlib.import_module(f"tensorgrad.{attr}")
        elif source == table.FORWARD:
            assert value is getattr(forwarders, attr)
        else:
            assert value is getattr(importlib.import_module(f"tensorgrad.{source}"), attr)
        if callable(value) or inspect.ismodule(value):
            assert (inspect.getdoc(value) or "").strip(), f"tg.{public} has no docstring"


@pytest.mark.parametrize("public, attr", FORWARDED)
def test_a_forwarder_has_its_methods_signature_and_docstring(public, attr):
    method, fn = getattr(tg.Tensor, attr), getattr(tg, public)
    ours, theirs = list(inspect.signature(fn).parameters.values()), list(inspect.signature(method).parameters.values())
    assert ours[0].name == "input" and ours[0].default is inspect.Parameter.empty  # PyTorch's name
    assert ours[1:] == theirs[1:]
    assert fn.__doc__ == method.__doc__ if method.__doc__ else f"input.{attr}(" in fn.__doc__
    assert fn.__name__ == attr and fn.__module__ == "tensorgrad.functions.forwarders"
    assert getattr(fn, "accepts_keepdims", False) == getattr(method, "accepts_keepdims", False)


@pytest.mark.parametrize("public, attr", FORWARDED)
def test_a_forwarder_refuses_what_is_not_a_tensor(public, attr):
    """PyTorch's TypeError (torch.sum(3)), naming the function, before the method is looked up (the
    other required arguments are given, so that it is the input that is wrong)."""
    fn = getattr(tg, public)
    params = list(inspect.signature(fn).parameters.values())[1:]
    rest = [0] * sum(p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
    with pytest.raises(TypeError, match=rf"^{attr}\(\): argument 'input' \(position 1\) must be Tensor, not int$"):
        fn(3, *rest)
    with pytest.raises(TypeError, match=r"must be Tensor, not list$"):
        fn([1.0, 2.0], *rest)


def test_a_forwarder_calls_its_method():
    x = tg.tensor([[1.0, -2.0], [3.0, 4.0]])
    assert tg.sum(x, 1, keepdims=True).tolist() == x.sum(1, keepdim=True).tolist() == [[-1.0], [7.0]]
    assert tg.clamp(x, min=0.0).tolist() == [[1.0, 0.0], [3.0, 4.0]]
    assert tg.matmul(input=x, other=x).tolist() == (x @ x).tolist()
    assert tg.arcsin is tg.asin and tg.clip is tg.clamp and tg.ger is tg.outer
    with pytest.raises(TypeError, match=r"^exp\(\) takes 1 positional argument but 2 were given$"):
        tg.exp(x, 3)
    source = inspect.getsource(tg.sum)  # the generated text, as a written-out function's would be
    assert source.startswith("def sum(input, dim=")
    assert "return input.sum(dim, keepdim, dtype=dtype, axis=axis)" in source


@pytest.mark.reference
@pytest.mark.parametrize(
    "name, args",
    [("sum", ()), ("exp", ()), ("gather", (0, [[0]])), ("matmul", ([1.0],)), ("roll", (1,))],
)
def test_the_non_tensor_error_is_pytorchs(name, args):
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError) as theirs:
        getattr(torch, name)(3, *[torch.tensor(a) if isinstance(a, list) else a for a in args])
    with pytest.raises(TypeError) as ours:
        getattr(tg, name)(3, *[tg.tensor(a) if isinstance(a, list) else a for a in args])
    assert str(ours.value) == str(theirs.value)


def _only_forwards(node: ast.FunctionDef) -> str | None:
    """The method a function only calls on its first argument (`return input.exp()`), else None."""
    body = [b for b in node.body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))]
    args = node.args.posonlyargs + node.args.args
    if len(body) != 1 or not isinstance(body[0], ast.Return) or not args:
        return None
    call = body[0].value
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
        return call.func.attr if call.func.value.id == args[0].arg else None
    return None


def test_no_function_written_out_only_forwards_with_its_methods_signature():
    """A function that only calls its Tensor method, with the method's signature, belongs in the
    table (FORWARD), not written out: the ones left differ in their signature (tg.round's decimals
    is keyword-only, tg.flip takes dims as one argument, ...)."""
    written = []
    for path in sorted((ROOT / "tensorgrad" / "functions").glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_") and _only_forwards(node):
                fn, method = getattr(tg, node.name), getattr(tg.Tensor, _only_forwards(node))
                ours = list(inspect.signature(fn).parameters.values())[1:]
                theirs = list(inspect.signature(method).parameters.values())[1:]
                if [(p.name, p.kind, p.default) for p in ours] == [(p.name, p.kind, p.default) for p in theirs]:
                    written.append(f"{path.name}: {node.name}")
    assert not written


def test_the_table_imports_nothing():
    """Data only, so any layer may read it."""
    tree = ast.parse(pathlib.Path(table.__file__).read_text())
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    assert [ast.unparse(n) for n in imports] == ["from __future__ import annotations", "from typing import NamedTuple"]


def test_the_stubs_are_written_from_the_table():
    """tensorgrad/__init__.pyi and functions/forwarders.pyi (for static tools, which cannot see names
    bound in a loop) are what tools/public_stubs.py writes from the table today."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("public_stubs", ROOT / "tools" / "public_stubs.py")
    stubs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(stubs)
    for path, render in stubs.STUBS.items():
        assert path.read_text() == render(), f"{path.relative_to(ROOT)} is stale: run python3 tools/public_stubs.py"
    assert "from .functions.forwarders import asin as arcsin" in stubs.init_stub()
    assert "def sum(input: Tensor, dim=..., keepdim=..., *, dtype=..., axis=..., keepdims=...): ..." in (
        stubs.forwarders_stub()
    )


# tg.autograd is outside the snapshot (it is a module of the engine, whose helpers come and go): these
# are the names a user or another layer reaches through it, PyTorch's and the engine's own.
AUTOGRAD_NAMES = (
    "Function GradcheckError backward_name backpropagate clear_kernels detect_anomaly dispatch enable_grad "
    "expandable functional grad gradcheck gradgradcheck inference_mode is_anomaly_check_nan_enabled "
    "is_anomaly_enabled is_grad_enabled is_inference_mode_enabled kernel_table no_grad on_subclass "
    "queue_callback register_kernel register_kernel_loader set_detect_anomaly set_grad_enabled unbroadcast"
).split()


def test_tg_autograd_keeps_its_names():
    """Every name tg.autograd had before the engine was split into modules (grad_mode.py, anomaly.py,
    kernel_registry.py, gradient_shapes.py, graph_walk.py) is still there, in a fresh interpreter."""
    script = f"import tensorgrad as tg; print([n for n in {AUTOGRAD_NAMES!r} if not hasattr(tg.autograd, n)])"
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
