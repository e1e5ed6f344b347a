//go:build js && wasm

// Command wasm is the web calculator's engine: built with GOOS=js
// GOARCH=wasm (scripts/build-web.sh), it runs in a Web Worker
// (web/static/worker.js) and answers command lines the page assembles
// through web/engine, which runs them as the command line does.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall/js"
	"time"

	"github.com/dpcalc/dpcalc/internal/cli"
	"github.com/dpcalc/dpcalc/web/engine"
)

// request is what the page asks: a command line (without "dpcalc") and,
// for a curve, the point to circle.
type request struct {
	Args []string    `json:"args"`
	Mark *[2]float64 `json:"mark,omitempty"`
}

// answer is an engine.Answer with the time the computation took inside
// wasm.
type answer struct {
	engine.Answer
	Millis float64 `json:"ms"`
	// Took says how long, for the page's status line.
	Took string `json:"took"`
}

// run answers one request (JSON) as JSON. A panic becomes an error: the
// worker, and with it the page, must stay alive for the next request.
func run(in string) (out string) {
	defer func() {
		if r := recover(); r != nil {
			b, _ := json.Marshal(map[string]any{"error": fmt.Sprintf("internal error (please report): %v", r), "exit": 1})
			out = string(b)
		}
	}()
	start := time.Now()
	var req request
	if err := json.Unmarshal([]byte(in), &req); err != nil {
		b, _ := json.Marshal(map[string]any{"error": "invalid request: " + err.Error(), "exit": 2})
		return string(b)
	}
	a := engine.Run(context.Background(), req.Args, req.Mark)
	ms := float64(time.Since(start).Microseconds()) / 1000
	b, err := json.Marshal(answer{Answer: a, Millis: ms, Took: fmt.Sprintf("computed in %.1f ms (wasm)", ms)})
	if err != nil {
		b, _ = json.Marshal(map[string]any{"command": a.Command, "error": "cannot encode the answer: " + err.Error(), "exit": 1})
	}
	return string(b)
}

func main() {
	// dpcalcRun(requestJSON, callback): callback(answerJSON) is called
	// once. The work runs on its own goroutine: a js.FuncOf handler must
	// not block (pld's accountant waits on goroutines of its own).
	js.Global().Set("dpcalcRun", js.FuncOf(func(this js.Value, args []js.Value) any {
		if len(args) != 2 || args[0].Type() != js.TypeString || args[1].Type() != js.TypeFunction {
			return "dpcalcRun(requestJSON, callback)"
		}
		in, cb := args[0].String(), args[1]
		go func() { cb.Invoke(run(in)) }()
		return nil
	}))
	// dpcalcModel: the commands, flags, choices and accountants (JSON).
	model, err := engine.Describe()
	b, _ := json.Marshal(model)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	js.Global().Set("dpcalcModel", string(b))
	js.Global().Set("dpcalcVersion", cli.Version())
	select {}
}
