package accounting

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// LedgerFormat names a format of the files [ReadLedgerFile] reads.
type LedgerFormat string

// The formats ReadLedgerFile detects.
const (
	// FormatDpcalcLedger is the ledger dpcalc's training writes (see
	// [Ledger.MarshalJSON]): a JSON object with "format": "dpcalc-ledger".
	FormatDpcalcLedger LedgerFormat = "dpcalc-ledger"
	// FormatOpacus is an Opacus accountant's state_dict() dumped to JSON:
	// {"mechanism": "rdp" | "prv" | "gdp", "history": [[σ, q, steps], ...]}.
	FormatOpacus LedgerFormat = "opacus"
	// FormatDPEvent is one event in dp_accounting's DpEvent JSON (see
	// [UnmarshalEvent]): an object with "class_name".
	FormatDPEvent LedgerFormat = "dp_accounting"
)

// LedgerRead is what [ReadLedgerFile] read: the format, a short
// description of it for the user ("Opacus accountant state (mechanism
// rdp, 2 history entries)") and the run as one event.
type LedgerRead struct {
	Format      LedgerFormat
	Description string
	Event       Event
}

// opacusMechanisms are the values of an Opacus state's "mechanism": the
// names of its accountants RDPAccountant, PRVAccountant and
// GaussianAccountant. dpcalc bounds the history with its own accountants
// whichever Opacus used.
var opacusMechanisms = []string{"rdp", "prv", "gdp"}

// ReadLedgerFile reads the record of a run in one of the formats of
// [LedgerFormat], detected from the keys of its top-level JSON object:
// "format" (a dpcalc ledger, verified as [LoadLedger] does), "class_name"
// (a dp_accounting DpEvent), "mechanism" and "history" (an Opacus
// accountant state) or "schema_version" and "compositions" (a composition
// ledger, [FormatCompositions]). Name is the file's name for messages.
//
// Reading is strict: input past the limits of [UnmarshalEvent], that is
// not JSON, that is of no known format, or that is corrupt in its own
// format is an error of one line naming the file and what was expected.
//
// An Opacus history entry [σ, q, steps] is steps Poisson-sampled
// Gaussian steps, SubsampledGaussian(σ, q, steps): σ is the noise over the
// clipping norm, Opacus's add-remove convention. Under replace-one the
// sensitivity is twice the clipping norm, so the events get σ/2, as the
// training flags of the CLI do. An empty history is NoOp.
func ReadLedgerFile(ctx context.Context, name string, data []byte, adj Adjacency) (LedgerRead, error) {
	if err := ctx.Err(); err != nil {
		return LedgerRead{}, err
	}
	fail := func(format string, args ...any) (LedgerRead, error) {
		return LedgerRead{}, fmt.Errorf("accounting: ledger file %s: %s", name, oneLine(fmt.Sprintf(format, args...)))
	}
	if err := scanEventLimits(data); err != nil {
		return fail("%v", strings.TrimPrefix(err.Error(), "accounting: event JSON at $: "))
	}
	ps := &jsonParser{data: data}
	root, err := ps.value()
	if err != nil {
		return fail("%s", strings.TrimPrefix(err.Error(), "accounting: event JSON at $: "))
	}
	if ps.skipSpace(); ps.pos < len(data) {
		return fail("data after the JSON value at byte %d", ps.pos)
	}
	if root.kind != '{' {
		return fail("%s, want a JSON object: %s", kindOf(root), wantLedger)
	}
	has := map[string]bool{}
	for _, k := range root.keys {
		has[k] = true
	}
	switch {
	case has["format"]:
		l, err := parseLedgerFile(name, data)
		if err != nil {
			return LedgerRead{}, err
		}
		return LedgerRead{Format: FormatDpcalcLedger, Event: l.Event(),
			Description: fmt.Sprintf("dpcalc training ledger (%s, %s)", plural(len(l.Segments), "segment", "segments"), plural(l.Len(), "step", "steps"))}, nil
	case has["class_name"]:
		e, err := decodeEvent(ctx, root, "$", 0)
		if err != nil {
			return fail("%s", strings.TrimPrefix(err.Error(), "accounting: "))
		}
		return LedgerRead{Format: FormatDPEvent, Event: e, Description: "dp_accounting DpEvent"}, nil
	case has["schema_version"] || has["compositions"]:
		e, n, err := decodeCompositions(ctx, root, adj)
		if err != nil {
			return fail("composition ledger: %s", strings.TrimPrefix(err.Error(), "accounting: "))
		}
		return LedgerRead{Format: FormatCompositions, Event: e, Description: describeCompositions(n)}, nil
	case has["history"] || has["mechanism"]:
		e, mech, n, err := decodeOpacus(root, adj)
		if err != nil {
			return fail("Opacus accountant state: %v", err)
		}
		return LedgerRead{Format: FormatOpacus, Event: e,
			Description: fmt.Sprintf("Opacus accountant state (mechanism %s, %s)", mech, plural(n, "history entry", "history entries"))}, nil
	}
	keys := append([]string(nil), root.keys...)
	sort.Strings(keys)
	return fail("an object with keys %s, which is no format dpcalc reads: %s", quoteList(keys), wantLedger)
}

