// The vis view (dagmath_viz/draw/vis_view.py): pyvis's vis-network drawing (global `network`,
// nodes fixed where Python's layered layout put them) with the step list beside it, linked,
// and the step-field bar and tag stripe painted inside the fixed boxes.
// Model text is untrusted: it reaches the page through textContent only.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("dm-data").textContent);
  const view = data.view, nodes = data.nodes, boxes = data.boxes;
  const main = document.getElementById("dm-vis-main");
  const container = document.getElementById("mynetwork");
  const list = document.getElementById("dm-steps");
  const legend = document.getElementById("dagmath-legend");
  const net = network;  // made by pyvis's script just above
  let selected = null, stepEls = [];

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // Same-origin in the app: take the window's height below the frame (as the step graph does).
  function fitHeight() {
    let h = view.height;
    if (view.fit_window) {
      try {
        const frame = window.frameElement;
        if (frame) {
          const win = frame.ownerDocument.defaultView;
          const top = frame.getBoundingClientRect().top + win.scrollY;
          h = win.innerHeight - top - 12;
          if (h < 440) h = win.innerHeight - 24;
          h = Math.round(Math.max(440, Math.min(h, 1600)));
          frame.style.height = h + "px";
        }
      } catch (err) { /* another origin: keep the height given */ }
    }
    main.style.height = Math.max(h - legend.offsetHeight, 200) + "px";
  }

  // -- the step fields, painted on the canvas inside each box (boxes never change size) ----
  function barValue(n) {
    const v = view.bar && n.fields ? n.fields[view.bar.field] : undefined;
    return typeof v === "number" ? v : null;
  }
  net.on("afterDrawing", (ctx) => {
    nodes.forEach((n, i) => {
      const b = boxes[i];
      if (!b) return;
      if (view.tag_stripe && n.tag_color) {
        ctx.fillStyle = n.tag_color;
        ctx.fillRect(b[0] + 1.5, b[1] + 1.5, 5, b[3] - 3);
      }
      const v = barValue(n);
      if (v === null || !v) return;
      const w = Math.max((b[2] - 4) * Math.min(Math.abs(v) / view.bar.absmax, 1), 1.5);
      ctx.fillStyle = v < 0 ? "#7b3294" : "#2b5c8a";
      ctx.fillRect(b[0] + 2, b[1] + b[3] - 5, w, 3.5);
    });
  });

  // -- selection, both ways ------------------------------------------------------------------
  // The selected step in the app's address (step=<id>), as the step graph does: the frame
  // is same-origin, and replaceState adds no history entry.
  function putStepInAddress(id) {
    if (!view.link_steps) return;
    try {
      const frame = window.frameElement;
      const win = frame ? frame.ownerDocument.defaultView : null;
      if (!win || nodes[id].position < 0) return;
      const url = new URL(win.location.href);
      url.searchParams.set("step", nodes[id].sid);
      if (url.href !== win.location.href) win.history.replaceState(win.history.state, "", url.href);
    } catch (err) { /* not embedded, or another origin */ }
  }
  function select(id, opts) {
    selected = id;
    putStepInAddress(id);
    net.selectNodes([id], false);
    stepEls.forEach((s, i) => { if (s) s.classList.toggle("sel", i === id); });
    document.body.dataset.selected = String(id);
    if (opts && opts.centre) net.focus(id, {scale: net.getScale(), animation: false});
    if (opts && opts.list && stepEls[id]) {
      const top = stepEls[id].getBoundingClientRect().top - list.getBoundingClientRect().top;
      list.scrollTop += top - Math.min(list.clientHeight / 4, 80);
    }
  }
  net.on("click", (params) => {
    const id = params.nodes.length ? params.nodes[0] : null;
    if (typeof id === "number") select(id, {list: true});
    else if (id !== null) net.unselectAll();  // a way-point: not a step
  });

  // -- math: typeset with the KaTeX the page carries (window.dmKatex) as MathML when a step
  // scrolls into view, as the step graph's list does (trust off; unparsable shows as written)
  const katex = window.dmKatex || null;
  const KATEX_OPTIONS = {throwOnError: false, trust: false, output: "mathml", strict: "ignore",
    maxExpand: 300, maxSize: 30};
  // Segments (dagmath_viz.text.rich_segments): 0 text, 1 inline and 2 display TeX, 3 opens
  // and 4 closes an emphasis ("strong" or "em"); text is only ever set as text.
  function putMath(box, segments, raw) {
    box.textContent = "";
    const open = [box];
    for (const [kind, piece] of segments) {
      const into = open[open.length - 1];
      if (kind === 0) { into.appendChild(document.createTextNode(piece)); continue; }
      if (kind === 3) { open.push(into.appendChild(el(piece === "em" ? "em" : "strong"))); continue; }
      if (kind === 4) { if (open.length > 1) open.pop(); continue; }
      const span = el("span", {class: kind === 2 ? "dm-math dm-display" : "dm-math"});
      try {
        katex.render(piece, span, Object.assign({displayMode: kind === 2}, KATEX_OPTIONS));
      } catch (err) { box.textContent = raw; return; }
      into.appendChild(span);
    }
    box.dataset.typeset = "1";
  }
  const pendingMath = new Map();
  const mathObserver = (katex && "IntersectionObserver" in window)
    ? new IntersectionObserver((entries) => {
      for (const en of entries) {
        if (!en.isIntersecting) continue;
        const run = pendingMath.get(en.target);
        if (run) { run(); pendingMath.delete(en.target); }
        mathObserver.unobserve(en.target);
      }
    }, {root: list, rootMargin: "400px 0px"}) : null;

  // -- the step list ---------------------------------------------------------------------------
  const BADGE = {dead_end: "dead end", final_correct: "final · correct",
    final_incorrect: "final · incorrect", final: "final"};
  const hasMath = nodes.some((n) => (n.math || []).some((s) => s[0] === 1 || s[0] === 2));
  list.appendChild(el("div", {class: "dm-head"}, data.n_steps + " steps · " +
    (hasMath && mathObserver ? "math typeset" : "text as written") +
    " · click a step to find it in the graph"));
  stepEls = nodes.map((n) => {
    if (n.position < 0) return null;
    const s = el("div", {class: "dm-step k-" + n.kind, role: "listitem", "data-id": String(n.id)});
    const head = el("div", {class: "dm-sh"});
    head.appendChild(el("b", {}, n.label));
    head.appendChild(document.createTextNode("← " + (n.parents.length
      ? n.parents.map((p) => "S" + p).join(", ") : "given")));
    if (BADGE[n.kind]) head.appendChild(el("span", {class: "dm-badge b-" + n.kind}, BADGE[n.kind]));
    if (n.fault) head.appendChild(el("span", {class: "dm-badge b-fault"}, "fault"));
    for (const t of n.tags) head.appendChild(el("span", {class: "dm-badge b-tag"}, t));
    if (barValue(n) !== null) head.appendChild(el("span", {class: "dm-badge b-tag"},
      view.bar.field + " " + barValue(n).toPrecision(3)));
    if (n.summary) head.appendChild(el("span", {class: "dm-summary"}, n.summary));
    s.appendChild(head);
    const textBox = el("div", {class: "dm-text"}, n.text);
    s.appendChild(textBox);
    if (mathObserver && n.math) {
      pendingMath.set(s, () => putMath(textBox, n.math, n.text));
      mathObserver.observe(s);
    }
    s.addEventListener("click", () => select(n.id, {centre: true}));
    list.appendChild(s);
    return s;
  });

  // -- the first view: the top of the drawing at a readable scale (a 100-step chain is
  // thousands of px deep, a wide one over 1000 px wide: fitting it all would make every label
  // a smudge), its left part when it is wider than the pane; drag pans, the wheel zooms ----
  const MIN_SCALE = 0.75;
  function firstView() {
    const xs = boxes.filter((b) => b);
    if (!xs.length) return;
    const left = Math.min(...xs.map((b) => b[0])), right = Math.max(...xs.map((b) => b[0] + b[2]));
    const top = Math.min(...xs.map((b) => b[1]));
    const W = container.clientWidth, H = container.clientHeight;
    const scale = Math.min(1, Math.max((W - 30) / (right - left + 30), MIN_SCALE));
    const fits = (right - left + 30) * scale <= W;
    const x = fits ? (left + right) / 2 : left - 15 + W / 2 / scale;
    net.moveTo({position: {x: x, y: top - 14 + H / 2 / scale}, scale: scale, animation: false});
  }

  fitHeight();
  net.setSize("100%", "100%");
  net.redraw();
  firstView();
  if (view.selected !== null && view.selected !== undefined) {
    select(view.selected, {centre: true, list: true});
  }
  window.addEventListener("resize", () => { fitHeight(); net.redraw(); });
  window.dagmath = {data: data, select: select, selected: () => selected, boxes: boxes};
  document.body.dataset.ready = "1";
})();
