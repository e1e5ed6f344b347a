package registry_test

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/testenv"
	"github.com/dpcalc/dpcalc/internal/testref"
)

// peerRow is one (setting, tool) row of testdata/peers/*.csv, written by
// scripts/peers.sh (scripts/peers/peers.py) from Opacus' RDP analysis,
// dp_accounting's RDP and PLD accountants and prv_accountant, run on issue
// 11's examples and seeded random DP-SGD settings.
type peerRow struct {
	id, tool, status        string
	sigma, q, delta         float64
	steps                   int
	eps, epsLower, epsUpper float64
	seconds                 float64 // the tool's wall time in the script's run
}

// loadPeerRows reads every testdata/peers/*.csv; it fails t on a missing
// file, a missing column or an unparsable number.
func loadPeerRows(t *testing.T) []peerRow {
	t.Helper()
	files, err := filepath.Glob(testref.Path("peers/*.csv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/peers/*.csv (%v)", err)
	}
	var out []peerRow
	for _, f := range files {
		recs := testref.CSV(t, filepath.Join("peers", filepath.Base(f)))
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		for _, h := range []string{"id", "sigma", "q", "steps", "delta", "tool", "eps", "eps_lower", "eps_upper", "seconds", "status"} {
			if _, ok := col[h]; !ok {
				t.Fatalf("%s: no column %q", f, h)
			}
		}
		for n, rec := range recs[1:] {
			num := func(h string) float64 {
				s := rec[col[h]]
				if s == "" {
					return math.NaN()
				}
				v, err := strconv.ParseFloat(s, 64)
				if err != nil {
					t.Fatalf("%s row %d: %s: %v", f, n+2, h, err)
				}
				return v
			}
			steps, err := strconv.Atoi(rec[col["steps"]])
			if err != nil {
				t.Fatalf("%s row %d: steps: %v", f, n+2, err)
			}
			out = append(out, peerRow{
				id: rec[col["id"]], tool: rec[col["tool"]], status: rec[col["status"]],
				sigma: num("sigma"), q: num("q"), delta: num("delta"), steps: steps,
				eps: num("eps"), epsLower: num("eps_lower"), epsUpper: num("eps_upper"), seconds: num("seconds"),
			})
		}
	}
	return out
}

// TestPeers holds dpcalc, computed live, to two checks against
// the peers' numbers recorded in testdata/peers/*.csv:
//   - rdp ≤ each fixed-grid RDP ε (Opacus' and dp_accounting's default
//     orders), up to a factor 1 + 1e-12: rdp optimises the order
//     continuously, so no grid can do better;
//   - pld's certified upper bound ≤ PRV's certified eps_upper wherever PRV
//     ran (Gopi, Lee and Wutschitz 2021). docs/peers.md flags the rows where
//     PRV's interval lies above dp_accounting's pessimistic ε, a sign of
//     PRV's float64 round-off at δ near 1e-12.
//
// Every row is checked in the long test step (internal/testenv); by
// default pld only on settings whose recorded dpcalc pld time is under
// 0.25 s (the §4 tiny-q corners take seconds each).
// knownPLDGaps are settings where pld's certified upper bound is known to
// be looser than PRV's: tightness gaps still open, never
// soundness. TestPeers logs them while they last and fails once one closes,
// so that the list stays true.
var knownPLDGaps = map[string]string{}

