package reproduce

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/dpcalc/dpcalc/trainer"
)

func cacheKeyJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// lrScale converts the DPD/DPVD papers' η0 to the trainer's convention (η
// multiplies the mean clipped gradient). The papers' η multiplies a further
// 1/2 and an N/S-scaled sum (DPD eqs. 3–5); taken literally that is a step
// N/2 times larger, which diverges, so the papers' effective step is not
// recoverable from the text. Measured on DIGITS (dpd and dpvd, 500 hidden,
// σ = 0.5, 100 epochs, seed 1): η0 = 0.05 reaches 74–75% test accuracy,
// 10·η0 = 0.5 reaches 92% (the papers report 93–95% at ε = 10). This is
// our adjustment, not a paper number; it is applied to MNIST unvalidated.
const lrScale = 10

// trainSpec is a training table: its cells are registered as jobs when the
// spec is built, and table renders it once the jobs have run.
type trainSpec interface {
	table(r *runner) *Table
}

// t1Cell is one (data set, ε, method) row of a Table 1.
type t1Cell struct {
	set          datasetSetting
	eps          float64
	row          methodRow
	paperAcc     float64
	epochs, runs int
	skip         string
	paper, sound *cell
	// printed is the cell at the σ the paper prints for this row (nil
	// where it prints none; see printedSigma).
	printed *cell
}

// printedSigma returns the σ the paper prints for a Table 1 row at (data
// set, ε), from sigmaClaims: DPD prints σ for its DPD-AC and DPD-zCDP
// rows on MNIST at ε = 0.5, DPVD for DPVD-AC and DPVD-zCDP on MNIST and
// DIGITS at ε = 1. Only the rows of the paper's own method take it (the
// texts name those rows).
func printedSigma(p Paper, dataset string, eps float64, row methodRow) (float64, string, bool) {
	own := map[Paper]trainer.Method{PaperDPD: trainer.MethodDPD, PaperDPVD: trainer.MethodDPVD}
	if row.Method != own[p] {
		return 0, "", false
	}
	for _, c := range sigmaClaims {
		if c.Paper != p || c.Dataset != dataset || c.Epsilon != eps {
			continue
		}
		switch row.PaperKind {
		case accounting.KindDPDAC:
			return c.SigmaAC, c.Cite, true
		case accounting.KindDPDZCDP:
			return c.SigmaZCD, c.Cite, true
		}
	}
	return 0, "", false
}

type table1Spec struct {
	tab   table1
	cells []*t1Cell
	sound accounting.Kind
}

// table1Spec builds the cells of a DPD/DPVD Table 1.
func (r *runner) table1Spec(tab table1) *table1Spec {
	s := &table1Spec{tab: tab, sound: r.acc.sound()}
	for _, set := range tab.Settings {
		for ei, eps := range tab.Epsilons {
			for _, row := range tab.Rows {
				c := &t1Cell{set: set, eps: eps, row: row, paperAcc: row.DIGITS[ei]}
				if set.Dataset == "mnist" {
					c.paperAcc = row.MNIST[ei]
				}
				c.epochs, c.runs, c.skip = r.profileEpochs(set.Dataset, set.Epochs)
				s.cells = append(s.cells, c)
				if c.skip != "" {
					c.paper, c.sound = &cell{}, &cell{}
					continue
				}
				n := trainSizes[set.Dataset]
				cfg := trainer.Config{
					Method: row.Method, Hidden: []int{set.Hidden}, LotSize: set.Lot, Epochs: c.epochs,
					ClipNorm: set.Clip, LearningRate: lrScale * set.LR, Gamma: 1,
				}
				if row.Method == trainer.MethodDPSGD {
					// Abadi's own schedule (§5.2: 0.1 → 0.052 over 10
					// epochs), already in the mean-gradient convention.
					cfg.LearningRate = abadiMNIST.LR
					cfg.LearningRateFinal = abadiMNIST.LRFinal
					cfg.DecayEpochs = abadiMNIST.DecayEpochs
				}
				cfg = cfg.WithDefaults(n)
				c.paper = r.makeCell(set.Dataset, cfg, r.paperSigma(row.PaperKind, set.Dataset, cfg, eps, set.Delta), c.runs, set.Delta)
				c.sound = r.makeCell(set.Dataset, cfg, r.soundSigma(set.Dataset, cfg, eps, set.Delta), c.runs, set.Delta)
				if ps, _, ok := printedSigma(tab.Paper, set.Dataset, eps, row); ok {
					c.printed = r.makeCell(set.Dataset, cfg, sigmaResult{Sigma: ps, Epsilon: math.NaN()}, c.runs, set.Delta)
				}
			}
		}
	}
	return s
}

