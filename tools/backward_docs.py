"""Write docs/backward.md: every op's derivation, forward, backward and Tensor-level backward on one page.

    python tools/backward_docs.py            # regenerate docs/backward.md
    python tools/backward_docs.py --check    # exit 1 if it is out of date (tests/test_backward_docs.py)

The page is built from the code, never by hand:
- every class with a `backward` method in tensorgrad/ops/**.py (and tensorgrad/kernels/**.py,
  where the fast kernels document themselves) is an op; its docstring is the derivation and
  its `forward` and `backward` are shown as they are (read with `ast`, nothing is imported);
- each module's docstring introduces its section;
- "checked by" comes from running the op table of tests/op_table.py (OPS): each case's graph
  is walked and the op classes in it are recorded, so a new case or a new op shows up on its own.
  An op lists the cases of its own file's section of the table first (in table order), then the
  others by name, so re-ordering the table's sections leaves the page as it is.
  Other tests are matched by name (tests/test_properties.py: `test_layer_norm_*` for LayerNorm).
"""

from __future__ import annotations

import ast
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "backward.md"
SOURCES = ("tensorgrad/ops", "tensorgrad/kernels")
COMMAND = "python tools/backward_docs.py"
OP_TABLE = ROOT / "tests" / "op_table.py"


# ---------------------------------------------------------------- reading the ops
def _ops_in(path: Path) -> tuple[str, list[dict]]:
    """(module docstring, [op]) of one file; an op is a class with a `backward` method."""
    text = path.read_text()
    tree = ast.parse(text)
    ops = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        methods = {m.name: m for m in node.body if isinstance(m, ast.FunctionDef)}
        if "backward" not in methods:
            continue
        code = {
            name: textwrap.dedent(ast.get_source_segment(text, methods[name], padded=True))
            for name in ("forward", "backward", "backward_graph")
            if name in methods
        }
        ops.append({"name": node.name, "line": node.lineno, "doc": ast.get_docstring(node) or "", "code": code})
    return ast.get_docstring(tree) or "", ops


def collect() -> list[dict]:
    """One entry per source file that defines ops (or documents kernels), in path order."""
    files = []
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*.py")):
            doc, ops = _ops_in(path)
            rel = path.relative_to(ROOT).as_posix()
            if ops or (top.endswith("kernels") and doc):
                files.append({"path": rel, "doc": doc, "ops": ops})
    return files


# ---------------------------------------------------------------- which tests check each op
def op_table_cases() -> dict[str, list[str]]:
    """Op class name -> the names of the cases of tests/op_table.py:OPS whose graph contains it."""
    for path in (str(ROOT / "tests"), str(ROOT)):
        if path not in sys.path:
            sys.path.insert(0, path)
    from op_table import OPS, make_inputs  # noqa: PLC0415

    import tensorgrad as tg  # noqa: PLC0415

    found: dict[str, list[str]] = {}
    for case in OPS:
        xs = [tg.tensor(a, requires_grad=True) for a in make_inputs(case)]
        try:
            out = case.fn(tg, *xs)
        except Exception as e:  # a case that cannot run here (e.g. needs a GPU): listed under no op
            print(f"note: op-table case {case.name} did not run ({type(e).__name__}: {e})", file=sys.stderr)
            continue
        stack, seen = list(out) if isinstance(out, (tuple, list)) else [out], set()
        while stack:
            t = stack.pop()
            if id(t) in seen or getattr(t, "_ctx", None) is None:
                continue
            seen.add(id(t))
            op = type(t._ctx)
            reference = getattr(op, "replaces", None) or op  # a kernel op's case checks its reference op too
            for name in dict.fromkeys((op.__name__, reference.__name__)):
                if case.name not in found.setdefault(name, []):
                    found[name].append(case.name)
            stack.extend(p for p in t._ctx.parents or () if isinstance(p, tg.Tensor))
    return found


def op_table_sections() -> dict[str, str]:
    """Case name -> the file whose section of the op table holds it ("tensorgrad/ops/softmax.py"),
    read from the section headers (`# ==== ops/softmax.py`)."""
    section, where = None, {}
    for line in OP_TABLE.read_text().splitlines():
        if header := re.match(r"\s*# =+ (ops/\S+\.py)$", line):
            section = "tensorgrad/" + header[1]
        elif case := re.match(r'\s*C\("(\w+)"', line):
            where[case[1]] = section
    return where


