package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileBases are valid command lines; TestHostileNumbersOutput replaces the
// value of each numeric flag in turn by a non-finite spelling.
var hostileBases = []string{
	"sigma --eps 1 --delta 1e-5 --q 0.01 --steps 100 --tol 1e-3",
	"eps --sigma 1 --delta 1e-5 --q 0.01 --steps 100 --pld-grid 1e-3",
	"eps --sigma 1 --delta 1e-5 --batch 10 --n 1000 --epochs 1",
	"delta --sigma 1 --eps 1 --q 0.01 --epochs 1",
	"epochs --sigma 1 --q 0.01 --eps 1 --delta 1e-5 --max-steps 1000",
	"gaussian --eps 1 --delta 1e-5 --sensitivity 1",
	"audit --sigma 1 --eps 5 --delta 1e-5 --q 0.01 --steps 100",
	"profile --sigma 1 --q 0.01 --steps 100 --deltas 1e-5 --eps-range 1:2 --points 3 --fpr 0.1",
	"curve epochs --sigma 1 --q 0.01 --delta 1e-5 --from 1 --to 2 --points 2 --accountant rdp",
	"curve sigma --delta 1e-5 --eps 1:2 --points 2 --q 0.01 --steps 100 --accountant rdp",
	"moments --sigma 1 --q 0.01 --lambdas 1,2",
	"train --method dpsgd --hidden 4 --epochs 1 --quiet --sigma 1 --clip 1 --delta 1e-5 --lr 0.1 --lot 100 --accountant rdp",
}

// TestHostileNumbersOutput sweeps hostile numbers through every numeric flag,
// --schedule and --events and checks that nothing the CLI prints, on
// stdout or stderr, spells Inf or NaN (docs/cli.md: output never holds
// them), and that each is refused as bad input (exit code 2, one line).
// The hostile values are written in lower case, so a message that quotes
// the user's own text does not count; Go's %g spells the values it
// formats +Inf, -Inf and NaN. Before, 13 kinds of message printed them
// ("invalid --sigma: +Inf, want finite and > 0", "invalid --from/--to:
// 1..NaN", "--schedule phase 1: invalid sigma: +Inf").
func TestHostileNumbersOutput(t *testing.T) {
	dir := t.TempDir()
	check := func(args []string) {
		t.Helper()
		stdout, stderr, code := runCLI(args...)
		for _, bad := range []string{"Inf", "NaN"} {
			if strings.Contains(stdout, bad) || strings.Contains(stderr, bad) {
				t.Errorf("%q printed %q:\nstdout: %s\nstderr: %s", args, bad, stdout, stderr)
			}
		}
		if code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line", args, code, stderr)
		}
	}
	skip := map[string]bool{"--method": true, "--accountant": true, "--quiet": true, "--hidden": true}
	hostile := []string{"inf", "-inf", "+inf", "infinity", "nan", "1e400", "-1e400"}
	runs := 0
	for _, base := range hostileBases {
		words := strings.Fields(base)
		for i := 0; i+1 < len(words); i++ {
			if !strings.HasPrefix(words[i], "--") || skip[words[i]] || strings.HasPrefix(words[i+1], "--") {
				continue
			}
			vals := hostile
			switch words[i] {
			case "--eps-range", "--eps":
				if words[0] == "profile" || words[0] == "curve" && words[1] == "sigma" {
					vals = append(append([]string{}, hostile...), "1:inf", "nan:2", "1,inf", "1:1e400")
				}
			case "--lambdas", "--deltas", "--fpr":
				vals = append(append([]string{}, hostile...), "1,inf", "nan,1")
			}
			for _, v := range vals {
				args := append([]string{}, words...)
				args[i+1] = v
				check(args)
				check(append(args, "--json"))
				runs += 2
			}
		}
	}
	for _, sched := range []string{
		"sigma=inf,q=0.01,steps=10", "sigma=1,q=nan,steps=10", "sigma=1,q=0.01,epochs=1e400",
		"sigma=1,q=0.01,steps=1e400", "sigma=1,batch=10,n=inf,steps=10", "sigma=1e400,q=0.01,steps=10",
		"sigma=1,q=0.01,epochs=infinity", "sigma=-inf,q=0.01,steps=10",
		"sigma=1,q=0.5,steps=9e15; sigma=1,q=0.5,steps=9e15",
	} {
		check([]string{"eps", "--schedule", sched})
		check([]string{"delta", "--eps", "1", "--schedule", sched, "--json"})
		runs += 2
	}
	g := `{"class_name":"GaussianDpEvent","noise_multiplier":1}`
	for i, body := range []string{
		`{"class_name":"GaussianDpEvent","noise_multiplier":1e999}`,
		`{"class_name":"GaussianDpEvent","noise_multiplier":-1e999}`,
		`{"class_name":"GaussianDpEvent","noise_multiplier":nan}`,
		`{"class_name":"SelfComposedDpEvent","event":` + g + `,"count":1e999}`,
		`{"class_name":"SelfComposedDpEvent","event":` + g + `,"count":9007199254740993}`,
		`{"class_name":"ComposedDpEvent","events":[{"class_name":"SelfComposedDpEvent","event":` + g + `,"count":9007199254740992},` + g + `]}`,
		`{"class_name":"PoissonSampledDpEvent","sampling_probability":1e999,"event":` + g + `}`,
		`{"class_name":"EpsilonDeltaDpEvent","epsilon":1e999,"delta":0}`,
		`{"class_name":"ZCDpEvent","rho":-1e999}`,
	} {
		p := filepath.Join(dir, "e"+string(rune('a'+i))+".json")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		check([]string{"eps", "--events", p})
		check([]string{"delta", "--eps", "1", "--events", p, "--json"})
		runs += 2
	}
	t.Logf("%d hostile command lines", runs)
}

