// app.js: the dpcalc page. The form's state lives in the URL (the CLI's
// flag names); every change sends the query string to a Web Worker running
// the wasm engine (worker.js); results of superseded queries are dropped,
// and a worker stuck on a superseded long query is replaced.
"use strict";

// PLAN are the training-plan flags of eps, delta, sigma and epochs.
const PLAN = ["batch", "n", "schedule", "sampling", "adjacency"];
// FLAGS are the flags each command takes, in command-line order: the same
// lists as internal/query's specs (the browser test checks they agree).
const FLAGS = {
  sigma: ["eps", "delta", "q", "epochs", "steps", ...PLAN, "accountant", "pld-grid", "ac-sampling", "tol"],
  eps: ["sigma", "delta", "q", "epochs", "steps", ...PLAN, "accountant", "pld-grid", "ac-sampling"],
  delta: ["sigma", "eps", "q", "epochs", "steps", ...PLAN, "accountant", "pld-grid", "ac-sampling"],
  epochs: ["sigma", "q", "eps", "delta", ...PLAN, "accountant", "pld-grid", "ac-sampling", "max-steps"],
  audit: ["sigma", "eps", "delta", "q", "epochs", "steps", "pld-grid"],
  "curve-epochs": ["sigma", "q", "delta", "from", "to", "points", "accountant", "pld-grid", "ac-sampling"],
  "curve-sigma": ["delta", "eps", "points", "q", "epochs", "steps", "accountant", "pld-grid", "ac-sampling"],
};
const INPUTS = ["sigma", "eps", "delta", "q", "epochs", "steps", ...PLAN, "accountant", "pld-grid", "ac-sampling", "tol", "max-steps"];
// A worker busy this long on a query that has been superseded is replaced.
const RESTART_MS = 250;

const $ = (id) => document.getElementById(id);
const stats = (window.dpcalcStats = { start: performance.now() });

// ---- state: form <-> URL <-> query string <-> command line ----

function state() {
  const cmd = $("cmd").value;
  const s = { cmd };
  for (const f of FLAGS[cmd]) {
    const el = $(f);
    if (el && el.value.trim() !== "") s[f] = el.value.trim();
  }
  return s;
}

function queryString(s) {
  const p = new URLSearchParams();
  p.set("cmd", s.cmd);
  for (const f of FLAGS[s.cmd]) if (s[f] !== undefined) p.set(f, s[f]);
  return p.toString();
}

