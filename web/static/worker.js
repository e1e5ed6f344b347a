// worker.js runs dpcalc's wasm engine off the page's main thread.
//
// Messages in:  {type: "init", module: WebAssembly.Module}
//               {type: "run", gen: n, reqs: ['{"args": ["eps", "--sigma", "4", …]}', …]}
// Messages out: {type: "ready", version, model} | {type: "failed", error}
//               {type: "partial", gen: n, index: i, answer: Answer} as each
//               request of a batch finishes (the page shows it at once)
//               {type: "answers", gen: n, answers: [Answer, …]}
//
// A computation cannot be interrupted from inside (the Go code runs to the
// end), so requests that arrive while one runs are coalesced: only the
// newest batch is answered. The page terminates the worker when a
// superseded request runs too long (app.js).
"use strict";
importScripts("wasm_exec.js");

let ready = false;
let pending = null; // newest batch not started yet
let busy = false;

function one(req) {
  return new Promise((resolve) => {
    const r = self.dpcalcRun(req, (json) => resolve(JSON.parse(json)));
    if (typeof r === "string") resolve({ error: r, exit: 2 });
  });
}

async function drain() {
  if (busy || !ready || pending === null) return;
  busy = true;
  const m = pending;
  pending = null;
  const answers = [];
  for (const req of m.reqs) {
    if (pending !== null) break; // superseded between two requests of a batch
    const a = await one(req);
    postMessage({ type: "partial", gen: m.gen, index: answers.length, answer: a });
    answers.push(a);
  }
  busy = false;
  if (answers.length === m.reqs.length) postMessage({ type: "answers", gen: m.gen, answers });
  // Let queued messages land before starting the next batch.
  setTimeout(drain, 0);
}

self.onmessage = async (e) => {
  const m = e.data;
  if (m.type === "init") {
    try {
      const go = new Go();
      const inst = await WebAssembly.instantiate(m.module, go.importObject);
      go.run(inst); // returns a promise that never resolves (main blocks)
      ready = true;
      postMessage({ type: "ready", version: self.dpcalcVersion, model: self.dpcalcModel });
      setTimeout(drain, 0);
    } catch (err) {
      postMessage({ type: "failed", error: String(err) });
    }
    return;
  }
  if (m.type === "run") {
    pending = m;
    setTimeout(drain, 0);
  }
};
