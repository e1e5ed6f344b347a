package query

import (
	"context"
	"math"
	"strconv"
	"strings"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/advcomp"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/calibrate"
)

// curveFlags are the CLI's curveOutput flags.
type curveFlags struct {
	accountant string
	pldGrid    float64
	acSampling string
	points     int
}

func (v vals) curve() curveFlags {
	return curveFlags{accountant: v.s["accountant"], pldGrid: v.f["pld-grid"], acSampling: v.s["ac-sampling"], points: v.i["points"]}
}

func (o curveFlags) kinds() ([]accounting.Kind, error) {
	var ks []accounting.Kind
	for _, s := range strings.Split(o.accountant, ",") { // decode checked the names
		if s == "all" {
			return registry.Kinds(), nil
		}
		k, err := registry.ParseKind(s)
		if err != nil {
			return nil, bad("accountant", "invalid --accountant: %q, want a comma-separated list of ma, rdp, zcdp, ac, dpd-ac, dpd-zcdp, pld, or all", s)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

func (o curveFlags) check() error {
	if o.points < 2 || o.points > 10000 {
		return bad("points", "invalid --points: %d, want 2..10000", o.points)
	}
	if o.pldGrid != 0 && (!(o.pldGrid > 0) || o.pldGrid > 1) {
		return bad("pld-grid", "invalid --pld-grid: %s, want in (0, 1]", accounting.FormatValue(o.pldGrid))
	}
	return nil
}

func (o curveFlags) factory(k accounting.Kind) calibrate.Factory {
	opt := registry.Options{PLDGridWidth: o.pldGrid, ACAmplification: advcomp.Amplification(o.acSampling)}
	return func() (accounting.Method, error) { return registry.New(k, opt) }
}

// runCurveEpochs is `dpcalc curve epochs`: ε against evenly spaced epochs.
func runCurveEpochs(ctx context.Context, v vals, res *Result) error {
	sigma, q, delta, from, to := v.f["sigma"], v.f["q"], v.f["delta"], v.f["from"], v.f["to"]
	o := v.curve()
	if err := firstErr(
		paramErr("sigma", accounting.CheckNoiseMultiplier(sigma)),
		paramErr("q", accounting.CheckSamplingRate(q)),
		paramErr("delta", accounting.CheckDelta(delta)),
		o.check(),
	); err != nil {
		return err
	}
	if !(from > 0) || math.IsInf(from, 0) || !(to >= from) || math.IsInf(to, 0) {
		flag := "to"
		if !(from > 0) || math.IsInf(from, 0) {
			flag = "from"
		}
		return bad(flag, "invalid --from/--to: %s..%s, want 0 < from <= to, finite", accounting.FormatValue(from), accounting.FormatValue(to))
	}
	kinds, err := o.kinds()
	if err != nil {
		return err
	}
	var steps []int
	var epochs []float64
	for i := 0; i < o.points; i++ {
		ep := from + (to-from)*float64(i)/float64(o.points-1)
		s, err := calibrate.StepsForEpochs(ep, q)
		if err != nil {
			return paramErr("", err)
		}
		if len(steps) > 0 && s <= steps[len(steps)-1] {
			continue
		}
		steps = append(steps, s)
		epochs = append(epochs, calibrate.EpochsForSteps(s, q))
	}
	c := &Curve{Curve: "epochs", Sigma: sigma, Q: q, Delta: delta, Version: Version()}
	for _, k := range kinds {
		s := CurveSeries{Accountant: string(k)}
		eps, err := calibrate.EpsilonCurve(ctx, o.factory(k), sigma, q, steps, delta)
		if err != nil {
			s.Error = err.Error()
		} else {
			for i := range steps {
				s.Points = append(s.Points, CurvePoint{Epochs: epochs[i], Steps: steps[i], Epsilon: FinitePtr(eps[i])})
			}
		}
		c.Series = append(c.Series, s)
	}
	res.Curve = c
	return nil
}

// runCurveSigma is `dpcalc curve sigma`: calibrated σ against target ε.
func runCurveSigma(ctx context.Context, v vals, res *Result) error {
	o := v.curve()
	steps, err := v.steps()
	if err != nil {
		return err
	}
	delta, q := v.f["delta"], v.f["q"]
	if err := firstErr(paramErr("delta", accounting.CheckDelta(delta)), o.check()); err != nil {
		return err
	}
	targets, err := ParseRange(v.s["eps"], o.points)
	if err != nil {
		return err
	}
	kinds, err := o.kinds()
	if err != nil {
		return err
	}
	c := &Curve{Curve: "sigma", Q: q, Delta: delta, Steps: steps, Epochs: calibrate.EpochsForSteps(steps, q), Version: Version()}
	tr := calibrate.Training{SamplingRate: q, Steps: steps}
	for _, k := range kinds {
		s := CurveSeries{Accountant: string(k)}
		rs, err := calibrate.SigmaCurve(ctx, o.factory(k), tr, targets, delta, calibrate.Options{RelTol: 1e-4})
		if err != nil {
			s.Error = err.Error()
		} else {
			for i, r := range rs {
				s.Points = append(s.Points, CurvePoint{Epochs: c.Epochs, Steps: steps, Epsilon: ptr(targets[i]), Sigma: r.X})
			}
		}
		c.Series = append(c.Series, s)
	}
	res.Curve = c
	return nil
}

// ParseRange parses --eps of curve sigma: "lo:hi" (n log-spaced values) or
// "a,b,c".
func ParseRange(s string, n int) ([]float64, error) {
	fail := func() error {
		return bad("eps", "invalid --eps: %q, want lo:hi with 0 < lo < hi or a comma-separated list of values > 0", s)
	}
	var out []float64
	if lo, hi, ok := strings.Cut(s, ":"); ok {
		a, err1 := strconv.ParseFloat(lo, 64)
		b, err2 := strconv.ParseFloat(hi, 64)
		if err1 != nil || err2 != nil || !(a > 0) || !(b > a) || math.IsInf(b, 0) {
			return nil, fail()
		}
		for i := 0; i < n; i++ {
			out = append(out, a*math.Pow(b/a, float64(i)/float64(n-1)))
		}
		out[n-1] = b
		return out, nil
	}
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fail()
		}
		out = append(out, v)
	}
	return out, nil
}
