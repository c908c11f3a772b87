"""What the backward-pass pages say about each op, read from the code (tools/backward_pages.py writes them).

- every class with a `backward` method in tensorgrad/ops/**.py (and tensorgrad/kernels/**.py,
  where the fast kernels document themselves) is an op; its docstring is the derivation and
  its `forward`, `backward` and `backward_graph` are shown as they are (read with `ast`, nothing
  is imported);
- each module's docstring introduces its page;
- the kernel op that replaces a reference op is read from `replaces = ...` in tensorgrad/kernels/;
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
SOURCES = ("tensorgrad/ops", "tensorgrad/kernels")
OP_TABLE = ROOT / "tests" / "op_table.py"


# ---------------------------------------------------------------- reading the ops
def _without_docstring(source: str, fn: ast.FunctionDef) -> str:
    """A method's source (as `ast.get_source_segment` gives it) without its docstring, which the pages
    typeset above the code."""
    first = fn.body[0] if fn.body else None
    if not (ast.get_docstring(fn) and isinstance(first, ast.Expr)):
        return source
    lines = source.splitlines(keepends=True)
    start, end = first.lineno - fn.lineno, first.end_lineno - fn.lineno
    return "".join(lines[:start] + lines[end + 1 :])


def _ops_in(path: Path) -> tuple[str, list[dict]]:
    """(module docstring, [op]) of one file; an op is a class with a `backward` method, or a subclass
    of an op of the same file (`class Amin(Amax)`: its `inherits` names the op whose methods it uses,
    and its `source` is its own class body)."""
    text = path.read_text()
    tree = ast.parse(text)
    ops, names = [], set()
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        methods = {m.name: m for m in node.body if isinstance(m, ast.FunctionDef)}
        bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
        inherits = next((b for b in bases if b in names), None)
        if "backward" not in methods and inherits is None:
            continue
        parts = [name for name in ("forward", "backward", "backward_graph") if name in methods]
        code = {name: textwrap.dedent(ast.get_source_segment(text, methods[name], padded=True)) for name in parts}
        op = {"name": node.name, "line": node.lineno, "doc": ast.get_docstring(node) or "", "code": code}
        op["method_docs"] = {name: ast.get_docstring(methods[name]) or "" for name in parts}
        op["bare"] = {name: _without_docstring(code[name], methods[name]) for name in parts}
        if "backward" not in methods:
            op["inherits"] = inherits
            op["source"] = ast.get_source_segment(text, node)
        ops.append(op)
        names.add(node.name)
    return ast.get_docstring(tree) or "", ops


def helpers_in(path: Path, ops: list[dict]) -> list[dict]:
    """The file's other top-level functions and classes that have a docstring (the helpers an op's
    backward calls, derived there, and the array code that is not a `Function`, e.g. AdamW's update):
    each {"name", "line", "doc", "source"}."""
    text = path.read_text()
    names = {op["name"] for op in ops}
    return [
        {
            "name": node.name,
            "line": node.lineno,
            "doc": ast.get_docstring(node),
            "source": _without_docstring(ast.get_source_segment(text, node), node)
            if isinstance(node, ast.FunctionDef)
            else ast.get_source_segment(text, node),
        }
        for node in ast.parse(text).body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name not in names and ast.get_docstring(node)
    ]


def collect() -> list[dict]:
    """One entry per source file that defines ops (or documents kernels), in path order."""
    files = []
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*.py")):
            doc, ops = _ops_in(path)
            rel = path.relative_to(ROOT).as_posix()
            helpers = helpers_in(path, ops) if top.endswith("ops") else []
            if ops or helpers or (top.endswith("kernels") and doc):
                files.append({"path": rel, "doc": doc, "ops": ops, "helpers": helpers})
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


# ---------------------------------------------------------------- the kernels that replace ops
def kernel_replacements() -> dict[tuple[str, str], list[dict]]:
    """(ops file, op class) -> the kernel ops that replace it: each {"name", "path", "line", "doc"},
    from the `replaces = ref_module.Op` lines of tensorgrad/kernels/**.py (the module alias is
    resolved through the file's `from ..ops import module as alias` imports)."""
    found: dict[tuple[str, str], list[dict]] = {}
    for path in sorted((ROOT / "tensorgrad" / "kernels").rglob("*.py")):
        text = path.read_text()
        tree = ast.parse(text)
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("ops"):
                for a in node.names:
                    aliases[a.asname or a.name] = f"tensorgrad/ops/{a.name}.py"
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            for stmt in node.body:
                target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
                if not (isinstance(target, ast.Name) and target.id == "replaces"):
                    continue
                value = stmt.value
                if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id in aliases:
                    key = (aliases[value.value.id], value.attr)
                    found.setdefault(key, []).append(
                        {
                            "name": node.name,
                            "path": path.relative_to(ROOT).as_posix(),
                            "line": node.lineno,
                            "doc": ast.get_docstring(node) or "",
                        }
                    )
    return found
