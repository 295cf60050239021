// The page script of dagmath_viz.draw.html_export: typesets math (KaTeX, when the page
// carries it) in the problem texts and in every embedded trajectory view's step list.
// Model text is untrusted: it is read with textContent and put back as text nodes and
// KaTeX's own DOM (katex.render builds elements; trust is off, so \href and friends are
// refused); nothing here parses text as markup.
(function () {
  "use strict";
  const conf = JSON.parse(document.getElementById("dm-export").textContent);
  const budget = {left: conf.formula_budget};
  // $$..$$, $..$ (no space inside the dollars, as the app's math_markdown), \[..\], \(..\)
  const MATH = new RegExp(
    "(?<!\\\\)\\$\\$([\\s\\S]+?)(?<!\\\\)\\$\\$" +
    "|(?<!\\\\)\\$(?!\\s)([^$\\n]+?)(?<![\\s\\\\])\\$" +
    "|\\\\\\[([\\s\\S]+?)\\\\\\]" +
    "|\\\\\\(([\\s\\S]+?)\\\\\\)", "g");
  // MathML, as the app's view writes it: the browser lays it out, no stylesheet or font needed
  const OPTIONS = {throwOnError: false, trust: false, strict: "ignore", maxExpand: 200,
    maxSize: 20, output: "mathml"};
  let typesetCount = 0;

  function typeset(el) {
    const katex = window.katex;
    if (!katex || !el || el.dataset.typeset) return;
    el.dataset.typeset = "1";
    const doc = el.ownerDocument, text = el.textContent;
    const parts = [];
    let last = 0, found = 0, m;
    MATH.lastIndex = 0;
    while ((m = MATH.exec(text)) !== null) {
      const body = m[1] !== undefined ? m[1] : m[2] !== undefined ? m[2]
        : m[3] !== undefined ? m[3] : m[4];
      const display = m[1] !== undefined || m[3] !== undefined;
      if (/\\href|\\url|</.test(body) || budget.left <= 0) continue;
      const span = doc.createElement("span");
      span.className = "dm-tex";
      try {
        katex.render(body, span, Object.assign({displayMode: display}, OPTIONS));
      } catch (err) {
        continue; // not a formula KaTeX can draw: it stays as written
      }
      parts.push(doc.createTextNode(text.slice(last, m.index)), span);
      last = m.index + m[0].length;
      budget.left -= 1;
      found += 1;
    }
    if (!found) return;
    parts.push(doc.createTextNode(text.slice(last)));
    el.replaceChildren(...parts);
    typesetCount += found;
  }

  function typesetView(frame) {
    const doc = frame.contentDocument;
    if (!doc || frame.dataset.typeset) return;
    const root = doc.getElementById("dm-root");
    if (!root || root.dataset.ready !== "1") return;
    frame.dataset.typeset = "1";
    if (window.katex) {
      const style = doc.createElement("style");
      style.textContent = ".dm-tex math{font-size:1.12em}" +
        ".dm-tex math[display=block]{margin:.3em 0;overflow-x:auto}";
      doc.head.appendChild(style);
      const head = doc.querySelector("#dm-steps .dm-head");
      if (head) {
        head.textContent = head.textContent.replace("text as written (LaTeX source)",
          "math typeset");
      }
      for (const el of doc.querySelectorAll("#dm-steps .dm-text, #dm-steps details > div")) {
        typeset(el);
      }
    }
    frame.dataset.ready = "1";
    updateStatus();
  }

  function updateStatus() {
    const frames = document.querySelectorAll("iframe.dm-view");
    const ready = [...frames].filter((f) => f.dataset.ready === "1").length;
    document.body.dataset.views = String(frames.length);
    document.body.dataset.viewsReady = String(ready);
    document.body.dataset.typeset = String(typesetCount);
    if (budget.left <= 0) document.body.dataset.overBudget = "1";
  }

  for (const el of document.querySelectorAll(".dm-math")) typeset(el);
  for (const frame of document.querySelectorAll("iframe.dm-view")) {
    frame.addEventListener("load", () => typesetView(frame));
    typesetView(frame); // it may have loaded before this script ran
  }
  // the aligned steps of a comparison typeset their own formulas, with this page's KaTeX
  function typesetAligned(frame) {
    const win = frame.contentWindow;
    if (window.katex && win && win.dmAligned) win.dmAligned.use(window.katex);
  }
  for (const frame of document.querySelectorAll("iframe.dm-aligned")) {
    frame.addEventListener("load", () => typesetAligned(frame));
    typesetAligned(frame);
  }
  document.body.dataset.katex = window.katex ? "1" : "0";
  updateStatus();

  // Keys pressed on the page (outside a view) go to the view on screen: the one whose frame
  // is nearest the top of the window among those visible (README "Keys").
  function viewOnScreen() {
    let best = null, bestTop = Infinity;
    for (const frame of document.querySelectorAll("iframe.dm-view")) {
      const r = frame.getBoundingClientRect();
      if (r.bottom <= 0 || r.top >= window.innerHeight) continue;
      const top = Math.abs(Math.max(r.top, 0));
      if (top < bestTop) { best = frame; bestTop = top; }
    }
    return best;
  }
  document.addEventListener("keydown", (ev) => {
    const t = ev.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable)) return;
    if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const frame = viewOnScreen();
    const api = frame && frame.contentWindow && frame.contentWindow.dagmath;
    if (!api || !api.key || !api.key(ev.key)) return;
    ev.preventDefault();
    if (ev.key === "?") frame.scrollIntoView({block: "nearest"});  // the list is in the view
  });
})();
