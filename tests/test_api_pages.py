"""tools/api_pages.py: the API reference pages cover every public name, each under a heading with an
anchor, its signature and its docstring, and nothing in a docstring is left for Markdown to parse
(no Sphinx needed: the pages are read as text)."""

from __future__ import annotations

import importlib.util
import inspect
import pathlib
import re

import pytest

import tensorgrad as tg
from tensorgrad import _public_names as table

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _load_tool():
    spec = importlib.util.spec_from_file_location("api_pages", ROOT / "tools" / "api_pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


api_pages = _load_tool()
_SENTINEL = object()  # a default whose repr, <object object at 0x...>, is not Python


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    out = tmp_path_factory.mktemp("api")
    written = api_pages.write(out)
    return {path.stem: path.read_text() for path in written}, written, out


def _public(namespace: str) -> list[str]:
    obj = api_pages.namespace_object(namespace)
    if isinstance(obj, type):
        return sorted(n for n in dir(obj) if not n.startswith("_"))
    return list(obj.__all__)


def test_index_first_then_one_page_per_namespace(pages):
    texts, written, out = pages
    assert [p.name for p in written] == ["index.md"] + [f"{page}.md" for page in api_pages.PAGES.values()]
    assert list(table.NAMESPACES) == list(api_pages.PAGES)
    toctree = re.search(r"```\{toctree\}\n(.*?)```", texts["index"], re.S).group(1)
    assert [line for line in toctree.splitlines() if line and not line.startswith(":")] == list(
        api_pages.PAGES.values()
    )


@pytest.mark.parametrize("namespace", list(table.NAMESPACES))
def test_every_public_name_has_a_heading_and_an_anchor(pages, namespace):
    texts, _, _ = pages
    page = api_pages.PAGES[namespace]
    text = texts[page]
    labels = re.findall(r"^\((api-[a-z0-9-]+)\)=\n### `([^`]+)`$", text, re.M)
    prefix = "tg." if namespace == "tg" else f"{namespace}."
    documented = [heading.removeprefix(prefix) for _, heading in labels]
    assert sorted(documented) == sorted(_public(namespace))
    anchors = [label for label, _ in labels]
    assert len(set(anchors)) == len(anchors)  # unique on the page
    for label, _ in labels:  # already what docutils makes of a label, so the HTML id is the label itself
        assert label == re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-"), label


def test_tg_is_grouped_by_the_tables_families(pages):
    texts, _, _ = pages
    titles = re.findall(r"^## (.+)$", texts["tg"], re.M)
    assert [t.replace("\\", "") for t in titles] == [f.title for f in table.TG]
    order = re.findall(r"^### `tg\.(\w+)`$", texts["tg"], re.M)
    assert order == [public for _, _, public, _ in table.entries()]


@pytest.mark.parametrize("namespace", [ns for ns in table.NAMESPACES if ns != "tg"])
def test_every_family_of_the_other_namespaces_has_a_title_from_the_table(namespace):
    """A name from a module MODULE_FAMILIES does not name would get a family of the module's bare
    name: give the module a title there."""
    titles = set(table.MODULE_FAMILIES.values())
    assert [title for title, _, _ in api_pages.families(namespace) if title not in titles] == []


def test_an_entry_has_the_signature_and_the_docstring(pages):
    texts, _, _ = pages
    entry = texts["tg"].split("(api-tg-gather)=\n", 1)[1].split("\n(api-", 1)[0]
    assert f"```python\ntg.gather{inspect.signature(tg.gather)}\n```" in entry
    assert inspect.getdoc(tg.gather) in entry
    method = texts["tensor"].split("(api-tensor-sum)=\n", 1)[1].split("\n(api-", 1)[0]
    assert "Tensor.sum(dim=None, keepdim=False, *, dtype=None, axis=None)" in method  # no self
    assert "(api-tensor-t)=\n### `Tensor.t`" in texts["tensor"]
    assert "(api-tensor-t-upper)=\n### `Tensor.T`" in texts["tensor"]
    assert "(api-tensor-add)=\n### `Tensor.add`" in texts["tensor"]
    assert "(api-tensor-add-inplace)=\n### `Tensor.add_`" in texts["tensor"]
    assert "```text\nTensor.device  (attribute)\n```" in texts["tensor"]  # a slot, not its descriptor's repr
    assert " at 0x" not in "".join(texts.values())  # no object's address: the pages are the same at each build


def test_docstrings_are_fenced_so_markdown_never_parses_them(pages):
    """Outside the fences a page holds only what the tool wrote (labels, headings, the page's line,
    the escaped family lines, the index's list), and every fence is closed by its own length (a
    docstring with ``` in it cannot close it early)."""
    texts, _, _ = pages
    written = set(api_pages.ABOUT.values()) | {api_pages._escape(f.about) for f in table.TG}
    for name, text in texts.items():
        outside, fence = [], None
        for line in text.splitlines():
            if fence is None:
                m = re.match(r"^(`{3,})(text|python|\{toctree\})$", line)
                if m:
                    fence = m.group(1)
                else:
                    outside.append(line)
            elif line == fence:
                fence = None
        assert fence is None, name
        for line in outside:
            allowed = (
                not line
                or line in written
                or re.match(r"^\(api-[a-z0-9-]+\)=$", line)
                or re.match(r"^#{1,3} ", line)
                or (name == "index" and (line.startswith("- [`") or line.startswith("Every public name")))
            )
            assert allowed, (name, line)


def test_the_pages_are_the_same_at_each_build(tmp_path):
    """No object's address or random seed (tg.default_generator is shown by its type)."""
    first = [p.read_text() for p in api_pages.write(tmp_path / "a")]
    state = tg.default_generator.get_state()
    try:
        tg.default_generator.manual_seed(1234)  # another seed, as another process would have
        assert [p.read_text() for p in api_pages.write(tmp_path / "b")] == first
    finally:
        tg.default_generator.set_state(state)
    assert "tg.default_generator: tensorgrad.backend.random.Generator" in first[1]


def test_a_docstring_with_backticks_gets_a_longer_fence():
    text = "a ``` inside, and ```` four"
    fenced = api_pages._fence(text, "text")
    assert fenced.startswith("`````text\n") and fenced.endswith("\n`````\n")


def test_a_signature_python_cannot_parse_is_shown_as_text():
    def f(x=_SENTINEL):
        """doc"""

    text, language = api_pages._signature("tg.f", f)
    assert language == "text" and text.startswith("tg.f(x=<object object at")