// plural writes n with the singular or plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// wantLedger lists the formats ReadLedgerFile reads, for messages.
const wantLedger = `want a dpcalc training ledger ({"format": "dpcalc-ledger", ...}), ` +
	`an Opacus accountant state ({"mechanism": ..., "history": [[sigma, q, steps], ...]}), ` +
	`a composition ledger ({"schema_version": 1, "compositions": [...]}) ` +
	`or a dp_accounting DpEvent ({"class_name": ...})`

func quoteList(keys []string) string {
	if len(keys) == 0 {
		return "none"
	}
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = strconv.Quote(k)
	}
	return strings.Join(q, ", ")
}

// decodeOpacus decodes an Opacus accountant state: exactly the keys
// "mechanism" (one of opacusMechanisms) and "history" (a list of
// [σ, q, steps] with σ and q numbers and steps a whole number). Ranges are
// checked by Normalize, as for every event.
func decodeOpacus(root *jsonValue, adj Adjacency) (Event, string, int, error) {
	m := map[string]*jsonValue{}
	for i, k := range root.keys {
		if _, dup := m[k]; dup {
			return nil, "", 0, fmt.Errorf("key %q given twice", k)
		}
		if k != "mechanism" && k != "history" {
			return nil, "", 0, fmt.Errorf("unknown key %q (an Opacus state has \"mechanism\" and \"history\")", k)
		}
		m[k] = root.vals[i]
	}
	mv, ok := m["mechanism"]
	if !ok {
		return nil, "", 0, fmt.Errorf(`missing key "mechanism" (one of %s)`, strings.Join(opacusMechanisms, ", "))
	}
	if mv.kind != '"' || !contains(opacusMechanisms, mv.text) {
		got := kindOf(mv)
		if mv.kind == '"' {
			got = strconv.Quote(mv.text)
		}
		return nil, "", 0, fmt.Errorf("mechanism is %s, want one of %s", got, strings.Join(opacusMechanisms, ", "))
	}
	hv, ok := m["history"]
	if !ok {
		return nil, "", 0, fmt.Errorf(`missing key "history" (a list of [sigma, q, steps])`)
	}
	if hv.kind != '[' {
		return nil, "", 0, fmt.Errorf("history is %s, want a list of [sigma, q, steps]", kindOf(hv))
	}
	evs := make([]Event, 0, len(hv.vals))
	for i, h := range hv.vals {
		at := fmt.Sprintf("history[%d]", i)
		if h.kind != '[' || len(h.vals) != 3 {
			n := ""
			if h.kind == '[' {
				n = fmt.Sprintf(" of %d values", len(h.vals))
			}
			return nil, "", 0, fmt.Errorf("%s is %s%s, want [sigma, q, steps]", at, kindOf(h), n)
		}
		var x [2]float64
		for j, f := range []string{"sigma", "q"} {
			v := h.vals[j]
			if v.kind != '0' {
				return nil, "", 0, fmt.Errorf("%s: %s is %s, want a number", at, f, kindOf(v))
			}
			y, err := strconv.ParseFloat(v.text, 64)
			if err != nil || !finite(y) {
				return nil, "", 0, fmt.Errorf("%s: %s = %s is not a finite float64", at, f, v.text)
			}
			x[j] = y
		}
		sv := h.vals[2]
		if sv.kind != '0' {
			return nil, "", 0, fmt.Errorf("%s: steps is %s, want a whole number", at, kindOf(sv))
		}
		steps, whole, big := exactInt(sv.text)
		switch {
		case big:
			return nil, "", 0, fmt.Errorf("%s: steps = %s is too large: want at most %d (2^53)", at, sv.text, MaxCount)
		case !whole:
			return nil, "", 0, fmt.Errorf("%s: steps = %s is not a whole number", at, sv.text)
		}
		sigma := x[0]
		if adj == ReplaceOne {
			sigma /= 2
		}
		evs = append(evs, SelfComposed{Event: PoissonSampled{SamplingRate: x[1], Event: Gaussian{NoiseMultiplier: sigma}}, Count: int(steps)})
	}
	switch len(evs) {
	case 0:
		return NoOp{}, mv.text, 0, nil
	case 1:
		return evs[0], mv.text, 1, nil
	}
	return Composed{Events: evs}, mv.text, len(evs), nil
}
