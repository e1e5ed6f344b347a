// worker.js runs dpcalc's wasm engine off the page's main thread.
//
// Messages in:  {type: "init", module: WebAssembly.Module}
//               {type: "query", gen: n, qs: ["cmd=eps&sigma=4&…", …]}
// Messages out: {type: "ready", version} | {type: "failed", error}
//               {type: "partial", gen: n, index: i, result: Result} as each
//               query of a batch finishes (the page shows it at once)
//               {type: "result", gen: n, results: [Result, …]}
//
// A computation cannot be interrupted from inside (the Go code runs to the
// end), so queries that arrive while one runs are coalesced: only the
// newest is answered. The page terminates the worker when a superseded
// query runs too long (app.js).
"use strict";
importScripts("wasm_exec.js");

let ready = false;
let pending = null; // newest query not started yet
let busy = false;

function one(qs) {
  return new Promise((resolve) => {
    const r = self.dpcalcQuery(qs, (json) => resolve(JSON.parse(json)));
    if (typeof r === "string") resolve({ error: r, exit: 2 });
  });
}

async function drain() {
  if (busy || !ready || pending === null) return;
  busy = true;
  const m = pending;
  pending = null;
  const results = [];
  for (const qs of m.qs) {
    if (pending !== null) break; // superseded between two queries of a batch
    const r = await one(qs);
    postMessage({ type: "partial", gen: m.gen, index: results.length, result: r });
    results.push(r);
  }
  busy = false;
  if (results.length === m.qs.length) postMessage({ type: "result", gen: m.gen, results });
  // Let queued messages land before starting the next query.
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
      postMessage({ type: "ready", version: self.dpcalcVersion });
      setTimeout(drain, 0);
    } catch (err) {
      postMessage({ type: "failed", error: String(err) });
    }
    return;
  }
  if (m.type === "query") {
    pending = m;
    setTimeout(drain, 0);
  }
};
