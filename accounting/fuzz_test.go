package accounting

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/internal/testenv"
)

// FuzzLedgerJSON feeds arbitrary bytes to the ledger decoder, both through
// UnmarshalJSON and through LoadLedger. Invariants:
//
//   - no panic;
//   - on error the ledger is unchanged (UnmarshalJSON's contract) and the
//     message is one line prefixed "accounting: "; LoadLedger's also names
//     the file;
//   - LoadLedger accepts exactly what UnmarshalJSON accepts, except version 1
//     (no checksum), which it refuses;
//   - a ledger that loads is valid (Validate, Len = the sum of the counts,
//     no wrap-around), re-marshals, and the re-marshalled bytes load back to
//     a deeply equal ledger (MarshalJSON and SaveLedger alike);
//   - Replay composes exactly the loaded segments.
func FuzzLedgerJSON(f *testing.F) {
	for _, name := range []string{"ledger-dpsgd-pca.json", "ledger-dpsgd-pca-v1.json"} {
		if b, err := os.ReadFile(filepath.Join("..", "testdata", "trainer", name)); err == nil {
			f.Add(b)
		}
	}
	var two Ledger
	_ = two.Record(SelfComposed{Event: PoissonSampled{SamplingRate: 0.5, Event: Gaussian{NoiseMultiplier: 2}}, Count: 7}, 9)
	_ = two.Record(Composed{Events: []Event{ZCDP{Rho: 0.5}, EpsilonDelta{Epsilon: 1, Delta: 1e-6}, NoOp{}, NonPrivate{}}}, 1)
	for _, l := range []Ledger{{}, two} {
		b, err := json.Marshal(l)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		`{"format":"dpcalc-ledger","version":1,"segments":[]}`,
		`{"format":"dpcalc-ledger","version":1,"segments":null}`,
		`{"format":"dpcalc-ledger","version":1}`,
		`{"format":"dpcalc-ledger","version":2,"segments":[]}`,
		`{"format":"dpcalc-ledger","version":2,"sha256":"676300502fff71662931985ad88266c8be8c2eca2e5a3b33c6a9c62a14163499","segments":[]}`,
		`{"format":"dpcalc-ledger","version":2,"sha256":"676300502fff71662931985ad88266c8be8c2eca2e5a3b33c6a9c62a14163499","segments":null}`,
		`{"format":"dpcalc-ledger","version":1,"sha256":"676300502fff71662931985ad88266c8be8c2eca2e5a3b33c6a9c62a14163499","segments":[]}`,
		`{"format":"other","version":1,"segments":[]}`,
		`{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"gaussian","noise_multiplier":1},"count":3}]}`,
		`{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"gaussian","noise_multiplier":1},"count":0}]}`,
		`{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"gaussian"},"count":1}]}`,
		`{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"noop"},"count":1},{"event":{"type":"non_private"},"count":2}]}`,
		`{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"composed","events":[{"type":"zcdp","rho":0.5,"xi":0},{"type":"epsilon_delta","epsilon":1,"delta":1e-6}]},"count":1}]}`,
		`{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"self_composed","event":{"type":"poisson_sampled","sampling_rate":0.5,"event":{"type":"gaussian","noise_multiplier":2}},"count":7},"count":9223372036854775807}]}`,
		`{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"self_composed","event":{"type":"noop"},"count":-1},"count":1}]}`,
		`{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"noop"},"count":9223372036854775807},{"event":{"type":"noop"},"count":1}]}`,
		`{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"composed","events":null},"count":1}]}`,
		`{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"poisson_sampled","sampling_rate":0.5},"count":1}]}`,
		`{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"poisson_sampled","sampling_rate":0.5,"event":null},"count":1}]}`,
		`{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"gaussian","noise_multiplier":1,"extra":1},"count":1}]}`,
		`{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"gaussian","noise_multiplier":1e999},"count":1}]}`,
		`{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"gaussian","noise_multiplier":-0},"count":1}]}`,
		`{"FORMAT":"dpcalc-ledger","Version":1,"Segments":[{"Event":{"TYPE":"gaussian","Noise_Multiplier":1},"COUNT":1}]}`,
		`{"format":"dpcalc-ledger","format":"dpcalc-ledger","version":1,"segments":[]}`,
		`{"format":"dpcalc-ledger","version":1,"segments":[]} trailing`,
		`null`, `[]`, `{}`, `"x"`, ``, `{"format":"dpcalc-ledger","version":1,"segments":[{"event":`,
		nested(70),
		nested(60),
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		sentinel := Segment{Event: Gaussian{NoiseMultiplier: 42}, Count: 42}
		l := Ledger{Segments: []Segment{sentinel}}
		err := l.UnmarshalJSON(b)
		if err != nil {
			if len(l.Segments) != 1 || !reflect.DeepEqual(l.Segments[0], sentinel) {
				t.Fatalf("failed UnmarshalJSON (%v) changed the ledger to %+v", err, l.Segments)
			}
			checkOneLine(t, err)
		}
		p := filepath.Join(dir, "l.json")
		if werr := os.WriteFile(p, b, 0o600); werr != nil {
			t.Fatal(werr)
		}
		loaded, lerr := LoadLedger(p)
		if lerr != nil {
			if loaded != nil {
				t.Fatalf("LoadLedger returned a ledger with error %v", lerr)
			}
			checkOneLine(t, lerr)
			if !strings.Contains(lerr.Error(), p) {
				t.Fatalf("LoadLedger error %q does not name the file", lerr)
			}
		}
		switch {
		case err != nil && lerr == nil:
			t.Fatalf("UnmarshalJSON error %v but LoadLedger accepted %+v", err, loaded)
		case err == nil && lerr != nil:
			if !strings.Contains(lerr.Error(), "version 1") {
				t.Fatalf("UnmarshalJSON accepted but LoadLedger refused: %v", lerr)
			}
		case err == nil && !loaded.Equal(&l):
			t.Fatalf("LoadLedger gave %+v, UnmarshalJSON %+v", loaded, l)
		}
		if err != nil {
			return
		}
		if verr := l.Validate(); verr != nil {
			t.Fatalf("loaded ledger is invalid: %v", verr)
		}
		sum := 0
		for _, s := range l.Segments {
			sum += s.Count
		}
		if n := l.Len(); n != sum || n < 0 {
			t.Fatalf("Len = %d, counts sum to %d", n, sum)
		}
		out, merr := json.Marshal(l)
		if merr != nil {
			t.Fatalf("loaded ledger does not marshal: %v", merr)
		}
		var back Ledger
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("re-marshalled ledger %s does not load: %v", out, err)
		}
		if !back.Equal(&l) {
			t.Fatalf("round trip changed the ledger:\n got %+v\nwant %+v\nvia %s", back, l, out)
		}
		q := filepath.Join(dir, "saved.json")
		if err := SaveLedger(q, &l); err != nil {
			t.Fatalf("SaveLedger: %v", err)
		}
		again, err := LoadLedger(q)
		if err != nil || !again.Equal(&l) {
			t.Fatalf("SaveLedger/LoadLedger round trip: %v, %+v", err, again)
		}
		acc := new(recordingAccountant)
		if err := l.Replay(acc); err != nil {
			t.Fatalf("Replay into a recorder: %v", err)
		}
		if !reflect.DeepEqual(acc.calls, l.Segments) && !(len(acc.calls) == 0 && len(l.Segments) == 0) {
			t.Fatalf("Replay composed %+v, want %+v", acc.calls, l.Segments)
		}
	})
}

