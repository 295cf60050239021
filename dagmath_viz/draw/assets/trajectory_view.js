// The trajectory view of dagmath_viz.render: draws the positions and edge paths computed in
// Python (dagmath_viz/layout.py) as SVG, and links the graph with the step list.
// Model text is untrusted: it reaches the page through textContent only.
(function () {
  "use strict";
  const SVGNS = "http:\/\/www.w3.org/2000/svg";
  const M = 14; // margin around the drawing, layout px
  const data = JSON.parse(document.getElementById("dm-data").textContent);
  const view = data.view;
  const nodes = data.nodes;
  const edges = data.edges;
  const root = document.getElementById("dm-root");
  const pane = document.getElementById("dm-graph");
  const strip = document.getElementById("dm-overview");
  const list = document.getElementById("dm-steps");
  const bar = document.getElementById("dm-bar");
  const tip = document.getElementById("dm-tip");

  const children = nodes.map(() => []);
  const parentsOf = nodes.map(() => []);
  for (const e of edges) {
    if (!e.bad) { children[e.from].push(e.to); parentsOf[e.to].push(e.from); }
  }
  const answerPath = new Set(data.answer_path);
  const hitSet = new Set(view.find_hits || []);
  const deadEnds = nodes.filter((n) => n.kind === "dead_end").map((n) => n.id);

  const state = {
    layout: view.layout, scale: 1, selected: null,
    pathOnly: false, prune: false, focus: false,
  };
  let svg = null, nodeEls = [], edgeEls = [], stepEls = [], chipEls = {};

  function el(tag, attrs, text) {
    const e = tag.startsWith("svg:") ? document.createElementNS(SVGNS, tag.slice(4))
      : document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // Reading order: rows narrowed to the pane, so that no box is clipped at the initial
  // zoom. Arcs run in the margin on the left, so a narrower row meets every edge it did.
  const MIN_ROW = 220;
  const fitted = {};
  function lay() {
    const L = data.layouts[state.layout + (state.prune ? "_pruned" : "")];
    if (L.kind !== "reading" || !pane.clientWidth) return L;
    const left = Math.min(...L.boxes.filter((b) => b).map((b) => b[0]), L.width);
    const room = Math.floor(pane.clientWidth / (view.scale || 1)) - 2 * M - 2;
    const w = Math.max(left + MIN_ROW, Math.min(L.width, room));
    if (w >= L.width) return L;
    const key = state.layout + state.prune + w;
    if (!fitted[key]) {
      fitted[key] = Object.assign({}, L, {width: w,
        boxes: L.boxes.map((b) => b && [b[0], b[1], w - b[0], b[3]])});
    }
    return fitted[key];
  }

  // On the Trajectory page the view takes the window's height below what is above it (the
  // frame is same-origin), so graph and list are both on screen on arrival, each with its
  // own scroll; if too little is left below, it takes the window and the page scrolls once.
  function fitWindow() {
    if (!view.fit_window) return;
    try {
      const frame = window.frameElement;
      if (!frame) return;
      const win = frame.ownerDocument.defaultView;
      const top = frame.getBoundingClientRect().top + win.scrollY;
      let h = win.innerHeight - top - 12;
      if (h < view.min_height) h = win.innerHeight - 24;
      h = Math.round(Math.max(view.min_height, Math.min(h, view.max_height)));
      frame.style.height = h + "px";
      root.style.height = h + "px";
    } catch (err) { /* another origin: keep the height given */ }
  }

  // -- drawing ------------------------------------------------------------------------------
  // Step fields drawn inside the box, which keeps its size (so no edge meets it anew):
  // a bar along the bottom, |value| over the largest |value|, and a stripe of the first tag.
  function barValue(n) {
    const v = view.bar && n.fields ? n.fields[view.bar.field] : undefined;
    return typeof v === "number" ? v : null;
  }
  function encode(g, n, b) {
    if (view.tag_stripe && n.tag_color) {
      g.appendChild(el("svg:rect", {x: b[0] + 1, y: b[1] + 1, width: 5, height: b[3] - 2,
        fill: n.tag_color, class: "dm-stripe"}));
    }
    const v = barValue(n);
    if (v === null || !v) return;
    const w = Math.max((b[2] - 4) * Math.min(Math.abs(v) / view.bar.absmax, 1), 1.5);
    g.appendChild(el("svg:rect", {x: b[0] + 2, y: b[1] + b[3] - 4.5, width: w, height: 3.5,
      fill: v < 0 ? "#7b3294" : "#2b5c8a", class: "dm-fieldbar"}));
  }
  function snippet(node, box) {
    const text = (view.label_summary && node.summary) || node.snippet || node.text;
    if (!text) return "";
    const room = Math.floor((box[2] - 14 - 9 * node.label.length) / 7);
    const line = text.replace(/\s+/g, " ").trim();
    return line.length > room ? line.slice(0, Math.max(room - 1, 0)) + "…" : line;
  }

  function draw() {
    const L = lay();
    if (svg) svg.remove();
    svg = el("svg:svg", {role: "img", "aria-label": "step graph"});
    const defs = el("svg:defs");
    for (const [id, colour] of [["a", "#9a9a9a"], ["b", "#d62728"], ["h", "#1565c0"]]) {
      const m = el("svg:marker", {id: "dm-arrow-" + id, viewBox: "0 0 10 10", refX: "9",
        refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse"});
      m.appendChild(el("svg:path", {d: "M0,0 L10,5 L0,10 z", fill: colour}));
      defs.appendChild(m);
    }
    svg.appendChild(defs);
    const gEdges = el("svg:g"), gNodes = el("svg:g");
    svg.appendChild(gEdges); svg.appendChild(gNodes);
    edgeEls = edges.map((e, i) => {
      const d = L.paths[i];
      if (d === null) return null;
      const p = el("svg:path", {d: d, class: "dm-edge" + (e.bad ? " bad" : ""),
        "marker-end": "url(#dm-arrow-" + (e.bad ? "b" : "a") + ")"});
      p.dataset.from = e.from; p.dataset.to = e.to;
      const what = nodes[e.from].label + " → " + nodes[e.to].label + (e.title ? "\n" + e.title : "");
      p.addEventListener("mousemove", (ev) => showTip(what, ev));
      p.addEventListener("mouseleave", hideTip);
      gEdges.appendChild(p);
      return p;
    });
    const reading = L.kind === "reading";
    nodeEls = nodes.map((n, i) => {
      const b = L.boxes[i];
      if (b === null) return null;
      const [fill, stroke] = data.colors[n.kind];
      const g = el("svg:g", {class: "dm-node k-" + n.kind + (hitSet.has(n.id) ? " dm-hit" : ""),
        "data-id": String(n.id)});
      const r = el("svg:rect", {x: b[0], y: b[1], width: b[2], height: b[3], rx: 4,
        fill: fill, stroke: n.fault ? "#d62728" : stroke,
        "stroke-width": n.fault ? 3.5 : (n.kind.startsWith("final") ? 2.5 : 1.2)});
      if (n.kind === "missing") r.setAttribute("stroke-dasharray", "4 3");
      g.appendChild(r);
      encode(g, n, b);
      const t = el("svg:text", {y: b[1] + b[3] / 2, "dominant-baseline": "central"});
      if (reading) {
        t.setAttribute("x", b[0] + (view.tag_stripe ? 11 : 6));
        t.appendChild(el("svg:tspan", {"font-weight": "bold"}, n.label));
        t.appendChild(el("svg:tspan", {class: "dm-snip", dx: "7"}, snippet(n, b)));
      } else {
        t.setAttribute("x", b[0] + b[2] / 2);
        t.setAttribute("text-anchor", "middle");
        t.textContent = n.label;
      }
      g.appendChild(t);
      g.addEventListener("click", (ev) => { ev.stopPropagation(); select(n.id, {list: true}); });
      g.addEventListener("mousemove", (ev) => showTip(n.title, ev));
      g.addEventListener("mouseleave", hideTip);
      gNodes.appendChild(g);
      return g;
    });
    pane.appendChild(svg);
    root.dataset.layout = state.layout;
    root.dataset.drawn = String(nodeEls.filter((x) => x).length);
    setScale(state.scale);
    drawStrip();
    restyle();
  }

  function setScale(s, keepCentre) {
    const L = lay();
    const cx = (pane.scrollLeft + pane.clientWidth / 2) / state.scale;
    const cy = (pane.scrollTop + pane.clientHeight / 2) / state.scale;
    state.scale = Math.min(Math.max(s, 0.02), 4);
    const w = L.width + 2 * M, h = L.height + 2 * M;
    svg.setAttribute("viewBox", -M + " " + -M + " " + w + " " + h);
    svg.setAttribute("width", w * state.scale);
    svg.setAttribute("height", h * state.scale);
    if (keepCentre) {
      pane.scrollLeft = cx * state.scale - pane.clientWidth / 2;
      pane.scrollTop = cy * state.scale - pane.clientHeight / 2;
    }
    // The overview strip only helps when the drawing is taller than its pane.
    const tall = h * state.scale > pane.clientHeight + 1;
    if (strip.classList.contains("dm-off") === tall) {
      strip.classList.toggle("dm-off", !tall);
      drawStrip();
    }
    zoomLabel.textContent = Math.round(state.scale * 100) + " %";
    root.dataset.scale = state.scale.toFixed(3);
    updateViewMark();
  }
  function fitScale() {
    const L = lay();
    return Math.min(pane.clientWidth / (L.width + 2 * M), pane.clientHeight / (L.height + 2 * M));
  }
  function initialScale() {
    if (view.scale) return view.scale;
    if (lay().kind === "reading") return Math.min(1, fitWidth());
    return Math.min(1.25, Math.max(fitScale(), 0.8));
  }
  function fitWidth() { return pane.clientWidth / (lay().width + 2 * M); }

  // -- overview strip: every dead end (and the final step, faults, the selection) as a mark --
  function drawStrip() {
    while (strip.firstChild) strip.removeChild(strip.firstChild);
    const L = lay(), H = strip.clientHeight, total = L.height + 2 * M;
    const marks = [];
    nodes.forEach((n, i) => {
      const b = L.boxes[i];
      if (b === null) return;
      let colour = null;
      if (n.kind === "dead_end") colour = "#f28e2b";
      else if (n.kind.startsWith("final")) colour = data.colors[n.kind][0];
      else if (n.fault || n.kind === "missing") colour = "#d62728";
      if (i === state.selected) colour = "#1565c0";
      if (!colour) return;
      const m = el("div", {class: "dm-mark", title: n.label});
      m.style.top = ((b[1] + b[3] / 2 + M) / total * H - 1) + "px";
      m.style.background = colour;
      m.dataset.id = n.id;
      strip.appendChild(m);
      marks.push(m);
    });
    viewMark = el("div", {class: "dm-view"});
    strip.appendChild(viewMark);
    updateViewMark();
  }
  let viewMark = null;
  function updateViewMark() {
    if (!viewMark || !svg) return;
    const H = strip.clientHeight, full = parseFloat(svg.getAttribute("height")) || 1;
    viewMark.style.top = (pane.scrollTop / full * H) + "px";
    viewMark.style.height = Math.max(Math.min(pane.clientHeight / full, 1) * H, 4) + "px";
  }
  strip.addEventListener("click", (ev) => {
    const id = ev.target.dataset && ev.target.dataset.id;
    if (id !== undefined) { select(Number(id), {centre: true, list: true}); return; }
    const f = (ev.clientY - strip.getBoundingClientRect().top) / strip.clientHeight;
    pane.scrollTop = f * parseFloat(svg.getAttribute("height")) - pane.clientHeight / 2;
  });
  pane.addEventListener("scroll", updateViewMark);

  // -- emphasis: selection, focus, path to the answer ------------------------------------------
  function closure(start, next) {
    const seen = new Set(), stack = [start];
    while (stack.length) {
      for (const v of next[stack.pop()]) if (!seen.has(v)) { seen.add(v); stack.push(v); }
    }
    return seen;
  }
  function restyle() {
    let lit = null, litEdge = null;
    if (state.focus && state.selected !== null) {
      const up = closure(state.selected, parentsOf), down = closure(state.selected, children);
      lit = new Set([...up, ...down, state.selected]);
      litEdge = (e) => !e.bad && ((up.has(e.from) && (up.has(e.to) || e.to === state.selected))
        || ((down.has(e.to)) && (down.has(e.from) || e.from === state.selected)));
    } else if (state.pathOnly) {
      lit = answerPath;
      litEdge = (e) => !e.bad && answerPath.has(e.from) && answerPath.has(e.to);
    }
    nodeEls.forEach((g, i) => {
      if (!g) return;
      g.classList.toggle("dm-dim", lit !== null && !lit.has(i));
      g.classList.toggle("sel", i === state.selected);
    });
    edgeEls.forEach((p, i) => {
      if (!p) return;
      const e = edges[i];
      const hl = litEdge ? litEdge(e) : (state.selected !== null
        && (e.from === state.selected || e.to === state.selected));
      p.classList.toggle("hl", hl);
      p.classList.toggle("dm-dim", lit !== null && !hl);
      const marker = "url(#dm-arrow-" + (hl ? "h" : e.bad ? "b" : "a") + ")";
      // set only when it changes: every attribute set makes the browser restyle the edge
      if (p.getAttribute("marker-end") !== marker) p.setAttribute("marker-end", marker);
    });
    stepEls.forEach((s, i) => {
      if (!s) return;
      s.classList.toggle("sel", i === state.selected);
      s.classList.toggle("dm-dim", lit !== null && !lit.has(i));
    });
    for (const id in chipEls) chipEls[id].classList.toggle("sel", Number(id) === state.selected);
    root.dataset.selected = state.selected === null ? "" : String(state.selected);
  }

  function centreOn(id) {
    const b = lay().boxes[id];
    if (!b) return;
    pane.scrollLeft = (b[0] + b[2] / 2 + M) * state.scale - pane.clientWidth / 2;
    pane.scrollTop = (b[1] + b[3] / 2 + M) * state.scale - pane.clientHeight / 2;
  }
  function showStep(id) {
    const s = stepEls[id];
    if (!s) return;
    // Scroll the list only (scrollIntoView would scroll the app page around the frame too).
    const top = s.getBoundingClientRect().top - list.getBoundingClientRect().top;
    list.scrollTop += top - Math.min(list.clientHeight / 4, 80);
  }
  // -- the address: the selected step is in the app's URL (step=<id>), so a link shares it.
  // The frame is same-origin; replaceState changes the address without a reload or a new
  // history entry (Back still leaves the page).
  function appWindow() {
    try {
      const frame = window.frameElement;
      return frame ? frame.ownerDocument.defaultView : null;
    } catch (err) { return null; }
  }
  function stepLink(id) {
    const win = appWindow();
    if (!win) return null;
    const url = new URL(win.location.href);
    if (id === null || nodes[id].position < 0) url.searchParams.delete("step");
    else url.searchParams.set("step", nodes[id].sid);
    return url;
  }
  function putStepInAddress(id) {
    if (!view.link_steps) return;
    const win = appWindow(), url = stepLink(id);
    if (!win || !url || url.href === win.location.href) return;
    try { win.history.replaceState(win.history.state, "", url.href); } catch (err) { /* */ }
  }
  function select(id, opts) {
    state.selected = id;
    putStepInAddress(id);
    if (state.prune && lay().boxes[id] === null) { state.prune = false; syncToggles(); draw(); }
    restyle();
    drawStrip();
    if (opts && opts.centre) centreOn(id);
    if (opts && opts.list) showStep(id);
  }

  // -- find: the steps that match the search the trajectory was opened from ---------------
  const hits = view.find_hits || [];
  let hitAt = -1;
  function findNext(delta) {
    if (!hits.length) return;
    hitAt = (hitAt + delta + hits.length) % hits.length;
    select(hits[hitAt], {centre: true, list: true});
    findLabel.textContent = "“" + view.find + "”: " + (hitAt + 1) + " of " + hits.length;
  }

  // -- tooltip ------------------------------------------------------------------------------
  function showTip(text, ev) {
    tip.textContent = text;
    tip.style.display = "block";
    const x = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 4);
    const y = ev.clientY + 16 + tip.offsetHeight > window.innerHeight
      ? Math.max(ev.clientY - tip.offsetHeight - 10, 0) : ev.clientY + 16;
    tip.style.left = Math.max(x, 0) + "px";
    tip.style.top = y + "px";
  }
  function hideTip() { tip.style.display = "none"; }

  // -- toolbar ------------------------------------------------------------------------------
  function button(label, title, onclick, cls) {
    const b = el("button", {type: "button", title: title}, label);
    if (cls) b.className = cls;
    b.addEventListener("click", onclick);
    bar.appendChild(b);
    return b;
  }
  function toggle(label, key, title) {
    const l = el("label", {title: title});
    const c = el("input", {type: "checkbox", "data-key": key});
    c.addEventListener("change", () => {
      state[key] = c.checked;
      if (key === "prune") { draw(); if (state.selected !== null) centreOn(state.selected); }
      else restyle();
    });
    l.appendChild(c); l.appendChild(document.createTextNode(" " + label));
    bar.appendChild(l);
    return c;
  }
  function sep() { bar.appendChild(el("span", {class: "dm-sep"})); }
  button("−", "Zoom out", () => setScale(state.scale / 1.25, true)).dataset.act = "zoom-out";
  const zoomLabel = el("span", {class: "dm-zoom"});
  bar.appendChild(zoomLabel);
  button("+", "Zoom in", () => setScale(state.scale * 1.25, true)).dataset.act = "zoom-in";
  button("Fit", "Show the whole graph", () => setScale(fitScale(), false)).dataset.act = "fit";
  button("100 %", "Actual size", () => setScale(1, true)).dataset.act = "actual";
  const layoutButtons = {};
  if (data.layouts.layered) {
    sep();
    for (const [key, label] of [["layered", "Layers"], ["reading", "Reading order"]]) {
      layoutButtons[key] = button(label, "Layout: " + label, () => {
        state.layout = key;
        for (const k in layoutButtons) layoutButtons[k].setAttribute("aria-pressed", k === key);
        draw();
        setScale(initialScale(), false);
        if (state.selected !== null) centreOn(state.selected);
      });
      layoutButtons[key].dataset.act = "layout-" + key;
      layoutButtons[key].setAttribute("aria-pressed", key === state.layout);
    }
  }
  sep();
  const toggles = {
    pathOnly: toggle("Path to the answer", "pathOnly",
      "Fade every step the final step does not depend on"),
    prune: toggle("Hide dead-end branches", "prune",
      "Leave out every step the final step does not depend on"),
    focus: toggle("Focus on selected", "focus",
      "Highlight the selected step's ancestors and descendants"),
  };
  function syncToggles() { for (const k in toggles) toggles[k].checked = state[k]; }
  if (view.link_steps) {
    const copy = button("Copy link", "Copy a link to this trajectory at the selected step",
      () => {
        const url = stepLink(state.selected);
        if (!url) return;
        const done = () => { copy.textContent = "Link copied"; copied.value = url.href;
          setTimeout(() => { copy.textContent = "Copy link"; }, 1500); };
        const win = appWindow();
        const clip = win && win.navigator.clipboard;
        if (clip) clip.writeText(url.href).then(done, () => showLink(url.href));
        else showLink(url.href);
      });
    copy.dataset.act = "copy-link";
    // Where the clipboard is refused, the link is shown selected, to copy by hand.
    const copied = el("input", {type: "text", readonly: "", class: "dm-link dm-off",
      "aria-label": "link to this step"});
    bar.appendChild(copied);
    function showLink(href) {
      copied.value = href; copied.classList.remove("dm-off"); copied.focus(); copied.select();
    }
  }
  let findLabel = null;
  if (hits.length || view.find) {
    sep();
    findLabel = el("span", {class: "dm-find"}, "“" + view.find + "”: " +
      (hits.length ? hits.length + " steps" : "in no step (only the problem, or the thinking)"));
    // the count and its ◀ ▶ stay on one line when the toolbar wraps
    const findGroup = el("span", {class: "dm-findgroup"});
    findGroup.appendChild(findLabel);
    bar.appendChild(findGroup);
    if (hits.length) {
      for (const [label, title, step, act] of [["◀", "Previous matching step", -1, "find-prev"],
                                               ["▶", "Next matching step", 1, "find-next"]]) {
        const b = button(label, title, () => findNext(step));
        b.dataset.act = act;
        findGroup.appendChild(b);
      }
    }
  }
  const dead = el("div", {id: "dm-dead"});
  dead.appendChild(el("span", {}, "Dead ends (" + deadEnds.length + ")" +
    (deadEnds.length ? ":" : "")));
  for (const id of deadEnds) {
    const c = el("button", {type: "button", class: "dm-chip", title: nodes[id].title},
      nodes[id].label);
    c.addEventListener("click", () => select(id, {centre: true, list: true}));
    chipEls[id] = c;
    dead.appendChild(c);
  }
  bar.appendChild(dead);

  // -- step list ----------------------------------------------------------------------------
  const BADGE = {dead_end: "dead end", final_correct: "final · correct",
    final_incorrect: "final · incorrect", final: "final"};
  // -- math: typeset with the KaTeX the page carries (window.dmKatex), as MathML, when a step
  // scrolls into view. KaTeX builds DOM nodes itself (trust off: no \href, no \html*);
  // a formula it cannot parse shows as written.
  const katex = window.dmKatex || null;
  const KATEX_OPTIONS = {throwOnError: false, trust: false, output: "mathml", strict: "ignore",
    maxExpand: 300, maxSize: 30};
  // Segments (dagmath_viz.text.rich_segments): 0 text, 1 inline and 2 display TeX, 3 opens
  // and 4 closes an emphasis ("strong" or "em", markdown's **bold** and *italic*), built as
  // elements whose text is set as text: nothing in a step is parsed as markup.
  function putMath(box, segments, raw) {
    if (!katex || !segments) { box.textContent = raw; return; }
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
      } catch (err) {
        span.textContent = (kind === 2 ? "\\[" : "\\(") + piece + (kind === 2 ? "\\]" : "\\)");
      }
      into.appendChild(span);
    }
    box.dataset.typeset = "1";
  }
  const typesets = (segments) => (segments || []).some((s) => s[0] === 1 || s[0] === 2);
  const pendingMath = new Map();  // step element -> function that typesets it
  const mathObserver = (katex && "IntersectionObserver" in window)
    ? new IntersectionObserver((entries) => {
      for (const en of entries) {
        if (!en.isIntersecting) continue;
        const run = pendingMath.get(en.target);
        if (run) { run(); pendingMath.delete(en.target); }
        mathObserver.unobserve(en.target);
      }
    }, {root: list, rootMargin: "400px 0px"}) : null;

  function buildList() {
    if (!view.show_steps) { list.classList.add("dm-off"); return; }
    const hasMath = nodes.some((n) => typesets(n.math) || typesets(n.why_math));
    list.appendChild(el("div", {class: "dm-head"}, data.n_steps + " steps · " +
      (hasMath && katex ? "math typeset" : "text as written (LaTeX source)") +
      " · click a step to find it in the graph"));
    stepEls = nodes.map((n) => {
      if (n.position < 0) return null;
      const s = el("div", {class: "dm-step k-" + n.kind + (hitSet.has(n.id) ? " dm-hit" : ""),
        role: "listitem", "data-id": String(n.id)});
      const head = el("div", {class: "dm-sh"});
      head.appendChild(el("b", {}, n.label));
      head.appendChild(document.createTextNode("← " + (n.parents.length
        ? n.parents.map((p) => "S" + p).join(", ") : "given")));
      if (BADGE[n.kind]) head.appendChild(el("span", {class: "dm-badge b-" + n.kind},
        BADGE[n.kind]));
      if (n.fault) head.appendChild(el("span", {class: "dm-badge b-fault"}, "fault"));
      for (const t of n.tags) head.appendChild(el("span", {class: "dm-badge b-tag"}, t));
      if (barValue(n) !== null) head.appendChild(el("span", {class: "dm-badge b-tag"},
        view.bar.field + " " + barValue(n).toPrecision(3)));
      if (n.summary) head.appendChild(el("span", {class: "dm-summary"}, n.summary));
      s.appendChild(head);
      const textBox = el("div", {class: "dm-text"}, n.text);
      s.appendChild(textBox);
      for (const f of n.faults) s.appendChild(el("div", {class: "dm-fault"}, "fault: " + f));
      let whyBox = null;
      if (n.why) {
        const d = el("details");
        d.appendChild(el("summary", {}, "why"));
        whyBox = el("div", {}, n.why);
        d.appendChild(whyBox);
        s.appendChild(d);
      }
      if (mathObserver && (n.math || n.why_math)) {
        pendingMath.set(s, () => {
          if (n.math) putMath(textBox, n.math, n.text);
          if (n.why_math && whyBox) putMath(whyBox, n.why_math, n.why);
        });
        mathObserver.observe(s);
      }
      s.addEventListener("click", (ev) => {
        if (ev.target.closest("details")) return;
        select(n.id, {centre: true});
      });
      list.appendChild(s);
      return s;
    });
  }

  // Drag the background to pan.
  let drag = null;
  pane.addEventListener("mousedown", (ev) => {
    if (ev.button !== 0 || ev.target.closest(".dm-node")) return;
    drag = {x: ev.clientX, y: ev.clientY, l: pane.scrollLeft, t: pane.scrollTop};
    pane.classList.add("dm-dragging");
  });
  window.addEventListener("mousemove", (ev) => {
    if (!drag) return;
    pane.scrollLeft = drag.l - (ev.clientX - drag.x);
    pane.scrollTop = drag.t - (ev.clientY - drag.y);
  });
  window.addEventListener("mouseup", () => { drag = null; pane.classList.remove("dm-dragging"); });

  fitWindow();
  buildList();
  draw();
  setScale(initialScale(), false);
  if (view.selected !== null && view.selected !== undefined) {
    select(view.selected, {centre: true, list: true});
    hitAt = hits.indexOf(view.selected);
    if (hitAt >= 0) findLabel.textContent = "“" + view.find + "”: " + (hitAt + 1) + " of " +
      hits.length;
    // A step= link points at this view: bring it into the app's window (same origin),
    // unless it is whole on screen already (a view fitted to the window is).
    try {
      const frame = window.frameElement;
      const r = frame && frame.getBoundingClientRect();
      const win = appWindow();
      if (frame && (r.top < 0 || r.bottom > win.innerHeight + 1)) {
        frame.scrollIntoView({block: "start"});
      }
    } catch (err) { /* not embedded, or another origin: nothing to scroll */ }
  }
  let lastWidth = pane.clientWidth;
  window.addEventListener("resize", () => {
    if (pane.clientWidth !== lastWidth && lay().kind === "reading") {
      lastWidth = pane.clientWidth;
      draw();
    }
    drawStrip(); updateViewMark();
  });

  // -- keyboard (README "Keys"): j/→ k/← steps, a the path to the answer, ? the list of
  // keys (Esc closes it); on the Trajectory page also n/p trajectories and c copy link.
  // Keys typed into a text box are left alone. On that page the keys work wherever the
  // focus is in the app (the frame is same-origin), not only inside this frame.
  function stepBy(delta) {
    const n = data.n_steps, cur = state.selected;
    if (!n) return;
    const next = cur === null || cur >= n ? (delta > 0 ? 0 : n - 1)
      : Math.min(Math.max(cur + delta, 0), n - 1);
    select(next, {centre: true, list: true});
  }
  const keyNote = el("div", {id: "dm-note", role: "status", "aria-live": "polite",
    class: "dm-off"});
  let noteTimer = null;
  function note(text) {
    keyNote.textContent = text;
    keyNote.classList.remove("dm-off");
    clearTimeout(noteTimer);
    noteTimer = setTimeout(() => keyNote.classList.add("dm-off"), 2500);
  }
  function togglePath() {
    state.pathOnly = !state.pathOnly;
    syncToggles();
    restyle();
    note("Path to the answer: " + (state.pathOnly ? "on" : "off"));
  }
  // Next/previous trajectory: the Trajectory page's own Prev/Next buttons (keys traj_prev,
  // traj_next), so the page moves as a click would (its order, its filters, the address).
  function pageButton(delta) {
    const win = appWindow();
    if (!win || !view.link_steps) return null;
    try {
      return win.document.querySelector(".st-key-" + (delta > 0 ? "traj_next" : "traj_prev") +
        " button");
    } catch (err) { return null; }
  }
  function trajectoryBy(delta) {
    const b = pageButton(delta);
    if (!b) return;
    if (b.disabled) {
      note(delta > 0 ? "This is the last trajectory shown" : "This is the first trajectory shown");
      return;
    }
    note(delta > 0 ? "Next trajectory…" : "Previous trajectory…");
    b.click();
  }
  // Copy link: the app's address with step=<the selected step>, to the clipboard; where the
  // clipboard is refused or missing, the link is shown selected in the toolbar, to copy by hand.
  function copyLink() {
    const url = stepLink(state.selected);
    if (!url || !view.link_steps) return;
    const win = appWindow();
    const byHand = () => {
      const box = bar.querySelector("input.dm-link");
      if (box) { box.value = url.href; box.classList.remove("dm-off"); box.focus(); box.select(); }
      note("No clipboard here: the link is shown selected in the toolbar, copy it by hand");
    };
    let clip = null;
    try { clip = win.navigator.clipboard || null; } catch (err) { clip = null; }
    if (!clip) { byHand(); return; }
    clip.writeText(url.href).then(() => note("Link copied: " + url.href), byHand);
  }
  function canCopy() { return Boolean(view.link_steps && appWindow()); }
  const KEYS = [
    ["j  or  →", "next step", () => true],
    ["k  or  ←", "previous step", () => true],
    ["a", "path to the answer on / off", () => true],
    ["n", "next trajectory", () => pageButton(1) !== null],
    ["p", "previous trajectory", () => pageButton(-1) !== null],
    ["c", "copy a link to this trajectory at the selected step", canCopy],
    ["?", "show / hide this list", () => true],
    ["Esc", "close this list", () => true],
  ];
  const keyList = el("div", {id: "dm-keys", role: "dialog", "aria-label": "Keys",
    class: "dm-off"});
  function showKeys(on) {
    if (!on) { keyList.classList.add("dm-off"); return; }
    keyList.replaceChildren(el("div", {class: "dm-keys-head"}, "Keys"));
    const table = el("table");
    for (const [keys, what, here] of KEYS) {
      if (!here()) continue;
      const tr = el("tr");
      tr.appendChild(el("td", {}, keys));
      tr.appendChild(el("td", {}, what));
      table.appendChild(tr);
    }
    keyList.appendChild(table);
    keyList.appendChild(el("div", {class: "dm-keys-foot"},
      "Not while typing in a text box. Esc or ? closes this list."));
    keyList.classList.remove("dm-off");
  }
  keyList.addEventListener("click", () => showKeys(false));
  document.body.appendChild(keyList);
  document.body.appendChild(keyNote);
  const ACTIONS = {
    j: () => stepBy(1), ArrowRight: () => stepBy(1), k: () => stepBy(-1),
    ArrowLeft: () => stepBy(-1), a: togglePath, n: () => trajectoryBy(1),
    p: () => trajectoryBy(-1), c: copyLink,
    "?": () => showKeys(keyList.classList.contains("dm-off")),
  };
  function typing(t) {
    return Boolean(t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" ||
      t.tagName === "SELECT" || t.isContentEditable));
  }
  // One key pressed here or in the app; true when it was one of the view's keys.
  function onKey(ev) {
    if (ev.altKey || ev.ctrlKey || ev.metaKey || typing(ev.target)) return false;
    if (ev.key === "Escape") {
      if (keyList.classList.contains("dm-off")) return false;
      showKeys(false);
      return true;
    }
    const act = ACTIONS[ev.key];
    if (!act || ((ev.key === "n" || ev.key === "p") && !pageButton(1)) ||
      (ev.key === "c" && !canCopy())) return false;
    act();
    return true;
  }
  document.addEventListener("keydown", (ev) => { if (onKey(ev)) ev.preventDefault(); });
  if (view.link_steps) {
    // In the app's window, in the capture phase, so a key the view uses goes to nothing
    // else on the page. The handler of a view a rerun replaced is removed first; one whose
    // frame is gone removes itself.
    try {
      const win = appWindow();
      if (win) {
        if (win.dmKeys) win.removeEventListener("keydown", win.dmKeys, true);
        const handler = (ev) => {
          const frame = window.frameElement;
          if (!frame || !frame.isConnected) {
            win.removeEventListener("keydown", handler, true);
            return;
          }
          if (onKey(ev)) { ev.preventDefault(); ev.stopPropagation(); }
        };
        win.dmKeys = handler;
        win.addEventListener("keydown", handler, true);
      }
    } catch (err) { /* another origin: the keys work inside the frame only */ }
  }

  // For tests and for the page: what was drawn, and the same actions as the buttons.
  window.dagmath = {
    data: data, state: state, select: select, setScale: setScale, fitScale: fitScale,
    layout: () => lay(),
    nodeElement: (id) => nodeEls[id] || null,
    stepElement: (id) => stepEls[id] || null,
    key: (name) => onKey({key: name, target: null}),
  };
  // The names earlier vis-network views exposed (tests read the drawn nodes through them).
  window.nodes = {get: () => nodes.slice()};
  window.edges = {get: () => edges.slice()};
  root.dataset.ready = "1";
})();