function shellQuote(a) {
  if (a !== "" && /^[A-Za-z0-9\-_.,:+=/@%]+$/.test(a)) return a;
  return "'" + a.replace(/'/g, "'\\''") + "'";
}

function commandLine(s) {
  const words = s.cmd.startsWith("curve-") ? s.cmd.split("-") : [s.cmd];
  for (const f of FLAGS[s.cmd]) if (s[f] !== undefined) words.push("--" + f, s[f]);
  return ["dpcalc", ...words.map(shellQuote)].join(" ");
}

function loadURL() {
  const p = new URLSearchParams(location.search);
  const cmd = p.get("cmd");
  if (cmd && FLAGS[cmd] && $("cmd").querySelector(`option[value="${cmd}"]`)) $("cmd").value = cmd;
  for (const f of INPUTS) {
    const v = p.get(f);
    if (v === null) continue;
    const el = $(f);
    if (el.tagName === "SELECT" && ![...el.options].some((o) => o.value === v)) {
      // Keep a value the page does not offer so the CLI's message shows.
      const o = document.createElement("option");
      o.value = o.textContent = v;
      el.appendChild(o);
    }
    el.value = v;
  }
}

// defaultsFor fills the example: a reviewer's first look.
function defaultsFor() {
  const d = { sigma: "4", q: "0.01", epochs: "100", delta: "1e-5", accountant: "all" };
  for (const [k, v] of Object.entries(d)) $(k).value = v;
  return d;
}

function showFields(cmd) {
  for (const el of document.querySelectorAll(".field[data-flag]")) {
    const f = el.dataset.flag;
    el.classList.toggle("hidden", f !== "cmd" && !FLAGS[cmd].includes(f));
  }
}

// ---- workers ----

let wasmModule = null;

class Runner {
  constructor(name) {
    this.name = name;
    this.gen = 0;
    this.busySince = 0; // performance.now() when the running query was sent; 0 when idle
    this.callbacks = new Map();
    this.restarts = 0;
    this.start();
  }
  start() {
    this.ready = false;
    this.worker = new Worker("worker.js");
    this.worker.onmessage = (e) => this.onMessage(e.data);
    this.worker.onerror = (e) => showStatus("worker error: " + (e.message || e));
    this.worker.postMessage({ type: "init", module: wasmModule });
  }
  // send asks for qss (an array of query strings); cb(results, ms) runs
  // only if no newer send happened meanwhile, and so does part(i, result)
  // as each query finishes, before cb.
  send(qss, cb, part) {
    const gen = ++this.gen;
    const now = performance.now();
    if (this.busySince && now - this.busySince > RESTART_MS) {
      this.worker.terminate();
      this.restarts++;
      this.callbacks.clear();
      this.start();
    }
    this.callbacks.clear(); // older requests' results will be dropped
    this.callbacks.set(gen, { cb, part, sent: now });
    this.busySince = now;
    this.lastSent = gen;
    this.worker.postMessage({ type: "query", gen, qs: qss });
  }
  // cancel drops the answer of whatever was sent last (the worker still
  // finishes it; a later send replaces the worker if it is still busy).
  cancel() {
    this.gen++;
    this.callbacks.clear();
  }
  onMessage(m) {
    if (m.type === "ready") {
      this.ready = true;
      $("version").textContent = "engine " + m.version;
      return;
    }
    if (m.type === "failed") {
      showStatus("could not start the WebAssembly engine: " + m.error);
      return;
    }
    if (m.type === "partial") {
      const c = this.callbacks.get(m.gen);
      if (c && c.part) c.part(m.index, m.result);
      return;
    }
    if (m.type !== "result") return;
    const c = this.callbacks.get(m.gen);
    if (m.gen === this.lastSent) this.busySince = 0; // the worker is idle
    if (!c) return; // superseded
    this.callbacks.delete(m.gen);
    c.cb(m.results, performance.now() - c.sent);
  }
}

let main, curves;

function showStatus(s) {
  $("status").textContent = s;
}

// ---- pending work ----

// pendingParts maps each part of the page still being computed ("table",
// "curve-epochs", "curve-sigma") to what #pending says about it; the curves
// take seconds to tens of seconds after the table, and the page says so.
const pendingParts = new Map();
// pendingLog records what #pending showed, in order (the browser test
// reads it; the last 100 entries).
const pendingLog = [];
window.dpcalcPending = pendingLog;

function setPending(key, label) {
  if (label) pendingParts.set(key, label);
  else pendingParts.delete(key);
  const el = $("pending");
  const parts = [...pendingParts.values()];
  el.textContent = parts.length ? "computing: " + parts.join("; ") + "…" : "";
  el.classList.toggle("hidden", parts.length === 0);
  el.setAttribute("aria-busy", parts.length ? "true" : "false");
  pendingLog.push({ keys: [...pendingParts.keys()], text: el.textContent, visible: el.getClientRects().length > 0 });
  if (pendingLog.length > 100) pendingLog.shift();
}

// showPlotPending puts a placeholder saying what is being computed into a
// plot's box until its curve arrives.
function showPlotPending(el, what, cmd) {
  el.dataset.state = "computing";
  delete el.dataset.command;
  el.innerHTML = `<p class="pending">computing ${esc(what)}…</p><div class="cmd">$ ${esc(cmd)}</div>`;
}

// ---- formatting ----

// fmtG is Go's strconv.FormatFloat(x, 'g', 6, 64) up to the exponent's
// spelling: six significant digits, trailing zeros dropped.
function fmtG(x) {
  if (x === null || x === undefined) return "-";
  if (x === 0) return "0";
  const e = Math.floor(Math.log10(Math.abs(x)));
  if (e < -4 || e >= 21) {
    let [m, ex] = x.toExponential(5).split("e");
    if (m.includes(".")) m = m.replace(/0+$/, "").replace(/\.$/, "");
    return m + "e" + ex;
  }
  let s = x.toPrecision(6);
  if (s.includes("e")) return String(Number(s));
  if (s.includes(".")) s = s.replace(/0+$/, "").replace(/\.$/, "");
  return s;
}

function esc(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

// num renders x with six digits; data-v holds the exact value (JSON's).
function num(x, cls = "") {
  if (x === null || x === undefined) return `<span class="${cls}">-</span>`;
  return `<span class="${cls}" data-v="${x}">${fmtG(x)}</span>`;
}

function rowsTable(rows) {
  let h = `<table id="rows"><thead><tr><th>accountant</th><th>σ</th><th>q</th><th>steps</th><th>epochs</th>` +
    `<th>sampling</th><th>adjacency</th><th>ε</th><th>δ</th><th>λ</th><th>note</th></tr></thead><tbody>`;
  for (const r of rows) {
    const cls = r.error ? "failed" : r.unsupported ? "unsupported" : r.procedure ? "procedure" : "";
    let eps = r.error || r.unsupported ? "-" : num(r.epsilon, "eps");
    if (!r.error && r.epsilon_lower !== undefined && r.epsilon_upper !== undefined) {
      eps += ` <span class="interval">certified [${num(r.epsilon_lower, "lo")}, ${num(r.epsilon_upper, "hi")}]</span>`;
    }
    if (!r.error && r.lower_bound && r.epsilon_lower !== undefined) {
      eps = `≥ ${num(r.epsilon_lower, "lo")}`; // a certified lower bound on the true ε
    }
    let note = r.note ? esc(r.note) : "";
    if (r.error) note = `<span class="rowerr">error: ${esc(r.error)}</span>` + (note ? "; " + note : "");
    if (r.unsupported) note = `unsupported: ${esc(r.unsupported)}` + (note ? "; " + note : "");
    // A schedule: each phase's σ and q.
    const phases = (f) => r.phases.map((p) => fmtG(p[f])).join("; ");
    const sigma = r.phases ? esc(phases("sigma")) : r.sigma === 0 ? "-" : num(r.sigma, "sigma");
    const q = r.phases ? esc(phases("q")) : num(r.q, "q");
    const badge = r.procedure ? ` <span class="badge">procedure</span>` : "";
    h += `<tr class="${cls}" data-accountant="${esc(r.accountant)}"><td>${esc(r.accountant)}${badge}</td>` +
      `<td class="num">${sigma}</td><td class="num">${q}</td>` +
      `<td class="num"><span class="steps" data-v="${r.steps}">${r.steps}</span></td><td class="num">${num(r.epochs, "epochs")}</td>` +
      `<td>${esc(r.sampling || "")}</td><td>${esc(r.adjacency || "")}</td>` +
      `<td class="num">${eps}</td><td class="num">${r.error || r.unsupported ? "-" : num(r.delta, "delta")}</td>` +
      `<td class="num">${num(r.lambda, "lambda")}</td><td class="note">${note}</td></tr>`;
  }
  return h + "</tbody></table>";
}

function interval(lo, hi) {
  if (lo === null) return "is unbounded";
  return `lies in [${num(lo, "lo")}, ${hi === null ? "no finite bound" : num(hi, "hi")}]`;
}

// ---- updating ----

let lastResult = null;

function clearErrors() {
  for (const el of document.querySelectorAll(".err")) el.textContent = "";
  for (const el of document.querySelectorAll(".field.bad")) el.classList.remove("bad");
  for (const el of document.querySelectorAll("[aria-invalid]")) el.removeAttribute("aria-invalid");
  $("error").textContent = "";
}

function update() {
  const s = state();
  showFields(s.cmd);
  const qs = queryString(s);
  history.replaceState(null, "", "?" + qs);
  $("cmdline").textContent = commandLine(s);
  if (!main) return;
  showStatus("computing…");
  setPending("table", "the table");
  main.send([qs], (results, ms) => {
    setPending("table", null);
    render(s, results[0], ms);
  });
}

function render(s, res, ms) {
  lastResult = res;
  document.body.dataset.shown = res.command || "";
  clearErrors();
  $("audit").innerHTML = "";
  $("caveats").innerHTML = "";
  if (stats.firstResult === undefined) stats.firstResult = performance.now();
  showStatus(`computed in ${res.ms.toFixed(1)} ms (wasm), ${ms.toFixed(1)} ms with the worker round trip`);
  if (res.error) {
    $("result").innerHTML = "";
    const field = document.querySelector(`.field[data-flag="${res.flag}"]`);
    if (field && !field.classList.contains("hidden")) {
      field.classList.add("bad");
      $("err-" + res.flag).textContent = res.error;
      if ($(res.flag)) $(res.flag).setAttribute("aria-invalid", "true");
    } else {
      $("error").textContent = res.error;
    }
    clearPlots();
    return;
  }
  let rows = res.rows;
  if (res.audit) {
    const a = res.audit;
    $("audit").innerHTML =
      `<p>claim: (ε = ${num(a.claimed_epsilon)}, δ = ${num(a.delta)}) for σ = ${num(a.sigma)}, q = ${num(a.q)}, ` +
      `T = ${a.steps} steps (${num(a.epochs)} epochs)<br>` +
      `true ε at δ <span id="audit-interval">${interval(a.epsilon_lower, a.epsilon_upper)}</span> (pld, certified)<br>` +
      `verdict: <span id="verdict" class="${esc(a.verdict)}">${esc(a.verdict)}</span></p>`;
    rows = a.accountants;
  }
  $("result").innerHTML = rowsTable(rows);
  const notes = rows.filter((r) => r.procedure);
  if (notes.length) {
    $("caveats").innerHTML = "<p>" + notes.map((r) => `<b>${esc(r.accountant)}</b>: ${esc(r.note)}.`).join(" ") +
      " Their numbers reproduce a paper; they are not privacy guarantees.</p>";
  }
  requestCurves(s, res, rows);
}

// ---- curves ----

function clearPlots() {
  if (curves) curves.cancel(); // a curve still being computed must not appear later
  setPending("curve-epochs", null);
  setPending("curve-sigma", null);
  for (const id of ["plot-epochs", "plot-sigma"]) {
    $(id).innerHTML = "";
    delete $(id).dataset.state;
  }
}

// round3 spells x with three significant digits (curve ranges need no more).
function round3(x) {
  return String(Number(x.toPrecision(3)));
}

function curveAccountants(s) {
  const a = s.accountant || "rdp";
  if (a === "all") return "all";
  return a === "pld" ? "pld" : a + ",pld";
}

// requestCurves asks for ε against epochs (at the row's σ) and σ against
// target ε (at the row's length), both around the current answer.
function requestCurves(s, res, rows) {
  // The curves are of one Poisson phase under add-remove (curve's flags).
  const single = (r) => !r.phases && r.q > 0 && (r.sampling || "poisson") === "poisson" && (r.adjacency || "add-remove") === "add-remove";
  const ok = rows.find((r) => single(r) && !r.error && !r.unsupported && r.sigma > 0 && r.steps > 0) || rows.find((r) => single(r) && r.sigma > 0);
  if (!ok) {
    clearPlots();
    return;
  }
  const common = { accountant: curveAccountants(s) };
  if (s["pld-grid"]) common["pld-grid"] = s["pld-grid"];
  if (s["ac-sampling"]) common["ac-sampling"] = s["ac-sampling"];
  if (s.cmd === "audit") common.accountant = "all";
  let delta = s.delta || "1e-5";
  if (s.cmd === "delta") delta = ok.delta > 0 && ok.delta < 1 ? String(ok.delta) : "1e-5";
  const E = ok.epochs > 0 ? ok.epochs : 100;
  const ce = {
    cmd: "curve-epochs", sigma: String(ok.sigma), q: String(ok.q), delta,
    from: round3(Math.max(E / 50, ok.q)), to: round3(2 * E), ...common, points: "60",
  };
  let target = Number(s.eps);
  if (s.cmd === "eps" || s.cmd === "audit") {
    const rr = rows.find((r) => r.accountant === (s.accountant || "rdp")) || ok;
    if (s.cmd === "eps") target = rr.epsilon;
  }
  const curveStates = [ce];
  if (target > 0 && isFinite(target) && ok.steps > 0) {
    curveStates.push({
      cmd: "curve-sigma", delta, eps: `${round3(target / 10)}:${round3(target * 10)}`, q: String(ok.q),
      steps: String(ok.steps), ...common, points: "16",
    });
  }
  const what = ["the curve ε against epochs", "the curve σ against target ε"];
  showPlotPending($("plot-epochs"), what[0], commandLine(ce));
  setPending("curve-epochs", what[0]);
  if (curveStates[1]) {
    showPlotPending($("plot-sigma"), what[1], commandLine(curveStates[1]));
    setPending("curve-sigma", what[1]);
  } else {
    $("plot-sigma").innerHTML = "";
    delete $("plot-sigma").dataset.state;
    setPending("curve-sigma", null);
  }
  // Each curve is drawn as soon as it is computed.
  curves.send(curveStates.map(queryString), () => {}, (i, res) => {
    if (i === 0) {
      drawCurve($("plot-epochs"), res, commandLine(ce), { x: ok.epochs, y: ok.epsilon });
      setPending("curve-epochs", null);
    } else {
      drawCurve($("plot-sigma"), res, commandLine(curveStates[1]), { x: target, y: ok.sigma });
      setPending("curve-sigma", null);
    }
  });
}

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"];

function ticks(lo, hi, log) {
  const out = [];
  if (log) {
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
      for (const m of hi / lo < 100 ? [1, 2, 5] : [1]) {
        const v = m * Math.pow(10, e);
        if (v >= lo * 0.999 && v <= hi * 1.001) out.push(v);
      }
    }
    return out;
  }
  const step0 = (hi - lo) / 6;
  const p = Math.pow(10, Math.floor(Math.log10(step0)));
  const step = [1, 2, 5, 10].map((m) => m * p).find((v) => v >= step0);
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9 * step; v += step) out.push(v);
  return out;
}

