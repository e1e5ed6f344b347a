package accounting

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestReadLedgerFileFormats: each format is detected and read as the run
// it records.
func TestReadLedgerFileFormats(t *testing.T) {
	ctx := context.Background()
	twoPhase := Composed{Events: []Event{SubsampledGaussian(1, 0.01, 5000), SubsampledGaussian(2, 0.02, 3000)}}

	id, err := NewRunID()
	if err != nil {
		t.Fatal(err)
	}
	chained := &Ledger{RunID: id}
	plain := &Ledger{}
	for _, l := range []*Ledger{chained, plain} {
		if err := l.Record(PoissonSampled{SamplingRate: 0.01, Event: Gaussian{NoiseMultiplier: 1}}, 5000); err != nil {
			t.Fatal(err)
		}
		if err := l.Record(PoissonSampled{SamplingRate: 0.02, Event: Gaussian{NoiseMultiplier: 2}}, 3000); err != nil {
			t.Fatal(err)
		}
	}
	ledgerBytes := func(l *Ledger) []byte {
		p := filepath.Join(t.TempDir(), "run.ckpt.ledger")
		if err := SaveLedger(p, l); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	dpevent, err := MarshalEvent(twoPhase)
	if err != nil {
		t.Fatal(err)
	}
	opacus, err := os.ReadFile(filepath.Join("..", "testdata", "ledger", "opacus_two_phase.json"))
	if err != nil {
		t.Fatal(err)
	}
	comp, err := MarshalCompositions(twoPhase, AddRemove)
	if err != nil {
		t.Fatal(err)
	}
	compReplace, err := MarshalCompositions(twoPhase, ReplaceOne)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		data   []byte
		adj    Adjacency
		format LedgerFormat
		desc   string
		want   Event
	}{
		{"dpcalc ledger, chained (version 4)", ledgerBytes(chained), AddRemove, FormatDpcalcLedger,
			"dpcalc training ledger (2 segments, 8000 steps)", chained.Event()},
		{"dpcalc ledger, version 3", ledgerBytes(plain), AddRemove, FormatDpcalcLedger,
			"dpcalc training ledger (2 segments, 8000 steps)", plain.Event()},
		{"dp_accounting DpEvent", dpevent, AddRemove, FormatDPEvent, "dp_accounting DpEvent", twoPhase},
		{"Opacus state", opacus, AddRemove, FormatOpacus,
			"Opacus accountant state (mechanism prv, 2 history entries)", twoPhase},
		// Opacus's σ is the noise over the clipping norm; under replace-one
		// the sensitivity is twice that.
		{"Opacus state under replace-one", opacus, ReplaceOne, FormatOpacus,
			"Opacus accountant state (mechanism prv, 2 history entries)",
			Composed{Events: []Event{SubsampledGaussian(0.5, 0.01, 5000), SubsampledGaussian(1, 0.02, 3000)}}},
		{"Opacus state, one entry", []byte(`{"mechanism":"rdp","history":[[3.0,0.2,50]]}`), AddRemove, FormatOpacus,
			"Opacus accountant state (mechanism rdp, 1 history entry)", SubsampledGaussian(3, 0.2, 50)},
		{"Opacus state, empty history", []byte(`{"mechanism":"gdp","history":[]}`), AddRemove, FormatOpacus,
			"Opacus accountant state (mechanism gdp, 0 history entries)", NoOp{}},
		{"composition ledger", comp, AddRemove, FormatCompositions,
			"composition ledger (schema_version 1, 2 entries)", twoPhase},
		// The relation is the file's: its events are read as written.
		{"composition ledger, replace-one", compReplace, ReplaceOne, FormatCompositions,
			"composition ledger (schema_version 1, 2 entries)", twoPhase},
		{"composition ledger, no config, count 1", []byte(`{"schema_version": 1, "compositions": [{"count": 1,
			"event": {"class_name": "GaussianDpEvent", "noise_multiplier": 2}}]}`), ReplaceOne, FormatCompositions,
			"composition ledger (schema_version 1, 1 entry)", SelfComposed{Event: Gaussian{NoiseMultiplier: 2}, Count: 1}},
		{"composition ledger, empty", []byte(`{"schema_version": 1.0, "config": {}, "compositions": []}`), AddRemove, FormatCompositions,
			"composition ledger (schema_version 1, 0 entries)", NoOp{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ReadLedgerFile(ctx, "f.json", tc.data, tc.adj)
			if err != nil {
				t.Fatal(err)
			}
			if r.Format != tc.format || r.Description != tc.desc {
				t.Errorf("format %q (%q), want %q (%q)", r.Format, r.Description, tc.format, tc.desc)
			}
			if !reflect.DeepEqual(r.Event, tc.want) {
				t.Errorf("event %#v, want %#v", r.Event, tc.want)
			}
		})
	}
}

