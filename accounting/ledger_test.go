package accounting

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// recordingAccountant records every Compose call; it bounds nothing. It
// implements [Method] (not Accountant: its answers are not bounds).
type recordingAccountant struct{ calls []Segment }

var _ Method = (*recordingAccountant)(nil)

func (r *recordingAccountant) Kind() Kind          { return "recording" }
func (r *recordingAccountant) Supports(Step) error { return nil }
func (r *recordingAccountant) Compose(e Event, n int) error {
	r.calls = append(r.calls, Segment{e, n})
	return nil
}
func (r *recordingAccountant) Epsilon(context.Context, float64) (float64, error) { return 0, nil }
func (r *recordingAccountant) Delta(context.Context, float64) (float64, error)   { return 0, nil }

func TestLedgerRecordMerges(t *testing.T) {
	var l Ledger
	step := PoissonSampled{SamplingRate: 0.01, Event: Gaussian{NoiseMultiplier: 4}}
	pca := PoissonSampled{SamplingRate: 0.1, Event: Gaussian{NoiseMultiplier: 7}}
	if err := l.Record(pca, 1); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		if err := l.Record(step, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Record(step, 5); err != nil {
		t.Fatal(err)
	}
	if got, want := len(l.Segments), 2; got != want {
		t.Fatalf("segments = %d, want %d", got, want)
	}
	if got, want := l.Len(), 1006; got != want {
		t.Fatalf("Len = %d, want %d", got, want)
	}
	if err := l.Record(step, 0); !errors.Is(err, ErrInvalidParameter) {
		t.Errorf("Record(count 0) error = %v, want ErrInvalidParameter", err)
	}
	if err := l.Record(PoissonSampled{SamplingRate: 0.1}, 1); !errors.Is(err, ErrUnsupportedEvent) {
		t.Errorf("Record(nil inner event) error = %v, want ErrUnsupportedEvent", err)
	}
	if l.Len() != 1006 {
		t.Errorf("failed Record changed the ledger")
	}
	acc := new(recordingAccountant)
	if err := l.Replay(acc); err != nil {
		t.Fatal(err)
	}
	want := []Segment{{pca, 1}, {step, 1005}}
	if !reflect.DeepEqual(acc.calls, want) {
		t.Errorf("Replay composed %v, want %v", acc.calls, want)
	}
}

func TestLedgerJSONRoundTrip(t *testing.T) {
	all := Composed{Events: []Event{
		Gaussian{NoiseMultiplier: 1.5},
		PoissonSampled{SamplingRate: 0.25, Event: Gaussian{NoiseMultiplier: 2}},
		SelfComposed{Event: ZCDP{Rho: 0.1, Xi: 0.01}, Count: 7},
		EpsilonDelta{Epsilon: 1, Delta: 1e-5},
		NoOp{},
		NonPrivate{},
		Composed{Events: []Event{}},
	}}
	var l Ledger
	if err := l.Record(all, 3); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(Gaussian{NoiseMultiplier: 3}, 2); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"class_name":"PoissonSampledDpEvent","sampling_probability":0.25`) {
		t.Errorf("JSON lacks the DpEvent form: %s", b)
	}
	var back Ledger
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !back.Equal(&l) {
		t.Errorf("round trip:\n got %#v\nwant %#v", back, l)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.json")
	if err := SaveLedger(path, &l); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	if !loaded.Equal(&l) {
		t.Errorf("Load(Save(l)) differs")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left behind: %v", ents)
	}
}

func TestLedgerUnmarshalRejects(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"unknown type", `{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"laplace","b":1},"count":1}]}`},
		{"unknown field", `{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"gaussian","noise_multiplier":1,"x":2},"count":1}]}`},
		{"missing sigma", `{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"gaussian"},"count":1}]}`},
		{"zero count", `{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"noop"},"count":0}]}`},
		{"zero nested count", `{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"self_composed","event":{"type":"noop"},"count":0},"count":1}]}`},
		{"version 2 without checksum", `{"format":"dpcalc-ledger","version":2,"segments":[]}`},
		{"version 2 bad checksum", `{"format":"dpcalc-ledger","version":2,"sha256":"00","segments":[]}`},
		{"version 2 without segments", `{"format":"dpcalc-ledger","version":2,"sha256":"` + emptyLedgerSum + `"}`},
		{"version 1 with checksum", `{"format":"dpcalc-ledger","version":1,"sha256":"` + emptyLedgerSum + `","segments":[]}`},
		{"wrong version", `{"format":"dpcalc-ledger","version":4,"segments":[]}`},
		{"version 3 bad checksum", `{"format":"dpcalc-ledger","version":3,"sha256":"` + emptyLedgerSum + `","segments":[]}`},
		{"version 3 legacy event", `{"format":"dpcalc-ledger","version":3,"sha256":"00","segments":[{"event":{"type":"noop"},"count":1}]}`},
		{"version 2 DpEvent", `{"format":"dpcalc-ledger","version":2,"sha256":"00","segments":[{"event":{"class_name":"NoOpDpEvent"},"count":1}]}`},
		{"version 3 unknown class", `{"format":"dpcalc-ledger","version":3,"sha256":"00","segments":[{"event":{"class_name":"FooDpEvent"},"count":1}]}`},
		{"wrong format", `{"format":"other","version":1,"segments":[]}`},
		{"truncated", `{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"gaussian","noise`},
		{"trailing data", `{"format":"dpcalc-ledger","version":1,"segments":[]} {}`},
		{"empty", ` `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l Ledger
			err := l.UnmarshalJSON([]byte(tc.in))
			if err == nil {
				t.Fatalf("UnmarshalJSON(%s) succeeded, want error", tc.in)
			}
			checkOneLine(t, err)
		})
	}
	// The checksum of the empty version-2 ledger is the SHA-256 of its
	// canonical payload, computed here independently of ledger.go.
	sum := sha256.Sum256([]byte(`{"format":"dpcalc-ledger","version":2,"segments":[]}`))
	if got := hex.EncodeToString(sum[:]); got != emptyLedgerSum {
		t.Fatalf("emptyLedgerSum is stale: %s", got)
	}
	var l Ledger
	if err := l.UnmarshalJSON([]byte(`{"format":"dpcalc-ledger","version":2,"sha256":"` + emptyLedgerSum + `","segments":[]}`)); err != nil || len(l.Segments) != 0 {
		t.Errorf("empty version 2 ledger: %v, %+v", err, l)
	}
	sum3 := sha256.Sum256([]byte(`{"format":"dpcalc-ledger","version":3,"segments":[]}`))
	if got := hex.EncodeToString(sum3[:]); got != emptyLedgerSum3 {
		t.Fatalf("emptyLedgerSum3 is stale: %s", got)
	}
	if b, _ := json.Marshal(Ledger{}); string(b) != `{"format":"dpcalc-ledger","version":3,"sha256":"`+emptyLedgerSum3+`","segments":[]}` {
		t.Errorf("empty ledger marshals to %s", b)
	}
}

