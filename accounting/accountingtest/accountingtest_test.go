package accountingtest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/accountingtest"
)

// fake is a method for testing the suite itself. With zero set it reports
// ε = 0 and δ = 0 for everything (unsound); otherwise ε = +Inf and δ = 1 for
// every plan that releases something (sound, and useless). It supports
// Gaussian and (ε, δ) steps, not zCDP.
type fake struct {
	zero bool
	spin bool // Epsilon never answers: it works (reporting work) until stopped
	plan accounting.Plan
}

func (f *fake) Kind() accounting.Kind { return "fake" }
func (f *fake) UpperBound()           {}
func (f *fake) Supports(s accounting.Step) error {
	if s.Mechanism == accounting.MechZCDP {
		return s.Unsupported("fake", "no zCDP")
	}
	return nil
}
func (f *fake) Compose(e accounting.Event, count int) error {
	p, err := accounting.Normalize(e, count)
	if err != nil {
		return err
	}
	for _, s := range p.Steps {
		if err := f.Supports(s); err != nil {
			return err
		}
	}
	m, err := f.plan.Merge(p)
	if err != nil {
		return err
	}
	f.plan = m
	return nil
}
func (f *fake) Epsilon(ctx context.Context, delta float64) (float64, error) {
	if !(delta >= 0 && delta < 1) {
		return 0, &accounting.ParamError{Name: "delta", Value: delta, Want: "in [0, 1)"}
	}
	if f.zero || f.plan.Empty() {
		return 0, nil
	}
	for f.spin {
		if err := accounting.Canceled(ctx); err != nil {
			return 0, err
		}
	}
	return posInf, nil
}
func (f *fake) Delta(ctx context.Context, eps float64) (float64, error) {
	if !(eps >= 0) {
		return 0, &accounting.ParamError{Name: "eps", Value: eps, Want: ">= 0"}
	}
	if f.zero || f.plan.Empty() {
		return 0, nil
	}
	return 1, nil
}

var posInf = func() float64 { var z float64; return 1 / z }()

const fakeEnv = "DPCALC_ACCOUNTINGTEST_FAKE"

// TestFakeHelper runs the suite on a fake method when re-executed by
// TestSuiteSelfCheck.
func TestFakeHelper(t *testing.T) {
	mode := os.Getenv(fakeEnv)
	if mode == "" {
		t.Skip("helper process only")
	}
	accountingtest.Run(t, mode, func() (accounting.Method, error) { return &fake{zero: mode == "zero", spin: mode == "spin"}, nil },
		accountingtest.Options{Random: 4, WorkLimit: 1000})
}

// TestSuiteSelfCheck: the suite passes a sound (if useless) accountant that
// answers +Inf and 1 for everything, so its checks are satisfiable; and it
// fails an unsound one that answers 0 and 0, in each check that should
// catch that (a suite that cannot fail is a defect), and one that never
// answers.
func TestSuiteSelfCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns subprocesses")
	}
	run := func(mode string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFakeHelper$", "-test.v")
		cmd.Env = append(os.Environ(), fakeEnv+"="+mode)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("inf")
	if err != nil {
		t.Errorf("the suite fails a sound accountant: %v\n%s", err, out)
	}
	out, err = run("zero")
	if err == nil {
		t.Fatalf("the suite passes an accountant that answers ε = 0, δ = 0:\n%s", out)
	}
	for _, check := range []string{"Unbounded", "DeltaNeverZero", "ExactQ1", "ExactT1", "Edge"} {
		if !strings.Contains(out, "--- FAIL: TestFakeHelper/zero/"+check+" ") {
			t.Errorf("check %s does not fail on the zero accountant:\n%s", check, out)
		}
	}
	for _, check := range []string{"Contract", "Empty", "Linearity", "Unsupported"} {
		if !strings.Contains(out, "--- PASS: TestFakeHelper/zero/"+check+" ") {
			t.Errorf("check %s should pass on the zero accountant:\n%s", check, out)
		}
	}
	// A method that never answers fails on its work, not on a clock: at
	// once, the same on every machine.
	out, err = run("spin")
	if err == nil || !strings.Contains(out, "no answer within 1000 units of work") {
		t.Errorf("the suite does not stop a method that never answers by its work (err %v):\n%s", err, out)
	}
}
