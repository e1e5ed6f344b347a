package accounting

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// The JSON form of events is the one Google's dp_accounting gives a DpEvent
// through event.to_named_tuple(), converted to a dict recursively: an
// object with module_name, class_name and dp_accounting's own field names,
// in dp_accounting's field order. docs/events.md has the Python side.

// Module names of the JSON form: dp_accounting's, and the one of events
// dp_accounting does not have (ShuffledDpEvent), which it cannot read.
const (
	dpEventModule = "dp_accounting.dp_event"
	dpcalcModule  = "dpcalc"
)

// eventClass is one event class of the JSON form: its names and fields in
// dp_accounting's order.
type eventClass struct {
	module, class string
	fields        []string
}

var eventClasses = []eventClass{
	{dpEventModule, "GaussianDpEvent", []string{"noise_multiplier"}},
	{dpEventModule, "LaplaceDpEvent", []string{"noise_multiplier"}},
	{dpEventModule, "PoissonSampledDpEvent", []string{"sampling_probability", "event"}},
	{dpEventModule, "SampledWithoutReplacementDpEvent", []string{"source_dataset_size", "sample_size", "event"}},
	{dpcalcModule, "ShuffledDpEvent", []string{"dataset_size", "batch_size", "event"}},
	{dpEventModule, "SelfComposedDpEvent", []string{"event", "count"}},
	{dpEventModule, "ComposedDpEvent", []string{"events"}},
	{dpEventModule, "EpsilonDeltaDpEvent", []string{"epsilon", "delta"}},
	{dpEventModule, "ZCDpEvent", []string{"rho", "xi"}},
	{dpEventModule, "NoOpDpEvent", nil},
	{dpEventModule, "NonPrivateDpEvent", nil},
}

func classOf(name string) (eventClass, bool) {
	for _, c := range eventClasses {
		if c.class == name {
			return c, true
		}
	}
	return eventClass{}, false
}

func classNames() string {
	names := make([]string, len(eventClasses))
	for i, c := range eventClasses {
		names[i] = c.class
	}
	return strings.Join(names, ", ")
}