func (s *table1Spec) table(r *runner) *Table {
	tab := s.tab
	sk := string(s.sound)
	if sk == "" {
		sk = "sound accountant"
	}
	t := &Table{
		Name:  string(tab.Paper) + "-table1",
		Title: fmt.Sprintf("%s (%s): test accuracy, paper vs ours", tab.Cite, tab.Paper.Title()),
		Columns: []string{"dataset", "ε", "δ", "method", "trainer method", "epochs", "paper acc",
			"σ paper proc.", "acc (paper σ)", "ours − paper (pp)", fmt.Sprintf("true ε (paper σ, %s)", sk),
			"σ printed", "acc (printed σ)", fmt.Sprintf("true ε (printed σ, %s)", sk),
			fmt.Sprintf("σ sound (%s)", sk), "acc (sound σ)", fmt.Sprintf("true ε (sound σ, %s)", sk), "seeds"},
		Notes: []string{
			"σ paper proc.: the σ the paper's own procedure gives for this run (dpd-ac for *-AC rows, dpd-zcdp for *-zCDP rows and the no-dropout baseline, ma — Abadi's moments accountant — for the Abadi row), applied to the run our trainer makes: q = S/N, T = epochs·⌈N/S⌉ (DIGITS: N = 1,437, so q = S/N differs from the papers' stated ν = 0.05). It is the trainer's noise multiplier: dpd/dpvd/sgld add noise 2Cσ (the papers' Algorithm 1), dpsgd adds σC.",
			fmt.Sprintf("σ sound: the smallest σ for which the trainer's whole run event (trainer.Config.RunEvent: T steps of PoissonSampled{q, Gaussian{σ_eff}}, σ_eff = 2σ for dpd/dpvd/sgld and σ for dpsgd, add/remove adjacency) is (ε, δ)-DP under %s (calibrate.SigmaFor).", sk),
			"σ printed: the σ the paper itself prints for this row (DPD §5: MNIST ε = 0.5, 10.88 for DPD-AC and 3.23 for DPD-zCDP; DPVD §5: ε = 1, MNIST 8.24 and 2.68, DIGITS 9.73 and 2.97 for DPVD-AC and DPVD-zCDP), trained as is; - where the paper prints none. It shows what the published σ delivers in accuracy and, beside it, its certified ε in the run we make (the papers state ν = 0.05 for DIGITS; our q = S/N is 0.0696). σ paper proc. is our reading of the papers' §4.3 procedure, which need not give the printed value.",
			fmt.Sprintf("true ε: ε(δ) of the run event at that σ under %s (for pld the certified upper bound). A paper-σ true ε above the column ε means the paper's σ does not deliver the claimed ε in the run we make.", sk),
			"Accuracy: test accuracy at the end of training, mean ± sample standard deviation over the runs made; run r uses seed (listed) and the same seed gives the same number. ours − paper: mean accuracy at the paper's σ minus the paper's, in percentage points.",
			fmt.Sprintf("Learning rate: dpd/dpvd/sgld use η0 = %g × the paper's η0 (%g on MNIST, %g on DIGITS) with η_t = η0/t, t the epoch; η multiplies the mean noisy clipped gradient (the trainer's convention). The papers' update (DPD eqs. 3–5) multiplies η_t/2 by an N/S-scaled sum — N/2 times our step, which diverges — so their effective step is not recoverable; at the papers' η0 our DIGITS runs stall near 75%%, at %g× they reach about 92%% (measured, see reproduce.lrScale). The Abadi rows use Abadi's own schedule, 0.1 → 0.052 over 10 epochs.", float64(lrScale), lrScale*tab.Settings[0].LR, lrScale*tab.Settings[1].LR, float64(lrScale)),
			"Clipping: one flat norm bound C on the whole per-example gradient (the papers write \"each layer at C\" but derive the sensitivity 2C of the whole sum). η_t = η0/t with t the epoch; Poisson sampling with q = S/N (the papers use fixed-size minibatches).",
		},
	}
	for _, row := range tab.Rows {
		t.Notes = append(t.Notes, fmt.Sprintf("%s → trainer method %s.", row.Name, row.Mapping))
	}
	type key struct {
		ds  string
		eps float64
	}
	groups := map[key][]*t1Cell{}
	var order []key
	for _, c := range s.cells {
		k := key{c.set.Dataset, c.eps}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], c)
		diff := "-"
		if m, _, n := c.paper.accuracy(); n > 0 && c.skip == "" {
			diff = fmt.Sprintf("%+.2f", 100*(m-c.paperAcc))
		}
		ep := "-"
		if c.skip == "" {
			ep = epochsCell(c.epochs, c.set.Epochs)
		}
		t.add(c.set.Dataset, f4(c.eps), f4(c.set.Delta), c.row.Name, string(c.row.Method), ep, fmt.Sprintf("%.4f", c.paperAcc),
			sigmaCell(c.paper.sigma, c.skip), c.paper.accString(c.skip), diff, c.paper.trueEpsString(c.skip),
			c.printedSigmaCell(), c.printedAccCell(), c.printedEpsCell(),
			sigmaCell(c.sound.sigma, c.skip), c.sound.accString(c.skip), c.sound.trueEpsString(c.skip), c.paper.seeds())
	}
	// Verdicts.
	within, total := 0, 0
	var misses []string
	for _, k := range order {
		cs := groups[k]
		if cs[0].skip != "" {
			t.Verdict = append(t.Verdict, fmt.Sprintf("%s ε = %g: %s.", k.ds, k.eps, cs[0].skip))
			continue
		}
		reduced := cs[0].epochs != cs[0].set.Epochs
		// Best method: paper's and ours (at the paper's σ).
		bestPaper, bestOurs := "", ""
		bp, bo := -1.0, -1.0
		for _, c := range cs {
			if c.paperAcc > bp {
				bp, bestPaper = c.paperAcc, c.row.Name
			}
			if m, _, n := c.paper.accuracy(); n > 0 && m > bo {
				bo, bestOurs = m, c.row.Name
			}
			if m, _, n := c.paper.accuracy(); n > 0 && !reduced {
				total++
				if math.Abs(100*(m-c.paperAcc)) <= accTolPP {
					within++
				} else {
					misses = append(misses, fmt.Sprintf("%s/%g/%s %+.1f pp", k.ds, k.eps, c.row.Name, 100*(m-c.paperAcc)))
				}
			}
		}
		v := fmt.Sprintf("%s ε = %g: the paper's best method is %s (%.4f); ours at the paper's σ is %s (%.4f)", k.ds, k.eps, bestPaper, bp, bestOurs, bo)
		switch {
		case bestOurs == "":
			v = fmt.Sprintf("%s ε = %g: no run at a paper σ (the papers' accountants are not built), so the paper's ranking (best: %s) is not tested.", k.ds, k.eps, bestPaper)
		case reduced:
			v += fmt.Sprintf(" — not a test of the ranking: profile-reduced runs (%d of %d epochs) are not comparable to the paper's.", cs[0].epochs, cs[0].set.Epochs)
		case bestOurs == bestPaper:
			v += " — the ranking claim reproduces."
		default:
			v += " — the ranking claim does not reproduce here."
		}
		t.Verdict = append(t.Verdict, v)
		var ratios []string
		for _, c := range cs {
			if c.paper.sigma.ok() && c.sound.sigma.ok() {
				ratios = append(ratios, fmt.Sprintf("%s %.2f×", c.row.Name, c.paper.sigma.Sigma/c.sound.sigma.Sigma))
			}
		}
		if len(ratios) > 0 {
			t.Verdict = append(t.Verdict, fmt.Sprintf("%s ε = %g: paper-procedure σ / sound σ (above 1: more noise than the budget needs) — %s.", k.ds, k.eps, strings.Join(ratios, ", ")))
		}
		for _, c := range cs {
			te := c.paper.trueEps
			if !c.paper.sigma.ok() || te.Err != "" {
				continue
			}
			switch {
			case te.Lower != nil && *te.Lower > c.eps:
				t.Verdict = append(t.Verdict, fmt.Sprintf("%s ε = %g, %s: the paper procedure's σ = %s does NOT deliver ε = %g in this run: the true ε is at least %s (certified).", k.ds, k.eps, c.row.Name, f4(c.paper.sigma.Sigma), c.eps, f4(*te.Lower)))
			case te.Epsilon > c.eps:
				t.Verdict = append(t.Verdict, fmt.Sprintf("%s ε = %g, %s: the paper procedure's σ = %s is not certified to deliver ε = %g: %s gives up to %s.", k.ds, k.eps, c.row.Name, f4(c.paper.sigma.Sigma), c.eps, s.sound, f4(te.Epsilon)))
			}
		}
	}
	if total > 0 {
		v := fmt.Sprintf("Accuracy at the paper's σ: %d of %d full-length cells within %g pp of the paper", within, total, accTolPP)
		if len(misses) > 0 {
			sort.Strings(misses)
			v += "; outside: " + strings.Join(misses, ", ")
		}
		t.Verdict = append(t.Verdict, v+".")
	}
	return t
}

