package browsertest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/internal/cli"
	"github.com/dpcalc/dpcalc/internal/render"
	"github.com/dpcalc/dpcalc/internal/testenv"
	"github.com/dpcalc/dpcalc/web/engine"
)

// chromiumArgs are what headless Chromium needs as root on a machine whose
// only network is loopback.
var chromiumArgs = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-dev-shm-usage", "--window-size=1200,1600",
}

func lookPath(env, def string) string {
	if p := os.Getenv(env); p != "" {
		return p
	}
	if p, err := exec.LookPath(def); err == nil {
		return p
	}
	return ""
}

type harness struct {
	t   *testing.T
	bin string // the dpcalc binary
	// portable is dpcalc built with Go's portable math (see
	// portableOverlay): the same float operations as wasm.
	portable string
	site     string  // the built site
	maxRel   float64 // largest relative difference from the native CLI
	maxRelAt string
	url      string // where dpcalc serve serves it
	d        *driver
}

func setup(t *testing.T) *harness {
	if os.Getenv("DPCALC_BROWSER_TEST") == "" {
		t.Skip("set DPCALC_BROWSER_TEST=1 to run the page in headless Chromium (.ci/run does)")
	}
	chromium := lookPath("CHROMIUM", "chromium")
	chromedriver := lookPath("CHROMEDRIVER", "chromedriver")
	if chromium == "" || chromedriver == "" {
		t.Fatalf("DPCALC_BROWSER_TEST is set but chromium (%q) or chromedriver (%q) is missing: apt-get install chromium chromium-driver", chromium, chromedriver)
	}
	h := &harness{t: t}
	tmp := t.TempDir()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	h.site = filepath.Join(tmp, "site")
	if out, err := exec.Command("bash", filepath.Join(root, "scripts", "build-web.sh"), h.site).CombinedOutput(); err != nil {
		t.Fatalf("build-web.sh: %v\n%s", err, out)
	}
	h.bin = filepath.Join(tmp, "dpcalc")
	build := exec.Command("go", "build", "-o", h.bin, "./cmd/dpcalc")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	h.portable = filepath.Join(tmp, "dpcalc-portable")
	build = exec.Command("go", "build", "-overlay", portableOverlay(t, tmp), "-o", h.portable, "./cmd/dpcalc")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build with portable math: %v\n%s", err, out)
	}

	// dpcalc serve on a random loopback port: the test serves the page the
	// way a user does.
	serve := exec.Command(h.bin, "serve", "--dir", h.site, "--addr", "127.0.0.1:0")
	stdout, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	serve.Stderr = os.Stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Process.Signal(os.Interrupt)
		var ee *exec.ExitError
		if err := serve.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("dpcalc serve did not stop on SIGINT with exit code 130: %v", err)
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("dpcalc serve: %v", err)
	}
	m := regexp.MustCompile(`http://\S+/`).FindString(line)
	if m == "" {
		t.Fatalf("dpcalc serve printed %q, want its URL", line)
	}
	h.url = m

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cd := exec.Command(chromedriver, "--port="+strconv.Itoa(port))
	if err := cd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cd.Process.Kill(); cd.Wait() })
	wd := fmt.Sprintf("http://127.0.0.1:%d", port)
	for i := 0; ; i++ {
		if resp, err := http.Get(wd + "/status"); err == nil {
			resp.Body.Close()
			break
		}
		if i > 600 {
			t.Fatal("chromedriver did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	args := append(slices.Clone(chromiumArgs), "--user-data-dir="+filepath.Join(tmp, "profile"))
	h.d = newSession(t, wd, chromium, args)
	return h
}

// portableOverlay writes a go build -overlay file that removes the
// assembly versions of math.Exp, math.Log and math.Hypot for this GOARCH,
// so that a native binary computes with the same portable Go code that a
// GOOS=js GOARCH=wasm build uses. On amd64 the assembly Exp and Log differ
// from the portable ones in the last bit for some arguments, enough to
// move pld's certified lower end by ~1e-7 relative (docs/web.md).
func portableOverlay(t *testing.T, dir string) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src", "math")
	replace := map[string]string{}
	for _, f := range []struct{ file, name, params string }{
		{"exp", "Exp", "x float64"}, {"log", "Log", "x float64"}, {"hypot", "Hypot", "p, q float64"},
	} {
		asmGo := filepath.Join(src, f.file+"_asm.go")
		if _, err := os.Stat(asmGo); err != nil {
			t.Fatalf("portable math overlay: %v (Go's math package layout changed: update portableOverlay)", err)
		}
		stub := filepath.Join(dir, f.file+"_asm.go")
		code := fmt.Sprintf("package math\n\nconst haveArch%s = false\n\nfunc arch%s(%s) float64 { panic(\"not implemented\") }\n", f.name, f.name, f.params)
		if err := os.WriteFile(stub, []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
		replace[asmGo] = stub
		if s := filepath.Join(src, f.file+"_"+runtime.GOARCH+".s"); fileExists(s) {
			replace[s] = ""
		}
	}
	b, _ := json.Marshal(map[string]any{"Replace": replace})
	p := filepath.Join(dir, "portable-math-overlay.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// run runs bin with args (and --json when asJSON) and returns its stdout
// and exit code.
func (h *harness) run(bin string, args []string, asJSON bool) (string, int) {
	h.t.Helper()
	if asJSON {
		args = append(slices.Clone(args), "--json")
	}
	cmd := exec.Command(bin, args...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		h.t.Fatalf("dpcalc %v: %v", args, err)
	}
	return stdout.String(), code
}

// versionField is the "version" of a JSON output: the page's engine and
// the test's binaries are different builds.
var versionField = regexp.MustCompile(`"version": "[^"]*"`)

func stripVersion(s string) string { return versionField.ReplaceAllString(s, `"version": ""`) }

// pageAnswer is what the page shows and the answer it shows it from
// (web/engine.Answer).
type pageAnswer struct {
	Args    []string   `json:"args"`
	Command string     `json:"command"`
	Exit    int        `json:"exit"`
	Error   string     `json:"error"`
	Flag    string     `json:"flag"`
	Failure string     `json:"failure"`
	JSON    string     `json:"json"`
	Doc     render.Doc `json:"doc"`
}

// settle waits until the page shows the answer to its current inputs and
// returns that answer.
func (h *harness) settle() pageAnswer {
	h.t.Helper()
	h.d.waitFor("the result of the current inputs",
		`return document.body.dataset.shown !== undefined && document.body.dataset.shown === document.getElementById("cmdline").textContent;`)
	var a pageAnswer
	h.d.exec(&a, `return window.dpcalcLast;`)
	var cmdline string
	h.d.exec(&cmdline, `return document.getElementById("cmdline").textContent;`)
	if want := engine.CommandLine(a.Args); cmdline != want || a.Command != want {
		h.t.Errorf("page shows %q for %q (answer %q), want %q", cmdline, a.Args, a.Command, want)
	}
	return a
}

// pageDoc is what the page shows of a result: its lines and tables.
const pageDoc = `
const out = [];
for (const el of document.getElementById("result").children) {
  if (el.tagName === "P" && el.classList.contains("line")) out.push({text: el.textContent});
  if (el.tagName === "TABLE") out.push({table: {
    header: [...el.querySelectorAll("thead th")].map((c) => c.textContent),
    rows: [...el.querySelectorAll("tbody tr")].map((tr) => ({cells: [...tr.children].map((c) => c.textContent)}))}});
}
return out;`

// textDoc reads the command line's table view back into lines and cells.
func textDoc(s string) render.Doc {
	var d render.Doc
	var t *render.Table
	header := false
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "┌"):
			t, header = &render.Table{Rows: []render.Row{}}, true
			d = append(d, render.Block{Table: t})
		case strings.HasPrefix(l, "├"):
			header = false
		case strings.HasPrefix(l, "└"):
			t = nil
		case t != nil && strings.HasPrefix(l, "│"):
			var cells []string
			for _, c := range strings.Split(strings.Trim(l, "│"), "│") {
				cells = append(cells, strings.TrimSpace(c))
			}
			if header {
				t.Header = cells
			} else {
				t.Rows = append(t.Rows, render.Row{Cells: cells})
			}
		default:
			d = append(d, render.Block{Text: l})
		}
	}
	return d
}

// cellsOf drops what the page does not print (row classes and keys).
func cellsOf(d render.Doc) render.Doc {
	out := render.Doc{}
	for _, b := range d {
		if b.Table != nil {
			t := &render.Table{Header: b.Table.Header, Rows: []render.Row{}}
			for _, r := range b.Table.Rows {
				t.Rows = append(t.Rows, render.Row{Cells: r.Cells})
			}
			b = render.Block{Table: t}
		}
		out = append(out, b)
	}
	return out
}

// check compares what the page shows with the command line for the same
// arguments: its --json output byte for byte (the portable-math binary)
// and within nativeTol (the native one), the exit code, the table view
// cell for cell, or the error beside the field it is about.
func (h *harness) check(label string) pageAnswer {
	t := h.t
	t.Helper()
	a := h.settle()
	out, code := h.run(h.portable, a.Args, true)
	if a.Exit != code {
		t.Errorf("%s: page's exit code %d, CLI %d", label, a.Exit, code)
	}
	if stripVersion(a.JSON) != stripVersion(out) {
		t.Errorf("%s: dpcalc %s --json:\npage:\n%s\nCLI:\n%s", label, strings.Join(a.Args, " "), a.JSON, out)
	}
	if code == 2 {
		var e struct {
			Error string `json:"error"`
		}
		json.Unmarshal([]byte(out), &e)
		var shown string
		h.d.exec(&shown, `const f = arguments[0];
const el = document.getElementById("err-" + f);
const beside = el && !el.closest(".field").classList.contains("hidden") ? el.textContent : "";
return beside || document.getElementById("error").textContent;`, a.Flag)
		if shown != e.Error || a.Error != e.Error {
			t.Errorf("%s: page shows error %q beside --%s (answer %q), CLI says %q", label, shown, a.Flag, a.Error, e.Error)
		}
		t.Logf("%s: dpcalc %s → %q beside --%s", label, strings.Join(a.Args, " "), shown, a.Flag)
		return a
	}
	var shown render.Doc
	h.d.exec(&shown, pageDoc)
	text, _ := h.run(h.portable, a.Args, false)
	if want := textDoc(text); !reflect.DeepEqual(shown, want) || !reflect.DeepEqual(cellsOf(a.Doc), want) {
		g, _ := json.MarshalIndent(shown, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("%s: page shows\n%s\nCLI prints\n%s\n%s", label, g, w, text)
	}
	native, _ := h.run(h.bin, a.Args, true)
	h.compareNative(label, a.JSON, native)
	t.Logf("%s: dpcalc %s: page = CLI", label, strings.Join(a.Args, " "))
	return a
}

// nativeTol bounds the relative difference between the page (wasm, Go's
// portable math) and the native CLI (amd64 assembly math.Exp and
// math.Log). Last-bit differences move pld's adaptive discretisation: its
// δ differed by up to 4.7e-5 and its certified lower end by 1.6e-6
// (relative) in the runs docs/web.md reports; everything else agreed to
// ~1e-15.
const nativeTol = 1e-4

// compareNative compares the page's JSON with the native CLI's: the same
// tree, numbers within nativeTol (relative); h.maxRel records the largest
// difference.
func (h *harness) compareNative(label, page, native string) {
	var p, n any
	if err := json.Unmarshal([]byte(page), &p); err != nil {
		h.t.Fatalf("%s: page's JSON: %v", label, err)
	}
	if err := json.Unmarshal([]byte(native), &n); err != nil {
		h.t.Fatalf("%s: native CLI's JSON: %v", label, err)
	}
	var walk func(at string, p, n any)
	walk = func(at string, p, n any) {
		switch pv := p.(type) {
		case map[string]any:
			nv, ok := n.(map[string]any)
			if !ok || len(nv) != len(pv) {
				h.t.Errorf("%s %s: page %v, native CLI %v", label, at, p, n)
				return
			}
			for k, v := range pv {
				if k != "version" {
					walk(at+"."+k, v, nv[k])
				}
			}
		case []any:
			nv, ok := n.([]any)
			if !ok || len(nv) != len(pv) {
				h.t.Errorf("%s %s: page %v, native CLI %v", label, at, p, n)
				return
			}
			for i := range pv {
				walk(fmt.Sprintf("%s[%d]", at, i), pv[i], nv[i])
			}
		case float64:
			nv, ok := n.(float64)
			rel := 0.0
			if ok && pv != nv {
				rel = math.Abs(pv-nv) / math.Max(math.Abs(pv), math.Abs(nv))
			}
			if !ok || !(rel <= nativeTol) {
				h.t.Errorf("%s %s: page %v, native CLI %v: relative difference %g > %g", label, at, p, n, rel, nativeTol)
			}
			if rel > h.maxRel {
				h.maxRel, h.maxRelAt = rel, fmt.Sprintf("%s %s: page %v, native CLI %v", label, at, pv, nv)
			}
		default:
			if !reflect.DeepEqual(p, n) {
				h.t.Errorf("%s %s: page %v, native CLI %v", label, at, p, n)
			}
		}
	}
	walk("", p, n)
}

// checkCurves waits for both plots and compares each drawn series' point
// count with the finite points of the CLI's curve for the command line
// printed under the plot.
func (h *harness) checkCurves(label string) {
	t := h.t
	t.Helper()
	for _, id := range []string{"plot-epochs", "plot-sigma"} {
		h.d.waitFor(id, `const el = document.getElementById(arguments[0]);
return el.dataset.state === "done" && !!el.dataset.command;`, id)
		var got struct {
			Command string
			Series  map[string]int
		}
		h.d.exec(&got, `const el = document.getElementById(arguments[0]);
const s = {};
for (const p of el.querySelectorAll("polyline.series")) s[p.dataset.accountant] = Number(p.dataset.n);
return {command: el.dataset.command, series: s};`, id)
		words := strings.Fields(got.Command)
		if len(words) < 3 || words[0] != "dpcalc" || words[1] != "curve" {
			t.Fatalf("%s: plot command %q", id, got.Command)
		}
		for i := range words {
			words[i] = trimQuotes(words[i])
		}
		out, _ := h.run(h.portable, words[1:], true)
		var c cli.Output
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			t.Fatalf("%s: %v", got.Command, err)
		}
		// One row per point: ε at epochs (curve epochs), σ at ε (curve sigma).
		want := map[string]int{}
		val := func(p *float64) float64 {
			if p == nil {
				return 0
			}
			return *p
		}
		for _, r := range c.Rows {
			x, y := val(r.Epochs), val(r.Epsilon)
			if c.Command == "curve sigma" {
				x, y = val(r.Epsilon), val(r.Sigma)
			}
			if r.Error == "" && x > 0 && y > 0 {
				want[r.Accountant]++
			}
		}
		if !reflect.DeepEqual(got.Series, want) {
			t.Errorf("%s %s: page draws %v points per series, CLI %s has %v", label, id, got.Series, got.Command, want)
		}
		t.Logf("%s %s: %s: %v points", label, id, got.Command, got.Series)
	}
}

// checkPending checks the page's pending-work indicator (#pending) once
// the curves are drawn: while they were computed it was visible and named
// each curve still pending (the page's log of what it showed,
// window.dpcalcPending, since the indicator may come and go between two
// polls), it named the table while that was computed, and now it is empty
// and hidden.
func (h *harness) checkPending(label string) {
	t := h.t
	t.Helper()
	var log []struct {
		Keys    []string
		Text    string
		Visible bool
	}
	h.d.exec(&log, `return window.dpcalcPending;`)
	sawCurves, sawTable := false, false
	for _, e := range log {
		if e.Visible && slices.Contains(e.Keys, "curve-epochs") && slices.Contains(e.Keys, "curve-sigma") &&
			strings.Contains(e.Text, "the curve ε against epochs") && strings.Contains(e.Text, "the curve σ against target ε") {
			sawCurves = true
		}
		if e.Visible && slices.Contains(e.Keys, "table") && strings.Contains(e.Text, "the table") {
			sawTable = true
		}
	}
	if !sawCurves || !sawTable {
		t.Errorf("%s: #pending never showed both curves (%v) or the table (%v) as pending while visible; log %+v", label, sawCurves, sawTable, log)
	}
	var now struct {
		Text    string
		Visible bool
		Busy    string
	}
	h.d.exec(&now, `const el = document.getElementById("pending");
return {text: el.textContent, visible: el.getClientRects().length > 0, busy: el.getAttribute("aria-busy")};`)
	if now.Text != "" || now.Visible || now.Busy != "false" {
		t.Errorf("%s: #pending after the curves were drawn: %+v, want empty, hidden and not busy", label, now)
	}
	if len(log) == 0 || len(log[len(log)-1].Keys) != 0 {
		t.Errorf("%s: the last pending state is not empty: %+v", label, log)
	}
	h.d.exec(nil, `window.dpcalcPending.length = 0; return 0;`)
}

func TestPage(t *testing.T) {
	h := setup(t)
	d := h.d

	// First visit: no query string, the example.
	navStart := time.Now()
	d.navigate(h.url)
	h.check("first visit")
	var stats struct {
		FirstResult float64 `json:"firstResult"`
		CompileMs   float64 `json:"compileMs"`
	}
	d.exec(&stats, `return window.dpcalcStats;`)
	t.Logf("time to first result: %.0f ms after navigation start (wasm fetch+compile %.0f ms); test's wall clock %.0f ms",
		stats.FirstResult, stats.CompileMs, float64(time.Since(navStart).Milliseconds()))
	h.checkCurves("first visit")
	h.checkPending("first visit")

	// The page's flags and accountants are the engine's.
	model, err := engine.Describe()
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Flags  map[string][]string
		Inputs []string
		Menu   []string
	}
	d.exec(&page, `return {flags: window.dpcalcFlags,
inputs: [...document.querySelectorAll(".field[data-flag]")].map((el) => el.dataset.flag),
menu: [...document.getElementById("accountant").options].map((o) => o.value)};`)
	for _, cmd := range []string{"eps", "delta", "sigma", "epochs", "audit"} {
		var want []string
		for _, f := range model.Commands[cmd].Flags {
			if slices.Contains(page.Inputs, f.Name) {
				want = append(want, f.Name)
			}
		}
		if !slices.Equal(page.Flags[cmd], want) {
			t.Errorf("the page's flags of %s are %v, the engine's %v", cmd, page.Flags[cmd], want)
		}
	}
	if want := append(append([]string{""}, registry.Names()...), "all"); !slices.Equal(page.Menu, want) {
		t.Errorf("the page's accountant menu is %v, the registry's %v", page.Menu, want)
	}

	// The setting the issue quotes (ε = 74.9 elsewhere).
	d.fill("sigma", "1.2")
	d.fill("q", "0.00256")
	d.fill("epochs", "50")
	d.fill("delta", "1e-10")
	h.check("issue setting")
	d.choose("accountant", "pld")
	h.check("pld")
	d.choose("ac-sampling", "linear")
	d.choose("accountant", "ac")
	h.check("ac linear")
	d.choose("ac-sampling", "")

	d.choose("cmd", "delta")
	d.fill("eps", "2")
	d.choose("accountant", "all")
	h.check("delta")

	d.choose("cmd", "sigma")
	d.fill("eps", "1")
	d.fill("epochs", "")
	d.fill("steps", "1000")
	d.fill("q", "0.01")
	d.fill("delta", "1e-5")
	h.check("sigma")
	h.checkCurves("sigma")
	h.checkPending("sigma")

	d.choose("cmd", "epochs")
	d.fill("sigma", "1.1")
	d.fill("eps", "2")
	h.check("epochs")

	// Training plans: a schedule of two phases (the DPD procedures say why they
	// cannot bound it), batch and n under replace-one (unsupported rows).
	d.choose("cmd", "eps")
	for _, f := range []string{"sigma", "q", "epochs", "steps"} {
		d.fill(f, "")
	}
	d.fill("schedule", "sigma=1,q=0.01,steps=5000; sigma=2,q=0.02,steps=3000")
	d.choose("accountant", "all")
	h.check("schedule")
	d.fill("schedule", "")
	d.fill("sigma", "1")
	d.fill("batch", "256")
	d.fill("n", "60000")
	d.fill("epochs", "2")
	d.choose("adjacency", "replace-one")
	h.check("replace-one")
	d.choose("adjacency", "")
	d.choose("accountant", "")
	for _, f := range []string{"batch", "n", "epochs"} {
		d.fill(f, "")
	}
	d.fill("sigma", "1.1") // the epochs step's state again
	d.fill("q", "0.01")
	d.fill("steps", "1000")
	d.choose("cmd", "epochs")

	d.choose("cmd", "audit")
	d.fill("sigma", "1.2")
	d.fill("q", "0.00256")
	d.fill("steps", "")
	d.fill("epochs", "50")
	d.fill("delta", "1e-10")
	d.fill("eps", "2.5")
	h.check("audit holds")
	d.fill("eps", "2.1")
	h.check("audit violated")

	// Bad input: the CLI's message, beside the field.
	d.choose("cmd", "eps")
	d.fill("sigma", "-1")
	h.check("negative sigma")
	// The curves of the previous (valid) inputs may still be computing:
	// once the curve worker is idle, no plot has appeared for them.
	d.waitFor("the curve worker to be idle", `return window.dpcalcRunners.curves.busySince === 0;`)
	var plots string
	d.exec(&plots, `return document.getElementById("plot-epochs").innerHTML + document.getElementById("plot-sigma").innerHTML;`)
	if plots != "" {
		t.Errorf("plots shown beside an error: %.200s", plots)
	}
	d.fill("sigma", "abc")
	h.check("sigma not a number")
	d.fill("sigma", "")
	h.check("missing sigma")
	d.fill("sigma", "1")
	d.fill("q", "1.5")
	h.check("q above one")
	d.fill("q", "0.01")
	d.fill("steps", "5")
	h.check("epochs and steps")
	d.fill("steps", "")
	d.fill("delta", "1")
	h.check("delta one")
	d.fill("delta", "1e-5")
	d.fill("pld-grid", "2")
	h.check("pld grid")
	d.fill("pld-grid", "")
	d.choose("cmd", "sigma")
	d.fill("tol", "0.5")
	h.check("tol")
	d.fill("tol", "")

	// A shared link holds the whole computation, bad values included.
	d.navigate(h.url + "?cmd=eps&sigma=4&q=0.01&epochs=100&accountant=foo")
	h.check("link with a bad accountant")
	d.navigate(h.url + "?cmd=delta&sigma=2&eps=0.5&q=0.05&steps=300&accountant=all")
	h.check("link")

	// Typing: every keystroke is a query; only the last one's answer shows.
	d.choose("cmd", "eps")
	e := d.element("#sigma")
	d.call("POST", "/element/"+e+"/clear", map[string]any{})
	d.call("POST", "/element/"+e+"/value", map[string]string{"text": "0.987654"})
	h.check("typed fast")

	// A number of a million or more reads as the command line prints it
	// (1.23457e+06): the page's own formatting used to print 1234570.
	d.fill("sigma", "0.01")
	d.fill("q", "1")
	d.fill("steps", "1000")
	d.choose("accountant", "zcdp")
	h.check("a large ε")
	var cell string
	d.exec(&cell, `return document.querySelector("#result table.result tbody tr").children[7].textContent;`)
	if !strings.Contains(cell, "e+06") {
		t.Errorf("large ε: the page shows %q, want the command line's e+06 form", cell)
	}

	// A long query (pld calibrating σ at δ = 1e-10: seconds in wasm)
	// superseded by a quick one: the page shows the quick one's answer; if
	// the long one was still running 250 ms after it was sent, the worker
	// was replaced (the log says whether it was). The main thread answers a
	// script while the long one runs.
	d.navigate(h.url + "?cmd=sigma&eps=0.5&q=0.00256&epochs=400&delta=1e-10&accountant=pld&tol=1e-5")
	// The menus are the engine's: the page fills them, and sends the long
	// query, once the engine has started.
	d.waitFor("the engine's menus and the long query", `return document.getElementById("accountant").options.length > 1 && window.dpcalcRunners.main.busySince > 0;`)
	time.Sleep(400 * time.Millisecond)
	t0 := time.Now()
	d.exec(nil, `return 1;`)
	mainThread := time.Since(t0)
	d.choose("accountant", "rdp")
	h.check("superseded")
	var restarts int
	d.exec(&restarts, `return window.dpcalcRunners.main.restarts;`)
	t.Logf("main thread answered a script in %v while a long query ran; main worker restarts: %d", mainThread, restarts)

	if shot := os.Getenv("DPCALC_WEB_SCREENSHOT"); shot != "" {
		// A picture of the example for a human to look at.
		d.navigate(h.url + "?cmd=eps&sigma=1.2&q=0.00256&epochs=50&delta=1e-10&accountant=all")
		h.settle()
		h.checkCurves("screenshot")
		var png string
		json.Unmarshal(d.call("GET", "/screenshot", nil), &png)
		b, err := base64.StdEncoding.DecodeString(png)
		if err != nil || os.WriteFile(shot, b, 0o644) != nil {
			t.Errorf("screenshot: %v", err)
		}
	}
	t.Logf("largest relative difference from the native (amd64 assembly math) CLI: %g (%s)", h.maxRel, h.maxRelAt)
	h.measure()
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	return s[len(s)/2]
}

