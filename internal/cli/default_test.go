package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/internal/render"
	"github.com/dpcalc/dpcalc/internal/sysmem"
)

// TestDefaultAccountant: pld answers wherever one accountant answers and
// none is named, and that default is the registry's: every --accountant
// flag of one accountant defaults to registry.Default (train's says so in
// its help), and sigma, eps, delta, epochs and profile answer with it.
func TestDefaultAccountant(t *testing.T) {
	if registry.Default != accounting.KindPLD {
		t.Fatalf("registry.Default = %s, want pld", registry.Default)
	}
	var c CLI
	k, err := New(&c, io.Discard, io.Discard, func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	flags := 0
	err = kong.Visit(k.Model, func(n kong.Visitable, next kong.Next) error {
		node, ok := n.(*kong.Node)
		if !ok || node.Type != kong.CommandNode {
			return next(nil)
		}
		for _, f := range node.Flags {
			if f.Name != "accountant" || f.IsSlice() { // curve's list: several accountants
				continue
			}
			flags++
			switch {
			case node.Name == "train":
				if f.Default != "" || !strings.Contains(f.Help, "(default: "+string(registry.Default)+")") {
					t.Errorf("train --accountant: default %q, help %q; want the default named in the help", f.Default, f.Help)
				}
			case f.Default != string(registry.Default):
				t.Errorf("%s --accountant defaults to %q, want %q", node.Path(), f.Default, registry.Default)
			}
		}
		return next(nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if flags < 6 { // sigma, eps, delta, epochs, profile, train
		t.Errorf("found %d --accountant flags of one accountant, want at least 6", flags)
	}
	for _, args := range [][]string{
		{"sigma", "--eps", "1", "--q", "0.01", "--epochs", "200"},
		{"eps", "--sigma", "4", "--q", "0.01", "--epochs", "100"},
		{"delta", "--sigma", "4", "--q", "0.01", "--epochs", "100", "--eps", "1"},
		{"epochs", "--sigma", "4", "--q", "0.01", "--eps", "0.5"},
		{"profile", "--sigma", "4", "--q", "0.01", "--epochs", "100", "--deltas", "1e-5", "--fpr", "0.1"},
	} {
		_, stderr, o := execute(args...)
		if o.Code != 0 {
			t.Errorf("%s: exit %d: %s", args, o.Code, stderr)
			continue
		}
		var got string
		switch r := o.Result.(type) {
		case *Rows:
			got = r.Rows[0].Accountant
			if len(r.Rows) != 1 {
				t.Errorf("%s: %d rows, want 1", args, len(r.Rows))
			}
			if r.Rows[0].EpsilonLower == nil && args[0] != "delta" {
				t.Errorf("%s: no certified interval", args)
			}
		case *Profile:
			got = r.Accountant
		}
		if got != "pld" {
			t.Errorf("%s answers with %q, want pld", args, got)
		}
	}
	// The headline: pld's σ, not rdp's 5.77769.
	_, _, o := execute("sigma", "--eps", "1", "--q", "0.01", "--epochs", "200")
	if r := o.Result.(*Rows).Rows[0]; !(r.Sigma > 5.3366 && r.Sigma < 5.3367) || r.EpsilonUpper == nil || r.EpsilonLower == nil || *r.EpsilonUpper > 1 || !(*r.EpsilonLower > 0.999) {
		t.Errorf("sigma --eps 1 --q 0.01 --epochs 200: σ %.9g, ε in [%v, %v]; want 5.3366x with ε ≤ 1 in a certified interval", r.Sigma, render.Ptr(r.EpsilonLower, render.G), render.Ptr(r.EpsilonUpper, render.G))
	}
}

// TestDefaultNamesAlternative: where the default accountant cannot bound a
// training (more steps than pld composes, an event it does not support,
// more memory than there is), its row says so and names the accountant
// that can; with --accountant all the other rows answer, and the command
// succeeds.
func TestDefaultNamesAlternative(t *testing.T) {
	dir := t.TempDir()
	write := func(name, js string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const ev = `{"module_name":"dp_accounting.dp_event","class_name":"SelfComposedDpEvent","count":100,"event":`
	zcdp := write("zcdp.json", ev+`{"module_name":"dp_accounting.dp_event","class_name":"ZCDpEvent","rho":0.01,"xi":0}}`)
	epsDelta := write("epsdelta.json", ev+`{"module_name":"dp_accounting.dp_event","class_name":"EpsilonDeltaDpEvent","epsilon":0.1,"delta":1e-7}}`)
	for _, tc := range []struct {
		args []string
		alt  string
		all  bool // whether every other accountant answers (zcdp finds no σ for sigma's)
	}{
		{[]string{"eps", "--sigma", "1", "--q", "1e-12", "--steps", "2e12"}, "rdp", true},
		{[]string{"delta", "--sigma", "1", "--q", "1e-12", "--steps", "2e12", "--eps", "1"}, "rdp", true},
		{[]string{"sigma", "--eps", "1", "--q", "1e-9", "--steps", "2e12"}, "rdp", false},
		{[]string{"eps", "--events", zcdp}, "rdp", true},
		{[]string{"eps", "--events", epsDelta}, "ac", true},
		{[]string{"delta", "--eps", "1", "--events", epsDelta}, "ac", true},
	} {
		_, stderr, o := execute(tc.args...)
		hint := "--accountant " + tc.alt + " can bound this training"
		if o.Code != ExitFailed || !strings.Contains(stderr, "pld: unsupported: ") || !strings.Contains(stderr, hint) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and pld unsupported, naming %q", tc.args, o.Code, stderr, hint)
			continue
		}
		if r := o.Result.(*Rows).Rows[0]; r.Accountant != "pld" || r.Error != "" || !strings.HasSuffix(r.Unsupported, hint) || r.Epsilon != nil {
			t.Errorf("%s: row %+v", tc.args, r)
		}
		// Every other accountant answers beside it.
		_, stderr, o = execute(append(tc.args, "--accountant", "all")...)
		if tc.all && o.Code != ExitOK || o.Result == nil {
			t.Errorf("%s --accountant all: exit %d: %s", tc.args, o.Code, stderr)
			continue
		}
		for _, r := range o.Result.(*Rows).Rows {
			if r.Accountant == "pld" && (r.Unsupported == "" || strings.Contains(r.Unsupported, "can bound")) {
				t.Errorf("%s --accountant all: pld row %+v, want unsupported without a hint", tc.args, r)
			}
			if r.Accountant == tc.alt && (r.Epsilon == nil && r.Delta == 0 || r.Unsupported != "" || r.Error != "") {
				t.Errorf("%s --accountant all: %s row %+v, want an answer", tc.args, tc.alt, r)
			}
		}
	}

	// Memory: a machine with 4 KiB free.
	avail := sysmem.Available
	sysmem.Available = func() (uint64, bool) { return 4 << 10, true }
	floor := sysmem.Floor
	sysmem.Floor = 0
	defer func() { sysmem.Floor = floor }()
	defer func() { sysmem.Available = avail }()
	_, stderr, o := execute("eps", "--sigma", "1", "--q", "0.01", "--steps", "1000")
	if o.Code != ExitFailed || !strings.Contains(stderr, "pld: unsupported: ") || !strings.Contains(stderr, "of memory") || !strings.Contains(stderr, "--accountant rdp") {
		t.Errorf("eps with 1 MiB of memory: exit %d, stderr %q; want 1, naming the memory and rdp", o.Code, stderr)
	}
}