// MarshalEvent encodes e as compact JSON in dp_accounting's DpEvent form,
// recursively:
//
//	{"module_name":"dp_accounting.dp_event","class_name":"PoissonSampledDpEvent",
//	 "sampling_probability":0.01,"event":{"module_name":"dp_accounting.dp_event",
//	 "class_name":"GaussianDpEvent","noise_multiplier":4}}
//
// [Shuffled] has no dp_accounting class; it is written as class
// ShuffledDpEvent of module "dpcalc", which dp_accounting cannot read. It
// returns an *UnsupportedEventError for nil or unknown events and a
// *ParamError for a non-finite parameter (JSON has no NaN or Inf).
func MarshalEvent(e Event) ([]byte, error) {
	if err := checkEventTree(e, ""); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := writeEvent(&b, e, ""); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

type jsonField struct {
	name  string
	value any // float64, int, Event or []Event
}

// writeEvent writes e; path is e's path in the format of [Normalize].
func writeEvent(b *bytes.Buffer, e Event, path string) error {
	var class string
	var fields []jsonField
	switch e := e.(type) {
	case Gaussian:
		class, fields = "GaussianDpEvent", []jsonField{{"noise_multiplier", e.NoiseMultiplier}}
	case Laplace:
		class, fields = "LaplaceDpEvent", []jsonField{{"noise_multiplier", e.NoiseMultiplier}}
	case PoissonSampled:
		class, fields = "PoissonSampledDpEvent", []jsonField{{"sampling_probability", e.SamplingRate}, {"event", e.Event}}
	case SampledWithoutReplacement:
		class, fields = "SampledWithoutReplacementDpEvent", []jsonField{{"source_dataset_size", e.SourceDatasetSize}, {"sample_size", e.SampleSize}, {"event", e.Event}}
	case Shuffled:
		class, fields = "ShuffledDpEvent", []jsonField{{"dataset_size", e.DatasetSize}, {"batch_size", e.BatchSize}, {"event", e.Event}}
	case SelfComposed:
		class, fields = "SelfComposedDpEvent", []jsonField{{"event", e.Event}, {"count", e.Count}}
	case Composed:
		class, fields = "ComposedDpEvent", []jsonField{{"events", e.Events}}
	case EpsilonDelta:
		class, fields = "EpsilonDeltaDpEvent", []jsonField{{"epsilon", e.Epsilon}, {"delta", e.Delta}}
	case ZCDP:
		class, fields = "ZCDpEvent", []jsonField{{"rho", e.Rho}, {"xi", e.Xi}}
	case NoOp:
		class = "NoOpDpEvent"
	case NonPrivate:
		class = "NonPrivateDpEvent"
	default:
		return &UnsupportedEventError{Event: e, Path: path, Reason: "no JSON encoding for this event type"}
	}
	c, _ := classOf(class)
	path = join(path, eventName(e))
	fmt.Fprintf(b, `{"module_name":%q,"class_name":%q`, c.module, c.class)
	for i, f := range fields {
		fmt.Fprintf(b, ",%q:", f.name)
		switch v := f.value.(type) {
		case float64:
			if !finite(v) {
				return &ParamError{Name: f.name, Value: v, Path: path, Want: "a finite number (JSON has no NaN or Inf)"}
			}
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		case int:
			b.WriteString(strconv.Itoa(v))
		case Event:
			if err := writeEvent(b, v, path); err != nil {
				return err
			}
		case []Event:
			b.WriteByte('[')
			for j, s := range v {
				if j > 0 {
					b.WriteByte(',')
				}
				if err := writeEvent(b, s, fmt.Sprintf("%s[%d]", path, j)); err != nil {
					return err
				}
			}
			b.WriteByte(']')
		default: // a nil Event (checkEventTree refuses it first)
			return &UnsupportedEventError{Path: path, Reason: fmt.Sprintf("nil event in field %d", i)}
		}
	}
	b.WriteByte('}')
	return nil
}

// dpEventError is an error in the JSON form of an event: Path is the JSON
// path of the object or field ("$.event.events[1]"), Class its class_name
// when known.
type dpEventError struct {
	Path, Class, Msg string
	Err              error
}

func (e *dpEventError) Error() string {
	at := e.Path
	if e.Class != "" {
		at += " (" + e.Class + ")"
	}
	return "accounting: event JSON at " + at + ": " + e.Msg
}

func (e *dpEventError) Unwrap() error { return e.Err }

// UnmarshalEvent decodes one event in dp_accounting's DpEvent form (as
// [MarshalEvent] writes it, or as dp_accounting's to_named_tuple()
// converted to a dict recursively). It is strict, so that a file never
// silently means a different mechanism: an unknown class_name, a
// module_name other than the class's, an unknown, duplicate or missing
// field (ZCDpEvent's xi may be missing: it defaults to 0, as in
// dp_accounting), a non-integer count or size, or data after the event is an
// error naming the JSON path and class. Integers above [MaxCount]
// are refused; ranges (σ ≥ 0, q ∈ [0, 1], counts ≥ 1, ...) are checked by
// [Normalize], which callers run under their neighbouring relation.
func UnmarshalEvent(data []byte) (Event, error) {
	return UnmarshalEventContext(context.Background(), data)
}

// UnmarshalEventContext is [UnmarshalEvent] that returns ctx's error when
// ctx is done, checked every 1024 elements of a ComposedDpEvent (a file
// of a million phases takes tens of seconds to decode).
func UnmarshalEventContext(ctx context.Context, data []byte) (Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, jsonErr("$", "", err, len(data))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &dpEventError{Path: "$", Msg: fmt.Sprintf("data after the event at byte %d", dec.InputOffset())}
	}
	return decodeEvent(ctx, raw, "$", 0)
}

