package main

// The one-run audit: `dpcalc audit-run` (scores in, lower bounds on ε
// out) and the canary flags and report of `dpcalc train --canaries`. The
// mathematics is in calibrate/onerun and the canaries in trainer; this
// file only parses, checks and prints.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/pld"
	"github.com/dpcalc/dpcalc/calibrate/onerun"
	"github.com/dpcalc/dpcalc/internal/atomicfile"
	"github.com/dpcalc/dpcalc/internal/cli"
	"github.com/dpcalc/dpcalc/internal/render"
	"github.com/dpcalc/dpcalc/trainer"
)

// maxScoresBytes bounds what --scores reads (about ten million canaries).
const maxScoresBytes = 256 << 20

// certifiedInterval is where the run's true ε at δ lies (pld's optimistic
// and pessimistic discretisations); Upper is null when no finite bound
// exists.
type certifiedInterval struct {
	Lower *float64 `json:"lower"`
	Upper *float64 `json:"upper"`
}

// auditRunOutput is the result of audit-run and the audit of train
// --canaries (its --json rows: FillOutput).
type auditRunOutput struct {
	Kind string `json:"canary_kind,omitempty"`
	onerun.Result
	DeadInputs int                `json:"dead_inputs,omitempty"`
	Certified  *certifiedInterval `json:"certified,omitempty"`

	view render.Doc // audit-run's table
}

// View implements cli.Result.
func (o *auditRunOutput) View() render.Doc { return o.view }

// Fail implements the exit-1 rule of audit-run (see check).
func (o *auditRunOutput) Fail() error { return o.check() }

// Run implements the command. Exit 0; 1 when the empirical lower bound
// exceeds the certified upper bound (the implementation or its accounting
// is wrong, or the confidence failed); 2 bad input.
func runAuditRun(e *cli.Env, c *cli.AuditRunCmd) error {
	if !(c.Confidence > 0 && c.Confidence < 1) {
		return usageError("invalid --confidence: %s, want in (0, 1)", accounting.FormatValue(c.Confidence))
	}
	if err := cli.CheckFlag("delta", accounting.CheckDeltaQuery(c.Delta)); err != nil {
		return err
	}
	if c.Guesses < 0 {
		return usageError("invalid --guesses: %d, want >= 1 (or omit it to try every threshold)", c.Guesses)
	}
	ev, err := auditRunEvent(c)
	if err != nil {
		return err
	}
	sc, err := readScores(c.Scores, e.Stdin)
	if err != nil {
		return err
	}
	if c.Guesses > len(sc) {
		return usageError("invalid --guesses: %d, want at most the number of canaries (%d)", c.Guesses, len(sc))
	}
	res, err := onerun.Audit(sc, onerun.Options{Confidence: c.Confidence, Delta: c.Delta, Guesses: c.Guesses})
	if err != nil {
		return exitErr(cli.ExitUsage, err)
	}
	out := auditRunOutput{Result: *res}
	if ev != nil {
		if out.Certified, err = certify(e.Ctx, ev, c.Delta); err != nil {
			return err
		}
	}
	t := out.view.Table("quantity", "value")
	appendAuditRows(t, &out)
	e.Print(&out)
	return nil
}

// event is the run described by --sigma/--q/--steps or --ledger, nil if
// neither is given.
func auditRunEvent(c *cli.AuditRunCmd) (accounting.Event, error) {
	phase := c.Sigma != nil || c.Q != nil || c.Steps != nil
	switch {
	case phase && c.Ledger != "":
		return nil, usageError("give the run as --sigma, --q and --steps, or as --ledger, not both")
	case c.Ledger != "":
		led, err := accounting.LoadLedger(c.Ledger)
		if err != nil {
			return nil, usageError("invalid --ledger: %v", err)
		}
		return led.Event(), nil
	case !phase:
		return nil, nil
	case c.Sigma == nil || c.Q == nil || c.Steps == nil:
		return nil, usageError("the run's certified interval needs all of --sigma, --q and --steps")
	}
	if err := cli.CheckFlag("sigma", accounting.CheckNoiseMultiplier(*c.Sigma)); err != nil {
		return nil, err
	}
	if err := cli.CheckFlag("q", accounting.CheckSamplingRate(*c.Q)); err != nil {
		return nil, err
	}
	if err := cli.CheckFlag("steps", accounting.CheckSteps(*c.Steps)); err != nil {
		return nil, err
	}
	return accounting.SubsampledGaussian(*c.Sigma, *c.Q, *c.Steps), nil
}