// TestReadLedgerFileRefuses: unknown and corrupt input is one line naming
// the file and what was expected; nothing is read.
func TestReadLedgerFileRefuses(t *testing.T) {
	good := &Ledger{}
	if err := good.Record(SubsampledGaussian(1, 0.01, 10), 1); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(good)
	if err != nil {
		t.Fatal(err)
	}
	tampered := strings.Replace(string(b), `"count":10`, `"count":9`, 1)
	if tampered == string(b) {
		t.Fatal("fixture: count not found")
	}
	tests := []struct {
		name, data, want string
	}{
		{"empty", ``, "truncated"},
		{"not JSON", `mechanism: rdp`, "not valid JSON at byte 0"},
		{"truncated", `{"mechanism": "rdp", "history": [[3.0, 0.2`, "truncated"},
		{"data after", `{"mechanism":"rdp","history":[]} {}`, "data after the JSON value"},
		{"array", `[[3.0, 0.2, 50]]`, "an array"},
		{"unknown object", `{"epsilon": 1, "delta": 1e-5}`, `keys "delta", "epsilon", which is no format dpcalc reads: want a dpcalc training ledger`},
		{"compositions: version 2", `{"schema_version": 2, "config": {}, "compositions": []}`, "composition ledger: schema_version is 2, want 1"},
		{"compositions: no version", `{"config": {}, "compositions": []}`, `missing key "schema_version"`},
		{"compositions: no list", `{"schema_version": 1}`, `missing key "compositions"`},
		{"compositions: unknown key", `{"schema_version": 1, "compositions": [], "epsilon": 1}`, `unknown key "epsilon"`},
		{"compositions: unknown config", `{"schema_version": 1, "config": {"accountant": "rdp"}, "compositions": []}`, `config: unknown key "accountant"`},
		{"compositions: relation", `{"schema_version": 1, "config": {"neighboring_relation": "REPLACE_ONE"}, "compositions": []}`, "neighboring_relation is REPLACE_ONE but the accounting is under add-remove: give --adjacency replace-one"},
		{"compositions: bad relation", `{"schema_version": 1, "config": {"neighboring_relation": "replace"}, "compositions": []}`, `neighboring_relation is "replace", want ADD_OR_REMOVE_ONE or REPLACE_ONE`},
		{"compositions: entry not object", `{"schema_version": 1, "compositions": [1]}`, "compositions[0] is a number"},
		{"compositions: missing count", `{"schema_version": 1, "compositions": [{"event": {"class_name": "NoOpDpEvent"}}]}`, `compositions[0]: missing key "count"`},
		{"compositions: negative count", `{"schema_version": 1, "compositions": [{"event": {"class_name": "NoOpDpEvent"}, "count": -1}]}`, "count = -1, want a whole number >= 0"},
		{"compositions: fractional count", `{"schema_version": 1, "compositions": [{"event": {"class_name": "NoOpDpEvent"}, "count": 0.5}]}`, "count = 0.5, want a whole number >= 0"},
		{"compositions: huge count", `{"schema_version": 1, "compositions": [{"event": {"class_name": "NoOpDpEvent"}, "count": 1e20}]}`, "count = 1e20 is too large"},
		{"compositions: extra entry key", `{"schema_version": 1, "compositions": [{"event": {"class_name": "NoOpDpEvent"}, "count": 1, "delta": 0}]}`, `compositions[0]: unknown key "delta"`},
		{"compositions: empty event", `{"schema_version": 1, "config": {}, "compositions": [{"event": {}, "count": 1}]}`, "compositions[0].event: missing class_name"},
		{"compositions: unknown class", `{"schema_version": 1, "compositions": [{"event": {"class_name": "FooDpEvent"}, "count": 1}]}`, `unknown class_name "FooDpEvent"`},
		{"opacus: no history", `{"mechanism": "rdp"}`, `Opacus accountant state: missing key "history"`},
		{"opacus: no mechanism", `{"history": []}`, `Opacus accountant state: missing key "mechanism"`},
		{"opacus: unknown mechanism", `{"mechanism": "ma", "history": []}`, `mechanism is "ma", want one of rdp, prv, gdp`},
		{"opacus: extra key", `{"mechanism": "rdp", "history": [], "delta": 1e-5}`, `unknown key "delta"`},
		{"opacus: duplicate key", `{"mechanism": "rdp", "history": [], "history": []}`, `key "history" given twice`},
		{"opacus: history not a list", `{"mechanism": "rdp", "history": {}}`, "history is an object, want a list"},
		{"opacus: short entry", `{"mechanism": "rdp", "history": [[3.0, 0.2]]}`, "history[0] is an array (a namedtuple dumped without converting it to a dict? see docs/events.md) of 2 values, want [sigma, q, steps]"},
		{"opacus: string sigma", `{"mechanism": "rdp", "history": [["3", 0.2, 5]]}`, "history[0]: sigma is a string, want a number"},
		{"opacus: fractional steps", `{"mechanism": "rdp", "history": [[3.0, 0.2, 50.5]]}`, "history[0]: steps = 50.5 is not a whole number"},
		{"opacus: huge steps", `{"mechanism": "rdp", "history": [[3.0, 0.2, 1e17]]}`, "history[0]: steps = 1e17 is too large"},
		{"opacus: overflowing sigma", `{"mechanism": "rdp", "history": [[1e999, 0.2, 5]]}`, "sigma = 1e999 is not a finite float64"},
		{"dpcalc ledger: checksum", tampered, "checksum mismatch"},
		{"dpcalc ledger: version", `{"format":"dpcalc-ledger","version":9,"segments":[]}`, "version 9"},
		{"dpevent: unknown class", `{"class_name": "FooDpEvent"}`, `unknown class_name "FooDpEvent"`},
		{"too deep", strings.Repeat("[", 200), "nested deeper than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ReadLedgerFile(context.Background(), "runs/x.json", []byte(tc.data), AddRemove)
			if err == nil {
				t.Fatalf("read %#v, want an error", r)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "accounting: ledger file runs/x.json: ") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q, want one line naming runs/x.json and containing %q", msg, tc.want)
			}
			if r.Event != nil {
				t.Errorf("event %#v returned with the error", r.Event)
			}
		})
	}
}

