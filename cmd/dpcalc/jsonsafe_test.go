package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/dpcalc/dpcalc/internal/cli"
	"github.com/dpcalc/dpcalc/internal/render"
	"github.com/dpcalc/dpcalc/trainer"
	"github.com/dpcalc/dpcalc/trainer/data"
)

// TestFiniteTreeMatchesEncodingJSON: without non-finite floats, the
// fallback encoding is byte-identical to encoding/json's, for every result
// type the CLI prints.
func TestFiniteTreeMatchesEncodingJSON(t *testing.T) {
	train, test, err := data.Digits()
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(1)
	res, err := trainer.Train(context.Background(), trainer.Config{Method: trainer.MethodNP, Hidden: []int{4}, Epochs: 1, Seed: &seed}, train, test, trainer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := 1.5
	for _, v := range []any{
		trainRun{Result: res, SigmaCalibrated: true, MatmulKernel: "x"},
		cli.Output{Command: "eps", Inputs: map[string]any{"sigma": 1.0}, Rows: []cli.OutputRow{{Accountant: "pld", Quantity: "epsilon", Value: &e, EpsilonLower: &e}}, Version: "dev"},
		res.History[0],
		cli.Row{Accountant: "rdp", Sigma: 1, Epsilon: &e, Note: "x"},
		[]cli.Row{{Accountant: "a"}, {Accountant: "b", Lambda: &e}},
		cli.Curve{Curve: "epochs", Series: []cli.CurveSeries{{Accountant: "pld", Points: []cli.CurvePoint{{Epochs: 1, Steps: 2, Epsilon: &e}}}}},
		cli.Audit{Verdict: calibrate.Holds, EpsilonUpper: &e},
		cli.Gaussian{Epsilon: 1, SigmaClassic: &e},
		map[string]string{"error": "<x> & y"},
	} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(render.Finite(v))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%T:\n got %s\nwant %s", v, got, want)
		}
	}
}

// TestWriteJSONNonFinite: NaN and ±Inf print as null; the rest of the
// value is kept.
func TestWriteJSONNonFinite(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	p := trainer.Progress{Epoch: 1, Loss: nan, Epsilon: &inf, LearningRate: 0.1}
	var b bytes.Buffer
	if err := render.JSON(&b, struct {
		P  trainer.Progress   `json:"p"`
		M  map[string]float64 `json:"m"`
		S  []float64          `json:"s"`
		Ld *accounting.Ledger `json:"ledger"`
	}{p, map[string]float64{"a": inf, "b": 2}, []float64{1, -inf, nan}, &accounting.Ledger{Segments: []accounting.Segment{{Event: accounting.Gaussian{NoiseMultiplier: inf}, Count: 1}}}}); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b.Bytes(), &v); err != nil {
		t.Fatalf("%v: %s", err, b.String())
	}
	pm := v["p"].(map[string]any)
	if pm["loss"] != nil || pm["epsilon"] != nil || pm["learning_rate"] != 0.1 || pm["epoch"] != 1.0 {
		t.Errorf("progress = %v", pm)
	}
	if m := v["m"].(map[string]any); m["a"] != nil || m["b"] != 2.0 {
		t.Errorf("map = %v", m)
	}
	if s := v["s"].([]any); s[0] != 1.0 || s[1] != nil || s[2] != nil {
		t.Errorf("slice = %v", s)
	}
	if v["ledger"] != nil { // its MarshalJSON fails on σ = +Inf
		t.Errorf("ledger = %v, want null", v["ledger"])
	}
}

// TestTrainOutputs: a diverged run (loss NaN) still prints its --json
// result and complete --log-json lines (both used to fail: the result was
// replaced by {"error": "json: unsupported value: NaN"} and the log had
// blank lines); output paths in missing directories and corrupt
// checkpoints are bad input (exit 2) found before any training.
func TestTrainOutputs(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log.jsonl")
	args := []string{"train", "--method", "np", "--hidden", "5", "--epochs", "2", "--lr", "1e308", "--quiet", "--log-json", log, "--json"}
	msg, code, stdout, stderr := checkRun(args, true)
	if msg != "" || code != 0 {
		t.Fatalf("diverged run: %s, exit %d\nstdout %s\nstderr %s", msg, code, stdout, stderr)
	}
	var out struct {
		Result struct {
			History []map[string]any `json:"history"`
		} `json:"training"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || len(out.Result.History) != 2 {
		t.Fatalf("result %v, history %v", err, out.Result.History)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("log has %d lines, want 2: %q", len(lines), b)
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["epoch"] == nil {
			t.Errorf("log line %q: %v", l, err)
		}
	}

	garbage := filepath.Join(dir, "garbage.ckpt")
	if err := os.WriteFile(garbage, []byte("DPCALCCK\x01\x00\x00\x00 not really"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"log-json in missing dir", []string{"--log-json", filepath.Join(dir, "no", "x.jsonl")}, "invalid --log-json"},
		{"checkpoint in missing dir", []string{"--checkpoint", filepath.Join(dir, "no", "x.ckpt")}, "invalid --checkpoint"},
		{"resume missing checkpoint", []string{"--checkpoint", filepath.Join(dir, "none.ckpt"), "--resume"}, "invalid --checkpoint"},
		{"resume corrupt checkpoint", []string{"--checkpoint", garbage, "--resume"}, "corrupt checkpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := append([]string{"train", "--method", "np", "--hidden", "5", "--epochs", "1", "--quiet", "--json"}, tc.args...)
			msg, code, stdout, stderr := checkRun(a, true)
			if msg != "" || code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("%s; exit %d, want 2 and %q\nstdout %s\nstderr %s", msg, code, tc.want, stdout, stderr)
			}
		})
	}
}