func TestPeers(t *testing.T) {
	rows := loadPeerRows(t)
	full := testenv.Long()
	slow := map[string]bool{} // settings whose dpcalc pld took ≥ 0.25 s in the script
	settings := map[string]bool{}
	for _, r := range rows {
		settings[r.id] = true
		if r.tool == "dpcalc_pld" && !(r.seconds < 0.25) {
			slow[r.id] = true
		}
	}
	if len(settings) < 48 {
		t.Fatalf("testdata/peers has %d settings, want the 8 named examples + ≥ 40 random", len(settings))
	}
	rdp := map[string]float64{}
	pldUpper, pldLower := map[string]float64{}, map[string]float64{}
	dpFine := map[string]float64{} // dp_accounting's pessimistic PLD at a 2e-5 grid
	stillOpen := map[string]bool{}
	for _, r := range rows {
		if r.tool == "dpacc_pld_fine" && r.status == "ok" && !math.IsNaN(r.eps) {
			dpFine[r.id] = r.eps
		}
	}
	var checkedRDP, checkedPLD int
	for _, r := range rows {
		if r.status != "ok" {
			continue
		}
		where := fmt.Sprintf("%s (σ=%g q=%g T=%d δ=%g)", r.id, r.sigma, r.q, r.steps, r.delta)
		e := accounting.SubsampledGaussian(r.sigma, r.q, r.steps)
		switch r.tool {
		case "opacus_rdp", "dpacc_rdp":
			v, ok := rdp[r.id]
			if !ok {
				_, v = epsOf(t, accounting.KindRDP, e, r.delta)
				rdp[r.id] = v
			}
			checkedRDP++
			if math.IsNaN(r.eps) {
				t.Errorf("%s: %s row is ok but has no ε", where, r.tool)
			} else if v > r.eps*(1+1e-12) {
				t.Errorf("%s: rdp ε = %.12g > %s ε = %.12g (%+.3g relative): looser than a fixed grid", where, v, r.tool, r.eps, v/r.eps-1)
			}
		case "prv":
			if slow[r.id] && !full {
				continue
			}
			v, ok := pldUpper[r.id]
			if !ok {
				lo, up := epsOf(t, accounting.KindPLD, e, r.delta)
				pldUpper[r.id], pldLower[r.id] = up, lo
				v = up
			}
			checkedPLD++
			fine, hasFine := dpFine[r.id]
			switch {
			case math.IsNaN(r.epsUpper):
				t.Errorf("%s: prv row is ok but has no eps_upper", where)
			case hasFine && (r.epsLower > fine || r.epsUpper < fine && r.epsUpper < pldLower[r.id]):
				// PRV's interval excludes dp_accounting's pessimistic PLD at
				// a 2e-5 grid on the wrong side (its lower bound above an
				// upper bound), or lies below both that and our certified
				// lower bound: PRV's float64 round-off at δ near 1e-12
				// (docs/peers.md). The reference is then the fine
				// pessimistic PLD, which our upper bound must match to
				// 0.2% (our bracket's width).
				t.Logf("%s: PRV [%.10g, %.10g] is inconsistent with dp_accounting's fine PLD %.10g; checking pld upper %.10g against the latter", where, r.epsLower, r.epsUpper, fine, v)
				if v > fine*1.002 || pldLower[r.id] > fine {
					t.Errorf("%s: pld [%.10g, %.10g] does not contain dp_accounting's fine PLD %.10g to 0.2%%", where, pldLower[r.id], v, fine)
				}
			case v > r.epsUpper:
				if gap, known := knownPLDGaps[r.id]; known {
					t.Logf("%s: known gap (%s): pld upper %.10g > PRV eps_upper %.10g", where, gap, v, r.epsUpper)
					stillOpen[r.id] = true
					continue
				}
				t.Errorf("%s: pld upper %.10g > PRV eps_upper %.10g (PRV [%.10g, %.10g]; %+.3g relative)", where, v, r.epsUpper, r.epsLower, r.epsUpper, v/r.epsUpper-1)
			}
		}
	}
	for id, gap := range knownPLDGaps {
		if settings[id] && !stillOpen[id] && (full || !slow[id]) {
			t.Errorf("%s: the known gap %q is closed: remove it from knownPLDGaps", id, gap)
		}
	}
	if checkedRDP < 80 || checkedPLD < 20 {
		t.Errorf("checked %d fixed-grid RDP rows and %d PRV rows; want ≥ 80 and ≥ 20", checkedRDP, checkedPLD)
	}
}