func checkOneLine(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	if !strings.HasPrefix(msg, "accounting: ") || strings.ContainsAny(msg, "\n\r") {
		t.Fatalf("error %q is not one line prefixed \"accounting: \"", msg)
	}
}

// nested returns a ledger whose one event is depth PoissonSampled wrappers
// around a Gaussian.
func nested(depth int) string {
	ev := `{"type":"gaussian","noise_multiplier":1}`
	for i := 0; i < depth; i++ {
		ev = `{"type":"poisson_sampled","sampling_rate":0.5,"event":` + ev + `}`
	}
	return `{"format":"dpcalc-ledger","version":1,"segments":[{"event":` + ev + `,"count":1}]}`
}

// TestLedgerTruncatedAndFlipped: every truncation of a saved ledger file
// (the committed version-2 fixture and a freshly saved ledger), every
// single-bit flip of it and every replacement of one byte by another value
// (a set of likely values; all 255 with DPCALC_LONG) is either refused by
// LoadLedger with a one-line "accounting: " error naming the file, or loads
// a ledger identical to the original (white space, the case of a key). No
// panic, no partial ledger, and no different ledger: the checksum catches
// every change of meaning.
func TestLedgerTruncatedAndFlipped(t *testing.T) {
	fixture, err := os.ReadFile(filepath.Join("..", "testdata", "trainer", "ledger-dpsgd-pca.json"))
	if err != nil {
		t.Fatal(err)
	}
	var mixed Ledger
	_ = mixed.Record(PoissonSampled{SamplingRate: 0.25, Event: Gaussian{NoiseMultiplier: 1.5e-3}}, 123456789)
	_ = mixed.Record(Composed{Events: []Event{SelfComposed{Event: ZCDP{Rho: 0.1, Xi: 0.01}, Count: 7},
		EpsilonDelta{Epsilon: 1, Delta: 1e-5}, NoOp{}, NonPrivate{}}}, 3)
	dir := t.TempDir()
	saved := filepath.Join(dir, "mixed.json")
	if err := SaveLedger(saved, &mixed); err != nil {
		t.Fatal(err)
	}
	fresh, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		good []byte
	}{{"fixture", fixture}, {"mixed", fresh}} {
		t.Run(tc.name, func(t *testing.T) {
			good := tc.good
			p := filepath.Join(t.TempDir(), "l.json")
			orig, err := parseLedgerFile(p, good)
			if err != nil {
				t.Fatal(err)
			}
			check := func(what string, l *Ledger, err error) (identical bool) {
				t.Helper()
				if err != nil {
					if l != nil {
						t.Fatalf("%s: error %v with a ledger", what, err)
					}
					checkOneLine(t, err)
					if !strings.Contains(err.Error(), p) {
						t.Fatalf("%s: error %q does not name the file", what, err)
					}
					return false
				}
				if !l.Equal(orig) {
					t.Fatalf("%s: loaded a different ledger %+v, want %+v", what, l, orig)
				}
				return true
			}
			trimmed := bytes.TrimSpace(good)
			for n := 0; n < len(trimmed); n++ {
				l, err := parseLedgerFile(p, trimmed[:n])
				if check(fmt.Sprintf("truncation to %d bytes", n), l, err) {
					t.Fatalf("truncation to %d of %d bytes loaded", n, len(trimmed))
				}
			}
			// Single-bit flips through the file system, as a user would hit
			// them: of every byte in the long test step, of every 16th by
			// default and in memory for the others (a write per flip is
			// most of the cost).
			sameBits := 0
			for i := range good {
				for bit := 0; bit < 8; bit++ {
					b := append([]byte(nil), good...)
					b[i] ^= 1 << bit
					var l *Ledger
					var err error
					if testenv.Long() || i%16 == 0 {
						if err := os.WriteFile(p, b, 0o600); err != nil {
							t.Fatal(err)
						}
						l, err = LoadLedger(p)
					} else {
						l, err = parseLedgerFile(p, b)
					}
					if check(fmt.Sprintf("flip of byte %d bit %d (%q→%q)", i, bit, good[i], b[i]), l, err) {
						sameBits++
					}
				}
			}
			// Other values of every byte, in memory: all 255 with DPCALC_LONG
			// set, otherwise those that keep JSON most often valid (digits,
			// number and structure characters, white space, letters).
			values := []byte("0123456789-+.eE \t\n\r\",:{}[]aAfFtTnNxz\x00\xff")
			if testenv.Long() {
				values = values[:0]
				for v := 0; v < 256; v++ {
					values = append(values, byte(v))
				}
			}
			sameBytes, tried := 0, 0
			for i := range good {
				b := append([]byte(nil), good...)
				for _, v := range values {
					if v == good[i] {
						continue
					}
					b[i] = v
					tried++
					l, err := parseLedgerFile(p, b)
					if check(fmt.Sprintf("byte %d %q→%q", i, good[i], b[i]), l, err) {
						sameBytes++
					}
				}
			}
			t.Logf("%d bytes: %d truncations refused; %d of %d single-bit flips and %d of %d byte replacements "+
				"load (each identical to the original), the rest are refused",
				len(good), len(trimmed), sameBits, 8*len(good), sameBytes, tried)
		})
	}
}

