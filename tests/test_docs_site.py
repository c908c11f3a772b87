"""The documentation site, built (tools/build_docs.py) and read in a real browser.

The site is built into docs/_build/html, served from 127.0.0.1 by http.server in a thread and opened
in headless Chromium (Debian's `chromium`, driven by Playwright's Python package through
`executable_path`), with every other host unresolvable: Chromium's resolver maps every name but
127.0.0.1 to nothing, and every request to another host is aborted and recorded. Every page is
visited; the checks:

- no request leaves 127.0.0.1, and no request to the site fails (no 404: a missing font, a script);
- no console error and no uncaught page error on any page;
- the KaTeX fonts load (the vendored woff2 files, in use on a page with math);
- every math node on every page is typeset (a .katex inside each), with no KaTeX error
  (.katex-error) and no raw `$$` outside code blocks;
- every notebook of examples/notebooks/ has its page, with the outputs of its execution;
- every `Function` class of tensorgrad/ops/ has its anchor on its family's backward page;
- Sphinx's search for "layernorm" finds the LayerNorm section;
- every internal link resolves to a page of the site, and its anchor to an element of that page.

Without Chromium or the `docs` extra the test skips with the reason, except in CI (CI=true), where
it fails: .ci/run installs both. Marked `slow` (the 3.10/3.13 runs, `-m "not slow"`, leave it to the
default-Python run) and `docs`. TENSORGRAD_DOCS_SHOTS=DIR also saves screenshots of the main pages.
TENSORGRAD_DOCS_BUILT=1 uses the build already in docs/_build/html instead of building again.
"""

from __future__ import annotations

import functools
import http.server
import importlib
import importlib.util
import inspect
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlparse

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.docs]

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "docs" / "_build" / "html"
NEEDED = ("sphinx", "myst_nb", "furo", "playwright")


def _missing(reason: str):
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI: {reason} (.ci/run installs it)", pytrace=False)
    pytest.skip(reason)


def chromium_path() -> str | None:
    for name in (os.environ.get("TENSORGRAD_CHROMIUM"), "chromium", "chromium-browser"):
        if name and (found := shutil.which(name)):
            return found
    return None


@pytest.fixture(scope="module")
def site():
    missing = [m for m in NEEDED if importlib.util.find_spec(m) is None]
    if missing:
        _missing(f"the docs extra is not installed (missing {', '.join(missing)}): pip install -e '.[docs]'")
    chromium = chromium_path()
    if chromium is None:
        _missing("Chromium is not installed (apt-get install chromium, or TENSORGRAD_CHROMIUM=PATH)")
    if os.environ.get("TENSORGRAD_DOCS_BUILT") != "1" or not (HTML / "index.html").exists():
        build = subprocess.run([sys.executable, "tools/build_docs.py"], cwd=ROOT, capture_output=True, text=True)
        assert build.returncode == 0, f"the site does not build:\n{build.stdout[-4000:]}\n{build.stderr[-8000:]}"

    handler = functools.partial(_QuietHandler, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        yield crawl(base, chromium)
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


# ---------------------------------------------------------------- the crawl
PAGE_SCRIPT = """async () => {
  await document.fonts.ready;
  const article = document.querySelector("article") || document.body;
  const text = article.cloneNode(true);
  text.querySelectorAll("pre, code, .katex").forEach((e) => e.remove());
  return {
    ids: [...document.querySelectorAll("[id]")].map((e) => e.id)
          .concat([...document.querySelectorAll("a[name]")].map((e) => e.name)),
    links: [...document.querySelectorAll("a[href]")].map((a) => a.getAttribute("href")),
    images: [...document.querySelectorAll("img[src]")].map((i) => [i.getAttribute("src"), i.naturalWidth]),
    math: document.querySelectorAll("span.math, div.math").length,
    typeset: [...document.querySelectorAll("span.math, div.math")].filter((e) => e.querySelector(".katex")).length,
    katex: document.querySelectorAll(".katex").length,
    outputs: document.querySelectorAll(".cell_output").length,
    katexErrors: [...document.querySelectorAll(".katex-error")].map((e) => e.getAttribute("title") || e.textContent),
    rawDisplayMath: text.textContent.includes("$$"),
    fonts: [...document.fonts].filter((f) => f.status === "loaded").map((f) => f.family),
  };
}"""


def crawl(base: str, chromium: str) -> dict:
    from playwright.sync_api import sync_playwright

    pages = sorted(p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html") if "_static" not in p.parts)
    result = {"base": base, "pages": {}, "outside": [], "failed": [], "console": [], "search": None, "responses": []}
    args = ["--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1", "--no-sandbox", "--disable-gpu"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=args)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})

        def route(r):
            url = r.request.url
            if urlparse(url).hostname == "127.0.0.1" or url.startswith(("data:", "blob:")):
                r.continue_()
            else:
                result["outside"].append(url)
                r.abort()

        context.route("**/*", route)
        page = context.new_page()
        current = {"url": None}
        page.on("console", lambda m: m.type == "error" and result["console"].append(f"{current['url']}: {m.text}"))
        page.on("pageerror", lambda e: result["console"].append(f"{current['url']}: uncaught {e}"))
        page.on("requestfailed", lambda r: result["failed"].append(f"{r.url} ({r.failure})"))

        def response(r):
            result["responses"].append(r.url)
            if r.status >= 400:
                result["failed"].append(f"{r.url} {r.status}")

        page.on("response", response)
        for rel in pages:
            current["url"] = rel
            page.goto(base + rel, wait_until="load")
            result["pages"][rel] = page.evaluate(PAGE_SCRIPT)
            if os.environ.get("TENSORGRAD_DOCS_SHOTS") and rel in SHOTS:
                out = Path(os.environ["TENSORGRAD_DOCS_SHOTS"])
                out.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(out / SHOTS[rel]), full_page=False)
        current["url"] = "search.html?q=layernorm"
        page.goto(base + "search.html?q=layernorm", wait_until="load")
        page.wait_for_function(
            "() => { const s = document.querySelector('#search-results .search-summary, #search-results p');"
            " return s && !/Preparing|Searching/.test(document.querySelector('#search-results h2')?.textContent"
            " || 'Searching'); }",
            timeout=30_000,
        )
        result["search"] = page.evaluate(
            "() => [...document.querySelectorAll('#search-results a')]"
            ".map((a) => [a.getAttribute('href'), a.textContent])"
        )
        browser.close()
    return result


