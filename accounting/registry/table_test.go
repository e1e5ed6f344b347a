package registry

import (
	"slices"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/advcomp"
)

// TestTable: the table lists every method once, in display order (the
// accountants, then the procedures), each parses back from its name, has
// a title, and makes a method of its own kind.
func TestTable(t *testing.T) {
	want := []accounting.Kind{accounting.KindMA, accounting.KindRDP, accounting.KindZCDP, accounting.KindAC,
		accounting.KindPLD, accounting.KindDPDAC, accounting.KindDPDZCDP}
	if got := Kinds(); !slices.Equal(got, want) {
		t.Fatalf("Kinds() = %v, want %v", got, want)
	}
	seenProcedure := false
	for _, k := range Kinds() {
		if got, err := ParseKind(string(k)); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
		if Title(k) == "" {
			t.Errorf("%s has no title", k)
		}
		m, err := New(k, Options{})
		if err != nil || m.Kind() != k {
			t.Fatalf("New(%s) = %v, %v", k, m, err)
		}
		proc := Procedural(k, Options{})
		if _, ok := m.(accounting.Procedure); ok != proc {
			t.Errorf("Procedural(%s) = %v, but New makes %T", k, proc, m)
		}
		if seenProcedure && !proc {
			t.Errorf("accountant %s listed after a procedure", k)
		}
		seenProcedure = seenProcedure || proc
	}
	if !Procedural(accounting.KindAC, Options{ACAmplification: advcomp.AmplificationLinear}) {
		t.Error("ac with linear amplification is not a procedure")
	}
	if _, err := ParseKind("foo"); err == nil || !strings.Contains(err.Error(), "want one of ma, rdp, zcdp, ac, pld, dpd-ac, dpd-zcdp") {
		t.Errorf("ParseKind(foo): %v", err)
	}
	if Note(accounting.KindZCDP) == "" || Note(accounting.KindRDP) != "" {
		t.Errorf("notes: zcdp %q, rdp %q", Note(accounting.KindZCDP), Note(accounting.KindRDP))
	}
}
