//go:build js && wasm

// Command wasm is the web calculator's engine: built with GOOS=js
// GOARCH=wasm (scripts/build-web.sh), it runs in a Web Worker
// (web/static/worker.js) and answers internal/query requests given as URL
// query strings.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall/js"
	"time"

	"github.com/dpcalc/dpcalc/internal/query"
)

// answer is a Result with the time the computation took inside wasm.
type answer struct {
	query.Result
	Millis float64 `json:"ms"`
}

// run answers one query string as JSON. A Result that cannot be encoded
// (a non-finite float the CLI would print as null) becomes an error, and
// so does a panic: the worker, and with it the page, must stay alive for
// the next query.
func run(qs string) (out string) {
	defer func() {
		if r := recover(); r != nil {
			b, _ := json.Marshal(map[string]any{"error": fmt.Sprintf("internal error (please report): %v", r), "exit": 1})
			out = string(b)
		}
	}()
	start := time.Now()
	var res query.Result
	req, err := query.Parse(qs)
	if err != nil {
		res = query.Result{Error: err.Error(), Flag: "cmd", Exit: 2}
	} else {
		res = query.Run(context.Background(), req)
	}
	b, err := json.Marshal(answer{Result: res, Millis: float64(time.Since(start).Microseconds()) / 1000})
	if err != nil {
		b, _ = json.Marshal(map[string]any{"cmd": res.Cmd, "command": res.Command, "error": "cannot encode the result: " + err.Error(), "exit": 1})
	}
	return string(b)
}

func main() {
	// dpcalcQuery(queryString, callback): callback(json) is called once.
	// The work runs on its own goroutine: a js.FuncOf handler must not
	// block (pld's accountant waits on goroutines of its own).
	js.Global().Set("dpcalcQuery", js.FuncOf(func(this js.Value, args []js.Value) any {
		if len(args) != 2 || args[0].Type() != js.TypeString || args[1].Type() != js.TypeFunction {
			return "dpcalcQuery(queryString, callback)"
		}
		qs, cb := args[0].String(), args[1]
		go func() { cb.Invoke(run(qs)) }()
		return nil
	}))
	js.Global().Set("dpcalcVersion", query.Version())
	select {}
}
