package moments

import (
	"strconv"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/testref"
)

func parseF(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestFixedSizeRDP: rdp bounds T steps of m-of-n fixed-size sampling under
// replace-one no lower than dp_accounting's RDP accountant (whose bound at
// orders ≤ 256 is the tighter forward-difference form of the same theorem)
// and within 5% of it; ma bounds them too.
func TestFixedSizeRDP(t *testing.T) {
	for _, r := range testref.CSV(t, "moments/wor_dpaccounting.csv")[1:] {
		n, m, s, steps, d, want := int(parseF(t, r[0])), int(parseF(t, r[1])), parseF(t, r[2]), int(parseF(t, r[3])), parseF(t, r[4]), parseF(t, r[5])
		e := accounting.SelfComposed{Event: accounting.SampledWithoutReplacement{SourceDatasetSize: n, SampleSize: m, Event: accounting.Gaussian{NoiseMultiplier: s}}, Count: steps}
		rdp, err := NewRDP(nil, accounting.WithAdjacency(accounting.ReplaceOne))
		if err != nil {
			t.Fatal(err)
		}
		if err := rdp.Compose(e, 1); err != nil {
			t.Fatal(err)
		}
		got, err := rdp.Epsilon(t.Context(), d)
		if err != nil {
			t.Fatal(err)
		}
		if got < want*(1-1e-9) || got > want*1.05 {
			t.Errorf("n=%d m=%d σ=%g T=%d δ=%g: rdp ε = %.10g, dp_accounting %.10g; want within [1, 1.05]×", n, m, s, steps, d, got, want)
		}
		ma, err := NewMA(nil, accounting.WithAdjacency(accounting.ReplaceOne))
		if err != nil {
			t.Fatal(err)
		}
		if err := ma.Compose(e, 1); err != nil {
			t.Fatal(err)
		}
		if v, err := ma.Epsilon(t.Context(), d); err != nil || !(v >= got) {
			t.Errorf("ma ε = %v, %v; want ≥ rdp's %v", v, err, got)
		}
	}
}