// TestLedgerCountOverflow: segment counts whose sum passes math.MaxInt are
// refused by UnmarshalJSON (Len used to wrap to a negative total, which
// trainer.LoadCheckpoint compares with its step counter), by Record (which
// only checked the merged segment), and by MarshalJSON and Validate for a
// ledger built by hand, whose Len saturates instead of wrapping.
func TestLedgerCountOverflow(t *testing.T) {
	const maxInt = math.MaxInt
	b := []byte(`{"format":"dpcalc-ledger","version":1,"segments":[` +
		`{"event":{"type":"gaussian","noise_multiplier":1},"count":9223372036854775807},` +
		`{"event":{"type":"noop"},"count":1}]}`)
	var l Ledger
	err := json.Unmarshal(b, &l)
	if !errors.Is(err, ErrInvalidParameter) || len(l.Segments) != 0 {
		t.Errorf("counts summing past MaxInt: err = %v, ledger %+v; want ErrInvalidParameter", err, l.Segments)
	} else {
		checkOneLine(t, err)
	}
	g := Gaussian{NoiseMultiplier: 1}
	tests := []struct {
		name   string
		first  int
		next   Event
		count  int
		wantOK bool
	}{
		{"new segment at MaxInt", maxInt - 1, NoOp{}, 1, true},
		{"new segment past MaxInt", maxInt - 1, NoOp{}, 2, false},
		{"merge at MaxInt", maxInt - 5, g, 5, true},
		{"merge past MaxInt", maxInt - 5, g, 6, false},
		{"new segment of MaxInt", 1, NoOp{}, maxInt, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var l Ledger
			if err := l.Record(g, tc.first); err != nil {
				t.Fatal(err)
			}
			before := l.Clone()
			err := l.Record(tc.next, tc.count)
			if tc.wantOK {
				if err != nil || l.Len() != maxInt {
					t.Errorf("Record: %v, Len %d; want nil, %d", err, l.Len(), maxInt)
				}
				return
			}
			if !errors.Is(err, ErrInvalidParameter) {
				t.Errorf("Record: err = %v, want ErrInvalidParameter", err)
			}
			if !l.Equal(before) {
				t.Errorf("failed Record changed the ledger to %+v", l.Segments)
			}
		})
	}
	hand := Ledger{Segments: []Segment{{g, maxInt}, {NoOp{}, maxInt}}}
	if n := hand.Len(); n != maxInt {
		t.Errorf("hand-built overflow: Len = %d, want saturation at %d", n, maxInt)
	}
	if err := hand.Validate(); !errors.Is(err, ErrInvalidParameter) {
		t.Errorf("Validate = %v, want ErrInvalidParameter", err)
	}
	if _, err := json.Marshal(hand); !errors.Is(err, ErrInvalidParameter) {
		t.Errorf("MarshalJSON = %v, want ErrInvalidParameter", err)
	}
	for _, bad := range []Ledger{
		{Segments: []Segment{{g, 0}}},
		{Segments: []Segment{{g, -3}}},
		{Segments: []Segment{{SelfComposed{Event: g, Count: 0}, 1}}},
		{Segments: []Segment{{nil, 1}}},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil", bad.Segments)
		}
	}
	var ok Ledger
	if err := ok.Record(SelfComposed{Event: g, Count: -1}, 1); !errors.Is(err, ErrInvalidParameter) {
		t.Errorf("Record(SelfComposed count -1) = %v, want ErrInvalidParameter", err)
	}
}
