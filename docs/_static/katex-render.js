// Typeset every math node Sphinx wrote (docs/conf.py's "katex" renderer) with the vendored KaTeX.
// An error is shown in place (KaTeX's .katex-error, red), never thrown: tests/test_docs_site.py looks for it.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("span.math, div.math").forEach(function (el) {
    katex.render(el.textContent, el, {
      displayMode: el.tagName === "DIV",
      throwOnError: false,
      strict: "ignore",
    });
  });
});