// checkDocSize compares the size docs/web.md gives for main.wasm (raw and
// gzip -9, in bytes and as the MB figures elsewhere on the page) with the
// size built: within 5%, so that the page is updated as the code grows.
func checkDocSize(t *testing.T, raw, gz int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "web.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	m := regexp.MustCompile("`main.wasm`, as `scripts/build-web.sh` builds it from this tree, is ([0-9,]+) bytes raw and ([0-9,]+)\\s+bytes with `gzip -9`").FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("docs/web.md does not state main.wasm's size in the sentence this test reads")
	}
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		what      string
		doc, real float64
	}{{"raw", num(m[1]), float64(raw)}, {"gzip -9", num(m[2]), float64(gz)}} {
		if math.Abs(c.real/c.doc-1) > 0.05 {
			t.Errorf("docs/web.md says main.wasm is %.0f bytes %s, the build has %.0f (%+.1f%%): update the page", c.doc, c.what, c.real, 100*(c.real/c.doc-1))
		}
	}
	mb := map[string]bool{fmt.Sprintf("%.1f MB", num(m[1])/1e6): true, fmt.Sprintf("%.1f MB", num(m[2])/1e6): true}
	for _, f := range regexp.MustCompile(`[0-9]+(\.[0-9]+)? MB`).FindAllString(doc, -1) {
		if !mb[f] {
			t.Errorf("docs/web.md says %q; the sizes it states round to %v", f, mb)
		}
	}
}

