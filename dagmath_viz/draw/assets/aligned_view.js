// The script of dagmath_viz.draw.aligned: typesets each formula of the aligned steps with
// KaTeX (this page's own window.katex, or the one the holding page passes to
// dmAligned.use), as MathML, when it scrolls into view (or its folded diff is opened).
// Model text is untrusted: a formula is read from its span's data-tex attribute and handed
// to katex.render, which builds DOM nodes itself (trust off: \href, \url, \html* and
// \includegraphics do nothing; maxExpand ends a macro bomb). Nothing here parses text as
// markup. A formula KaTeX cannot draw stays as written.
(function () {
  "use strict";
  const OPTIONS = {throwOnError: false, trust: false, output: "mathml", strict: "ignore",
    maxExpand: 300, maxSize: 30};
  let katex = null, count = 0;

  function typeset(span) {
    if (!katex || span.dataset.typeset) return;
    span.dataset.typeset = "1";
    const shown = span.textContent;
    try {
      katex.render(span.dataset.tex || "",
        span, Object.assign({displayMode: span.dataset.display === "1"}, OPTIONS));
      count += 1;
    } catch (err) {
      span.textContent = shown;
      span.dataset.typeset = "0";
    }
    document.body.dataset.typeset = String(count);
  }

  function use(k) {
    if (!k || typeof k.render !== "function" || katex) return;
    katex = k;
    document.body.dataset.katex = "1";
    const spans = document.querySelectorAll(".tex");
    if (!("IntersectionObserver" in window)) { spans.forEach(typeset); return; }
    const observer = new IntersectionObserver((entries) => {
      for (const en of entries) {
        if (!en.isIntersecting) continue;
        typeset(en.target);
        observer.unobserve(en.target);
      }
    }, {root: document.querySelector(".aligned"), rootMargin: "600px 0px"});
    spans.forEach((s) => observer.observe(s));
  }

  document.body.dataset.formulas = String(document.querySelectorAll(".tex").length);
  window.dmAligned = {use: use};
  use(window.katex || null);
})();