// certify returns the certified interval of ev's ε at delta (add/remove
// adjacency, pld accountant).
func certify(ctx context.Context, ev accounting.Event, delta float64) (*certifiedInterval, error) {
	acc, err := pld.New(pld.Options{})
	if err != nil {
		return nil, err
	}
	if err := acc.Compose(ev, 1); err != nil {
		return nil, exitErr(cli.ExitUsage, err)
	}
	if delta == 0 {
		// No subsampled Gaussian run is (ε, 0)-DP for a finite ε.
		return &certifiedInterval{}, nil
	}
	lo, hi, err := acc.EpsilonBounds(ctx, delta)
	if err != nil {
		return nil, err
	}
	if !(lo >= 0) {
		lo = 0 // 0 is always a valid lower end
	}
	return &certifiedInterval{Lower: finiteOrNil(lo), Upper: finiteOrNil(hi)}, nil
}

func finiteOrNil(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// check returns an exit-1 error when a lower bound exceeds the certified
// upper bound. The Clopper–Pearson bound is not a one-run bound and the
// f-DP bound assumes a Gaussian curve, so only the binomial bound decides.
func (o *auditRunOutput) check() error {
	if o.Certified == nil || o.Certified.Upper == nil || o.OneRun.Epsilon <= *o.Certified.Upper {
		return nil
	}
	return cli.Exit(cli.ExitFailed, fmt.Errorf("audit: the empirical lower bound ε ≥ %s exceeds the certified upper bound %s: the training or its accounting is wrong, or an event of probability at most %s happened",
		render.G(o.OneRun.Epsilon), render.G(*o.Certified.Upper), render.G(1-o.Confidence)))
}

// appendAuditRows adds the audit's rows to a quantity/value table.
func appendAuditRows(t *render.Table, o *auditRunOutput) {
	conf := strconv.FormatFloat(100*o.Confidence, 'g', 6, 64) + "%"
	kind := ""
	if o.Kind != "" {
		kind = o.Kind + " "
	}
	t.Append("audit canaries", fmt.Sprintf("%d %scanaries, %d included", o.Canaries, kind, o.Members))
	if o.DeadInputs > 0 {
		t.Append("canaries on always-zero inputs", fmt.Sprint(o.DeadInputs))
	}
	tested := fmt.Sprintf("%d thresholds, Bonferroni-corrected", o.Thresholds)
	if o.Thresholds == 1 {
		tested = "1 threshold"
	}
	t.Append("audit guesses", tested)
	guesses := func(b onerun.Bound) string {
		if b.Guesses == 0 {
			return ""
		}
		return fmt.Sprintf(" (%d of %d guesses right)", b.Correct, b.Guesses)
	}
	at := fmt.Sprintf("at δ=%g, %s confidence", o.Delta, conf)
	t.Append("empirical ε ≥ (one run, "+at+")", render.Down(o.OneRun.Epsilon)+guesses(o.OneRun))
	if o.FDP != nil {
		t.Append("empirical ε ≥ (one run, Gaussian f-DP curve)", render.Down(o.FDP.Epsilon)+guesses(*o.FDP))
	}
	t.Append("many-run Clopper–Pearson (not a one-run bound)", render.Down(o.ClopperPearson.Epsilon))
	if o.Certified != nil {
		t.Append(fmt.Sprintf("certified: true ε at δ=%g", o.Delta), strings.TrimPrefix(fmtCertified(o.Certified), "lies in "))
	}
}

func fmtCertified(c *certifiedInterval) string {
	if c.Lower == nil && c.Upper == nil {
		return "no finite bound at δ = 0"
	}
	end := func(x float64, f func(float64) string) string {
		if math.IsInf(x, 1) {
			return "no finite bound"
		}
		return f(x)
	}
	lo, hi := math.Inf(1), math.Inf(1)
	if c.Lower != nil {
		lo = *c.Lower
	}
	if c.Upper != nil {
		hi = *c.Upper
	}
	return "lies in [" + end(lo, render.Down) + ", " + end(hi, render.Up) + "]"
}

// readScores reads --scores: CSV with a score,member header (either
// order, other columns ignored) or a JSON array of {score, member}.
func readScores(path string, stdin io.Reader) ([]onerun.Canary, error) {
	var r io.Reader
	if path == "-" {
		r = stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, usageError("invalid --scores: %v", err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
			return nil, usageError("invalid --scores: %q is not a regular file", path)
		}
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxScoresBytes+1))
	if err != nil {
		return nil, usageError("invalid --scores: %v", err)
	}
	if len(b) > maxScoresBytes {
		return nil, usageError("invalid --scores: more than %d MiB", maxScoresBytes>>20)
	}
	var sc []onerun.Canary
	if t := bytes.TrimLeft(b, " \t\r\n\ufeff"); len(t) > 0 && (t[0] == '[' || t[0] == '{') {
		sc, err = parseScoresJSON(t)
	} else {
		sc, err = parseScoresCSV(b)
	}
	if err != nil {
		return nil, usageError("invalid --scores: %v", err)
	}
	if len(sc) == 0 {
		return nil, usageError("invalid --scores: no canaries")
	}
	return sc, nil
}

func parseScore(s string) (float64, error) {
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("score %q is not a finite number", s)
	}
	return x, nil
}

