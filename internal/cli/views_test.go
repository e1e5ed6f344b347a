package cli

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func cellFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		t.Fatalf("cell %q: %v", s, err)
	}
	return v
}

// TestTablesRoundSafely: every number a table prints is on the safe side of
// the value the JSON output holds: ε, a computed δ and a calibrated σ at or
// above it, a certified lower end and the epochs that fit at or below it.
// The tables used to round to the nearest: rdp's ε = 1.0353841… for σ = 4,
// q = 0.01, 100 epochs printed as 1.03538, below the bound it reported,
// and pld's certified lower end 0.9466557… as 0.946656, above it.
func TestTablesRoundSafely(t *testing.T) {
	for _, args := range [][]string{
		{"eps", "--sigma", "4", "--q", "0.01", "--epochs", "100", "--accountant", "all"},
		{"eps", "--sigma", "1", "--batch", "256", "--n", "60000", "--epochs", "2", "--sampling", "shuffle", "--adjacency", "replace-one", "--accountant", "pld"},
		{"delta", "--sigma", "1.2", "--eps", "2", "--q", "0.00256", "--epochs", "50", "--accountant", "all"},
		{"sigma", "--eps", "1", "--q", "0.01", "--epochs", "200", "--accountant", "all"},
		{"epochs", "--sigma", "1.1", "--q", "0.013", "--eps", "2", "--accountant", "all"},
	} {
		_, _, o := execute(args...)
		rows, ok := o.Result.(*Rows)
		if !ok {
			t.Fatalf("%q: %+v", args, o)
		}
		cells := rows.View()[0].Table.Rows
		for i, r := range rows.Rows {
			c := cells[i].Cells
			at := strings.Join(args, " ") + " / " + r.Accountant
			eps := c[7]
			switch {
			case r.Epsilon == nil:
				continue
			case r.EpsilonLower != nil:
				lo, hi, _ := strings.Cut(strings.Trim(eps[strings.Index(eps, "[")+1:], "]"), ", ")
				lo = strings.TrimSuffix(lo, "*") // a lower end that is not the pairs'
				if cellFloat(t, lo) > *r.EpsilonLower || cellFloat(t, hi) < *r.EpsilonUpper {
					t.Errorf("%s: interval [%v, %v] printed %q", at, *r.EpsilonLower, *r.EpsilonUpper, eps)
				}
				eps = eps[:strings.Index(eps, " ")]
			}
			switch args[0] {
			case "delta":
				if v := cellFloat(t, c[8]); v < r.Delta {
					t.Errorf("%s: δ = %v printed %q", at, r.Delta, c[8])
				}
			default:
				if v := cellFloat(t, eps); v < *r.Epsilon {
					t.Errorf("%s: ε = %v printed %q", at, *r.Epsilon, eps)
				}
			}
			if v := cellFloat(t, c[1]); args[0] == "sigma" && v < r.Sigma {
				t.Errorf("%s: σ = %v printed %q", at, r.Sigma, c[1])
			}
			if v := cellFloat(t, c[4]); args[0] == "epochs" && v > r.Epochs {
				t.Errorf("%s: epochs = %v printed %q", at, r.Epochs, c[4])
			}
		}
	}
	// The interval of an audit, in its line and in its error.
	_, _, o := execute("audit", "--sigma", "4", "--q", "0.01", "--epochs", "100", "--eps", "0.5")
	a := o.Result.(*Audit)
	line := a.View()[1].Text
	want := "true ε at δ lies in [" + strconv.FormatFloat(math.Floor(*a.EpsilonLower*1e6)/1e6, 'g', -1, 64)
	if !strings.HasPrefix(line, want) || !strings.Contains(o.Err.Error(), line[len("true ε at δ "):strings.Index(line, " (pld")]) {
		t.Errorf("audit: %q (error %v), lower end %v: want the line to start %q", line, o.Err, *a.EpsilonLower, want)
	}
}