// emptyLedgerSum is the SHA-256 of {"format":"dpcalc-ledger","version":2,"segments":[]}.
const emptyLedgerSum = "676300502fff71662931985ad88266c8be8c2eca2e5a3b33c6a9c62a14163499"

// emptyLedgerSum3 is the SHA-256 of {"format":"dpcalc-ledger","version":3,"segments":[]}.
const emptyLedgerSum3 = "c0007b93c8f8426f82ea9e7d980061ef93a232dcbc58d065fc013c3045a897fe"

// TestLedgerChecksum: a saved ledger whose meaning is changed by hand (a
// count, a σ) is refused with a one-line error naming the file; one that is
// only re-formatted loads unchanged.
func TestLedgerChecksum(t *testing.T) {
	var l Ledger
	_ = l.Record(PoissonSampled{SamplingRate: 0.1, Event: Gaussian{NoiseMultiplier: 7}}, 1)
	_ = l.Record(PoissonSampled{SamplingRate: 0.01, Event: Gaussian{NoiseMultiplier: 4}}, 2500)
	dir := t.TempDir()
	path := filepath.Join(dir, "run.ledger.json")
	if err := SaveLedger(path, &l); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	for _, tc := range []struct{ name, from, to, want string }{
		{"fewer steps", `"count": 2500`, `"count": 250`, "checksum mismatch"},
		{"larger sigma", `"noise_multiplier": 4`, `"noise_multiplier": 40`, "checksum mismatch"},
		{"version 1", `"version": 3`, `"version": 1`, "version 1"},
		{"version 2", `"version": 3`, `"version": 2`, "version 2"},
		{"checksum edited", `"sha256": "`, `"sha256": "0`, "checksum mismatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(string(good), tc.from) {
				t.Fatalf("saved ledger lacks %q:\n%s", tc.from, good)
			}
			if err := os.WriteFile(path, []byte(strings.Replace(string(good), tc.from, tc.to, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := LoadLedger(path)
			if err == nil || got != nil {
				t.Fatalf("edited ledger loaded: %+v", got)
			}
			checkOneLine(t, err)
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name the file and %q", err, tc.want)
			}
		})
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, good); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, compact.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadLedger(path); err != nil || !got.Equal(&l) {
		t.Errorf("re-formatted ledger: %v, %+v", err, got)
	}
}

