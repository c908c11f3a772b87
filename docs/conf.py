"""Sphinx configuration of tensorgrad's documentation site (build: python3 tools/build_docs.py).

Why this stack: Sphinx with MyST-NB is what PyTorch and JAX document with; MyST reads the same
Markdown the docstrings and the README are written in, MyST-NB executes the notebooks at build time
and fails the build on a cell that raises, and Sphinx's -W / nitpicky turn every warning and broken
reference into an error. Furo is a readable theme that loads nothing from another host (its fonts are
the system's; checked in its templates: no <link> or <script> to a CDN).

Math: MyST's `dollarmath` turns `$...$` and `$$...$$` into Sphinx math nodes, and the renderer
registered below writes them as `<span class="math">` / `<div class="math">` holding the LaTeX;
a few lines of JavaScript (_static/katex-render.js) typeset each one with KaTeX, which is vendored
under _static/katex/ (the npm package's dist: katex.min.js, katex.min.css, the woff2 fonts and its
LICENSE). Not MathJax: Sphinx's MathJax path loads MathJax from a CDN, KaTeX is small enough (0.6 MB
with its fonts) to serve from the site itself, and it is what PyTorch's docs render math with. The
renderer does not use KaTeX's auto-render: it typesets exactly the math nodes Sphinx wrote, never
text that merely contains `\\(`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from docutils import nodes

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

import tensorgrad  # noqa: E402

project = "tensorgrad"
author = "the tensorgrad authors"
copyright = "the tensorgrad authors (MIT)"  # noqa: A001  (Sphinx's name)
release = version = tensorgrad.__version__

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints", "README.md"]
templates_path = []

# -W (tools/build_docs.py) makes every warning an error; nitpicky adds every cross-reference that
# does not resolve.
nitpicky = True
suppress_warnings = []

# ---------------------------------------------------------------- MyST and the notebooks
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist", "attrs_inline", "attrs_block"]
myst_dmath_double_inline = True  # `$$...$$` inside a paragraph is display math too
myst_heading_anchors = 4  # [text](#a-heading) and [text](page.md#a-heading) resolve (checked)
nb_execution_mode = "force"  # the notebooks are committed without outputs: run each at every build
nb_execution_raise_on_error = True  # a cell that raises fails the build
nb_execution_timeout = 600
nb_execution_show_tb = True
nb_merge_streams = True

# ---------------------------------------------------------------- HTML
html_theme = "furo"
html_title = f"tensorgrad {release}"
html_static_path = ["_static"]
html_css_files = ["katex/katex.min.css", "site.css"]
html_js_files = [("katex/katex.min.js", {"defer": "defer"}), ("katex-render.js", {"defer": "defer"})]
html_math_renderer = "katex"
html_show_sourcelink = False
html_copy_source = False
html_last_updated_fmt = None
html_theme_options = {
    "source_repository": None,
    "navigation_with_keys": True,
}
pygments_style = "friendly"
pygments_dark_style = "monokai"

if os.environ.get("TENSORGRAD_DOCS_QUICK"):  # tools/build_docs.py --quick: no notebook execution
    nb_execution_mode = "off"


# ---------------------------------------------------------------- the KaTeX math renderer
def _visit_math(self, node):
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate nohighlight"))
    self.body.append(self.encode(node.astext()))
    self.body.append("</span>")
    raise nodes.SkipNode


def _visit_displaymath(self, node):
    latex = node.astext()
    if node.get("nowrap"):
        latex = latex.strip()
    else:  # several equations in one block (separated by blank lines) are typeset one under another
        parts = [p.strip() for p in latex.split("\n\n") if p.strip()]
        latex = parts[0] if len(parts) == 1 else "\\begin{gathered}" + "\\\\".join(parts) + "\\end{gathered}"
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    self.body.append(self.encode(latex))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("katex", (_visit_math, None), (_visit_displaymath, None))