def _tokens(name: str) -> list[str]:
    """LayerNorm -> ["layer", "norm"]; ScaledDotProductAttention -> ["scaled", "dot", "product", "attention"]."""
    return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z][a-z]*|[a-z]+|\d+", name)]


NAMED_TESTS = {"tests/test_properties.py": "test_", "tests/test_gradcheck_ops.py": "test_gradcheck_"}


def named_tests(op: str, all_ops: list[str]) -> list[str]:
    """Tests whose name starts with the op's (test_layer_norm_* or test_layernorm_* for LayerNorm;
    test_log_softmax_* goes to LogSoftmax, not Log: the longest op name that fits wins)."""

    def fits(name, words):
        want = _tokens(name)
        return words[: len(want)] == want or (words and words[0] == "".join(want))

    hits = []
    for rel, prefix in NAMED_TESTS.items():
        path = ROOT / rel
        if not path.exists():
            continue
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith(prefix):
                continue
            words = node.name[len(prefix) :].split("_")
            matches = [o for o in all_ops if fits(o, words)]
            if op in matches and len(_tokens(op)) == max(len(_tokens(o)) for o in matches):
                hits.append(f"{rel}::{node.name}")
    return hits


# ---------------------------------------------------------------- the page
def render() -> str:
    files = collect()
    cases = op_table_cases()
    sections = op_table_sections()
    all_ops = [op["name"] for f in files for op in f["ops"]]
    out = [
        "# Every backward pass, derived",
        "",
        f"Generated from the ops' docstrings by `{COMMAND}`; do not edit by hand",
        "(`tests/test_backward_docs.py` fails when this page is out of date).",
        "",
        "Each op is a `Function` with `forward` and `backward` on raw arrays (`xp` is NumPy or CuPy).",
        "`g` is the gradient of the loss with respect to the op's output; `backward` returns the",
        "gradient with respect to each input. Where an input was broadcast, the engine sums the",
        "gradient back to the input's shape (`autograd.unbroadcast`), so no op does it itself.",
        "With `create_graph=True` the engine runs `backward_graph` instead: the same gradient written",
        "with Tensor ops, its derivation in its docstring, so the gradient can be differentiated again",
        "(`docs/double_backward.md`).",
        "",
        "Checked by: the op-table cases run through `tests/test_gradcheck_ops.py` (float64 central",
        "differences with a random cotangent), `tests/test_reference_torch.py` (forward and backward",
        "against PyTorch) and `tests/test_gpu.py` (the same on a GPU), plus the property tests named.",
        "",
        "## Contents",
        "",
    ]
    for f in files:
        names = ", ".join(f"[{op['name']}](#{op['name'].lower()})" for op in f["ops"]) or "(kernels)"
        out.append(f"- `{f['path']}`: {names}")
    for f in files:
        out += ["", f"## `{f['path']}`", ""]
        if f["doc"]:
            out += [f["doc"], ""]
        for op in f["ops"]:
            out += [f"### {op['name']}", "", f"`{f['path']}:{op['line']}`", ""]
            if op["doc"]:
                out += ["```text", op["doc"], "```", ""]
            graph = "Backward as Tensor ops (create_graph: second and higher orders)"
            for part, title in (("forward", "Forward"), ("backward", "Backward"), ("backward_graph", graph)):
                if part in op["code"]:
                    out += [f"{title}:", "", "```python", op["code"][part].rstrip(), "```", ""]
            checks = []
            if op["name"] in cases:
                own = [c for c in cases[op["name"]] if sections.get(c) == f["path"]]
                names = ", ".join(f"`{c}`" for c in own + sorted(set(cases[op["name"]]) - set(own)))
                checks.append(f"- op-table cases: {names}")
            checks += [f"- `{t}`" for t in named_tests(op["name"], all_ops)]
            out += ["Checked by:", ""] + (checks or ["- (no test case names this op yet)"]) + [""]
    return "\n".join(out).rstrip() + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = render()
    if "--check" in argv:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT.relative_to(ROOT)} is out of date: run `{COMMAND}`")
            return 1
        return 0
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
