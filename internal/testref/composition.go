package testref

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// Composition holds the mpmath references of testdata/composition/refs.json,
// written by testdata/composition/gen.py: zCDP closed forms, advanced
// composition, the analytic Gaussian ε, Abadi et al. §5.1 and the DPD
// papers' calibrations.
type Composition struct {
	ZCDP []struct {
		Sigma      float64 `json:"sigma"`
		Steps      int     `json:"steps"`
		Delta      float64 `json:"delta"`
		Eps        float64 `json:"eps"`
		Rho        float64 `json:"rho"`
		EpsOfDelta float64 `json:"eps_of_delta"`
		DeltaOfEps float64 `json:"delta_of_eps"`
	} `json:"zcdp"`
	Advanced []struct {
		EpsS  float64 `json:"eps_s"`
		K     float64 `json:"k"`
		Slack float64 `json:"slack"`
		Eps   float64 `json:"eps"`
	} `json:"advanced"`
	AnalyticGaussian []struct {
		Sigma, Delta, Eps float64
	} `json:"analytic_gaussian"`
	Abadi []struct {
		Epochs int     `json:"epochs"`
		Steps  int     `json:"steps"`
		Mode   string  `json:"mode"`
		Eps    float64 `json:"eps"`
	} `json:"abadi"`
	Heterogeneous struct {
		Delta, Eps, Basic, Advanced float64
	} `json:"heterogeneous"`
	DPD []struct {
		Name      string   `json:"name"`
		Eps       float64  `json:"eps"`
		Delta     float64  `json:"delta"`
		Q         float64  `json:"q"`
		Epochs    int      `json:"epochs"`
		Steps     int      `json:"steps"`
		PaperAC   *float64 `json:"paper_ac"`
		PaperZCDP *float64 `json:"paper_zcdp"`
		SigmaAC   float64  `json:"sigma_ac"`
		SigmaZCDP float64  `json:"sigma_zcdp"`
	} `json:"dpd"`
}

// LoadComposition reads testdata/composition/refs.json; it fails t if the
// file cannot be read or a section is missing.
func LoadComposition(t testing.TB) *Composition {
	t.Helper()
	b, err := os.ReadFile(Path("composition/refs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r Composition
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.ZCDP) == 0 || len(r.Advanced) == 0 || len(r.Abadi) == 0 || len(r.DPD) == 0 {
		t.Fatal("refs.json is missing sections")
	}
	return &r
}

// Near reports whether got is within relative tolerance tol of want (equal
// values, infinities included, are always near).
func Near(got, want, tol float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= tol*math.Abs(want)
}
