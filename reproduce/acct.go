package reproduce

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/dpcalc/dpcalc/internal/atomicfile"
)

// cacheVersion is part of every cache key: bump it when the meaning of a
// cached value changes.
const cacheVersion = 1

// cache stores finished results as one JSON file per key under dir, named
// by a hash of the key's JSON. A file whose stored key differs from the
// requested one (a hash collision, or a hand-edited file) is ignored.
// A read-only cache (a --plan) finds stored values but stores nothing.
type cache struct {
	dir      string
	readOnly bool
}

type cacheEntry struct {
	Key   json.RawMessage `json:"key"`
	Value json.RawMessage `json:"value"`
}

func (c cache) path(prefix string, key any) (string, []byte, error) {
	k, err := json.Marshal(struct {
		V   int `json:"v"`
		Key any `json:"key"`
	}{cacheVersion, key})
	if err != nil {
		return "", nil, err
	}
	h := sha256.Sum256(k)
	return filepath.Join(c.dir, prefix+"-"+hex.EncodeToString(h[:8])+".json"), k, nil
}

// get loads the value stored for key into v and reports whether it was
// there.
func (c cache) get(prefix string, key, v any) bool {
	if c.dir == "" {
		return false
	}
	p, k, err := c.path(prefix, key)
	if err != nil {
		return false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	var e cacheEntry
	var stored bytes.Buffer
	if json.Unmarshal(b, &e) != nil || json.Compact(&stored, e.Key) != nil || stored.String() != string(k) {
		return false
	}
	return json.Unmarshal(e.Value, v) == nil
}

// put stores v for key atomically.
func (c cache) put(prefix string, key, v any) error {
	if c.dir == "" || c.readOnly {
		return nil
	}
	p, k, err := c.path(prefix, key)
	if err != nil {
		return err
	}
	val, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(cacheEntry{Key: k, Value: val}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(p, append(b, '\n'), 0o644)
}

// importRuns copies the cached runs ("run-*.json") of the output
// directories dirs into c, verifying that each file is a cache entry whose
// name matches its key (a truncated or edited file is refused). A run
// already in c is kept; if a shard holds a different result for the same
// run (same seed on another machine with other float rounding), the first
// one found wins and the others are ignored. It returns the number of runs
// copied.
func (c cache) importRuns(dirs []string) (int, error) {
	n := 0
	for _, d := range dirs {
		src := filepath.Join(d, "cache")
		ents, err := os.ReadDir(src)
		if err != nil {
			return n, inputErr("merge: shard %s: %v", d, err)
		}
		for _, e := range ents {
			name := e.Name()
			if !e.Type().IsRegular() || !strings.HasPrefix(name, "run-") || !strings.HasSuffix(name, ".json") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(src, name))
			if err != nil {
				return n, inputErr("merge: %v", err)
			}
			var ent cacheEntry
			var rec runRecord
			var key bytes.Buffer
			if json.Unmarshal(b, &ent) != nil || json.Compact(&key, ent.Key) != nil || json.Unmarshal(ent.Value, &rec) != nil {
				return n, inputErr("merge: %s: not a cached run (truncated or edited?)", filepath.Join(src, name))
			}
			h := sha256.Sum256(key.Bytes())
			if want := "run-" + hex.EncodeToString(h[:8]) + ".json"; name != want {
				return n, inputErr("merge: %s: its key hashes to %s (renamed or edited?)", filepath.Join(src, name), want)
			}
			dst := filepath.Join(c.dir, name)
			if _, err := os.Stat(dst); err == nil {
				continue
			}
			if err := os.MkdirAll(c.dir, 0o755); err != nil {
				return n, err
			}
			if err := atomicfile.WriteFile(dst, b, 0o644); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// errNotBuilt marks a value that needs an accountant this build lacks.
var errNotBuilt = errors.New("accountant not built")

// accountants makes accountants and remembers which kinds exist.
type accountants struct {
	opt    registry.Options
	newAcc func(accounting.Kind, registry.Options) (accounting.Method, error)
	built  map[accounting.Kind]bool
}

func newAccountants(opt registry.Options, newAcc func(accounting.Kind, registry.Options) (accounting.Method, error)) *accountants {
	if newAcc == nil {
		newAcc = registry.New
	}
	a := &accountants{opt: opt, newAcc: newAcc, built: map[accounting.Kind]bool{}}
	for _, k := range registry.Kinds() {
		_, err := newAcc(k, opt)
		a.built[k] = err == nil
	}
	return a
}

func (a *accountants) factory(k accounting.Kind) calibrate.Factory {
	return func() (accounting.Method, error) { return a.newAcc(k, a.opt) }
}

// sound is the tight, sound accountant used for "true ε" and the sound σ:
// pld (certified bounds) if built, else rdp; "" if neither is.
func (a *accountants) sound() accounting.Kind {
	switch {
	case a.built[accounting.KindPLD]:
		return accounting.KindPLD
	case a.built[accounting.KindRDP]:
		return accounting.KindRDP
	}
	return ""
}

// epsResult is ε(δ) of an event under one accountant; Lower is set for
// accountants that certify a lower bound (pld).
type epsResult struct {
	Epsilon float64  `json:"epsilon"`
	Lower   *float64 `json:"lower,omitempty"`
	Err     string   `json:"error,omitempty"`
}

func (e epsResult) String() string {
	if e.Err != "" {
		return e.Err
	}
	if e.Lower != nil {
		return fmt.Sprintf("%s [%s, %s]", fUp(e.Epsilon), fDown(*e.Lower), fUp(e.Epsilon))
	}
	return fUp(e.Epsilon)
}

// epsilon returns ε(δ) of e under kind k, cached.
func (r *runner) epsilon(k accounting.Kind, e accounting.Event, delta float64) epsResult {
	return r.epsilonWith(k, r.acc.opt, e, delta)
}

// epsilonWith is epsilon with accountant options opt (e.g. Abadi's linear
// amplification for KindAC).
func (r *runner) epsilonWith(k accounting.Kind, opt registry.Options, e accounting.Event, delta float64) epsResult {
	if !r.acc.built[k] {
		return epsResult{Epsilon: math.NaN(), Err: NotBuilt}
	}
	key := struct {
		Kind  accounting.Kind  `json:"kind"`
		Event accounting.Event `json:"event"`
		Delta float64          `json:"delta"`
		Opt   registry.Options `json:"options"`
	}{k, e, delta, opt}
	var out epsResult
	if r.cache.get("eps", key, &out) {
		return out
	}
	acc, err := r.acc.newAcc(k, opt)
	if err == nil {
		err = acc.Compose(e, 1)
	}
	if err == nil {
		if b, ok := acc.(accounting.BoundsReporter); ok {
			var lo, hi float64
			lo, hi, err = b.EpsilonBounds(r.ctx, delta)
			out = epsResult{Epsilon: hi, Lower: &lo}
		} else {
			out.Epsilon, err = acc.Epsilon(r.ctx, delta)
		}
	}
	if err != nil {
		return epsResult{Epsilon: math.NaN(), Err: "error: " + err.Error()}
	}
	if math.IsInf(out.Epsilon, 0) || (out.Lower != nil && math.IsInf(*out.Lower, 0)) {
		return epsResult{Epsilon: math.Inf(1), Lower: out.Lower}
	}
	_ = r.cache.put("eps", key, out)
	return out
}

// sigmaResult is a calibrated noise multiplier.
type sigmaResult struct {
	Sigma   float64 `json:"sigma"`
	Epsilon float64 `json:"epsilon"` // ε(δ) at Sigma under the calibrating accountant
	Err     string  `json:"error,omitempty"`
}

func (s sigmaResult) ok() bool { return s.Err == "" }

func (s sigmaResult) String() string {
	if s.Err != "" {
		return s.Err
	}
	return f4(s.Sigma)
}

// calibrateSigma returns the smallest σ with ε(event(σ)) ≤ eps at delta
// under kind k (the safe end, calibrate.SigmaFor), cached by the events at
// σ = 1 and σ = 2 (which pin down the family for the trainer's runs, whose
// events are linear in σ).
func (r *runner) calibrateSigma(k accounting.Kind, event func(float64) accounting.Event, eps, delta float64) sigmaResult {
	if !r.acc.built[k] {
		return sigmaResult{Sigma: math.NaN(), Err: NotBuilt}
	}
	key := struct {
		Kind  accounting.Kind  `json:"kind"`
		E1    accounting.Event `json:"event_sigma1"`
		E2    accounting.Event `json:"event_sigma2"`
		Eps   float64          `json:"epsilon"`
		Delta float64          `json:"delta"`
		Grid  float64          `json:"pld_grid"`
		Tol   float64          `json:"rel_tol"`
	}{k, event(1), event(2), eps, delta, r.acc.opt.PLDGridWidth, sigmaRelTol}
	var out sigmaResult
	if r.cache.get("sigma", key, &out) {
		return out
	}
	res, err := calibrate.SigmaFor(r.ctx, r.acc.factory(k), event, eps, delta, calibrate.Options{RelTol: sigmaRelTol})
	if err != nil {
		return sigmaResult{Sigma: math.NaN(), Err: "error: " + err.Error()}
	}
	out = sigmaResult{Sigma: res.X, Epsilon: res.Value}
	_ = r.cache.put("sigma", key, out)
	return out
}

// sigmaRelTol is the relative tolerance of every σ calibration: the papers
// print σ to 3–4 significant digits.
const sigmaRelTol = 1e-5