// measure times the same ε command lines in the page's worker (wasm), in
// the engine natively (in-process) and as a dpcalc process, in this one
// run: medians of 15 runs in the long test step (internal/testenv), of 3
// by default (the times are logged, not checked).
func (h *harness) measure() {
	t := h.t
	wasm, err := os.ReadFile(filepath.Join(h.site, "main.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(wasm)
	zw.Close()
	t.Logf("main.wasm: %d bytes raw, %d bytes gzip -9", len(wasm), gz.Len())
	checkDocSize(t, len(wasm), gz.Len())

	n := testenv.Size(3, 15)
	for _, args := range [][]string{
		{"eps", "--sigma", "4", "--q", "0.01", "--epochs", "100", "--delta", "1e-5"},
		{"eps", "--sigma", "1.2", "--q", "0.00256", "--epochs", "50", "--delta", "1e-10", "--accountant", "pld"},
		{"eps", "--sigma", "4", "--q", "0.01", "--epochs", "100", "--delta", "1e-5", "--accountant", "pld"},
		{"eps", "--sigma", "4", "--q", "0.01", "--epochs", "100", "--delta", "1e-5", "--accountant", "all"},
	} {
		var inWasm, roundTrip, native, process []float64
		for i := -1; i < n; i++ { // i = -1 warms up and is not counted
			var r struct {
				Answer struct {
					Ms    float64 `json:"ms"`
					Error string  `json:"error"`
				} `json:"answer"`
				RoundTripMs float64 `json:"roundTripMs"`
			}
			h.d.execAsync(&r, `const cb = arguments[arguments.length - 1]; window.dpcalcEval(arguments[0]).then(cb);`, args)
			if r.Answer.Error != "" {
				t.Fatalf("%v: %s", args, r.Answer.Error)
			}
			t0 := time.Now()
			engine.Run(t.Context(), args, nil)
			nat := float64(time.Since(t0).Microseconds()) / 1000

			t0 = time.Now()
			h.run(h.bin, args, true)
			proc := float64(time.Since(t0).Microseconds()) / 1000
			if i >= 0 {
				inWasm = append(inWasm, r.Answer.Ms)
				roundTrip = append(roundTrip, r.RoundTripMs)
				native = append(native, nat)
				process = append(process, proc)
			}
		}
		w, nat := median(inWasm), median(native)
		t.Logf("MEASURE %s | wasm %.1f ms (worker round trip %.1f ms) | native in-process %.1f ms | dpcalc process %.1f ms | wasm/native %.2f",
			engine.CommandLine(args), w, median(roundTrip), nat, median(process), w/nat)
	}
}