function drawCurve(el, res, cmd, mark) {
  el.dataset.state = "done";
  el.dataset.command = cmd;
  if (res.error) {
    el.innerHTML = `<p class="err">${esc(res.error)}</p>`;
    return;
  }
  const c = res.curve;
  const isEpochs = c.curve === "epochs";
  const series = c.series.filter((s) => s.points).map((s) => ({
    name: s.accountant,
    pts: s.points
      .map((p) => (isEpochs ? [p.epochs, p.epsilon] : [p.epsilon, p.sigma]))
      .filter(([x, y]) => x > 0 && y > 0 && y !== null && isFinite(y)),
  })).filter((s) => s.pts.length > 0);
  const failed = c.series.filter((s) => s.error).map((s) => `${s.accountant}: ${s.error}`);
  const W = 520, H = 340, L = 60, R = 110, T = 30, B = 45;
  const logX = !isEpochs, logY = true;
  let xs = series.flatMap((s) => s.pts.map((p) => p[0]));
  let ys = series.flatMap((s) => s.pts.map((p) => p[1]));
  if (!xs.length) {
    el.innerHTML = `<p>no finite points</p><div class="cmd">$ ${esc(cmd)}</div>`;
    return;
  }
  let [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  let [y0, y1] = [Math.min(...ys), Math.max(...ys)];
  if (y1 <= y0) [y0, y1] = [y0 / 2, y1 * 2];
  if (x1 <= x0) [x0, x1] = [x0 / 2, x1 * 2];
  const sx = (x) => L + (W - L - R) * (logX ? Math.log(x / x0) / Math.log(x1 / x0) : (x - x0) / (x1 - x0));
  const sy = (y) => T + (H - T - B) * (1 - Math.log(y / y0) / Math.log(y1 / y0));
  let svg = `<svg viewBox="0 0 ${W} ${H}" xmlns="http://www.w3.org/2000/svg" font-size="11" font-family="sans-serif">`;
  const title = isEpochs
    ? `ε vs epochs (σ = ${fmtG(c.sigma)}, q = ${fmtG(c.q)}, δ = ${fmtG(c.delta)})`
    : `σ vs target ε (q = ${fmtG(c.q)}, T = ${c.steps} steps, δ = ${fmtG(c.delta)})`;
  svg += `<text x="${W / 2}" y="16" text-anchor="middle" font-size="13">${esc(title)}</text>`;
  svg += `<rect x="${L}" y="${T}" width="${W - L - R}" height="${H - T - B}" fill="none" stroke="#999"/>`;
  for (const v of ticks(x0, x1, logX)) {
    const x = sx(v);
    svg += `<line x1="${x}" x2="${x}" y1="${T}" y2="${H - B}" stroke="#eee"/><text x="${x}" y="${H - B + 14}" text-anchor="middle">${fmtG(v)}</text>`;
  }
  for (const v of ticks(y0, y1, logY)) {
    const y = sy(v);
    svg += `<line x1="${L}" x2="${W - R}" y1="${y}" y2="${y}" stroke="#eee"/><text x="${L - 4}" y="${y + 4}" text-anchor="end">${fmtG(v)}</text>`;
  }
  svg += `<text x="${(L + W - R) / 2}" y="${H - 8}" text-anchor="middle">${isEpochs ? "epochs" : "target ε (log)"}</text>`;
  svg += `<text transform="translate(14 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">${isEpochs ? "ε (log)" : "σ (log)"}</text>`;
  series.forEach((s, i) => {
    const col = COLORS[i % COLORS.length];
    const d = s.pts.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(" ");
    svg += `<polyline class="series" data-accountant="${esc(s.name)}" data-n="${s.pts.length}" points="${d}" fill="none" stroke="${col}" stroke-width="1.6"/>`;
    svg += `<line x1="${W - R + 8}" x2="${W - R + 24}" y1="${T + 10 + 15 * i}" y2="${T + 10 + 15 * i}" stroke="${col}" stroke-width="2"/>`;
    svg += `<text x="${W - R + 28}" y="${T + 14 + 15 * i}">${esc(s.name)}</text>`;
  });
  if (mark && mark.x > 0 && mark.y > 0 && mark.x >= x0 && mark.x <= x1 && mark.y >= y0 && mark.y <= y1) {
    svg += `<circle cx="${sx(mark.x)}" cy="${sy(mark.y)}" r="4" fill="none" stroke="#000"/>`;
  }
  svg += "</svg>";
  el.innerHTML = svg + (failed.length ? `<p class="err">${esc(failed.join("; "))}</p>` : "") + `<div class="cmd">$ ${esc(cmd)}</div>`;
}

// ---- start ----

// dpcalcEval runs one query string on a fresh path through the main worker
// and resolves with {result, roundTripMs}; the browser test times it.
window.dpcalcEval = (qs) =>
  new Promise((resolve) => main.send([qs], (results, ms) => resolve({ result: results[0], roundTripMs: ms })));
window.dpcalcFlags = FLAGS;
window.dpcalcCommandLine = (qs) => {
  const p = new URLSearchParams(qs);
  const s = { cmd: p.get("cmd") };
  for (const f of FLAGS[s.cmd]) if (p.get(f)) s[f] = p.get(f);
  return commandLine(s);
};

async function boot() {
  loadURL();
  if (!location.search) defaultsFor();
  update();
  $("form").addEventListener("input", update);
  $("form").addEventListener("change", update);
  try {
    const t0 = performance.now();
    const resp = fetch("main.wasm");
    try {
      wasmModule = await WebAssembly.compileStreaming(resp);
    } catch (e) {
      // A server without the application/wasm type: compile from bytes.
      wasmModule = await WebAssembly.compile(await (await fetch("main.wasm")).arrayBuffer());
    }
    stats.compiled = performance.now();
    stats.compileMs = stats.compiled - t0;
  } catch (e) {
    showStatus("could not load main.wasm: " + e);
    return;
  }
  main = new Runner("main");
  curves = new Runner("curves");
  window.dpcalcRunners = { main, curves };
  update();
}

boot();