func (c *t1Cell) printedSigmaCell() string {
	if c.printed == nil {
		return "-"
	}
	return f4(c.printed.sigma.Sigma)
}

func (c *t1Cell) printedAccCell() string {
	if c.printed == nil {
		return "-"
	}
	return c.printed.accString(c.skip)
}

func (c *t1Cell) printedEpsCell() string {
	if c.printed == nil {
		return "-"
	}
	return c.printed.trueEpsString(c.skip)
}

func sigmaCell(s sigmaResult, skip string) string {
	if skip != "" {
		return "-"
	}
	return s.String()
}

// abadiRow is one §5.2 noise level.
type abadiRow struct {
	run          abadiMNISTRun
	budgetEpochs int
	budgetErr    string
	epochs, runs int
	skip         string
	c            *cell
	maEps        epsResult
}

type abadiSpec struct {
	rows []*abadiRow
}

// abadiMNISTSpec builds the §5.2 cells: the paper's σ and σ_p, trained for
// the epochs the paper's rule allows (capped by the profile).
func (r *runner) abadiMNISTSpec() (*abadiSpec, error) {
	s := &abadiSpec{}
	n := trainSizes["mnist"]
	m := abadiMNIST
	for _, run := range abadiMNISTRuns {
		a := &abadiRow{run: run, c: &cell{}}
		s.rows = append(s.rows, a)
		base := trainer.Config{
			Method: trainer.MethodDPSGD, Hidden: []int{m.Hidden}, PCADim: m.PCADim, PCANoiseMultiplier: run.SigmaPCA,
			// DP-PCA over the whole training set: with a 10% sample the noisy
			// covariance's lower principal directions are noise and accuracy
			// falls to Abadi's random-projection level (~92.5% at ε = 2).
			PCASamplingRate: 1,
			LotSize:         m.Lot, ClipNorm: m.Clip, LearningRate: m.LR, LearningRateFinal: m.LRFinal, DecayEpochs: m.DecayEpochs,
			NoiseMultiplier: run.Sigma, Epochs: 1,
		}.WithDefaults(n)
		// The paper's epoch rule under its own accountant.
		if !r.acc.built[accounting.KindMA] {
			a.budgetErr = NotBuilt
		} else {
			key := struct {
				Cfg   trainer.Config `json:"config"`
				Eps   float64        `json:"epsilon"`
				Delta float64        `json:"delta"`
			}{base, run.Epsilon, m.Delta}
			if !r.cache.get("epochs", key, &a.budgetEpochs) {
				e, _, err := calibrate.LargestInt(func(ep int) (bool, error) {
					c := base
					c.Epochs = ep
					res := r.epsilon(accounting.KindMA, c.RunEvent(n), m.Delta)
					if res.Err != "" {
						return false, fmt.Errorf("%s", res.Err)
					}
					return res.Epsilon <= run.Epsilon, nil
				}, 5000)
				if err != nil {
					a.budgetErr = "error: " + err.Error()
				} else {
					a.budgetEpochs = e
					_ = r.cache.put("epochs", key, e)
				}
			}
		}
		if a.budgetErr != "" || a.budgetEpochs == 0 {
			if a.budgetErr == "" {
				a.budgetErr = "no epoch fits the budget"
			}
			a.skip = "not run: " + a.budgetErr
			continue
		}
		a.epochs, a.runs, a.skip = r.profileEpochs("mnist", a.budgetEpochs)
		if a.skip != "" {
			continue
		}
		cfg := base
		cfg.Epochs = a.epochs
		a.c = r.makeCell("mnist", cfg, sigmaResult{Sigma: run.Sigma}, a.runs, m.Delta)
		a.maEps = r.epsilon(accounting.KindMA, a.c.event, m.Delta)
	}
	return s, nil
}

