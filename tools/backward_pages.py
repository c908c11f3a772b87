"""Write the site's "Backward passes" pages: one page per tensorgrad/ops/ file, one section per op.

    python tools/backward_pages.py OUT_DIR      # (tools/build_docs.py calls write(OUT_DIR))

Each op's section (its heading is the class name, so its anchor is the name in lower case, e.g.
`layernorm.html#layernorm`) holds: where it is defined, its docstring (the forward and the
derivation of the backward, MyST Markdown: `$...$` / `$$...$$` are typeset by KaTeX on the site)
beside the code of its `forward`, `backward` and `backward_graph`, the kernel op that replaces it
(tensorgrad/kernels/, `replaces = ...`), and the tests that check it. Everything is read from the
code by tools/op_docs.py; nothing here is written by hand, and the pages are not committed
(docs/_generated/ is rebuilt by every build).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import op_docs  # noqa: E402

ROOT = op_docs.ROOT
CODE_TITLES = (
    ("forward", "Forward"),
    ("backward", "Backward"),
    ("backward_graph", "Backward as Tensor ops (`create_graph=True`: second and higher orders)"),
)
INTRO = """\
Every op is a `Function` with `forward` and `backward` on raw arrays (`xp` is NumPy or CuPy).
$g$ is the gradient of the loss with respect to the op's output; `backward` returns the gradient
with respect to each input. Where an input was broadcast, the engine sums the gradient back to the
input's shape (`autograd.unbroadcast`), so no op does it itself. With `create_graph=True` the engine
runs `backward_graph` instead: the same gradient written with Tensor ops, so that it can be
differentiated again ([second-order gradients](../../second_order.md)).

