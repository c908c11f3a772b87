"""tools/check_math.py: the derivation docstrings' math is found as MyST reads it, and typesets with KaTeX."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import check_math  # noqa: E402


def test_inline_and_display_math_are_found_and_code_is_not():
    doc = "\n".join(
        [
            r"$y_i = e^{x_i}$ along `dim`, not in code: `$HOME`.",
            "",
            "$$",
            r"dx_j = y_j \Big(g_j - \sum_i g_i\, y_i\Big)",
            "$$",
            "",
            "```python",
            "    q = x  # indented code in a fence is fine, $ too",
            "```",
            r"a formula may wrap: $a +",
            r"b$.",
        ]
    )
    found, problems = check_math.formulas(doc)
    assert found == [
        ("y_i = e^{x_i}", False),
        (r"dx_j = y_j \Big(g_j - \sum_i g_i\, y_i\Big)", True),
        ("a + b", False),
    ]
    assert problems == []


def test_shape_problems_are_named():
    _, problems = check_math.formulas("text\n\n    dx = g  (a code block in Markdown)\n\n$$\nx = 1")
    assert any("indented 4 spaces" in p for p in problems)
    assert any("never closed" in p for p in problems)
    _, problems = check_math.formulas("one $x$ and an unmatched $ y")
    assert any("unmatched" in p for p in problems)
    _, problems = check_math.formulas("inline $$x$$ display")
    assert any("line of its own" in p for p in problems)


def _katex() -> str:
    """The KaTeX the checker would use, or skip when there is none (no node, no vendored copy)."""
    if shutil.which("node") is None:
        pytest.skip("no node: the formulas are not rendered here")
    path = check_math.katex_path([])
    if check_math.render([{"tex": "x", "display": False}], path) is None:
        pytest.skip("no KaTeX for node (set KATEX_JS, vendor docs/_static/katex/, or `npm install katex`)")
    return path


def test_a_katex_error_is_reported():
    path = _katex()
    errors = check_math.render([{"tex": r"\frac{1}{", "display": True}, {"tex": r"\sum_i", "display": False}], path)
    assert [e["i"] for e in errors] == [0]


def test_every_docstring_formula_typesets():
    path = _katex()
    files = [p for top in check_math.SOURCES for p in sorted((ROOT / top).rglob("*.py"))]
    items, _, errors = check_math.check(files, path)
    assert len(items) > 1000, "the derivations are written in MyST math"
    bad = [f"{items[e['i']]['where']}: {e['message']}" for e in errors]
    assert not bad, "\n".join(bad)


# Every file the checker reads, found on disk: a file added to ops/ or kernels/ is covered the day
# it lands, with no list here to update.
SOURCE_FILES = sorted(str(p.relative_to(ROOT)) for top in check_math.SOURCES for p in (ROOT / top).rglob("*.py"))


def test_the_layout_check_covers_ops_and_kernels():
    names = {Path(f).name for f in SOURCE_FILES}
    assert {"softmax.py", "layernorm.py", "cpu_gpt.py", "fused_gpt.py"} <= names
    assert len(SOURCE_FILES) > 20


@pytest.mark.parametrize("rel", SOURCE_FILES)
def test_converted_docstrings_have_no_shape_problems(rel):
    path = ROOT / rel
    problems = [f"{rel}:{line} ({op}): {p}" for line, op, doc in check_math.docstrings(path)
                for p in check_math.formulas(doc)[1]]  # fmt: skip
    assert problems == [], "\n".join(problems)
