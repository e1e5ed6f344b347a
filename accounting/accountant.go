package accounting

import "fmt"

// Accountant composes events and bounds the privacy loss of the composition.
//
// Compose validates e completely before it changes any state: on error the
// accountant is as it was. Epsilon and Delta never under-report: Epsilon
// returns an upper bound on the smallest ε for which the composition is
// (ε, δ)-DP, Delta an upper bound on the smallest such δ. Where a
// composition gives no finite bound, Epsilon returns +Inf and Delta returns
// 1 with a nil error.
//
// Accountants are not safe for concurrent use unless their doc says so.
type Accountant interface {
	// Kind names the accounting method.
	Kind() Kind
	// Compose adds count adaptive repetitions of e.
	Compose(e Event, count int) error
	// Epsilon returns ε(δ) for δ ∈ (0, 1).
	Epsilon(delta float64) (float64, error)
	// Delta returns δ(ε) for ε ≥ 0.
	Delta(epsilon float64) (float64, error)
}

// Kind names an accounting method. Its string is the name used on the
// command line and in JSON.
type Kind string

// The accounting methods.
const (
	// KindMA is the moments accountant with Abadi et al. (2016) Theorem 2.2's
	// tail bound, exactly as the paper states it.
	KindMA Kind = "ma"
	// KindRDP uses the same moments as Rényi divergences (Mironov 2017) with the
	// improved RDP→(ε, δ) conversion (Canonne, Kamath, Steinke 2020).
	KindRDP Kind = "rdp"
	// KindZCDP is zero-concentrated DP (Bun and Steinke 2016).
	KindZCDP Kind = "zcdp"
	// KindAC is advanced composition (Dwork and Roth 2014, Theorem 3.20).
	KindAC Kind = "ac"
	// KindDPDAC is the DPD paper's advanced-composition calibration (§4.3).
	KindDPDAC Kind = "dpd-ac"
	// KindDPDZCDP is the DPD paper's zCDP calibration (§4.3, eqs. 6–7).
	KindDPDZCDP Kind = "dpd-zcdp"
	// KindPLD is the privacy loss distribution accountant with certified
	// discretisation bounds.
	KindPLD Kind = "pld"
)

// Kinds lists every accounting method in display order.
var Kinds = []Kind{KindMA, KindRDP, KindZCDP, KindAC, KindDPDAC, KindDPDZCDP, KindPLD}

// ParseKind returns the Kind named s.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("accounting: unknown accountant %q, want one of ma, rdp, zcdp, ac, dpd-ac, dpd-zcdp, pld", s)
}