Each section is generated from the code (`tools/backward_pages.py`): the op's docstring, which
derives its backward, beside its code; the kernel that replaces it on the default path (if any;
`TENSORGRAD_KERNELS=reference` runs the code shown); and the tests that check it. The op-table cases
run through `tests/test_gradcheck_ops.py` (float64 central differences with a random cotangent),
`tests/test_reference_torch.py` (forward and backward against PyTorch) and `tests/test_gpu.py`
(the same on a GPU).
"""


def page_name(path: str) -> str:
    """tensorgrad/ops/layernorm.py -> "layernorm"; tensorgrad/kernels/... -> "kernels"."""
    return Path(path).stem if path.startswith("tensorgrad/ops/") else "kernels"


def _fence(text: str, lang: str) -> list[str]:
    """A fenced block long enough that no run of backticks inside the text closes it."""
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return [ticks + lang, text.rstrip(), ticks]


def _title(path: str, doc: str) -> str:
    return f"`{Path(path).name}`"


def op_section(op: dict, path: str, cases: dict, sections: dict, all_ops: list[str], kernels: dict) -> list[str]:
    name = op["name"]
    out = [f"## {name}", ""]
    meta = [f"`{path}:{op['line']}`"]
    for k in kernels.get((path, name), []):
        meta.append(f"replaced by the kernel op `{k['name']}` (`{k['path']}:{k['line']}`)")
    out += ["{.op-meta}", " · ".join(meta), ""]
    out += ["::::{container} op-pair", ":::{container} op-derivation"]
    out += [op["doc"].strip() if op["doc"].strip() else "*(no docstring)*", ":::", ":::{container} op-code"]
    if "inherits" in op:
        base = op["inherits"]
        missing = [title.split(" ")[0].lower() for part, title in CODE_TITLES if part not in op["code"]]
        out += ["", f"Its {', '.join(missing)} are [{base}](#{base.lower()})'s; its own code:", ""]
        out += _fence(op["source"], "python")
    for part, title in CODE_TITLES:
        if part in op["code"]:
            out += ["", f"**{title}**", ""]
            doc = op.get("method_docs", {}).get(part, "").strip()
            if doc:  # the method's own derivation, typeset above its code
                out += [doc, ""]
            out += _fence(op.get("bare", op["code"])[part], "python")
    out += [":::", "::::", ""]
    for k in kernels.get((path, name), []):
        if k["doc"].strip():
            out += [f"**The kernel op `{k['name']}`** (`{k['path']}`)", "", k["doc"].strip(), ""]
    checks = []
    if name in cases:
        own = [c for c in cases[name] if sections.get(c) == path]
        names = ", ".join(f"`{c}`" for c in own + sorted(set(cases[name]) - set(own)))
        checks.append(f"- op-table cases: {names}")
    checks += [f"- `{t}`" for t in op_docs.named_tests(name, all_ops)]
    out += ["**Checked by**", ""] + (checks or ["- (no test case names this op yet)"]) + [""]
    return out


def render() -> dict[str, str]:
    """page name -> the page's MyST text; "index" lists the pages."""
    files = op_docs.collect()
    cases = op_docs.op_table_cases()
    sections = op_docs.op_table_sections()
    kernels = op_docs.kernel_replacements()
    all_ops = [op["name"] for f in files for op in f["ops"]]
    pages: dict[str, list[str]] = {}
    kernel_docs = []
    for f in files:
        if not f["path"].startswith("tensorgrad/ops/"):
            kernel_docs.append(f)
            continue
        name = page_name(f["path"])
        lines = [f"# {_title(f['path'], f['doc'])}", ""]
        if f["doc"]:
            lines += [f["doc"].strip(), ""]
        if f["ops"]:
            lines += ["Ops on this page: " + ", ".join(f"[{op['name']}](#{op['name'].lower()})" for op in f["ops"]), ""]
        for op in f["ops"]:
            lines += op_section(op, f["path"], cases, sections, all_ops, kernels)
        if f["helpers"]:
            lines += ["## Helpers of this file", ""]
            lines += ["The file's other functions and classes that have a docstring: what the ops above call,", ""]
            lines[-2] += " and array code that is not a `Function`."
            for h in f["helpers"]:
                lines += [f"### helper `{h['name']}`", "", f"`{f['path']}:{h['line']}`", "", h["doc"].strip(), ""]
                lines += _fence(h["source"], "python") + [""]
        pages[name] = lines
    # The kernels: each module's docstring and the ops of tensorgrad/kernels/ (their own backward)
    lines = ["# The kernels (`tensorgrad/kernels/`)", ""]
    for f in kernel_docs:
        lines += [f"## `{f['path']}`", ""]
        if f["doc"]:
            lines += [f["doc"].strip(), ""]
        for op in f["ops"]:
            lines += [f"### {op['name']}", "", f"`{f['path']}:{op['line']}`", ""]
            if op["doc"].strip():
                lines += [op["doc"].strip(), ""]
            for part, title in CODE_TITLES:
                if part in op["code"]:
                    lines += [f"**{title}**", ""] + _fence(op["code"][part], "python") + [""]
    pages["kernels"] = lines
    index = ["# Backward passes", "", INTRO]
    index += ["| page | ops |", "|---|---|"]
    for f in files:
        if f["path"].startswith("tensorgrad/ops/"):
            name = page_name(f["path"])
            ops = ", ".join(f"[{op['name']}]({name}.md#{op['name'].lower()})" for op in f["ops"])
            ops = ops or "(no op class: " + ", ".join(f"`{h['name']}`" for h in f["helpers"]) + ")"
            index.append(f"| [`{Path(f['path']).name}`]({name}.md) | {ops} |")
    index += ["| [kernels](kernels.md) | the CPU and CUDA kernels that replace the ops above |", ""]
    index += ["```{toctree}", ":hidden:", ""] + [p for p in pages] + ["```", ""]
    out = {"index": index, **pages}
    return {name: "\n".join(lines).rstrip() + "\n" for name, lines in out.items()}


def write(out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in render().items():
        path = out_dir / f"{name}.md"
        if not path.exists() or path.read_text() != text:  # unchanged pages keep their time: Sphinx skips them
            path.write_text(text)
        written.append(path)
    for stale in set(out_dir.glob("*.md")) - set(written):
        stale.unlink()
    return written


if __name__ == "__main__":
    for p in write(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "_generated" / "backward"):
        print(p)