// TestLoadLedgerTestdata loads the committed version-3 ledger (DpEvent
// form) and the version-2 ledger (legacy "type" tags, written before
// version 3) and checks that they hold the same segments as the version-1
// file they were converted from (json.Unmarshal, then SaveLedger;
// DPCALC_UPDATE_GOLDEN=1 redoes the conversion to version 3), which
// LoadLedger refuses with a message saying how to convert it.
func TestLoadLedgerTestdata(t *testing.T) {
	v1Path := filepath.Join("..", "testdata", "trainer", "ledger-dpsgd-pca-v1.json")
	v2Path := filepath.Join("..", "testdata", "trainer", "ledger-dpsgd-pca.json")
	v3Path := filepath.Join("..", "testdata", "trainer", "ledger-dpsgd-pca-v3.json")
	b, err := os.ReadFile(v1Path)
	if err != nil {
		t.Fatal(err)
	}
	var v1 Ledger
	if err := json.Unmarshal(b, &v1); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("DPCALC_UPDATE_GOLDEN") == "1" {
		if err := SaveLedger(v3Path, &v1); err != nil {
			t.Fatal(err)
		}
	}
	l3, err := LoadLedger(v3Path)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(v3Path); !strings.Contains(string(b), `"version": 3`) || !strings.Contains(string(b), `"class_name": "PoissonSampledDpEvent"`) {
		t.Errorf("%s is not a version 3 ledger with DpEvents:\n%s", v3Path, b)
	}
	l, err := LoadLedger(v2Path)
	if err != nil {
		t.Fatal(err)
	}
	if !l3.Equal(l) {
		t.Errorf("version 3 fixture %+v differs from version 2 %+v", *l3, *l)
	}
	if got, want := l.Len(), 1+2500; got != want {
		t.Errorf("Len = %d, want %d", got, want)
	}
	want := PoissonSampled{SamplingRate: 0.01, Event: Gaussian{NoiseMultiplier: 4}}
	if got := l.Segments[1].Event; got != want {
		t.Errorf("segment 1 = %#v, want %#v", got, want)
	}
	if !l.Equal(&v1) {
		t.Errorf("version 2 fixture %+v differs from version 1 %+v", *l, v1)
	}
	_, err = LoadLedger(v1Path)
	if err == nil {
		t.Fatal("LoadLedger accepted a version 1 file")
	}
	checkOneLine(t, err)
	if msg := err.Error(); !strings.Contains(msg, v1Path) || !strings.Contains(msg, "SaveLedger") {
		t.Errorf("error %q does not name the file and say how to convert it", msg)
	}
}