// TestLargeCountsPrintedExactly: counts past 2^53 are errors that print
// the count as the integer it is (they printed 9.007199254740992e+15 for
// 2^53 + 1, on both sides of the comparison).
func TestLargeCountsPrintedExactly(t *testing.T) {
	dir := t.TempDir()
	g := `{"class_name":"GaussianDpEvent","noise_multiplier":1}`
	total := filepath.Join(dir, "total.json")
	one := filepath.Join(dir, "one.json")
	os.WriteFile(total, []byte(`{"class_name":"ComposedDpEvent","events":[{"class_name":"SelfComposedDpEvent","event":`+g+`,"count":9007199254740992},`+g+`]}`), 0o600)
	os.WriteFile(one, []byte(`{"class_name":"SelfComposedDpEvent","event":`+g+`,"count":9007199254740993}`), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"eps", "--events", one}, "9007199254740993 is too large: want at most 9007199254740992 (2^53)"},
		{[]string{"eps", "--events", total}, "count = 9007199254740993 at Composed[1]/Gaussian, want a total of at most 9007199254740992 (2^53) steps"},
		{[]string{"eps", "--sigma", "1", "--q", "0.5", "--steps", "9007199254740993"}, "count = 9007199254740993 at SelfComposed, want a total of at most 9007199254740992 (2^53) steps"},
		{[]string{"eps", "--schedule", "sigma=1,q=0.5,steps=9007199254740992; sigma=1,q=0.5,steps=1"}, "count = 9007199254740993 at Composed[1]/SelfComposed/PoissonSampled/Gaussian, want a total of at most 9007199254740992 (2^53) steps"},
	} {
		_, stderr, code := runCLI(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "e+15") {
			t.Errorf("%q: exit %d, %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// countingReader yields prefix and then fill bytes up to n bytes in all,
// counting what was read.
type countingReader struct {
	prefix string
	fill   byte
	n, off int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	if r.off >= r.n {
		return 0, io.EOF
	}
	k := int64(len(p))
	if r.n-r.off < k {
		k = r.n - r.off
	}
	for i := int64(0); i < k; i++ {
		if r.off+i < int64(len(r.prefix)) {
			p[i] = r.prefix[r.off+i]
		} else {
			p[i] = r.fill
		}
	}
	r.off += k
	return int(k), nil
}

// TestEventsSizeCap: --events reads at most 64 MiB, from a file or stdin,
// and refuses more with a one-line error naming the flag and the limit
// (exit code 2); a file whose size is known is refused without reading
// it. Before, a 1 GiB string field was read whole and refused only after
// 37.5 s and 7.4 GB.
func TestEventsSizeCap(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	_, stderr, code := runCLI("eps", "--events", big)
	if want := "--events " + big + ": 1073741824 bytes; --events reads at most 64 MiB (67108864 bytes)"; code != 2 || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("1 GiB file: exit %d, %q; want 2 and %q", code, stderr, want)
	}

	saved := stdin
	t.Cleanup(func() { stdin = saved })
	for _, prefix := range []string{"", `{"class_name":"NoOpDpEvent","x":"`} {
		r := &countingReader{prefix: prefix, fill: 'a', n: 80 << 20}
		if prefix == "" {
			r.fill = ' '
		}
		stdin = r
		stdout, stderr, code := runCLI("eps", "--events", "-", "--json")
		want := "--events -: more than 67108864 bytes; --events reads at most 64 MiB (67108864 bytes)"
		if code != 2 || !strings.Contains(stderr, want) || !strings.Contains(stdout, `"error"`) {
			t.Errorf("80 MiB on stdin (%q…): exit %d, %q; want 2 and %q", prefix, code, stderr, want)
		}
		if r.off > 64<<20+1 {
			t.Errorf("80 MiB on stdin (%q…): read %d bytes, want at most 64 MiB + 1", prefix, r.off)
		}
	}
	// Under the cap, a string longer than any event needs is refused
	// before decoding.
	stdin = &countingReader{prefix: `{"class_name":"NoOpDpEvent","x":"`, fill: 'a', n: 2 << 20}
	if _, stderr, code := runCLI("eps", "--events", "-"); code != 2 || !strings.Contains(stderr, "--events -: event JSON at $: string at byte 32 longer than 1024 bytes") {
		t.Errorf("2 MiB string: exit %d, %q", code, stderr)
	}
}
