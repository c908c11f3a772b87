"""Check the math in the derivation docstrings: every formula must typeset with KaTeX.

    python tools/check_math.py                      # tensorgrad/ops and tensorgrad/kernels
    python tools/check_math.py tensorgrad/ops/softmax.py ...
    python tools/check_math.py --katex /path/to/katex.min.js

The docstrings are MyST Markdown (docs: the derivation notation): inline math `$...$`, display
math `$$` ... `$$` on lines of their own.  Every docstring of every module, class and function is
read with `ast` (nothing is imported); code spans and ``` fences are skipped.  Each formula is
rendered by `katex.renderToString(f, {throwOnError: true, displayMode})` in `node`; the checks
also flag an unclosed `$` / `$$` and text indented 4+ spaces outside a fence (Markdown would make
it a code block).

KaTeX is found at --katex, else $KATEX_JS, else the site's vendored docs/_static/katex/katex.min.js,
else `require("katex")` from node's own search path (`npm install katex`).  Without node or KaTeX
the formulas are only counted, with a message saying so (exit 0): the shape checks still run.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("tensorgrad/ops", "tensorgrad/kernels")
VENDORED = ROOT / "docs" / "_static" / "katex" / "katex.min.js"

NODE_SCRIPT = r"""
const katex = require(process.argv[1] || "katex");
const items = JSON.parse(require("fs").readFileSync(0, "utf8"));
const errors = [];
for (const [i, item] of items.entries()) {
  try { katex.renderToString(item.tex, {throwOnError: true, displayMode: item.display}); }
  catch (e) { errors.push({i: i, message: String(e.message || e)}); }
}
process.stdout.write(JSON.stringify(errors));
"""

# MyST's dollarmath: an inline `$` opens when not followed by a space and closes when not preceded
# by one (and not followed by a digit); `\$` is a literal dollar.
INLINE = re.compile(r"(?<![\\$])\$(?=[^\s$])(.+?)(?<=[^\s\\])\$(?![\d$])")
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")


def docstrings(path: Path):
    """(line, name, text) of every docstring in the file: module, classes, functions."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        doc = ast.get_docstring(node, clean=True)
        if doc:
            line = node.body[0].lineno if node.body else 1
            yield line, getattr(node, "name", "<module>"), doc


def formulas(doc: str):
    """(formula, display, problem) in one docstring; problem is a shape error (or None)."""
    found, problems = [], []
    lines = doc.splitlines()
    i, fence = 0, None
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence):
                fence = None
            i += 1
            continue
        if stripped.startswith("```") or stripped.startswith("~~~"):
            fence = stripped[:3]
            i += 1
            continue
        if not stripped:
            i += 1
            continue
        indent = len(line) - len(line.lstrip(" "))
        if stripped == "$$":
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "$$"), None)
            if end is None:
                problems.append(f"`$$` opened on docstring line {i + 1} is never closed")
                break
            found.append(("\n".join(lines[i + 1 : end]).strip(), True))
            i = end + 1
            continue
        if indent >= 4:
            problems.append(f"docstring line {i + 1} is indented {indent} spaces (a code block in Markdown)")
        if "$$" in stripped:
            problems.append(f"docstring line {i + 1}: `$$` must stand on a line of its own")
        # a paragraph's inline math may wrap: join the paragraph's lines, then match
        para = [line]
        while i + 1 < len(lines) and lines[i + 1].strip() and lines[i + 1].strip() != "$$":
            nxt = lines[i + 1].strip()
            if nxt.startswith("```") or nxt.startswith("~~~"):
                break
            i += 1
            para.append(lines[i])
            indent = len(lines[i]) - len(lines[i].lstrip(" "))
            if indent >= 4:
                problems.append(f"docstring line {i + 1} is indented {indent} spaces (a code block in Markdown)")
        text = CODE_SPAN.sub("", " ".join(p.strip() for p in para))
        for m in INLINE.finditer(text):
            found.append((m[1], False))
        rest = INLINE.sub("", text).replace(r"\$", "")
        if "$" in rest:
            problems.append(f"an unmatched `$` in: {text[:80]}")
        i += 1
    return found, problems


def katex_path(argv: list[str]) -> str | None:
    if "--katex" in argv:
        return argv[argv.index("--katex") + 1]
    if os.environ.get("KATEX_JS"):
        return os.environ["KATEX_JS"]
    if VENDORED.exists():
        return str(VENDORED)
    return ""  # node's own search path


def render(items: list[dict], katex: str) -> list[dict] | None:
    """KaTeX errors of the items ({i, message}), or None when node / KaTeX is missing."""
    node = shutil.which("node")
    if node is None:
        return None
    proc = subprocess.run(
        [node, "-e", NODE_SCRIPT, katex or "katex"],
        input=json.dumps(items),
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if proc.returncode != 0:
        if "Cannot find module" in proc.stderr:
            return None
        raise SystemExit(f"node failed: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def check(paths: list[Path], katex: str = "") -> tuple[list[dict], list[str], list[dict] | None]:
    """(formulas, shape problems, KaTeX errors or None when node / KaTeX is missing) of the files."""
    items, problems = [], []
    for path in paths:
        path = path if path.is_absolute() else (Path.cwd() / path)
        rel = path.resolve().relative_to(ROOT) if path.resolve().is_relative_to(ROOT) else path
        for line, name, doc in docstrings(path):
            found, bad = formulas(doc)
            problems += [f"{rel}:{line} ({name}): {p}" for p in bad]
            items += [{"tex": tex, "display": display, "where": f"{rel}:{line} ({name})"} for tex, display in found]
    return items, problems, render(items, katex)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    skip = {argv.index("--katex") + 1} if "--katex" in argv else set()
    paths = [Path(a) for k, a in enumerate(argv) if not a.startswith("--") and k not in skip]
    if not paths:
        paths = [p for top in SOURCES for p in sorted((ROOT / top).rglob("*.py"))]
    items, problems, errors = check(paths, katex_path(argv))
    for p in problems:
        print(p)
    if errors is None:
        print(f"{len(items)} formulas found; not rendered (no node, or no KaTeX: `npm install katex`)")
        return 1 if problems else 0
    for e in errors:
        item = items[e["i"]]
        print(f"{item['where']}: {e['message']}\n    {item['tex']!r}")
    print(f"{len(items)} formulas rendered by KaTeX, {len(errors)} errors, {len(problems)} other problems")
    return 1 if errors or problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
