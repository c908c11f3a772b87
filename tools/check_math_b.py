"""Check the math in the derivation docstrings: every formula renders with KaTeX, and the MyST is sound.

    python tools/check_math_b.py                 # the files listed in FILES
    python tools/check_math_b.py PATH [PATH...]  # these files
    python tools/check_math_b.py --leftovers     # also list ASCII math left outside $...$ (a hint, not an error)
    python tools/check_math_b.py --myst          # also parse with markdown-it + dollarmath (MyST's parser)

Each docstring (module, class, function, method) is read with `ast`, nothing is imported.
Outside ``` fences and `code spans`, a line holding only `$$` opens and closes display math;
`$...$` on a line is inline math (MyST's dollarmath rules: no space after the opening `$`,
none before the closing one, no digit after it). Every formula goes through
`katex.renderToString(f, {throwOnError: true, displayMode})` in one `node` process
(KaTeX from `npm install katex` in $KATEX_DIR, default /tmp/katex-b).

Also errors: a docstring with a backslash that is not a raw string (`\\top` would be a tab),
an unclosed `$$` or `$`, and a text line indented by 4+ spaces relative to the docstring outside a
fence (Markdown would make it a code block). Exit status 1 on any error.

With `--myst` (needs markdown-it-py and mdit-py-plugins, which the docs extra brings), each docstring
is also parsed as the site parses it (commonmark + dollarmath, as docs/conf.py sets MyST up), and it
is an error where the math MyST finds differs from the math found here, or a `$` is left in the text.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPS = (
    "decompositions indexing selection conv linalg scan rearrange shape inplace pool pad einsum ranges "
    "matmul linear masking adamw transfer"
).split()
FILES = [f"tensorgrad/ops/{name}.py" for name in OPS] + sorted(
    p.relative_to(ROOT).as_posix() for p in (ROOT / "tensorgrad" / "kernels").glob("*.py")
)

NODE = r"""
const path = require('path');
const katex = require(path.join(process.env.KATEX_DIR, 'node_modules', 'katex'));
let data = '';
process.stdin.on('data', c => data += c);
process.stdin.on('end', () => {
  const out = [];
  for (const [i, f, display] of JSON.parse(data)) {
    try { katex.renderToString(f, {throwOnError: true, displayMode: display, strict: 'error'}); }
    catch (e) { out.push([i, String(e.message)]); }
  }
  process.stdout.write(JSON.stringify(out));
});
"""

INLINE = re.compile(r"(?<![\\$])\$(?=[^\s$])(.+?)(?<=[^\s\\])\$(?!\d)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# ASCII math that should have become LaTeX (only a hint: `--leftovers`).
LEFTOVER = re.compile(
    r"\bsum_|\bprod_|\^T\b|\b[a-zA-Z]\w*_[a-z]{1,2}\b(?!\()|\bd[A-Za-z]+/d[A-Za-z]+|\bsqrt\(|<=|>=|!="
)


def docstrings(path: Path):
    """(line, docstring node) of every docstring in the file, with whether its source literal is raw."""
    text = path.read_text()
    tree = ast.parse(text)
    lines = text.splitlines()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = node.body
        if not (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)):
            continue
        if not isinstance(body[0].value.value, str):
            continue
        const = body[0].value
        start = lines[const.lineno - 1][const.col_offset :]
        prefix = re.match(r"[rRbBuUfF]*", start).group(0)
        source = "\n".join(lines[const.lineno - 1 : const.end_lineno])
        yield const.lineno, ast.get_docstring(node, clean=True) or "", "r" in prefix.lower(), source


def scan(doc: str, rel: str, first: int, formulas: list, errors: list, leftovers: list) -> None:
    """Collect the formulas of one (cleaned) docstring; record structural errors."""
    fence = False
    display: list[str] | None = None
    for n, line in enumerate(doc.splitlines()):
        at = f"{rel}:{first + n}"
        stripped = line.strip()
        if stripped.startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        if n > 0 and stripped and len(line) - len(line.lstrip(" ")) >= 4:
            errors.append(f"{at}: indented 4+ spaces outside a ``` fence (Markdown code block): {line!r}")
        if display is not None:
            if stripped == "$$":
                formulas.append((at, "\n".join(display), True))
                display = None
            else:
                display.append(line)
            continue
        if stripped == "$$":
            display = []
            continue
        plain = CODE_SPAN.sub(" ", line)
        for m in INLINE.finditer(plain):
            formulas.append((at, m.group(1), False))
        rest = INLINE.sub(" ", plain)
        if "$" in rest:
            errors.append(f"{at}: a `$` that opens no inline formula (space after it, or unclosed): {line!r}")
        if LEFTOVER.search(rest):
            leftovers.append(f"{at}: {line.strip()}")
    if display is not None:
        errors.append(f"{rel}:{first}: unclosed $$ block")
    if fence:
        errors.append(f"{rel}:{first}: unclosed ``` fence")


def myst_check(doc: str, where: str, ours: list, errors: list) -> None:
    """Compare the formulas MyST's parser finds in `doc` with `ours` [(formula, display)]."""
    from markdown_it import MarkdownIt  # noqa: PLC0415
    from mdit_py_plugins.dollarmath import dollarmath_plugin  # noqa: PLC0415

    md = MarkdownIt("commonmark").use(dollarmath_plugin, allow_space=True, allow_digits=True, double_inline=True)
    found = []

    def walk(tokens):
        for t in tokens:
            if t.type in ("math_inline", "math_block", "math_inline_double", "math_block_label"):
                found.append((t.content.strip(), t.type != "math_inline"))
            elif t.type == "text" and "$" in t.content:
                errors.append(f"{where}: MyST leaves a `$` in the text: {t.content!r}")
            if t.children:
                walk(t.children)

    walk(md.parse(doc))
    mine = [(f.strip(), d) for f, d in ours]
    if sorted(found) != sorted(mine):
        extra = [f for f in found if f not in mine]
        missing = [f for f in mine if f not in found]
        errors.append(f"{where}: MyST's math differs: MyST only {extra!r}; here only {missing!r}")