func jsonErr(path, class string, err error, n int) error {
	var se *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return &dpEventError{Path: path, Class: class, Msg: fmt.Sprintf("truncated (JSON ends after %d bytes)", n), Err: err}
	case errors.As(err, &se):
		return &dpEventError{Path: path, Class: class, Msg: fmt.Sprintf("not valid JSON at byte %d: %v", se.Offset, err), Err: err}
	}
	return &dpEventError{Path: path, Class: class, Msg: err.Error(), Err: err}
}

const maxEventDepth = 64

// object reads a JSON object's members in order, refusing duplicates.
func object(raw json.RawMessage, path string) ([]string, map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	t, err := dec.Token()
	if err != nil {
		return nil, nil, jsonErr(path, "", err, len(raw))
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, nil, &dpEventError{Path: path, Msg: fmt.Sprintf("want an event object with class_name, got %s", kindOf(raw))}
	}
	var keys []string
	m := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, jsonErr(path, "", err, len(raw))
		}
		k := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, jsonErr(path+"."+k, "", err, len(raw))
		}
		if _, dup := m[k]; dup {
			return nil, nil, &dpEventError{Path: path, Msg: fmt.Sprintf("field %q given twice", k)}
		}
		keys = append(keys, k)
		m[k] = v
	}
	return keys, m, nil
}