SHOTS = {
    "index.html": "start.png",
    "_generated/backward/softmax.html": "backward_softmax.png",
    "notebooks/backward_passes.html": "notebook.png",
    "results.html": "results.png",
}


# ---------------------------------------------------------------- the checks
def check_no_request_leaves_127_0_0_1(site):
    assert not site["outside"], f"requests to other hosts (the site must serve everything itself): {site['outside']}"
    assert not site["failed"], f"requests that failed: {site['failed']}"
    assert len(site["pages"]) > 20, sorted(site["pages"])


def check_no_console_error(site):
    assert not site["console"], site["console"]


def check_katex_fonts_load(site):
    fonts = [u for u in site["responses"] if "/_static/katex/fonts/" in u]
    assert fonts and all(u.endswith(".woff2") for u in fonts), fonts
    loaded = site["pages"]["_generated/backward/index.html"]["fonts"]
    assert "KaTeX_Main" in loaded and "KaTeX_Math" in loaded, loaded


def check_math_is_typeset_everywhere(site):
    index = site["pages"]["_generated/backward/index.html"]
    assert index["katex"] > 0, "the backward index shows no typeset math"
    for rel, info in site["pages"].items():
        assert info["typeset"] == info["math"], f"{rel}: {info['math'] - info['typeset']} math nodes not typeset"
        assert not info["katexErrors"], f"{rel}: KaTeX errors: {info['katexErrors'][:5]}"
        assert not info["rawDisplayMath"], f"{rel}: raw $$ in the page's text (math not parsed)"
    with_math = [rel for rel, info in site["pages"].items() if rel.startswith("_generated/backward/") and info["katex"]]
    ops_with_dollars = [p.stem for p in (ROOT / "tensorgrad/ops").glob("*.py") if "$" in p.read_text()]
    for stem in ops_with_dollars:  # a family whose docstrings are written in LaTeX shows it typeset
        assert f"_generated/backward/{stem}.html" in with_math, stem


def check_every_notebook_is_executed_on_the_site(site):
    for nb in sorted((ROOT / "examples" / "notebooks").glob("*.ipynb")):
        page = site["pages"].get(f"notebooks/{nb.stem}.html")
        assert page is not None, f"{nb.name} has no page"
        assert page["outputs"] > 0, f"{nb.name}'s page shows no outputs (not executed)"


def check_every_function_in_ops_has_an_anchor(site):
    from tensorgrad.autograd import Function

    missing = []
    for path in sorted((ROOT / "tensorgrad" / "ops").glob("*.py")):
        module = importlib.import_module(f"tensorgrad.ops.{path.stem}")
        for name, cls in vars(module).items():
            if inspect.isclass(cls) and issubclass(cls, Function) and cls.__module__ == module.__name__:
                page = site["pages"].get(f"_generated/backward/{path.stem}.html")
                if page is None or name.lower() not in page["ids"]:
                    missing.append(f"{path.stem}.html#{name.lower()}")
    assert not missing, f"op classes without an anchor on their backward page: {missing}"


def check_search_finds_layernorm(site):
    hrefs = [href for href, _ in site["search"]]
    assert any(h.endswith("_generated/backward/layernorm.html#layernorm") for h in hrefs), site["search"][:20]


def check_every_internal_link_and_anchor_resolves(site):
    base, broken = site["base"], []
    for rel, info in site["pages"].items():
        for href in info["links"] + [src for src, _ in info["images"]]:
            url = urljoin(base + rel, href)
            if urlparse(url).hostname != "127.0.0.1" or url.startswith(("mailto:", "javascript:")):
                continue
            target, fragment = urldefrag(url)
            path = unquote(urlparse(target).path).lstrip("/") or "index.html"
            if path.endswith("/"):
                path += "index.html"
            if not (HTML / path).is_file():
                broken.append(f"{rel}: {href} (no file {path})")
            elif fragment and path.endswith(".html") and unquote(fragment) not in site["pages"][path]["ids"]:
                broken.append(f"{rel}: {href} (no anchor #{fragment} on {path})")
        broken += [f"{rel}: image {src} did not load" for src, width in info["images"] if not width]
    assert not broken, f"{len(broken)} broken links: {broken[:30]}"


CHECKS = [
    check_no_request_leaves_127_0_0_1,
    check_no_console_error,
    check_katex_fonts_load,
    check_math_is_typeset_everywhere,
    check_every_notebook_is_executed_on_the_site,
    check_every_function_in_ops_has_an_anchor,
    check_search_finds_layernorm,
    check_every_internal_link_and_anchor_resolves,
]


def test_the_site_in_a_browser(site):
    """One test runs every check on one build and one crawl: as separate tests, pytest-xdist (`-n auto`)
    would hand them to several workers, each building the site into the same folder at once."""
    failures = []
    for check in CHECKS:
        try:
            check(site)
        except AssertionError as e:
            failures.append(f"{check.__name__}: {e}")
    assert not failures, "\n".join(failures)
