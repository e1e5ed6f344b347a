package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/internal/render"
	"github.com/dpcalc/dpcalc/trainer"
)

// interruptJSON is what train's --json output says when interrupted: its
// error, its "training" object and its row, the ε spent.
type interruptJSON struct {
	Error string
	interruptRun
	Spent struct {
		Accountant   string // the run's
		From         string // the row's: whose bound ε is
		Epsilon      *float64
		EpsilonLower *float64
		EpsilonUpper *float64
		Delta        float64
		LedgerLen    int
		LedgerHead   string
		Note         string
	}
}

// parseInterrupt reads an interrupted train's --json output: the one
// shape (cli.Output, no unknown field), one row, and "training" an
// interruptRun (no unknown field).
func parseInterrupt(b []byte) (interruptJSON, error) {
	var got interruptJSON
	o, err := parseOutput(string(b))
	if err != nil {
		return got, err
	}
	if o.Command != "train" || len(o.Rows) != 1 || o.Training == nil {
		return got, fmt.Errorf("command %q, %d rows, training %s: want train, one row and the run", o.Command, len(o.Rows), o.Training)
	}
	if err := strictJSON(o.Training, &got.interruptRun); err != nil {
		return got, err
	}
	r := o.Rows[0]
	if r.Quantity != "epsilon" || r.Value != r.Epsilon && (r.Value == nil || r.Epsilon == nil || *r.Value != *r.Epsilon) || r.Delta == nil || r.Steps == nil || *r.Steps != got.Step {
		return got, fmt.Errorf("row %+v: want the ε spent at δ after step %d", r, got.Step)
	}
	got.Error = o.Error
	sp := &got.Spent
	sp.Accountant, sp.From, sp.Epsilon, sp.EpsilonLower, sp.EpsilonUpper = got.Accountant, r.Accountant, r.Epsilon, r.EpsilonLower, r.EpsilonUpper
	sp.Delta, sp.LedgerLen, sp.LedgerHead, sp.Note = *r.Delta, got.LedgerLen, got.LedgerHead, r.Note
	return got, nil
}

// markLine is a --log-json line's ledger state.
type markLine struct {
	Epoch      int      `json:"epoch"`
	LedgerLen  int      `json:"ledger_len"`
	LedgerHead string   `json:"ledger_head"`
	Epsilon    *float64 `json:"epsilon"`
}