// FuzzReadLedgerFile: any input is read or refused with one line naming
// the file, never a panic; what is read normalises or is refused by
// Normalize with an error, and its format is one of the four.
func FuzzReadLedgerFile(f *testing.F) {
	for _, s := range []string{
		`{"mechanism":"rdp","history":[[3.0,0.2,50]]}`,
		`{"mechanism":"prv","history":[[1,0.01,5000],[2,0.02,3000]]}`,
		`{"mechanism":"gdp","history":[]}`,
		`{"mechanism":"rdp","history":[[1e308,1e-308,9007199254740992]]}`,
		`{"format":"dpcalc-ledger","version":3,"sha256":"x","segments":[]}`,
		`{"class_name":"MixtureOfGaussiansDpEvent","standard_deviation":1,"sensitivities":[0,1],"sampling_probs":[0.5,0.5]}`,
		`{"class_name":"RandomizedResponseDpEvent","noise_parameter":0.5,"num_buckets":3}`,
		`{"class_name":"SingleEpochTreeAggregationDpEvent","noise_multiplier":1,"step_counts":7}`,
		`{"schema_version":1}`,
		`{"schema_version":1,"config":{"neighboring_relation":"ADD_OR_REMOVE_ONE"},"compositions":[{"event":{"class_name":"GaussianDpEvent","noise_multiplier":1},"count":3}]}`,
		`[]`, ``, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ReadLedgerFile(context.Background(), "f", b, AddRemove)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "accounting: ledger file f: ") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error %q: want one line naming the file", msg)
			}
			return
		}
		switch r.Format {
		case FormatDpcalcLedger, FormatOpacus, FormatDPEvent, FormatCompositions:
		default:
			t.Fatalf("format %q", r.Format)
		}
		if r.Event == nil {
			t.Fatal("nil event without an error")
		}
		_, _ = Normalize(r.Event, 1)
	})
}

// TestMarshalCompositions: the composition ledger is written entry by
// entry (a SelfComposed part with its count, other parts once) and reads
// back as the run written; what MarshalEvent refuses it refuses.
func TestMarshalCompositions(t *testing.T) {
	inner := Composed{Events: []Event{Laplace{NoiseMultiplier: 3}, SubsampledGaussian(2, 0.5, 4)}}
	e := Composed{Events: []Event{SubsampledGaussian(1, 0.01, 5000), Gaussian{NoiseMultiplier: 5}, inner}}
	b, err := MarshalCompositions(e, ReplaceOne)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema_version":1,"config":{"neighboring_relation":"REPLACE_ONE"},"compositions":[` +
		`{"event":{"module_name":"dp_accounting.dp_event","class_name":"PoissonSampledDpEvent","sampling_probability":0.01,` +
		`"event":{"module_name":"dp_accounting.dp_event","class_name":"GaussianDpEvent","noise_multiplier":1}},"count":5000},` +
		`{"event":{"module_name":"dp_accounting.dp_event","class_name":"GaussianDpEvent","noise_multiplier":5},"count":1},`
	if !strings.HasPrefix(string(b), want) {
		t.Fatalf("wrote\n%s\nwant it to start\n%s", b, want)
	}
	r, err := ReadLedgerFile(context.Background(), "f", b, ReplaceOne)
	if err != nil {
		t.Fatal(err)
	}
	back := Composed{Events: []Event{SubsampledGaussian(1, 0.01, 5000),
		SelfComposed{Event: Gaussian{NoiseMultiplier: 5}, Count: 1}, SelfComposed{Event: inner, Count: 1}}}
	if !reflect.DeepEqual(r.Event, back) {
		t.Errorf("read back %#v, want %#v", r.Event, back)
	}
	if _, err := MarshalCompositions(Gaussian{NoiseMultiplier: math.NaN()}, AddRemove); err == nil {
		t.Error("NaN σ written")
	}
	if _, err := MarshalCompositions(NoOp{}, Adjacency(7)); err == nil {
		t.Error("unknown relation written")
	}
	one, err := MarshalCompositions(NoOp{}, AddRemove)
	if err != nil || !strings.HasSuffix(string(one), `"compositions":[{"event":{"module_name":"dp_accounting.dp_event","class_name":"NoOpDpEvent"},"count":1}]}`) {
		t.Errorf("NoOp: %s, %v", one, err)
	}
}
