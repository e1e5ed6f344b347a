package engine

import (
	"math"
	"strconv"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/advcomp"
	"github.com/dpcalc/dpcalc/internal/cli"
	"github.com/dpcalc/dpcalc/internal/render"
)

// curves are the curves the page draws around an answer of eps, delta,
// sigma, epochs or audit: ε against epochs from E/50 to 2E at the row's σ,
// and σ against the target ε from ε/10 to 10ε at the row's length. They
// are of one Poisson phase under add-remove (the curve commands' training),
// so there are none for other trainings.
func curves(cmd any, res cli.Result) []CurveRequest {
	var rows []cli.Row
	switch r := res.(type) {
	case *cli.Rows:
		rows = r.Rows
	case *cli.Audit:
		rows = r.Accountants
	default:
		return nil
	}
	// The flags of the command the curves share.
	var (
		accountant, acSampling string
		pldGrid, delta         float64
		target                 = math.NaN()
		cmdDelta               bool
		cmdEps                 bool
		audit                  bool
	)
	switch c := cmd.(type) {
	case *cli.EpsCmd:
		accountant, acSampling, pldGrid, delta, cmdEps = c.Accountant, c.ACSampling, c.PLDGrid, c.Delta, true
	case *cli.DeltaCmd:
		accountant, acSampling, pldGrid, cmdDelta = c.Accountant, c.ACSampling, c.PLDGrid, true
		if c.Eps != nil {
			target = *c.Eps
		}
	case *cli.SigmaCmd:
		accountant, acSampling, pldGrid, delta = c.Accountant, c.ACSampling, c.PLDGrid, c.Delta
		if c.Eps != nil {
			target = *c.Eps
		}
	case *cli.EpochsCmd:
		accountant, acSampling, pldGrid, delta = c.Accountant, c.ACSampling, c.PLDGrid, c.Delta
		if c.Eps != nil {
			target = *c.Eps
		}
	case *cli.AuditCmd:
		accountant, pldGrid, delta, target, audit = "all", c.PLDGrid, c.Delta, c.Eps, true
	default:
		return nil
	}
	single := func(r cli.Row) bool {
		return len(r.Phases) == 0 && r.Q > 0 && (r.Sampling == "" || r.Sampling == "poisson") &&
			(r.Adjacency == "" || r.Adjacency == accounting.AddRemove.String())
	}
	ok := -1
	for i, r := range rows {
		if single(r) && r.Error == "" && r.Unsupported == "" && r.Sigma > 0 && r.Steps > 0 {
			ok = i
			break
		}
	}
	if ok < 0 {
		for i, r := range rows {
			if single(r) && r.Sigma > 0 {
				ok = i
				break
			}
		}
	}
	if ok < 0 {
		return nil
	}
	row := rows[ok]
	acc := accountant
	switch {
	case audit, acc == "all":
		acc = "all"
	case acc != string(accounting.KindPLD):
		acc += "," + string(accounting.KindPLD)
	}
	common := []string{"--accountant", acc}
	if pldGrid != 0 {
		common = append(common, "--pld-grid", render.Arg(pldGrid))
	}
	if acSampling != "" && acSampling != string(advcomp.AmplificationLog) {
		common = append(common, "--ac-sampling", acSampling)
	}
	d := render.Arg(delta)
	if cmdDelta {
		d = "1e-5"
		if row.Delta > 0 && row.Delta < 1 {
			d = render.Arg(row.Delta)
		}
	}
	e := 100.0
	if row.Epochs > 0 {
		e = row.Epochs
	}
	ce := append([]string{"curve", "epochs", "--sigma", render.Arg(row.Sigma), "--q", render.Arg(row.Q), "--delta", d,
		"--from", round3(math.Max(e/50, row.Q)), "--to", round3(2 * e), "--points", "60"}, common...)
	out := []CurveRequest{{Args: ce, Command: CommandLine(ce)}}
	if row.Epsilon != nil {
		out[0].Mark = &[2]float64{row.Epochs, *row.Epsilon}
	}
	if cmdEps {
		r := row
		for _, x := range rows {
			if x.Accountant == accountant {
				r = x
				break
			}
		}
		if r.Epsilon != nil {
			target = *r.Epsilon
		}
	}
	if target > 0 && !math.IsInf(target, 0) && row.Steps > 0 {
		cs := append([]string{"curve", "sigma", "--delta", d, "--eps", round3(target/10) + ":" + round3(target*10), "--points", "16",
			"--q", render.Arg(row.Q), "--steps", strconv.Itoa(row.Steps)}, common...)
		out = append(out, CurveRequest{Args: cs, Command: CommandLine(cs), Mark: &[2]float64{target, row.Sigma}})
	}
	return out
}
