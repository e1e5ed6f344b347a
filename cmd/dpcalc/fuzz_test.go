package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Invariants every dpcalc invocation must keep, whatever its arguments:
//
//   - no panic (run recovers only its own exit sentinel);
//   - exit code 0, 1 or 2;
//   - on failure, stderr is exactly one line starting with "dpcalc: ";
//   - on success, stderr is empty or only "dpcalc: warning: " and
//     "dpcalc: note: " lines;
//   - with --json, stdout is exactly one valid JSON value (so it cannot
//     hold NaN or ±Inf, which JSON cannot spell, and no result may be
//     replaced by the encoder's "unsupported value" error), and on failure it is
//     either the {"error": …} object or a result that carries an "error";
//     it is one object of the one shape (cli.Output, no unknown field).
//
// checkRun returns a description of the first broken invariant, or "".
func checkRun(args []string, asJSON bool) (msg string, code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	stdout, stderr = o.String(), e.String()
	switch {
	case code < 0 || code > 2:
		return "exit code not in {0,1,2}", code, stdout, stderr
	case code != 0 && (!strings.HasPrefix(stderr, "dpcalc: ") || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n")):
		return "stderr on failure is not one line starting with \"dpcalc: \"", code, stdout, stderr
	case code == 0 && stderr != "" && !onlyWarnings(stderr):
		return "stderr on success holds more than \"dpcalc: warning: \" and \"dpcalc: note: \" lines", code, stdout, stderr
	}
	if strings.Contains(stderr, "unsupported value") {
		return "a NaN or ±Inf reached the JSON encoder (the result was lost)", code, stdout, stderr
	}
	if !asJSON {
		return "", code, stdout, stderr
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	var v any
	if err := dec.Decode(&v); err != nil {
		return "--json: stdout is not JSON: " + err.Error(), code, stdout, stderr
	}
	if dec.More() {
		return "--json: stdout holds more than one JSON value", code, stdout, stderr
	}
	res, err := parseOutput(stdout)
	switch {
	case err != nil:
		return "--json: stdout does not fit the one shape (cli.Output): " + err.Error(), code, stdout, stderr
	case code != 0 && res.Error == "":
		return "--json: failure without an \"error\" in stdout", code, stdout, stderr
	case code == 0 && (res.Error != "" || res.Command == "" || res.Rows == nil):
		return "--json: success without its command and rows, or with an \"error\"", code, stdout, stderr
	}
	if code == 2 {
		obj, ok := v.(map[string]any)
		if _, hasErr := obj["error"]; !ok || !hasErr || len(obj) != 1 {
			return "--json: bad input (exit 2) did not print exactly {\"error\": …}", code, stdout, stderr
		}
	}
	return "", code, stdout, stderr
}

func onlyWarnings(stderr string) bool {
	for _, l := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		if !strings.HasPrefix(l, "dpcalc: warning: ") && !strings.HasPrefix(l, "dpcalc: note: ") {
			return false
		}
	}
	return true
}

// fuzzFloat renders a float flag value: usually strconv's shortest form,
// sometimes a spelling kong or strconv treat specially.
func fuzzFloat(x float64, style uint8) string {
	switch style % 8 {
	case 5:
		return strconv.FormatFloat(x, 'e', -1, 64)
	case 6:
		return strconv.FormatFloat(x, 'x', -1, 64) // hex float: 0x1p-02
	case 7:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// pldSlow: `dpcalc eps --sigma 0.54 --q 6.6e-6 --steps 13 --delta 2e-5
// --accountant pld` takes 22 s; calibrating σ with pld at q = 1e-3 several.
//
// pldGridSlow: the pld accountant's cost grows about 15-fold per decade of
// --pld-grid below 1e-3 (3 steps at σ = 1, q = 0.5: 0.13 s at 1e-3, 2 s at
// 1e-4, 34 s at 1e-5), and --pld-grid accepts any width in (0, 1]; the
// fuzzer keeps to widths >= 1e-3.

var fuzzAccountants = []string{"rdp", "ma", "zcdp", "ac", "dpd-ac", "dpd-zcdp", "pld", "all", "ma,ac,pld", "", "bogus"}

// fuzzArgs builds a command line for one of the cheap commands from fuzzed
// values. The cost of one execution is bounded: at most 1e4 steps, 50
// curve points, 1e4 --max-steps. It returns nil for inputs it skips.
func fuzzArgs(dir string, cmd uint8, a, b, c, d float64, n int64, s string, flags uint16) []string {
	str := func(x float64) string { return fuzzFloat(x, uint8(flags>>8)) }
	acct := fuzzAccountants[int(flags>>4)%len(fuzzAccountants)]
	if flags&0x8000 != 0 {
		acct = s
	}
	// The pld accountant can take tens of seconds at small σ or q (see
	// pldSlow), past the fuzzer's 10 s limit per input: keep it to cheap
	// parameters, and out of the searches (sigma, epochs, curve sigma),
	// which evaluate it at σ down to 1e-3.
	steps := n
	if flags&3 == 0 && b > 0 {
		steps = int64(math.Ceil(c / b))
	}
	pldOK := a >= 0.3 && b >= 1e-2 && steps <= 1000
	usesPLD := strings.Contains(acct, "pld") || strings.Contains(acct, "all")
	if usesPLD && (!pldOK || cmd%13 == 0 || cmd%13 == 3 || cmd%13 == 7) {
		acct = "rdp"
	}
	// length flags: --epochs or --steps, or both, or neither
	length := func(q float64) ([]string, bool) {
		switch flags & 3 {
		case 0:
			if q > 0 && c/q > 1e4 {
				return nil, false
			}
			return []string{"--epochs", str(c)}, true
		case 1:
			if n > 1e4 {
				return nil, false
			}
			return []string{"--steps", strconv.FormatInt(n, 10)}, true
		case 2:
			return []string{"--epochs", str(c), "--steps", strconv.FormatInt(n, 10)}, true
		}
		return nil, true
	}
	var args []string
	switch cmd % 13 {
	case 0: // sigma
		l, ok := length(b)
		if !ok {
			return nil
		}
		args = append([]string{"sigma", "--eps", str(a), "--q", str(b), "--delta", str(d), "--accountant", acct}, l...)
		if flags&4 != 0 {
			args = append(args, "--tol", str(math.Abs(a-d)))
		}
	case 1: // eps
		l, ok := length(b)
		if !ok {
			return nil
		}
		args = append([]string{"eps", "--sigma", str(a), "--q", str(b), "--delta", str(d), "--accountant", acct}, l...)
		if flags&4 != 0 {
			if d > 0 && d < 1e-3 {
				return nil // see pldGridSlow
			}
			args = append(args, "--pld-grid", str(d))
		}
	case 2: // delta
		l, ok := length(b)
		if !ok {
			return nil
		}
		args = append([]string{"delta", "--sigma", str(a), "--q", str(b), "--eps", str(d), "--accountant", acct}, l...)
	case 3: // epochs
		if n > 1e4 {
			return nil
		}
		args = []string{"epochs", "--sigma", str(a), "--q", str(b), "--eps", str(c), "--delta", str(d), "--accountant", acct, "--max-steps", strconv.FormatInt(n, 10)}
	case 4: // gaussian
		args = []string{"gaussian", "--eps", str(a), "--delta", str(d)}
		if flags&4 != 0 {
			args = append(args, "--sensitivity", str(b))
		}
	case 5, 6: // curve epochs
		if b > 0 && c/b > 1e4 {
			return nil
		}
		pts := strconv.FormatInt(n%51, 10)
		args = []string{"curve", "epochs", "--sigma", str(a), "--q", str(b), "--delta", str(d), "--from", str(c / 2), "--to", str(c), "--points", pts, "--accountant", acct}
		if cmd%13 == 6 {
			args = append(args, "--csv")
		}
		if flags&4 != 0 {
			// The name stays inside dir: no separators, no "..".
			name := strings.NewReplacer("/", "_", "\\", "_", "..", "_").Replace(s)
			args = append(args, "--plot", filepath.Join(dir, "plot"+name))
		}
	case 7: // curve sigma
		l, ok := length(b)
		if !ok {
			return nil
		}
		pts := strconv.FormatInt(n%51, 10)
		eps := s
		if flags&4 != 0 {
			eps = str(a) + ":" + str(c)
		}
		args = append([]string{"curve", "sigma", "--q", str(b), "--delta", str(d), "--eps", eps, "--points", pts, "--accountant", acct}, l...)
		if pts == "0" { // the default 40 points: keep it cheap
			args = append(args, "--points", "3")
		}
	case 8: // audit (always pld)
		l, ok := length(b)
		if !ok || !pldOK {
			return nil
		}
		args = append([]string{"audit", "--sigma", str(a), "--q", str(b), "--eps", str(c), "--delta", str(d)}, l...)
		if flags&4 != 0 {
			if d > 0 && d < 1e-3 {
				return nil // see pldGridSlow
			}
			args = append(args, "--pld-grid", str(d))
		}
	case 9: // moments
		args = []string{"moments", "--sigma", str(a), "--q", str(b), "--lambdas", s}
	case 10: // data verify: the embedded set, or an idx set in an empty or fuzzed directory
		name := []string{"digits", "mnist", "fashion-mnist", s}[flags&3]
		args = []string{"data", "verify", name, "--dir", filepath.Join(dir, "nodata")}
	case 12: // train on the embedded DIGITS, tiny: ≤ 16 hidden units, 1 epoch
		methods := []string{"np", "dpsgd", "dpd", "dpvd", "sgld"}
		accts := []string{"zcdp", "ac", "dpd-ac", "dpd-zcdp", "rdp"}
		args = []string{"train", "--method", methods[flags%5], "--accountant", accts[(flags>>3)%5],
			"--hidden", strconv.FormatInt(n%17, 10), "--epochs", "1", "--quiet",
			"--lot", strconv.FormatInt(int64(uint64(n>>8)%2000)-100, 10), "--clip", str(b), "--delta", str(d)}
		if flags&0x40 != 0 {
			args = append(args, "--sigma", str(a))
		}
		if flags&0x80 != 0 {
			args = append(args, "--eps", str(c))
		}
		if flags&0x100 != 0 {
			args = append(args, "--lr", str(c))
		}
		if flags&0x200 != 0 {
			args = append(args, "--pca", strconv.FormatInt((n>>20)%70, 10), "--pca-sigma", str(a))
		}
		if flags&0x400 != 0 {
			args = append(args, "--batch", strconv.FormatInt((n>>32)%50, 10))
		}
		if flags&0x800 != 0 {
			args = append(args, "--log-json", filepath.Join(dir, "log.jsonl"), "--checkpoint", filepath.Join(dir, "run.ckpt"))
		}
	case 11: // free-form: fuzzed words, split on spaces (the parser's own errors)
		for _, w := range []string{"train", "fetch", "plot", "help", "-h", "version", "curve", "max", "audit", "grid", "pld", "all"} {
			if strings.Contains(s, w) {
				// train and fetch are not cheap or need the network, --plot
				// writes where it is told, help and --version are not JSON;
				// curves and audits are covered above with bounded costs.
				return nil
			}
		}
		fields := strings.Fields(s)
		if len(fields) > 0 && fields[0] == "epochs" {
			return nil // default --max-steps is 1e9
		}
		for _, w := range fields {
			_, v, _ := strings.Cut(w, "=")
			if v == "" {
				v = w
			}
			if x, err := strconv.ParseFloat(v, 64); err == nil && x != 0 && (math.Abs(x) > 1e4 || math.Abs(x) < 1e-3) {
				return nil // could mean ~1e9 steps
			}
		}
		// --json goes first so that no flag can swallow it as its value.
		args = append([]string{"--json"}, fields...)
	}
	return args
}

func FuzzRun(f *testing.F) {
	// Seeds: one valid call per command, then the classic bad inputs.
	inf, nan := math.Inf(1), math.NaN()
	type seed struct {
		cmd        uint8
		a, b, c, d float64
		n          int64
		s          string
		flags      uint16
	}
	for _, sd := range []seed{
		{0, 1, 0.01, 3, 1e-5, 0, "", 0},
		{1, 1.1, 0.01, 3, 1e-5, 0, "", 0},
		{1, 1.1, 0.01, 3, 1e-5, 100, "", 1},
		{2, 1.1, 0.01, 3, 1, 0, "", 0},
		{3, 1.1, 0.01, 3, 1e-5, 1000, "", 0},
		{4, 1, 1, 0, 1e-5, 0, "", 4},
		{5, 1.1, 0.01, 3, 1e-5, 10, "", 0},
		{6, 1.1, 0.01, 3, 1e-5, 10, "", 0x70},
		{7, 0.5, 0.01, 4, 1e-5, 3, "0.5,1,2", 0},
		{8, 1.1, 0.01, 3, 1e-5, 0, "", 0},
		{9, 1.1, 0.01, 0, 0, 0, "1,2,4", 0},
		{10, 0, 0, 0, 0, 0, "", 0},
		{10, 0, 0, 0, 0, 0, "", 1},
		{11, 0, 0, 0, 0, 0, "eps --sigma 1 --q 0.5 --steps 3 --json", 0},
		{11, 0, 0, 0, 0, 0, "--json eps --sigma=-1 --q=0.5 --steps=3", 0},
		{1, -1, 0.01, 3, 1e-5, 0, "", 0},
		{1, 0, 0.01, 3, 1e-5, 0, "", 0},
		{1, nan, 0.01, 3, 1e-5, 0, "", 0},
		{1, inf, 0.01, 3, 1e-5, 0, "", 0},
		{1, 1, 0, 3, 1e-5, 0, "", 0},
		{1, 1, 1.5, 3, 1e-5, 0, "", 0},
		{1, 1, 0.5, 3, 0, 0, "", 0},
		{1, 1, 0.5, 3, 1, 0, "", 0},
		{1, 1, 0.5, 3, nan, 0, "", 0},
		{1, 1, 0.5, 3, 1e-5, -3, "", 1},
		{1, 1, 0.5, 3, 1e-5, 3, "", 2},
		{1, 1, 0.5, 3, 1e-5, 3, "", 3},
		{0, -2, 0.5, 3, 1e-5, 0, "", 0},
		{0, 1, 0.5, 3, 1e-5, 0, "", 4},
		{4, 1, 0, 0, 1e-300, 0, "", 4},
		{4, 1e300, 1e300, 0, 0.5, 0, "", 4},
		{5, 1, 0.5, inf, 1e-5, 10, "", 0},
		{5, 1, 0.5, 3, 1e-5, 10, ".png", 4},
		{5, 1, 0.5, 3, 1e-5, 10, ".gif", 4},
		{7, 1, 0.5, 3, 1e-5, 10, "2:1", 0},
		{7, 1, 0.5, 3, 1e-5, 10, "nan", 0},
		{3, 1, 0.5, 3, 1e-5, 0, "", 0},
		{1, 1, 0.5, 3, 1e-5, 0, "ma,zz", 0x8000},
		{1, 1e-300, 1e-300, 1e-300, 1e-300, 0, "", 0x500},
		{1, 1, 0.5, 3, 1e-5, 0, "", 0x600},
		{12, 1.1, 4, 1, 1e-5, 5 + 60<<8, "", 0x41},
		{12, 1.1, 4, 2, 1e-5, 5 + 60<<8, "", 0x89},
		{12, 1.1, 4, 0.1, 1e-5, 3 + 600<<8, "", 0x100},
		{12, 4, 4, 2, 1e-5, 3 + 600<<8 + 10<<20, "", 0xA41},
		{12, 1, 1e200, 1e308, 1e-5, 3 + 60<<8 + 5<<32, "", 0x5C2},
	} {
		f.Add(sd.cmd, sd.a, sd.b, sd.c, sd.d, sd.n, sd.s, sd.flags, true)
		f.Add(sd.cmd, sd.a, sd.b, sd.c, sd.d, sd.n, sd.s, sd.flags, false)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, cmd uint8, a, b, c, d float64, n int64, s string, flags uint16, asJSON bool) {
		args := fuzzArgs(dir, cmd, a, b, c, d, n, s, flags)
		if args == nil {
			t.Skip("input too expensive or out of scope")
		}
		if asJSON && args[0] != "--json" {
			// First, as a global flag: appended last it could land after a
			// fuzzed "--" (end of flags) and rightly not count as --json.
			args = append([]string{"--json"}, args...)
		}
		if args[0] == "--json" {
			asJSON = true
		}
		if msg, code, stdout, stderr := checkRun(args, asJSON); msg != "" {
			t.Fatalf("dpcalc %q: %s\nexit %d\nstdout: %s\nstderr: %s", args, msg, code, stdout, stderr)
		}
		// A --plot file is either absent or complete; no temporary left behind.
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.Contains(e.Name(), ".tmp-") {
				t.Fatalf("dpcalc %q left a temporary file %s", args, e.Name())
			}
		}
	})
}