func parseMember(s string) (bool, error) {
	switch strings.TrimSpace(s) {
	case "0":
		return false, nil
	case "1":
		return true, nil
	}
	return false, fmt.Errorf("member %q is not 0 or 1", s)
}

func parseScoresCSV(b []byte) ([]onerun.Canary, error) {
	cr := csv.NewReader(bufio.NewReader(bytes.NewReader(bytes.TrimPrefix(b, []byte("\ufeff")))))
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, errors.New("want a CSV header score,member")
	}
	si, mi := -1, -1
	for i, h := range head {
		switch strings.ToLower(strings.TrimSpace(h)) {
		case "score":
			si = i
		case "member":
			mi = i
		}
	}
	if si < 0 || mi < 0 {
		return nil, fmt.Errorf("header %q: want the columns score and member", strings.Join(head, ","))
	}
	var out []onerun.Canary
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(rec) <= max(si, mi) {
			return nil, fmt.Errorf("line %d: %d fields, want score and member", line, len(rec))
		}
		s, err := parseScore(rec[si])
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		m, err := parseMember(rec[mi])
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		out = append(out, onerun.Canary{Score: s, Member: m})
	}
}

func parseScoresJSON(b []byte) ([]onerun.Canary, error) {
	var rows []struct {
		Score  *json.Number `json:"score"`
		Member *json.Number `json:"member"`
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&rows); err != nil {
		return nil, fmt.Errorf("JSON: want an array of {\"score\": S, \"member\": 0 or 1}: %v", err)
	}
	out := make([]onerun.Canary, len(rows))
	for i, r := range rows {
		if r.Score == nil || r.Member == nil {
			return nil, fmt.Errorf("JSON element %d: want both score and member", i)
		}
		s, err := parseScore(r.Score.String())
		if err != nil {
			return nil, fmt.Errorf("JSON element %d: %v", i, err)
		}
		m, err := parseMember(r.Member.String())
		if err != nil {
			return nil, fmt.Errorf("JSON element %d: %v", i, err)
		}
		out[i] = onerun.Canary{Score: s, Member: m}
	}
	return out, nil
}

// canaryCount is M, 0 without --canaries.
func (c *trainCmd) canaryCount() int { return derefI(c.Canaries) }

// checkCanaries validates the canary flags against train's others.
func (c *trainCmd) checkCanaries() error {
	f := &c.CanaryFlags
	if f.Canaries == nil {
		if f.CanaryKind != "" || f.CanarySeed != nil || f.CanaryScores != "" {
			return usageError("--canary-kind, --canary-seed and --canary-scores need --canaries M")
		}
		return nil
	}
	switch m := *f.Canaries; {
	case m < 1 || m > 1<<20:
		return usageError("invalid --canaries: %d, want in [1, 1048576]", m)
	case c.Checkpoint != "" || c.Resume:
		return usageError("--canaries cannot be combined with --checkpoint or --resume (the canaries' inclusion bits are not saved)")
	case c.PCA != nil && *c.PCA > 0:
		return usageError("--canaries cannot be combined with --pca (DP-PCA would need the canaries in its sample)")
	case c.Sampling == "shuffle" && c.Method != "np":
		return usageError("--canaries needs --sampling poisson for a private method (the audit bounds ε under add/remove, which shuffled lots are not accounted under)")
	}
	if f.CanaryScores != "" {
		if err := checkOutputPath("canary-scores", f.CanaryScores); err != nil {
			return err
		}
	}
	return nil
}

// applyCanaries sets the canary fields of cfg.
func (c *trainCmd) applyCanaries(cfg *trainer.Config) {
	f := &c.CanaryFlags
	cfg.Canaries = c.canaryCount()
	cfg.CanaryKind = trainer.CanaryKind(f.CanaryKind)
	cfg.CanarySeed = f.CanarySeed
}

// canaryReport builds train's audit object from the run's result (nil
// without canaries) and writes --canary-scores.
func (c *trainCmd) canaryReport(ctx context.Context, res *trainer.Result, delta float64) (*auditRunOutput, error) {
	f := &c.CanaryFlags
	a := res.Audit
	if a == nil {
		return nil, nil
	}
	out := &auditRunOutput{Kind: string(a.Kind), Result: a.Result, DeadInputs: a.DeadInputs}
	if res.Config.Method.Private() {
		ci, err := certify(ctx, res.Ledger.Event(), delta)
		if err != nil {
			return nil, err
		}
		out.Certified = ci
	}
	if f.CanaryScores != "" {
		var b bytes.Buffer
		b.WriteString("score,member\n")
		for _, s := range a.Scores {
			m := 0
			if s.Member {
				m = 1
			}
			fmt.Fprintf(&b, "%s,%d\n", strconv.FormatFloat(s.Score, 'g', -1, 64), m)
		}
		if err := atomicfile.WriteFile(f.CanaryScores, b.Bytes(), 0o644); err != nil {
			return nil, fmt.Errorf("--canary-scores: %w", err)
		}
	}
	return out, nil
}