func (s *abadiSpec) table(r *runner) *Table {
	sk := string(r.acc.sound())
	if sk == "" {
		sk = "sound accountant"
	}
	m := abadiMNIST
	t := &Table{
		Name:  "abadi-5.2-mnist",
		Title: "Abadi et al. §5.2: MNIST test accuracy at the paper's noise levels, paper vs ours",
		Columns: []string{"noise", "ε", "δ", "σ", "σ_p", "paper acc", "epochs (paper rule, ma)", "epochs run",
			"acc (ours)", "ours − paper (pp)", "ε spent (ma)", fmt.Sprintf("true ε (%s)", sk), "seeds"},
		Notes: []string{
			fmt.Sprintf("Setting (%s): %d-dim DP-PCA (σ_p, whole training set, sampling rate 1), %d hidden ReLU units, lot %d, learning rate %g → %g over %d epochs, δ = %g.", m.Cite, m.PCADim, m.Hidden, m.Lot, m.LR, m.LRFinal, m.DecayEpochs, m.Delta),
			"epochs (paper rule): the paper prints no epoch counts for these runs; we use its rule from §5.2 'Effect of the parameters' — train until (ε, 10⁻⁵)-DP would be violated — under its moments accountant (ma) over the DP-PCA release and all steps.",
			fmt.Sprintf("Clipping: the paper clips each layer at %g; we clip the whole per-example gradient at %g, so the noise std per coordinate, σ·%g, is the paper's and the run event is exactly PoissonSampled{q, Gaussian{σ}} per step.", m.Clip, m.Clip, m.Clip),
			fmt.Sprintf("ε spent (ma) and true ε (%s): of the run made (DP-PCA + the steps run), at δ = %g. A profile-reduced run spends less than its ε.", sk, m.Delta),
		},
	}
	for _, a := range s.rows {
		ep, epRun, acc, diff, ma, te := "-", "-", a.skip, "-", "-", "-"
		if a.budgetErr == "" {
			ep = fmt.Sprint(a.budgetEpochs)
		} else {
			ep = a.budgetErr
		}
		if a.skip == "" {
			epRun = epochsCell(a.epochs, a.budgetEpochs)
			acc = a.c.accString("")
			if mean, _, n := a.c.accuracy(); n > 0 {
				diff = fmt.Sprintf("%+.2f", 100*(mean-a.run.Accuracy))
				v := fmt.Sprintf("ε = %g (σ = %g, σ_p = %g): ours %.4f vs paper %.2f", a.run.Epsilon, a.run.Sigma, a.run.SigmaPCA, mean, a.run.Accuracy)
				switch {
				case a.epochs != a.budgetEpochs:
					v += fmt.Sprintf(" after %d of %d epochs (profile-reduced; not comparable).", a.epochs, a.budgetEpochs)
				case math.Abs(100*(mean-a.run.Accuracy)) <= accTolPP:
					v += fmt.Sprintf(": reproduces within %g pp.", accTolPP)
				default:
					v += fmt.Sprintf(": does NOT reproduce within %g pp (%s pp).", accTolPP, diff)
				}
				t.Verdict = append(t.Verdict, v)
			}
			ma = a.maEps.String()
			te = a.c.trueEps.String()
			if a.c.trueEps.Err == "" && a.epochs == a.budgetEpochs && a.c.trueEps.Epsilon <= a.run.Epsilon {
				t.Verdict = append(t.Verdict, fmt.Sprintf("ε = %g: the run's true ε ≤ %s (%s): the budget holds.", a.run.Epsilon, f4(a.c.trueEps.Epsilon), sk))
			}
		} else {
			t.Verdict = append(t.Verdict, fmt.Sprintf("ε = %g: %s.", a.run.Epsilon, a.skip))
		}
		t.add(a.run.Name, f4(a.run.Epsilon), f4(m.Delta), f4(a.run.Sigma), f4(a.run.SigmaPCA), fmt.Sprintf("%.2f", a.run.Accuracy),
			ep, epRun, acc, diff, ma, te, a.c.seeds())
	}
	return t
}
