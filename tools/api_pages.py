"""The API reference pages: MyST Markdown for the Sphinx site, one page per namespace.

`write(out_dir)` writes index.md first (the toctree entry `api/index`), then one page per
namespace (tg, Tensor, tg.nn, tg.nn.functional, tg.optim, tg.linalg, tg.special, tg.testing,
tg.distributed), and returns their paths.  tools/build_docs.py calls it with docs/_generated/api/.
Run alone, `python3 tools/api_pages.py OUT_DIR` writes the pages there.

What is on a page.  tg's names come from the table of public names (tensorgrad/_public_names.py),
grouped by its families and in its order; every other namespace's names are its `__all__` (the
Tensor: its public methods and properties), grouped by the module that defines each name
(MODULE_FAMILIES in the table titles and orders them).  Each name has a heading, an anchor
`(api-<page>-<name>)=`, its signature and its docstring.

How a docstring is shown: verbatim, in a fenced `text` block (a fence longer than any run of
backticks inside it, so no docstring can close it).  The docstrings are written for `help()`:
plain text whose `*`, `_`, `[...]`, `{...}`, `$`, indented lines and `#` lines would, read as
Markdown, turn into emphasis, links, roles, math, code blocks and headings, and some of those into
Sphinx warnings, which fail the build (-W).  In a fence nothing is parsed, so no docstring, today's
or a future one with MyST or LaTeX in it, can make a warning; the reader sees exactly what
`help()` shows.  The derivations are typeset on the backward-pass pages, not here.  A signature is
highlighted as Python only when it parses as Python (a default whose repr is `<...>` would make
Pygments warn), else shown as text.  Headings hold the name as inline code and the family lines are
escaped, so neither is parsed either.

Anchors: Sphinx lowercases labels and docutils makes HTML ids of them (lowercase, `_` -> `-`, no
`-` at the ends), so `Tensor.T` and `Tensor.t`, or `Tensor.add_` and `Tensor.add`, would share one
id (silently: the second gets another); `anchor(page, name)` is the one rule that keeps them apart
(`api-tensor-t-upper`, `api-tensor-add-inplace`), and the labels are written already in id form.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pathlib
import re
import sys
import types

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout: its tensorgrad, as `python -m` would
    sys.path.insert(0, str(ROOT))

from tensorgrad import _public_names as table  # noqa: E402

PAGES = {  # namespace -> page name (a docname under api/)
    "tg": "tg",
    "Tensor": "tensor",
    "tg.nn": "tg-nn",
    "tg.nn.functional": "tg-nn-functional",
    "tg.optim": "tg-optim",
    "tg.linalg": "tg-linalg",
    "tg.special": "tg-special",
    "tg.testing": "tg-testing",
    "tg.distributed": "tg-distributed",
}
ABOUT = {
    "tg": "The functions, dtypes and classes of the top-level namespace, as `torch.*`.",
    "Tensor": "The methods and properties of `tg.Tensor`, as `torch.Tensor`'s.",
    "tg.nn": "Modules and layers, as `torch.nn`.",
    "tg.nn.functional": "The functional forms of the layers, activations and losses, as `torch.nn.functional`.",
    "tg.optim": "Optimizers and learning-rate schedules, as `torch.optim`.",
    "tg.linalg": "Linear algebra, as `torch.linalg`.",
    "tg.special": "Special functions, as `torch.special`.",
    "tg.testing": "Comparing tensors and checking gradients, as `torch.testing`, and Hypothesis strategies.",
    "tg.distributed": "Data-parallel training over processes, as `torch.distributed`.",
}


# ------------------------------------------------------------------ the names of each namespace
def namespace_object(namespace: str):
    module, cls = table.NAMESPACES[namespace]
    obj = importlib.import_module(module)
    return getattr(obj, cls) if cls else obj


def _defining_module(value, owner=None, name=None) -> str:
    """The module that defines value, relative to the package ("nn.loss"; a Tensor method: its
    class's module), "modules" for a submodule, "values" for anything else."""
    if owner is not None:
        module = next(klass.__module__ for klass in owner.__mro__ if name in vars(klass))
    elif isinstance(value, types.ModuleType):
        return "modules"
    else:
        module = getattr(inspect.unwrap(value), "__module__", None) if callable(value) else None
    return module.removeprefix("tensorgrad.") if module else "values"


def _family_title(namespace: str, module: str) -> str:
    titles = table.MODULE_FAMILIES
    return titles.get(f"{namespace}:{module}") or titles.get(module) or module.rsplit(".", 1)[-1].capitalize()


def families(namespace: str) -> list[tuple[str, str, list[str]]]:
    """(title, about, names) for each family of the namespace's page, in page order: tg's from the
    table; the others' by defining module, in MODULE_FAMILIES' order (names sorted within)."""
    if namespace == "tg":
        out = []
        for family in table.TG:
            names = [entry.partition("=")[0] for names in family.names.values() for entry in names.split()]
            out.append((family.title, family.about, names))
        return out
    obj = namespace_object(namespace)
    if isinstance(obj, type):
        keyed = [(n, _defining_module(None, obj, n)) for n in sorted(n for n in dir(obj) if not n.startswith("_"))]
    else:
        keyed = [(n, _defining_module(getattr(obj, n))) for n in sorted(obj.__all__)]
    groups: dict[str, list[str]] = {}
    for name, module in keyed:
        groups.setdefault(_family_title(namespace, module), []).append(name)
    order = list(dict.fromkeys(table.MODULE_FAMILIES.values()))
    rank = {title: i for i, title in enumerate(order)}
    ranked = sorted(groups.items(), key=lambda item: (rank.get(item[0], len(order)), item[0]))
    return [(title, "", names) for title, names in ranked]


# ------------------------------------------------------------------ rendering
def anchor(page: str, name: str, names_on_page=()) -> str:
    """The label of a name on its page, already in the form docutils gives an HTML id (lowercase, one
    `-` for each run of other characters, none at the ends).  What that form would merge is kept
    apart: an in-place method (`add_`) gets `-inplace` after (`add` is on the page too), and a name
    with capitals whose lowercase spelling is also on the page gets `-upper` (`T` and `t`)."""
    label = "api-" + re.sub(r"[^a-z0-9]+", "-", f"{page}-{name.lower()}").strip("-")
    if name.endswith("_"):
        label += "-inplace"
    if name != name.lower() and name.lower() in names_on_page:
        label += "-upper"
    return label


def _escape(text: str) -> str:
    """Plain text as Markdown that renders it as written (every ASCII punctuation escaped)."""
    return re.sub(r"([\\`*_{}\[\]()<>#+\-.!|$~:])", r"\\\1", text)


def _fence(text: str, language: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{text}\n{ticks}\n"


def _signature(qualified: str, value, method: bool = False) -> tuple[str, str]:
    """(text, language) of the line that heads a name's entry (a method's without `self`)."""
    if isinstance(value, property):
        return f"{qualified}  (property)", "text"
    if inspect.ismemberdescriptor(value) or inspect.isgetsetdescriptor(value):
        return f"{qualified}  (attribute)", "text"  # a slot of the Tensor (device)
    if isinstance(value, types.ModuleType):
        return f"import {value.__name__}", "python"
    if callable(value):
        try:
            sig = inspect.signature(value)
            if method and inspect.isfunction(value):
                sig = sig.replace(parameters=list(sig.parameters.values())[1:])
        except (TypeError, ValueError):
            return f"{qualified}(...)", "text"
        if inspect.isclass(value):
            text = f"class {qualified}{sig}"
        else:
            text = f"{qualified}{sig}"
        try:
            ast.parse(f"def _{sig}: pass")
            return text, "python"
        except SyntaxError:
            return text, "text"
    if hasattr(value, "__dict__"):  # an object with state (tg.default_generator): its type, not a repr that changes
        return f"{qualified}: {type(value).__module__}.{type(value).__qualname__}", "text"
    return f"{qualified} = {value!r}", "text"


def _doc(value) -> str:
    if isinstance(value, types.ModuleType):  # a namespace: its summary (its own page, or its source, has the rest)
        return (inspect.getdoc(value) or "").split("\n\n", 1)[0]
    if isinstance(value, property) or callable(value):
        return inspect.getdoc(value) or ""
    if inspect.ismemberdescriptor(value) or inspect.isgetsetdescriptor(value):
        return inspect.cleandoc(value.__doc__ or "")
    return ""  # a value (a dtype, a memory format): its family's line describes it, not its type's docstring


def _entry(page: str, prefix: str, name: str, value, names_on_page: set[str]) -> str:
    label = anchor(page, name, names_on_page)
    signature, language = _signature(prefix + name, value, method=prefix == "Tensor.")
    parts = [f"({label})=\n### `{prefix}{name}`\n", _fence(signature, language)]
    doc = _doc(value)
    if doc:
        parts.append(_fence(doc, "text"))
    return "\n".join(parts)


def page_text(namespace: str) -> str:
    page = PAGES[namespace]
    obj = namespace_object(namespace)
    prefix = f"{namespace}." if namespace != "tg" else "tg."
    lines = [f"({anchor(page, 'page')})=\n# `{namespace}`\n", ABOUT[namespace] + "\n"]
    grouped = families(namespace)
    on_page = {name for _, _, names in grouped for name in names}
    for title, about, names in grouped:
        lines.append(f"## {_escape(title)}\n")
        if about:
            lines.append(_escape(about) + "\n")
        for name in names:
            value = inspect.getattr_static(obj, name) if isinstance(obj, type) else getattr(obj, name)
            if isinstance(value, staticmethod | classmethod):
                value = getattr(obj, name)
            lines.append(_entry(page, prefix, name, value, on_page))
    return "\n".join(lines)


def index_text() -> str:
    rows = "\n".join(
        f"- [`{ns}`]({page}.md): {ABOUT[ns]} ({sum(len(n) for _, _, n in families(ns))} names)"
        for ns, page in PAGES.items()
    )
    toctree = "\n".join(PAGES.values())
    return (
        f"({anchor('index', 'page')})=\n# API reference\n\n"
        "Every public name of tensorgrad, by namespace and family, with its signature and docstring. "
        "These pages are generated (tools/api_pages.py): tg's names from the table of public names, "
        "`tensorgrad/_public_names.py`, every other namespace's from its `__all__`.\n\n"
        f"{rows}\n\n```{{toctree}}\n:maxdepth: 1\n:hidden:\n\n{toctree}\n```\n"
    )


def write(out_dir: pathlib.Path) -> list[pathlib.Path]:
    """Write index.md and one page per namespace into out_dir; their paths, index.md first."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [out_dir / "index.md"]
    written[0].write_text(index_text())
    for namespace, page in PAGES.items():
        path = out_dir / f"{page}.md"
        path.write_text(page_text(namespace))
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "docs/_generated/api")):
        print(path)