// kindOf names the JSON type of raw for messages.
func kindOf(raw json.RawMessage) string {
	s := bytes.TrimSpace(raw)
	if len(s) == 0 {
		return "nothing"
	}
	switch s[0] {
	case '{':
		return "an object"
	case '[':
		return "an array (a namedtuple dumped without converting it to a dict? see docs/events.md)"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

func decodeEvent(ctx context.Context, raw json.RawMessage, path string, depth int) (Event, error) {
	if depth > maxEventDepth {
		return nil, &dpEventError{Path: path, Msg: fmt.Sprintf("events nested deeper than %d", maxEventDepth)}
	}
	keys, m, err := object(raw, path)
	if err != nil {
		return nil, err
	}
	var class, module string
	if err := str(m, "class_name", path, &class); err != nil {
		return nil, err
	}
	if class == "" {
		return nil, &dpEventError{Path: path, Msg: "missing class_name (every event object names its dp_accounting class)"}
	}
	c, ok := classOf(class)
	if !ok {
		return nil, &dpEventError{Path: path, Msg: fmt.Sprintf("unknown class_name %q; dpcalc reads %s", class, classNames())}
	}
	if err := str(m, "module_name", path, &module); err != nil {
		return nil, err
	}
	if _, given := m["module_name"]; given && module != c.module {
		return nil, &dpEventError{Path: path, Class: class, Msg: fmt.Sprintf("module_name %q, want %q", module, c.module)}
	}
	for _, k := range keys {
		if k != "class_name" && k != "module_name" && !contains(c.fields, k) {
			want := "no fields"
			if len(c.fields) > 0 {
				want = "fields " + strings.Join(c.fields, ", ")
			}
			return nil, &dpEventError{Path: path, Class: class, Msg: fmt.Sprintf("unknown field %q (%s has %s)", k, class, want)}
		}
	}
	d := fieldDecoder{ctx: ctx, m: m, path: path, class: class, depth: depth}
	var e Event
	switch class {
	case "GaussianDpEvent":
		e = Gaussian{NoiseMultiplier: d.float("noise_multiplier")}
	case "LaplaceDpEvent":
		e = Laplace{NoiseMultiplier: d.float("noise_multiplier")}
	case "PoissonSampledDpEvent":
		e = PoissonSampled{SamplingRate: d.float("sampling_probability"), Event: d.event("event")}
	case "SampledWithoutReplacementDpEvent":
		e = SampledWithoutReplacement{SourceDatasetSize: d.int("source_dataset_size"), SampleSize: d.int("sample_size"), Event: d.event("event")}
	case "ShuffledDpEvent":
		e = Shuffled{DatasetSize: d.int("dataset_size"), BatchSize: d.int("batch_size"), Event: d.event("event")}
	case "SelfComposedDpEvent":
		e = SelfComposed{Event: d.event("event"), Count: d.int("count")}
	case "ComposedDpEvent":
		e = Composed{Events: d.events("events")}
	case "EpsilonDeltaDpEvent":
		e = EpsilonDelta{Epsilon: d.float("epsilon"), Delta: d.float("delta")}
	case "ZCDpEvent":
		z := ZCDP{Rho: d.float("rho")}
		if _, ok := m["xi"]; ok {
			z.Xi = d.float("xi")
		}
		e = z
	case "NoOpDpEvent":
		e = NoOp{}
	case "NonPrivateDpEvent":
		e = NonPrivate{}
	}
	if d.err != nil {
		return nil, d.err
	}
	return e, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func str(m map[string]json.RawMessage, key, path string, out *string) error {
	raw, ok := m[key]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &dpEventError{Path: path + "." + key, Msg: fmt.Sprintf("want a string, got %s", kindOf(raw))}
	}
	return nil
}

// fieldDecoder decodes the fields of one event object, keeping the first
// error.
type fieldDecoder struct {
	ctx         context.Context
	m           map[string]json.RawMessage
	path, class string
	depth       int
	err         error
}

func (d *fieldDecoder) fail(field, format string, args ...any) {
	if d.err == nil {
		d.err = &dpEventError{Path: d.path + "." + field, Class: d.class, Msg: fmt.Sprintf(format, args...)}
	}
}

func (d *fieldDecoder) get(field string) (json.RawMessage, bool) {
	raw, ok := d.m[field]
	if !ok {
		if d.err == nil {
			d.err = &dpEventError{Path: d.path, Class: d.class, Msg: fmt.Sprintf("missing field %q", field)}
		}
	}
	return raw, ok && d.err == nil
}

func (d *fieldDecoder) number(field string) (json.Number, bool) {
	raw, ok := d.get(field)
	if !ok {
		return "", false
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		d.fail(field, "%v", err)
		return "", false
	}
	n, isNum := v.(json.Number)
	if !isNum {
		d.fail(field, "want a number, got %s", kindOf(raw))
		return "", false
	}
	return n, true
}

func (d *fieldDecoder) float(field string) float64 {
	n, ok := d.number(field)
	if !ok {
		return 0
	}
	x, err := strconv.ParseFloat(string(n), 64)
	if err != nil || !finite(x) {
		d.fail(field, "%s is not a finite float64", n)
		return 0
	}
	return x
}

func (d *fieldDecoder) int(field string) int {
	n, ok := d.number(field)
	if !ok {
		return 0
	}
	x, err := strconv.ParseFloat(string(n), 64)
	if err != nil || x != math.Trunc(x) {
		d.fail(field, "%s is not an integer", n)
		return 0
	}
	if math.Abs(x) > MaxCount {
		d.fail(field, "%s is too large (at most %d)", n, MaxCount)
		return 0
	}
	return int(x)
}

func (d *fieldDecoder) event(field string) Event {
	raw, ok := d.get(field)
	if !ok {
		return nil
	}
	e, err := decodeEvent(d.ctx, raw, d.path+"."+field, d.depth+1)
	if err != nil && d.err == nil {
		d.err = err
	}
	return e
}

func (d *fieldDecoder) events(field string) []Event {
	raw, ok := d.get(field)
	if !ok {
		return nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || list == nil {
		d.fail(field, "want a list of events, got %s", kindOf(raw))
		return nil
	}
	out := make([]Event, len(list))
	for i, r := range list {
		if i%1024 == 1023 {
			if err := d.ctx.Err(); err != nil {
				if d.err == nil {
					d.err = err
				}
				return nil
			}
		}
		e, err := decodeEvent(d.ctx, r, fmt.Sprintf("%s.%s[%d]", d.path, field, i), d.depth+1)
		if err != nil {
			if d.err == nil {
				d.err = err
			}
			return nil
		}
		out[i] = e
	}
	return out
}