// TestLedgerErrorPaths: every ledger entry point that validates an event
// (Record, Validate, MarshalEvent, UnmarshalJSON) reports a bad nested event
// with the path format of Normalize, and the error unwraps to the typed
// error carrying that path.
func TestLedgerErrorPaths(t *testing.T) {
	bad := []struct {
		name     string
		e        Event
		path     string
		param    string // "" for an *UnsupportedEventError
		marshals bool   // MarshalEvent accepts it (it only refuses nil events)
	}{
		{"nil in Composed", Composed{Events: []Event{Gaussian{NoiseMultiplier: 1}, PoissonSampled{SamplingRate: 0.5}}},
			"Composed[1]/PoissonSampled", "", false},
		{"negative sigma deep", SelfComposed{Event: PoissonSampled{SamplingRate: 0.5, Event: Gaussian{NoiseMultiplier: -1}}, Count: 2},
			"SelfComposed/PoissonSampled/Gaussian", "sigma", true},
		{"q above 1 in Composed", Composed{Events: []Event{NoOp{}, NoOp{}, PoissonSampled{SamplingRate: 1.5, Event: NoOp{}}}},
			"Composed[2]/PoissonSampled", "q", true},
		{"zero SelfComposed count", Composed{Events: []Event{SelfComposed{Event: NoOp{}, Count: 0}}},
			"Composed[0]/SelfComposed", "count", true},
		{"sampled composition", PoissonSampled{SamplingRate: 0.5, Event: Composed{Events: []Event{Gaussian{NoiseMultiplier: 1}}}},
			"PoissonSampled/Composed", "", true},
	}
	check := func(t *testing.T, what string, err error, path, param string) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: nil error, want one at %q", what, path)
		}
		if param == "" {
			var ue *UnsupportedEventError
			if !errors.As(err, &ue) || ue.Path != path {
				t.Errorf("%s: %v; want *UnsupportedEventError at %q", what, err, path)
			}
		} else {
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Path != path || pe.Name != param {
				t.Errorf("%s: %v; want *ParamError %q at %q", what, err, param, path)
			}
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("%s: message %q does not name %q", what, err, path)
		}
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			var l Ledger
			check(t, "Record", l.Record(tc.e, 1), tc.path, tc.param)
			if len(l.Segments) != 0 {
				t.Errorf("failed Record changed the ledger: %+v", l.Segments)
			}
			hand := Ledger{Segments: []Segment{{NoOp{}, 1}, {tc.e, 3}}}
			err := hand.Validate()
			check(t, "Validate", err, tc.path, tc.param)
			if err != nil && !strings.Contains(err.Error(), "segment 1") {
				t.Errorf("Validate: %q does not name segment 1", err)
			}
			_, err = MarshalEvent(tc.e)
			if tc.marshals {
				if err != nil {
					t.Errorf("MarshalEvent: %v, want it encoded (Record validates, not the encoder)", err)
				}
				return
			}
			check(t, "MarshalEvent", err, tc.path, tc.param)
		})
	}
	// A decoded ledger is validated by the same Normalize, with the same paths.
	in := `{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"composed","events":[` +
		`{"type":"noop"},{"type":"poisson_sampled","sampling_rate":0.5,"event":{"type":"gaussian","noise_multiplier":-2}}]},"count":1}]}`
	var l Ledger
	err := l.UnmarshalJSON([]byte(in))
	check(t, "UnmarshalJSON", err, "Composed[1]/PoissonSampled/Gaussian", "sigma")
	if err != nil {
		checkOneLine(t, err)
	}
}
