package accounting

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// recordingAccountant records every Compose call; it bounds nothing.
type recordingAccountant struct{ calls []Segment }

func (r *recordingAccountant) Kind() Kind { return "recording" }
func (r *recordingAccountant) Compose(e Event, n int) error {
	r.calls = append(r.calls, Segment{e, n})
	return nil
}
func (r *recordingAccountant) Epsilon(float64) (float64, error) { return 0, nil }
func (r *recordingAccountant) Delta(float64) (float64, error)   { return 0, nil }

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
	if !strings.Contains(string(b), `"type":"poisson_sampled"`) {
		t.Errorf("JSON lacks type tag: %s", b)
	}
	var back Ledger
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, l) {
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
	if !reflect.DeepEqual(*loaded, l) {
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
		{"wrong version", `{"format":"dpcalc-ledger","version":2,"segments":[]}`},
		{"wrong format", `{"format":"other","version":1,"segments":[]}`},
		{"truncated", `{"format":"dpcalc-ledger","version":1,"segments":[{"event":{"type":"gaussian","noise`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l Ledger
			if err := json.Unmarshal([]byte(tc.in), &l); err == nil {
				t.Errorf("Unmarshal(%s) succeeded, want error", tc.in)
			}
		})
	}
}

func TestLoadLedgerTestdata(t *testing.T) {
	l, err := LoadLedger(filepath.Join("..", "testdata", "trainer", "ledger-dpsgd-pca.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.Len(), 1+2500; got != want {
		t.Errorf("Len = %d, want %d", got, want)
	}
	want := PoissonSampled{SamplingRate: 0.01, Event: Gaussian{NoiseMultiplier: 4}}
	if got := l.Segments[1].Event; got != want {
		t.Errorf("segment 1 = %#v, want %#v", got, want)
	}
}