// waitForLogLine polls the log until it holds a complete line (the first
// epoch released) and returns it; go test's -timeout is the hang net.
func waitForLogLine(t *testing.T, path string, exited <-chan struct{}) markLine {
	t.Helper()
	for {
		b, _ := os.ReadFile(path)
		if j := bytes.IndexByte(b, '\n'); j >= 0 {
			var l markLine
			if err := json.Unmarshal(b[:j], &l); err != nil {
				t.Fatalf("log line %q: %v", b[:j], err)
			}
			return l
		}
		select {
		case <-exited:
			t.Fatal("the run exited before it logged an epoch")
		default:
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// replayEpsilon returns kind's bounds on ε(δ) of led, replayed into a
// fresh accountant (lower is NaN where kind gives no lower bound).
func replayEpsilon(t *testing.T, led *accounting.Ledger, kind accounting.Kind, delta float64) (lower, upper float64) {
	t.Helper()
	a, err := registry.New(kind, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := led.Replay(a); err != nil {
		t.Fatal(err)
	}
	if b, ok := a.(accounting.BoundsReporter); ok {
		lo, hi, err := b.EpsilonBounds(context.Background(), delta)
		if err != nil {
			t.Fatal(err)
		}
		return lo, hi
	}
	hi, err := a.Epsilon(context.Background(), delta)
	if err != nil {
		t.Fatal(err)
	}
	return -1, hi
}

// TestTrainInterruptStatesSpent: SIGINT after the first epoch was logged
// stops the binary with exit 130 and states the ε spent, on stderr and on
// stdout (a table, or with --json an object with the spent ε, the ledger
// and the usual "error"), with or without --checkpoint; the ε equals a
// replay of the ledger (the JSON's, the ledger file's, and for the table a
// ledger of the stated length of the step the log's first line pins), and
// the ledger holds what the log released. The old CLI printed only
// "interrupted: stopped after step N of T: context canceled" (and with
// --json only that as {"error": …}): a run without a checkpoint lost its
// privacy statement.
func TestTrainInterruptStatesSpent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	train := []string{"train", "--dataset", "digits", "--sigma", "1.1", "--epochs", "100000", "--hidden", "8",
		"--lot", "50", "--seed", "1", "--quiet"}
	for _, tc := range []struct {
		name       string
		accountant accounting.Kind
		json, ckpt bool
	}{
		{"table rdp", accounting.KindRDP, false, false},
		{"json pld", accounting.KindPLD, true, false},
		{"json rdp checkpoint", accounting.KindRDP, true, true},
		{"table pld checkpoint", accounting.KindPLD, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			logp, ck := filepath.Join(dir, "log.jsonl"), filepath.Join(dir, "run.ckpt")
			args := append(append([]string(nil), train...), "--accountant", string(tc.accountant), "--log-json", logp)
			if tc.json {
				args = append(args, "--json")
			}
			if tc.ckpt {
				args = append(args, "--checkpoint", ck)
			}
			cmd := exec.Command(binPath, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			var werr error
			go func() { werr = cmd.Wait(); close(exited) }()
			first := waitForLogLine(t, logp, exited)
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			<-exited
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Fatalf("exit %d (%v), want 130; stderr %s", code, werr, stderr.String())
			}
			errLine := strings.TrimSpace(stderr.String())
			errLine = errLine[strings.LastIndex(errLine, "\n")+1:]
			const delta = 1e-5
			var led *accounting.Ledger
			if tc.json {
				out, err := parseInterrupt(stdout.Bytes())
				if err != nil {
					t.Fatalf("--json output %q: %v", stdout.String(), err)
				}
				if !out.Interrupted || out.Error == "" || "dpcalc: "+out.Error != errLine {
					t.Errorf("JSON interrupted %v, error %q; want true and the stderr line %q", out.Interrupted, out.Error, errLine)
				}
				led = out.Ledger
				sp := out.Spent
				if led == nil {
					t.Fatalf("--json output without the ledger: %s", stdout.String())
				}
				if sp.Epsilon == nil || sp.LedgerLen != led.Len() || sp.Delta != delta || sp.Accountant != string(tc.accountant) {
					t.Fatalf("JSON spent %+v with a ledger of %d entries; want ε of the ledger at δ %g by %s", sp, led.Len(), delta, tc.accountant)
				}
				lo, hi := replayEpsilon(t, led, tc.accountant, delta)
				if *sp.Epsilon != hi {
					t.Errorf("JSON ε %v, the ledger's replay %v", *sp.Epsilon, hi)
				}
				if tc.accountant == accounting.KindPLD && (sp.EpsilonLower == nil || *sp.EpsilonLower != lo) {
					t.Errorf("JSON certified lower bound %v, the ledger's replay %v", sp.EpsilonLower, lo)
				}
				if h, _ := led.Head(); h != sp.LedgerHead || out.Step != led.Len() {
					t.Errorf("JSON head %.12s at step %d; the ledger's head %.12s at %d entries", sp.LedgerHead, out.Step, h, led.Len())
				}
			} else {
				// The table's ledger: the stated number of the step the
				// log's first line pins (its ε is that of its entries).
				m := regexp.MustCompile(`ledger of (\d+) entries`).FindStringSubmatch(errLine)
				if m == nil {
					t.Fatalf("stderr %q states no ledger length", errLine)
				}
				n, _ := strconv.Atoi(m[1])
				step := accounting.PoissonSampled{SamplingRate: 50.0 / 1437, Event: accounting.Gaussian{NoiseMultiplier: 1.1}}
				pinned := &accounting.Ledger{}
				pinned.Record(step, first.LedgerLen)
				if _, hi := replayEpsilon(t, pinned, tc.accountant, delta); first.Epsilon == nil || *first.Epsilon != hi {
					t.Fatalf("the log's first line: ε %v at %d entries; the step's replay %v (wrong step?)", first.Epsilon, first.LedgerLen, hi)
				}
				led = &accounting.Ledger{}
				led.Record(step, n)
				lo, hi := replayEpsilon(t, led, tc.accountant, delta)
				eps, source := "≤ "+render.Up(hi), "rdp upper bound"
				if tc.accountant == accounting.KindPLD {
					eps, source = "in ["+render.Down(lo)+", "+render.Up(hi)+"]", "pld certified interval"
				}
				if want := "privacy spent: ε " + eps + " at δ = 1e-05 (" + source + "; ledger of "; !strings.Contains(errLine, want) {
					t.Errorf("stderr %q; want %q", errLine, want)
				}
				if cell := eps + " (" + source + ")"; !strings.Contains(stdout.String(), cell) {
					t.Errorf("stdout table %q lacks %q", stdout.String(), cell)
				}
			}
			if led.Len() < first.LedgerLen {
				t.Fatalf("ledger of %d entries, the log released %d", led.Len(), first.LedgerLen)
			}
			if tc.json {
				if err := led.Covers(accounting.Mark{Len: first.LedgerLen, Head: first.LedgerHead}); err != nil {
					t.Errorf("the stated ledger does not hold the logged epoch: %v", err)
				}
			}
			if tc.ckpt {
				file, err := accounting.LoadLedger(ck + ".ledger")
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(errLine, "checkpoint saved to "+ck) {
					t.Errorf("stderr %q does not name the checkpoint", errLine)
				}
				if tc.json && !file.Equal(led) {
					t.Errorf("the ledger file (%d entries) is not the stated ledger (%d)", file.Len(), led.Len())
				}
				if file.Len() != led.Len() {
					t.Errorf("the ledger file holds %d entries, the statement %d", file.Len(), led.Len())
				}
			}
		})
	}
}

const secondInterruptEnv = "DPCALC_SECOND_INTERRUPT"

// TestSecondInterruptHelper is the child of TestTrainSecondInterrupt: the
// CLI as the binary runs it (cancelled by SIGINT and SIGTERM), whose
// privacy statement, once started, waits for the second interrupt.
func TestSecondInterruptHelper(t *testing.T) {
	v := os.Getenv(secondInterruptEnv)
	if v == "" {
		t.Skip("helper process only")
	}
	marker, argv, _ := strings.Cut(v, "\n")
	spentHook = func(ctx context.Context) {
		os.WriteFile(marker, nil, 0o600)
		<-ctx.Done() // never returns without a second interrupt
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var o bytes.Buffer
	code := runContext(ctx, strings.Split(argv, "\n"), &o, os.Stderr)
	stop()
	os.Stdout.Write(o.Bytes())
	os.Exit(code)
}

// TestTrainSecondInterrupt: a second SIGINT while the privacy statement of
// the first is computed stops it: exit 130 at once, with a message (and a
// JSON note) saying ε could not be computed. The child's statement waits
// for that second signal, so the verdict depends on the signal path only.
func TestTrainSecondInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a subprocess")
	}
	dir := t.TempDir()
	logp, marker := filepath.Join(dir, "log.jsonl"), filepath.Join(dir, "computing")
	args := []string{"train", "--dataset", "digits", "--sigma", "1.1", "--epochs", "100000", "--hidden", "8",
		"--lot", "50", "--seed", "1", "--quiet", "--json", "--accountant", "pld", "--log-json", logp}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSecondInterruptHelper$")
	cmd.Env = append(os.Environ(), secondInterruptEnv+"="+marker+"\n"+strings.Join(args, "\n"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
		}
	}()
	waitForLogLine(t, logp, exited)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for !fileExists(marker) {
		select {
		case <-exited:
			t.Fatalf("the run exited before its privacy statement: %s", stderr.String())
		default:
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-exited // a run the second SIGINT does not stop hangs: go test's -timeout reports it
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d, want 130; stderr %s", code, stderr.String())
	}
	if s := stderr.String(); !strings.Contains(s, "ε could not be computed: interrupted again") {
		t.Errorf("stderr %q; want that ε could not be computed", s)
	}
	out := stdout.Bytes()
	out = out[bytes.IndexByte(out, '{'):] // after the test binary's own output
	got, err := parseInterrupt(out)
	if err != nil {
		t.Fatalf("stdout %q: %v", stdout.String(), err)
	}
	if got.Spent.Epsilon != nil || !strings.Contains(got.Spent.Note, "interrupted again") || got.Ledger == nil || got.Spent.LedgerLen != got.Ledger.Len() || got.Ledger.Len() == 0 {
		t.Errorf("JSON spent %+v; want no ε, the note, and the ledger", got.Spent)
	}
}

// TestSpentOf: the statement's ε is the run accountant's (pld's certified
// interval); past the work limit, rdp's upper bound, saying so; with a
// cancelled context, none, saying why; for np, none.
func TestSpentOf(t *testing.T) {
	step := accounting.PoissonSampled{SamplingRate: 0.01, Event: accounting.Gaussian{NoiseMultiplier: 1.1}}
	led := &accounting.Ledger{}
	if err := led.Record(step, 3000); err != nil {
		t.Fatal(err)
	}
	cfg := trainer.Config{Method: trainer.MethodDPSGD, Accountant: string(accounting.KindPLD), Sampling: trainer.SamplingPoisson}
	ctx := context.Background()
	lo, hi := replayEpsilon(t, led, accounting.KindPLD, 1e-5)
	r := spentOf(ctx, led, cfg, 1e-5)
	if r.From != "pld" || r.Epsilon == nil || *r.Epsilon != hi || r.EpsilonLower == nil || *r.EpsilonLower != lo || r.Note != "" {
		t.Errorf("pld: %+v; want [%v, %v] from pld", r, lo, hi)
	}
	defer func(l int64) { spentWorkLimit = l }(spentWorkLimit)
	spentWorkLimit = 20 // pld needs more (about 190 units here), rdp's fallback has its own
	_, rdp := replayEpsilon(t, led, accounting.KindRDP, 1e-5)
	r = spentOf(ctx, led, cfg, 1e-5)
	if r.From != "rdp" || r.Epsilon == nil || *r.Epsilon != rdp || r.EpsilonLower != nil || !strings.Contains(r.Note, "pld gave no answer within 20 units of work; ε is rdp's upper bound") {
		t.Errorf("pld past its work limit: %+v; want rdp's %v, saying why", r, rdp)
	}
	if s := r.sentence(); !strings.Contains(s, "ε ≤ "+render.Up(rdp)+" at δ = 1e-05 (rdp upper bound; ledger of 3000 entries; pld gave no answer") {
		t.Errorf("sentence %q", s)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	r = spentOf(cancelled, led, cfg, 1e-5)
	if r.Epsilon != nil || !strings.Contains(r.Note, "interrupted again") {
		t.Errorf("cancelled: %+v; want no ε and the note", r)
	}
	np := trainer.Config{Method: trainer.MethodNP}
	if r = spentOf(ctx, led, np, 1e-5); r.Epsilon != nil || !strings.Contains(r.Note, "no privacy guarantee") {
		t.Errorf("np: %+v", r)
	}
	if r = spentOf(ctx, &accounting.Ledger{}, cfg, 1e-5); r.Epsilon == nil || *r.Epsilon != 0 || r.sentence() != "privacy spent: none (the ledger is empty)" {
		t.Errorf("empty ledger: %+v", r)
	}
}

// TestTrainInterruptBeforeStartJSON: an interrupt while σ is calibrated
// (nothing spent) prints, with --json, the object with ε spent 0 and the
// error, exit 130. The old CLI printed only {"error": …}.
func TestTrainInterruptBeforeStartJSON(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	args := []string{"train", "--dataset", "digits", "--eps", "1", "--epochs", "2", "--hidden", "8", "--lot", "50", "--quiet", "--json"}
	var o, e bytes.Buffer
	if code := runContext(cancelled, args, &o, &e); code != 130 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	got, err := parseInterrupt(o.Bytes())
	if err != nil {
		t.Fatalf("stdout %q: %v", o.String(), err)
	}
	if !got.Interrupted || got.Spent.Epsilon == nil || *got.Spent.Epsilon != 0 || got.Spent.LedgerLen != 0 ||
		"dpcalc: "+got.Error != strings.TrimSpace(e.String()) || !strings.Contains(got.Error, "privacy spent: none") {
		t.Errorf("JSON %+v, stderr %q; want ε spent 0 and the stderr line as error", got, e.String())
	}
}

// TestSpentBoundRoundsSafely: the statement's ε is printed as the rest of
// train prints it, six digits rounded the safe way: the upper bound up and
// pld's certified lower end down. Rounded to the nearest (as before the
// command model), 1.0353841 printed 1.03538 and 0.9466557 printed
// 0.946656, each a bound the true value breaks.
func TestSpentBoundRoundsSafely(t *testing.T) {
	hi, lo := 1.0353841, 0.9466557
	for _, tc := range []struct {
		name       string
		r          spentReport
		cell, line string
	}{
		{"upper bound", spentReport{From: "rdp", Epsilon: &hi, Delta: 1e-5, LedgerLen: 7},
			"≤ 1.03539 (rdp upper bound)", "privacy spent: ε ≤ 1.03539 at δ = 1e-05 (rdp upper bound; ledger of 7 entries)"},
		{"certified interval", spentReport{From: "pld", Epsilon: &hi, EpsilonLower: &lo, Delta: 1e-5, LedgerLen: 7},
			"in [0.946655, 1.03539] (pld certified interval)", "privacy spent: ε in [0.946655, 1.03539] at δ = 1e-05 (pld certified interval; ledger of 7 entries)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.value(); got != tc.cell {
				t.Errorf("table cell %q, want %q", got, tc.cell)
			}
			if got := tc.r.sentence(); got != tc.line {
				t.Errorf("sentence %q, want %q", got, tc.line)
			}
		})
	}
}

// TestInterruptJSONDocumented: every field of the interrupted run's
// "training" object is named in the field table of docs/training.md and
// in the JSON schema of docs/cli.md.
func TestInterruptJSONDocumented(t *testing.T) {
	led := &accounting.Ledger{}
	if err := led.Record(accounting.Gaussian{NoiseMultiplier: 1}, 1); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(interruptRun{Interrupted: true, Accountant: "pld", Step: 1, TotalSteps: 2, Checkpoint: "c", LedgerFile: "l", LedgerLen: 1, LedgerHead: "h", Ledger: led})
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	training, err := os.ReadFile(filepath.Join("..", "..", "docs", "training.md"))
	if err != nil {
		t.Fatal(err)
	}
	cli, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The rows of training.md's tables, and cli.md's schema row, that name it.
	row := regexp.MustCompile("(?m)^\\| `[a-z_]+`(, `[a-z_]+`)* \\|")
	documented := map[string]bool{}
	for _, r := range row.FindAllString(string(training), -1) {
		for _, f := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(r, -1) {
			documented[f[1]] = true
		}
	}
	i := bytes.Index(cli, []byte("A run stopped by SIGINT or SIGTERM"))
	if i < 0 {
		t.Fatal("docs/cli.md's JSON schema does not describe the interrupted train's object")
	}
	schema := string(cli[i:])
	schema = schema[:strings.Index(schema, "|\n")]
	for k := range top {
		if !documented[k] {
			t.Errorf("field %q is not in docs/training.md's tables", k)
		}
		if !strings.Contains(schema, "`"+k+"`") {
			t.Errorf("field %q is not in docs/cli.md's JSON schema %q", k, schema)
		}
	}
	if len(top) != 9 {
		t.Errorf("%d fields; want every field set (9)", len(top))
	}
}
