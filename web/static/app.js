// app.js: the dpcalc page. The form's state lives in the URL (the command
// line's flag names); every change sends the command line it stands for to
// a Web Worker running the wasm engine (worker.js), which runs it as
// `dpcalc` does and answers with what the command line prints: the page
// shows those strings and formats no number itself. The commands' flags,
// defaults and choices (the accountants among them) are read from the
// engine. Answers of superseded command lines are dropped, and a worker
// stuck on a superseded long one is replaced.
"use strict";

// A worker busy this long on a command line that has been superseded is
// replaced.
const RESTART_MS = 250;

const $ = (id) => document.getElementById(id);
const stats = (window.dpcalcStats = { start: performance.now() });

// MODEL is the engine's description of the commands (dpcalcModel); FLAGS
// the flags of each command the page has an input for, in command-line
// order; INPUTS the page's inputs.
let MODEL = null;
const FLAGS = {};
const INPUTS = [...document.querySelectorAll(".field[data-flag]")].map((el) => el.dataset.flag).filter((f) => f !== "cmd");

// ---- state: form <-> URL <-> command line ----

function state() {
  const cmd = $("cmd").value;
  const s = { cmd };
  for (const f of FLAGS[cmd] || []) {
    const el = $(f);
    if (el && el.value.trim() !== "") s[f] = el.value.trim();
  }
  return s;
}

function queryString(s) {
  const p = new URLSearchParams();
  p.set("cmd", s.cmd);
  for (const f of FLAGS[s.cmd] || []) if (s[f] !== undefined) p.set(f, s[f]);
  return p.toString();
}

// args is the command line of s, without "dpcalc".
function args(s) {
  const a = [s.cmd];
  for (const f of FLAGS[s.cmd] || []) if (s[f] !== undefined) a.push("--" + f, s[f]);
  return a;
}

function shellQuote(a) {
  if (a !== "" && /^[A-Za-z0-9\-_.,:+=/@%]+$/.test(a)) return a;
  return "'" + a.replace(/'/g, "'\\''") + "'";
}

function commandLine(a) {
  return ["dpcalc", ...a.map(shellQuote)].join(" ");
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
      // Keep a value the page does not offer so the command line's message shows.
      addOption(el, v, v);
    }
    el.value = v;
  }
}

// defaultsFor fills the issue's example: a reviewer's first look.
function defaultsFor() {
  const d = { sigma: "4", q: "0.01", epochs: "100", delta: "1e-5", accountant: "all" };
  for (const [k, v] of Object.entries(d)) $(k).value = v;
  return d;
}

function showFields(cmd) {
  for (const el of document.querySelectorAll(".field[data-flag]")) {
    const f = el.dataset.flag;
    el.classList.toggle("hidden", f !== "cmd" && !(FLAGS[cmd] || []).includes(f));
  }
}

function addOption(sel, value, label) {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = label;
  sel.appendChild(o);
}

// useModel reads the commands from the engine: which flags each command
// takes, each select's choices (the accountants with the registry's
// titles) and each input's default.
function useModel(model) {
  MODEL = model;
  const titles = {};
  for (const a of model.accountants) titles[a.name] = a.title;
  for (const opt of $("cmd").options) {
    const c = model.commands[opt.value];
    FLAGS[opt.value] = c ? c.flags.map((f) => f.name).filter((f) => INPUTS.includes(f)) : [];
  }
  const done = new Set();
  for (const opt of $("cmd").options) {
    const c = model.commands[opt.value];
    for (const f of c ? c.flags : []) {
      const el = $(f.name);
      if (!el || done.has(f.name) || !INPUTS.includes(f.name)) continue;
      done.add(f.name);
      el.title = f.help;
      if (el.tagName === "SELECT") {
        el.textContent = "";
        addOption(el, "", f.default ? `${f.default} (default)` : "default");
        for (const v of f.enum || []) if (v !== "") addOption(el, v, titles[v] ? `${v}: ${titles[v]}` : v);
      } else if (f.default) {
        el.placeholder = `${f.default} (default)`;
      }
    }
  }
}

// ---- workers ----

let wasmModule = null;