def render(formulas: list) -> list[str]:
    """KaTeX errors of the formulas, one line each."""
    katex_dir = os.environ.get("KATEX_DIR", "/tmp/katex-b")
    payload = json.dumps([(i, f, d) for i, (_, f, d) in enumerate(formulas)])
    out = subprocess.run(
        ["node", "-e", NODE],
        input=payload,
        capture_output=True,
        text=True,
        env={**os.environ, "KATEX_DIR": katex_dir},
        check=True,
    )
    return [f"{formulas[i][0]}: KaTeX: {msg}\n    {formulas[i][1]!r}" for i, msg in json.loads(out.stdout)]


def main(argv: list[str]) -> int:
    show_leftovers = "--leftovers" in argv
    myst = "--myst" in argv
    paths = [a for a in argv if not a.startswith("--")] or FILES
    formulas: list = []
    errors: list[str] = []
    leftovers: list[str] = []
    for rel in paths:
        path = ROOT / rel if not Path(rel).is_absolute() else Path(rel)
        for line, doc, raw, source in docstrings(path):
            where = f"{rel}:{line}"
            if "\\" in source and not raw:
                errors.append(f"{where}: docstring with a backslash is not a raw string (r\"\"\"...\"\"\")")
            before = len(formulas)
            scan(doc, rel, line, formulas, errors, leftovers)
            if myst:
                myst_check(doc, f"{rel}:{line}", [(f, d) for _, f, d in formulas[before:]], errors)
    errors += render(formulas)
    for e in errors:
        print(e)
    if show_leftovers:
        for e in leftovers:
            print("leftover?", e)
    displays = sum(1 for f in formulas if f[2])
    print(f"{len(formulas)} formulas ({displays} display, {len(formulas) - displays} inline) in {len(paths)} files: "
          f"{len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
