"""The site's backward-pass pages (tools/backward_pages.py) give every op of tensorgrad/ops/ its section:
its derivation (the docstring), the code of its forward and backward, the kernel that replaces it and
the tests that check it. The pages are generated at every build, so they cannot go stale; this checks
the generator (tests/test_docs_site.py checks the built site in a browser)."""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import backward_pages  # noqa: E402
import op_docs  # noqa: E402


@pytest.fixture(scope="module")
def pages():
    return backward_pages.render()


def section(page: str, name: str) -> str:
    return page.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]


def test_every_function_class_in_ops_has_a_section(pages):
    from tensorgrad.autograd import Function

    for path in sorted((ROOT / "tensorgrad" / "ops").glob("*.py")):
        module = importlib.import_module(f"tensorgrad.ops.{path.stem}")
        defined = {
            name
            for name, cls in vars(module).items()
            if inspect.isclass(cls) and issubclass(cls, Function) and cls.__module__ == module.__name__
        }
        if not defined:
            continue
        page = pages[path.stem]
        missing = [name for name in sorted(defined) if f"\n## {name}\n" not in page]
        assert not missing, f"{path.name}: op classes without a section on the backward page: {missing}"


def test_a_section_holds_derivation_code_kernel_and_checks(pages):
    for page, name in (("softmax", "Softmax"), ("layernorm", "LayerNorm"), ("cross_entropy", "CrossEntropy"),
                       ("attention", "ScaledDotProductAttention"), ("matmul", "MatMul")):  # fmt: skip
        text = section(pages[page], name)
        assert "def forward" in text and "def backward" in text, name
        assert ":::{container} op-derivation" in text and "op-table cases:" in text, name
    layernorm = section(pages["layernorm"], "LayerNorm")
    doc = ast.get_docstring(next(n for n in ast.parse((ROOT / "tensorgrad/ops/layernorm.py").read_text()).body
                                 if isinstance(n, ast.ClassDef) and n.name == "LayerNorm"))  # fmt: skip
    assert doc.strip() in layernorm  # the derivation, verbatim (MyST: typeset on the site)
    assert "replaced by the kernel op `LayerNorm` (`tensorgrad/kernels/functions.py:" in layernorm
    assert "tests/test_properties.py::test_layer_norm" in layernorm


def test_every_page_is_in_the_index(pages):
    """Every ops/ file with a docstring'd op or helper has its page (adamw.py has no Function: its
    update's derivation is on its page too), and the index links each page."""
    for path in (ROOT / "tensorgrad" / "ops").glob("*.py"):
        tree = ast.parse(path.read_text())
        if any(isinstance(n, (ast.ClassDef, ast.FunctionDef)) and ast.get_docstring(n) for n in tree.body):
            assert path.stem in pages, path.name
    assert "### helper `adamw_update_`" in pages["adamw"]
    index = pages["index"]
    for name in pages:
        if name != "index":
            assert f"]({name}.md)" in index, name


def test_kernel_replacements_are_read_from_the_kernels():
    found = op_docs.kernel_replacements()
    from tensorgrad.kernels import functions

    for cls in vars(functions).values():
        if inspect.isclass(cls) and getattr(cls, "replaces", None) is not None:
            ref = cls.replaces
            key = (f"tensorgrad/ops/{ref.__module__.rsplit('.', 1)[1]}.py", ref.__name__)
            assert cls.__name__ in [k["name"] for k in found.get(key, [])], key


def test_a_new_op_file_is_picked_up(tmp_path):
    op = tmp_path / "square.py"
    op.write_text(
        '"""Squares."""\n\nclass Square(Function):\n    """$z = x^2$. $dx = 2 x g$."""\n\n'
        "    def forward(self, x):\n        return x * x\n\n    def backward(self, g):\n        return 2 * g\n\n"
        "def helper():\n    pass\n"
    )
    doc, ops = op_docs._ops_in(op)
    assert doc == "Squares." and [o["name"] for o in ops] == ["Square"]
    assert ops[0]["doc"] == "$z = x^2$. $dx = 2 x g$." and ops[0]["code"]["backward"].startswith("def backward")
    text = "\n".join(backward_pages.op_section(ops[0], "tensorgrad/ops/square.py", {}, {}, ["Square"], {}))
    assert "## Square" in text and "$z = x^2$" in text and "```python\ndef backward" in text
