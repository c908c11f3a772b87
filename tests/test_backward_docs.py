"""docs/backward.md is generated from the ops' docstrings (tools/backward_docs.py) and must be current."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import backward_docs  # noqa: E402


def test_backward_page_is_up_to_date():
    current = backward_docs.OUT.read_text() if backward_docs.OUT.exists() else ""
    assert current == backward_docs.render(), (
        f"docs/backward.md is out of date (an op or its docstring, or the op table, changed): "
        f"run `{backward_docs.COMMAND}` and commit the result"
    )


def test_every_op_has_its_derivation_code_and_checks():
    text = backward_docs.OUT.read_text()
    for name in ("Softmax", "LayerNorm", "CrossEntropy", "ScaledDotProductAttention", "MatMul"):
        section = text.split(f"\n### {name}\n", 1)[1].split("\n### ", 1)[0]
        assert "```text" in section and "def forward" in section and "def backward" in section, name
        assert "op-table cases:" in section, name
    layer_norm_dx = (
        r"dx &= \mathrm{rstd}\, \Big(d\hat x - \mathrm{mean}(d\hat x) "
        r"- \hat x\, \mathrm{mean}(d\hat x\, \hat x)\Big)."
    )
    assert layer_norm_dx in text  # the derivation, verbatim


def test_a_new_op_file_is_picked_up(tmp_path):
    op = tmp_path / "square.py"
    op.write_text(
        '"""Squares."""\n\nclass Square(Function):\n    """z = x^2.   dx = 2 x g."""\n\n'
        "    def forward(self, x):\n        return x * x\n\n    def backward(self, g):\n        return 2 * g\n\n"
        "def helper():\n    pass\n"
    )
    doc, ops = backward_docs._ops_in(op)
    assert doc == "Squares." and [o["name"] for o in ops] == ["Square"]
    assert ops[0]["doc"] == "z = x^2.   dx = 2 x g." and ops[0]["code"]["backward"].startswith("def backward")