class Runner {
  constructor(name, onReady) {
    this.name = name;
    this.gen = 0;
    this.busySince = 0; // performance.now() when the running request was sent; 0 when idle
    this.callbacks = new Map();
    this.restarts = 0;
    this.onReady = onReady;
    this.start();
  }
  start() {
    this.ready = false;
    this.worker = new Worker("worker.js");
    this.worker.onmessage = (e) => this.onMessage(e.data);
    this.worker.onerror = (e) => showStatus("worker error: " + (e.message || e));
    this.worker.postMessage({ type: "init", module: wasmModule });
  }
  // send asks for reqs (an array of {args, mark}); cb(answers, ms) runs
  // only if no newer send happened meanwhile, and so does part(i, answer)
  // as each request finishes, before cb.
  send(reqs, cb, part) {
    const gen = ++this.gen;
    const now = performance.now();
    if (this.busySince && now - this.busySince > RESTART_MS) {
      this.worker.terminate();
      this.restarts++;
      this.callbacks.clear();
      this.start();
    }
    this.callbacks.clear(); // older requests' answers will be dropped
    this.callbacks.set(gen, { cb, part, sent: now });
    this.busySince = now;
    this.lastSent = gen;
    this.worker.postMessage({ type: "run", gen, reqs: reqs.map((r) => JSON.stringify(r)) });
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
      if (this.onReady) this.onReady(JSON.parse(m.model));
      this.onReady = null;
      return;
    }
    if (m.type === "failed") {
      showStatus("could not start the WebAssembly engine: " + m.error);
      return;
    }
    if (m.type === "partial") {
      const c = this.callbacks.get(m.gen);
      if (c && c.part) c.part(m.index, m.answer);
      return;
    }
    if (m.type !== "answers") return;
    const c = this.callbacks.get(m.gen);
    if (m.gen === this.lastSent) this.busySince = 0; // the worker is idle
    if (!c) return; // superseded
    this.callbacks.delete(m.gen);
    c.cb(m.answers, performance.now() - c.sent);
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

// ---- showing what the engine rendered ----

function esc(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

// docHTML shows a result's lines and tables, cell for cell as the command
// line prints them.
function docHTML(doc) {
  let h = "";
  for (const b of doc || []) {
    if (!b.table) {
      h += `<p class="line">${esc(b.text)}</p>`;
      continue;
    }
    h += `<table class="result"><thead><tr>${b.table.header.map((c) => `<th>${esc(c)}</th>`).join("")}</tr></thead><tbody>`;
    for (const r of b.table.rows) {
      h += `<tr class="${esc(r.class || "")}" data-key="${esc(r.key || "")}">${r.cells.map((c) => `<td>${esc(c)}</td>`).join("")}</tr>`;
    }
    h += "</tbody></table>";
  }
  return h;
}

// ---- updating ----

let lastAnswer = null;

function clearErrors() {
  for (const el of document.querySelectorAll(".err")) el.textContent = "";
  for (const el of document.querySelectorAll(".field.bad")) el.classList.remove("bad");
  for (const el of document.querySelectorAll("[aria-invalid]")) el.removeAttribute("aria-invalid");
  $("error").textContent = "";
}

function update() {
  if (!MODEL) return;
  const s = state();
  showFields(s.cmd);
  history.replaceState(null, "", "?" + queryString(s));
  const a = args(s);
  $("cmdline").textContent = commandLine(a);
  showStatus("computing…");
  setPending("table", "the table");
  main.send([{ args: a }], (answers) => {
    setPending("table", null);
    show(answers[0]);
  });
}

function show(ans) {
  lastAnswer = ans;
  window.dpcalcLast = ans;
  document.body.dataset.shown = ans.command || "";
  clearErrors();
  $("caveats").innerHTML = "";
  if (stats.firstResult === undefined) stats.firstResult = performance.now();
  showStatus(ans.took || "");
  if (ans.error) {
    $("result").innerHTML = "";
    const field = document.querySelector(`.field[data-flag="${ans.flag}"]`);
    if (field && !field.classList.contains("hidden")) {
      field.classList.add("bad");
      $("err-" + ans.flag).textContent = ans.error;
      if ($(ans.flag)) $(ans.flag).setAttribute("aria-invalid", "true");
    } else {
      $("error").textContent = ans.error;
    }
    clearPlots();
    return;
  }
  $("result").innerHTML = docHTML(ans.doc) + (ans.failure ? `<p class="err">${esc(ans.failure)}</p>` : "");
  // The procedures' caveats, from the rows of the --json output.
  const out = JSON.parse(ans.json);
  const rows = out.rows || [];
  const notes = rows.filter((r) => r.procedure);
  if (notes.length) {
    $("caveats").innerHTML = "<p>" + notes.map((r) => `<b>${esc(r.accountant)}</b>: ${esc(r.note)}.`).join(" ") +
      " Their numbers reproduce a paper; they are not privacy guarantees.</p>";
  }
  requestCurves(ans.curves || []);
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

// requestCurves asks for the curves the engine proposed around the answer
// (ε against epochs, σ against target ε) and draws each as it arrives.
function requestCurves(reqs) {
  if (!reqs.length) {
    clearPlots();
    return;
  }
  const boxes = [$("plot-epochs"), $("plot-sigma")];
  const keys = ["curve-epochs", "curve-sigma"];
  const what = ["the curve ε against epochs", "the curve σ against target ε"];
  for (let i = 0; i < 2; i++) {
    if (reqs[i]) {
      showPlotPending(boxes[i], what[i], reqs[i].command);
      setPending(keys[i], what[i]);
    } else {
      boxes[i].innerHTML = "";
      delete boxes[i].dataset.state;
      setPending(keys[i], null);
    }
  }
  curves.send(reqs.map((r) => ({ args: r.args, mark: r.mark })), () => {}, (i, ans) => {
    drawCurve(boxes[i], ans, reqs[i].command);
    setPending(keys[i], null);
  });
}

function drawCurve(el, ans, cmd) {
  el.dataset.state = "done";
  el.dataset.command = cmd;
  if (ans.error) {
    el.innerHTML = `<p class="err">${esc(ans.error)}</p>`;
    return;
  }
  const svg = ans.svg || "<p>no finite points</p>";
  el.innerHTML = svg + (ans.failed ? `<p class="err">${esc(ans.failed)}</p>` : "") + `<div class="cmd">$ ${esc(cmd)}</div>`;
}

// ---- start ----

// dpcalcEval runs one command line (an array of arguments) through the
// main worker and resolves with {answer, roundTripMs}; the browser test
// times it.
window.dpcalcEval = (a) =>
  new Promise((resolve) => main.send([{ args: a }], (answers, ms) => resolve({ answer: answers[0], roundTripMs: ms })));
window.dpcalcFlags = FLAGS;

async function boot() {
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
  main = new Runner("main", (model) => {
    useModel(model);
    loadURL();
    if (!location.search) defaultsFor();
    $("form").addEventListener("input", update);
    $("form").addEventListener("change", update);
    update();
  });
  curves = new Runner("curves");
  window.dpcalcRunners = { main, curves };
}

boot();
