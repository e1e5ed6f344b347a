package accounting

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The JSON form of events is the one Google's dp_accounting gives a DpEvent
// through event.to_named_tuple(), converted to a dict recursively: an
// object with module_name, class_name and dp_accounting's own field names,
// in dp_accounting's field order. docs/events.md has the Python side.

// Module names of the JSON form: dp_accounting's, and the one of events
// dp_accounting does not have (ShuffledDpEvent and the custom mechanisms'
// classes), which it cannot read.
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
	{dpEventModule, "DiscreteGaussianDpEvent", []string{"sigma", "sensitivity", "dimension"}},
	{dpEventModule, "DiscreteLaplaceDpEvent", []string{"noise_parameter", "sensitivity"}},
	{dpEventModule, "PoissonSampledDpEvent", []string{"sampling_probability", "event"}},
	{dpEventModule, "SampledWithoutReplacementDpEvent", []string{"source_dataset_size", "sample_size", "event"}},
	{dpcalcModule, "ShuffledDpEvent", []string{"dataset_size", "batch_size", "event"}},
	{dpEventModule, "TruncatedSubsampledGaussianDpEvent", []string{"dataset_size", "sampling_probability", "truncated_batch_size", "noise_multiplier"}},
	{dpEventModule, "RandomAllocationDpEvent", []string{"event", "num_selected", "num_steps"}},
	{dpEventModule, "SelfComposedDpEvent", []string{"event", "count"}},
	{dpEventModule, "ComposedDpEvent", []string{"events"}},
	{dpEventModule, "EpsilonDeltaDpEvent", []string{"epsilon", "delta"}},
	{dpEventModule, "ZCDpEvent", []string{"rho", "xi"}},
	{dpEventModule, "NoOpDpEvent", nil},
	{dpEventModule, "NonPrivateDpEvent", nil},
	{dpEventModule, "RandomizedResponseDpEvent", []string{"noise_parameter", "num_buckets"}},
	{dpEventModule, "ExponentialMechanismDpEvent", []string{"epsilon"}},
	{dpEventModule, "PermuteAndFlipDpEvent", []string{"epsilon"}},
	{dpEventModule, "SingleEpochTreeAggregationDpEvent", []string{"noise_multiplier", "step_counts"}},
	{dpEventModule, "MixtureOfGaussiansDpEvent", []string{"standard_deviation", "sensitivities", "sampling_probs"}},
	{dpcalcModule, "BinomialMixtureOfGaussiansDpEvent", []string{"standard_deviation", "sensitivities", "sampling_probs", "binomial_count", "binomial_rate"}},
	{dpcalcModule, "RdpCurveDpEvent", []string{"orders", "rdp", "adjacency"}},
	{dpcalcModule, "PldPmfDpEvent", []string{"value_discretization_interval", "pessimistic_estimate", "symmetric",
		"remove_lower_loss", "remove_probs", "remove_infinity_mass", "add_lower_loss", "add_probs", "add_infinity_mass", "adjacency"}},
	{dpcalcModule, "PrivacyProfileDpEvent", []string{"epsilons", "deltas", "adjacency"}},
}

// refusedClasses are dp_accounting's event classes that no dpcalc
// accountant bounds, with the reason: reading one is an error naming it,
// so that a file is never accounted without its part.
var refusedClasses = map[string]string{
	"UnsupportedDpEvent": "dp_accounting marks with it an operation that has no DP description; " +
		"no accountant bounds it",
	"SampledWithReplacementDpEvent": "sampling with replacement (a record may appear several times in one " +
		"sample) is bounded by none of dpcalc's accountants; describe the sampling as Poisson or without replacement if that is what ran",
	"RepeatAndSelectDpEvent": "repeating a mechanism a random number of times and selecting the best " +
		"output (Papernot and Steinke 2022) is bounded by none of dpcalc's accountants",
	"MixtureOfGaussiansDpEvent":          "the mixture-of-Gaussians mechanism is bounded by none of dpcalc's accountants yet",
	"TruncatedSubsampledGaussianDpEvent": "the truncated subsampled Gaussian is bounded by none of dpcalc's accountants",
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
// ShuffledDpEvent of module "dpcalc", which dp_accounting cannot read, as
// are the custom mechanisms [RdpCurve], [PldPmf] and [PrivacyProfile]
// (classes RdpCurveDpEvent, PldPmfDpEvent, PrivacyProfileDpEvent). It
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
	value any // float64, int, bool, string, []float64, []int, Event, []Event, or nil for null
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
	case DiscreteGaussian:
		var dim any // dp_accounting's None: unknown
		if e.Dimension != 0 {
			dim = e.Dimension
		}
		class, fields = "DiscreteGaussianDpEvent", []jsonField{{"sigma", e.Sigma}, {"sensitivity", e.Sensitivity}, {"dimension", dim}}
	case DiscreteLaplace:
		class, fields = "DiscreteLaplaceDpEvent", []jsonField{{"noise_parameter", e.NoiseParameter}, {"sensitivity", e.Sensitivity}}
	case PoissonSampled:
		class, fields = "PoissonSampledDpEvent", []jsonField{{"sampling_probability", e.SamplingRate}, {"event", e.Event}}
	case SampledWithoutReplacement:
		class, fields = "SampledWithoutReplacementDpEvent", []jsonField{{"source_dataset_size", e.SourceDatasetSize}, {"sample_size", e.SampleSize}, {"event", e.Event}}
	case Shuffled:
		class, fields = "ShuffledDpEvent", []jsonField{{"dataset_size", e.DatasetSize}, {"batch_size", e.BatchSize}, {"event", e.Event}}
	case TruncatedSubsampledGaussian:
		class, fields = "TruncatedSubsampledGaussianDpEvent", []jsonField{{"dataset_size", e.DatasetSize}, {"sampling_probability", e.SamplingRate}, {"truncated_batch_size", e.TruncatedBatchSize}, {"noise_multiplier", e.NoiseMultiplier}}
	case RandomAllocation:
		class, fields = "RandomAllocationDpEvent", []jsonField{{"event", e.Event}, {"num_selected", e.NumSelected}, {"num_steps", e.NumSteps}}
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
	case RandomizedResponse:
		class, fields = "RandomizedResponseDpEvent", []jsonField{{"noise_parameter", e.NoiseParameter}, {"num_buckets", e.NumBuckets}}
	case ExponentialMechanism:
		class, fields = "ExponentialMechanismDpEvent", []jsonField{{"epsilon", e.Epsilon}}
	case PermuteAndFlip:
		class, fields = "PermuteAndFlipDpEvent", []jsonField{{"epsilon", e.Epsilon}}
	case MixtureOfGaussians:
		class, fields = "MixtureOfGaussiansDpEvent", []jsonField{{"standard_deviation", e.StandardDeviation},
			{"sensitivities", e.Sensitivities}, {"sampling_probs", e.SamplingProbs}}
		if e.BinomialCount != 0 || e.BinomialRate != 0 {
			// dp_accounting's class has no tail: dpcalc's own class, which
			// dp_accounting cannot read (docs/events.md says why).
			class = "BinomialMixtureOfGaussiansDpEvent"
			fields = append(fields, jsonField{"binomial_count", e.BinomialCount}, jsonField{"binomial_rate", e.BinomialRate})
		}
	case RdpCurve:
		class, fields = "RdpCurveDpEvent", []jsonField{{"orders", e.Orders}, {"rdp", e.RDP}}
		fields = withAdjacency(fields, e.Adjacency)
	case PldPmf:
		class, fields = "PldPmfDpEvent", []jsonField{{"value_discretization_interval", e.DiscretizationInterval},
			{"pessimistic_estimate", e.Pessimistic}, {"symmetric", e.Symmetric},
			{"remove_lower_loss", e.Remove.LowerLoss}, {"remove_probs", e.Remove.Probs}, {"remove_infinity_mass", e.Remove.InfinityMass}}
		if !e.Symmetric {
			fields = append(fields, jsonField{"add_lower_loss", e.Add.LowerLoss}, jsonField{"add_probs", e.Add.Probs},
				jsonField{"add_infinity_mass", e.Add.InfinityMass})
		}
		fields = withAdjacency(fields, e.Adjacency)
	case PrivacyProfile:
		class, fields = "PrivacyProfileDpEvent", []jsonField{{"epsilons", e.Epsilons}, {"deltas", e.Deltas}}
		fields = withAdjacency(fields, e.Adjacency)
	case SingleEpochTreeAggregation:
		var counts any = e.StepCounts
		if e.Scalar && len(e.StepCounts) == 1 {
			counts = e.StepCounts[0]
		}
		class, fields = "SingleEpochTreeAggregationDpEvent", []jsonField{{"noise_multiplier", e.NoiseMultiplier}, {"step_counts", counts}}
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
				return &ParamError{Name: f.name, Value: v, Path: path, Want: "a finite number (JSON has no infinities)"}
			}
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		case int:
			b.WriteString(strconv.Itoa(v))
		case []float64:
			b.WriteByte('[')
			for j, x := range v {
				if !finite(x) {
					return &ParamError{Name: f.name, Value: x, Path: path, Want: "finite numbers (JSON has no infinities)"}
				}
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
			}
			b.WriteByte(']')
		case []int:
			b.WriteByte('[')
			for j, n := range v {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strconv.Itoa(n))
			}
			b.WriteByte(']')
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
		case bool:
			b.WriteString(strconv.FormatBool(v))
		case string:
			q, _ := json.Marshal(v)
			b.Write(q)
		case nil: // an optional value given as None
			b.WriteString("null")
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
//
// Input is bounded before it is parsed ([MaxEventJSONBytes] in all, JSON
// strings of at most [MaxEventJSONString] bytes, number literals of at most
// [MaxEventJSONNumber] characters, objects and arrays nested at most
// [MaxEventJSONDepth] deep): a file past a limit is refused at the first
// byte that breaks it, naming the limit, without being decoded.
func UnmarshalEvent(data []byte) (Event, error) {
	return UnmarshalEventContext(context.Background(), data)
}

// UnmarshalEventContext is [UnmarshalEvent] that returns ctx's error when
// ctx is done, checked before and after parsing and every 1024 elements of
// a ComposedDpEvent while decoding (a file of a million phases takes
// seconds to decode).
func UnmarshalEventContext(ctx context.Context, data []byte) (Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := scanEventLimits(data); err != nil {
		return nil, err
	}
	ps := &jsonParser{data: data}
	root, err := ps.value()
	if err != nil {
		return nil, err
	}
	if ps.skipSpace(); ps.pos < len(data) {
		return nil, &dpEventError{Path: "$", Msg: fmt.Sprintf("data after the event at byte %d", ps.pos)}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return decodeEvent(ctx, root, "$", 0)
}

// jsonValue is one JSON value of an event file, parsed once: kind is '{',
// '[', '"' (text is the string), '0' (text is the number's literal), 't',
// 'f' or 'n'. An object keeps its members in order, duplicates included.
type jsonValue struct {
	kind byte
	text string
	keys []string
	vals []*jsonValue
}

// jsonParser parses JSON in one pass (UnmarshalEvent's earlier decoder
// re-decoded every level of nesting: 36 s for 60 MB of NoOp events, 4.5
// min nested 63 deep). scanEventLimits has bounded the nesting.
type jsonParser struct {
	data []byte
	pos  int
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) fail(what string) error {
	if p.pos >= len(p.data) {
		return &dpEventError{Path: "$", Msg: fmt.Sprintf("truncated (JSON ends after %d bytes)", len(p.data))}
	}
	return &dpEventError{Path: "$", Msg: fmt.Sprintf("not valid JSON at byte %d: %s, found %q", p.pos, what, p.data[p.pos])}
}

func (p *jsonParser) value() (*jsonValue, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, p.fail("want a value")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		p.pos++
		v := &jsonValue{kind: '{'}
		p.skipSpace()
		if p.pos < len(p.data) && p.data[p.pos] == '}' {
			p.pos++
			return v, nil
		}
		for {
			p.skipSpace()
			if p.pos >= len(p.data) || p.data[p.pos] != '"' {
				return nil, p.fail("want a member name")
			}
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			if p.skipSpace(); p.pos >= len(p.data) || p.data[p.pos] != ':' {
				return nil, p.fail("want ':'")
			}
			p.pos++
			x, err := p.value()
			if err != nil {
				return nil, err
			}
			v.keys, v.vals = append(v.keys, k), append(v.vals, x)
			if p.skipSpace(); p.pos < len(p.data) && p.data[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.pos < len(p.data) && p.data[p.pos] == '}' {
				p.pos++
				return v, nil
			}
			return nil, p.fail("want ',' or '}'")
		}
	case c == '[':
		p.pos++
		v := &jsonValue{kind: '['}
		p.skipSpace()
		if p.pos < len(p.data) && p.data[p.pos] == ']' {
			p.pos++
			return v, nil
		}
		for {
			x, err := p.value()
			if err != nil {
				return nil, err
			}
			v.vals = append(v.vals, x)
			if p.skipSpace(); p.pos < len(p.data) && p.data[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.pos < len(p.data) && p.data[p.pos] == ']' {
				p.pos++
				return v, nil
			}
			return nil, p.fail("want ',' or ']'")
		}
	case c == '"':
		t, err := p.str()
		return &jsonValue{kind: '"', text: t}, err
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(p.data[p.pos:], []byte(lit)) {
			p.pos += len(lit)
			return &jsonValue{kind: lit[0]}, nil
		}
	}
	return nil, p.fail("want a value")
}

// str reads a string at p.pos (an opening quote).
func (p *jsonParser) str() (string, error) {
	start := p.pos
	p.pos++
	esc := false
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c < 0x20:
			return "", p.fail("control character in a string")
		case c == '\\':
			esc = true
			p.pos += 2
			continue
		case c == '"':
			p.pos++
			if !esc {
				return string(p.data[start+1 : p.pos-1]), nil
			}
			var out string
			if err := json.Unmarshal(p.data[start:p.pos], &out); err != nil {
				p.pos = start
				return "", p.fail("invalid escape in a string")
			}
			return out, nil
		}
		p.pos++
	}
	p.pos = len(p.data)
	return "", p.fail("unterminated string")
}

// number reads a number literal (JSON's grammar) at p.pos.
func (p *jsonParser) number() (*jsonValue, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.data) && p.data[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return nil, p.fail("want a digit")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.fail("want a digit after '.'")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.fail("want a digit in the exponent")
		}
	}
	return &jsonValue{kind: '0', text: string(p.data[start:p.pos])}, nil
}

const maxEventDepth = 64

// Limits of the JSON form that UnmarshalEvent reads. A DpEvent of a
// training is a few kilobytes (a ComposedDpEvent of 10,000 phases is about
// 2 MB); its strings are class and module names and its numbers float64
// or integer literals.
const (
	// MaxEventJSONBytes is the largest event JSON read: 64 MiB.
	MaxEventJSONBytes = 64 << 20
	// MaxEventJSONString is the longest JSON string, in bytes as written.
	MaxEventJSONString = 1024
	// MaxEventJSONNumber is the longest number literal, in characters.
	MaxEventJSONNumber = 64
	// MaxEventJSONDepth is the deepest nesting of objects and arrays: an
	// event nested maxEventDepth deep in ComposedDpEvent lists.
	MaxEventJSONDepth = 2*maxEventDepth + 2
)

// scanEventLimits checks data against the limits of UnmarshalEvent in one
// pass, before any decoding (whose cost grows with the nesting depth times
// the size).
func scanEventLimits(data []byte) error {
	if len(data) > MaxEventJSONBytes {
		return &dpEventError{Path: "$", Msg: fmt.Sprintf("%d bytes, more than the %d (64 MiB) an event may have", len(data), MaxEventJSONBytes)}
	}
	depth, start, num := 0, 0, 0
	inStr, esc := false, false
	for i, c := range data {
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			if i-start > MaxEventJSONString {
				return &dpEventError{Path: "$", Msg: fmt.Sprintf("string at byte %d longer than %d bytes (the longest an event needs)", start, MaxEventJSONString)}
			}
			continue
		}
		switch {
		case c == '"':
			inStr, start, num = true, i, 0
		case c == '{' || c == '[':
			if depth++; depth > MaxEventJSONDepth {
				return &dpEventError{Path: "$", Msg: fmt.Sprintf("nested deeper than %d objects and arrays at byte %d", MaxEventJSONDepth, i)}
			}
			num = 0
		case c == '}' || c == ']':
			depth--
			num = 0
		case c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E':
			if num++; num > MaxEventJSONNumber {
				return &dpEventError{Path: "$", Msg: fmt.Sprintf("number at byte %d longer than %d characters", i-num+1, MaxEventJSONNumber)}
			}
		default:
			num = 0
		}
	}
	return nil
}

// object returns a JSON object's members in order, refusing duplicates.
func object(v *jsonValue, path string) ([]string, map[string]*jsonValue, error) {
	if v.kind != '{' {
		return nil, nil, &dpEventError{Path: path, Msg: fmt.Sprintf("want an event object with class_name, got %s", kindOf(v))}
	}
	m := make(map[string]*jsonValue, len(v.keys))
	for i, k := range v.keys {
		if _, dup := m[k]; dup {
			return nil, nil, &dpEventError{Path: path, Msg: fmt.Sprintf("field %q given twice", k)}
		}
		m[k] = v.vals[i]
	}
	return v.keys, m, nil
}

// kindOf names the JSON type of v for messages.
func kindOf(v *jsonValue) string {
	switch v.kind {
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

func decodeEvent(ctx context.Context, raw *jsonValue, path string, depth int) (Event, error) {
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
	if reason, refused := refusedClasses[class]; refused && !ok {
		return nil, &dpEventError{Path: path, Class: class, Msg: "refused: " + reason}
	}
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
	case "DiscreteGaussianDpEvent":
		// sensitivity defaults to 1 and dimension to None (0, unknown), as
		// in dp_accounting.
		g := DiscreteGaussian{Sigma: d.float("sigma"), Sensitivity: 1}
		if _, ok := m["sensitivity"]; ok {
			g.Sensitivity = d.float("sensitivity")
		}
		if v, ok := m["dimension"]; ok && v.kind != 'n' {
			g.Dimension = d.int("dimension")
		}
		e = g
	case "DiscreteLaplaceDpEvent":
		e = DiscreteLaplace{NoiseParameter: d.float("noise_parameter"), Sensitivity: d.int("sensitivity")}
	case "PoissonSampledDpEvent":
		e = PoissonSampled{SamplingRate: d.float("sampling_probability"), Event: d.event("event")}
	case "SampledWithoutReplacementDpEvent":
		e = SampledWithoutReplacement{SourceDatasetSize: d.int("source_dataset_size"), SampleSize: d.int("sample_size"), Event: d.event("event")}
	case "ShuffledDpEvent":
		e = Shuffled{DatasetSize: d.int("dataset_size"), BatchSize: d.int("batch_size"), Event: d.event("event")}
	case "TruncatedSubsampledGaussianDpEvent":
		e = TruncatedSubsampledGaussian{DatasetSize: d.int("dataset_size"), SamplingRate: d.float("sampling_probability"), TruncatedBatchSize: d.int("truncated_batch_size"), NoiseMultiplier: d.float("noise_multiplier")}
	case "RandomAllocationDpEvent":
		e = RandomAllocation{Event: d.event("event"), NumSelected: d.int("num_selected"), NumSteps: d.int("num_steps")}
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
	case "RandomizedResponseDpEvent":
		e = RandomizedResponse{NoiseParameter: d.float("noise_parameter"), NumBuckets: d.int("num_buckets")}
	case "ExponentialMechanismDpEvent":
		e = ExponentialMechanism{Epsilon: d.float("epsilon")}
	case "PermuteAndFlipDpEvent":
		e = PermuteAndFlip{Epsilon: d.float("epsilon")}
	case "MixtureOfGaussiansDpEvent":
		e = MixtureOfGaussians{StandardDeviation: d.float("standard_deviation"),
			Sensitivities: d.floats("sensitivities"), SamplingProbs: d.floats("sampling_probs")}
	case "BinomialMixtureOfGaussiansDpEvent":
		e = MixtureOfGaussians{StandardDeviation: d.float("standard_deviation"),
			Sensitivities: d.floats("sensitivities"), SamplingProbs: d.floats("sampling_probs"),
			BinomialCount: d.int("binomial_count"), BinomialRate: d.float("binomial_rate")}
	case "RdpCurveDpEvent":
		e = RdpCurve{Orders: d.floats("orders"), RDP: d.floats("rdp"), Adjacency: d.optString("adjacency")}
	case "PldPmfDpEvent":
		p := PldPmf{DiscretizationInterval: d.float("value_discretization_interval"),
			Pessimistic: d.optBool("pessimistic_estimate"), Symmetric: d.optBool("symmetric"),
			Remove:    PmfSide{LowerLoss: d.int("remove_lower_loss"), Probs: d.floats("remove_probs"), InfinityMass: d.float("remove_infinity_mass")},
			Adjacency: d.optString("adjacency")}
		_, a1 := m["add_probs"]
		_, a2 := m["add_lower_loss"]
		_, a3 := m["add_infinity_mass"]
		if a1 || a2 || a3 || !p.Symmetric { // an add field given with symmetric: true is read, and refused if not empty
			p.Add = PmfSide{LowerLoss: d.int("add_lower_loss"), Probs: d.floats("add_probs"), InfinityMass: d.float("add_infinity_mass")}
		}
		e = p
	case "PrivacyProfileDpEvent":
		e = PrivacyProfile{Epsilons: d.floats("epsilons"), Deltas: d.floats("deltas"), Adjacency: d.optString("adjacency")}
	case "SingleEpochTreeAggregationDpEvent":
		counts, scalar := d.ints("step_counts")
		e = SingleEpochTreeAggregation{NoiseMultiplier: d.float("noise_multiplier"), StepCounts: counts, Scalar: scalar}
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

func str(m map[string]*jsonValue, key, path string, out *string) error {
	v, ok := m[key]
	if !ok {
		return nil
	}
	if v.kind != '"' {
		return &dpEventError{Path: path + "." + key, Msg: fmt.Sprintf("want a string, got %s", kindOf(v))}
	}
	*out = v.text
	return nil
}

// fieldDecoder decodes the fields of one event object, keeping the first
// error.
type fieldDecoder struct {
	ctx         context.Context
	m           map[string]*jsonValue
	path, class string
	depth       int
	err         error
}

func (d *fieldDecoder) fail(field, format string, args ...any) {
	if d.err == nil {
		d.err = &dpEventError{Path: d.path + "." + field, Class: d.class, Msg: fmt.Sprintf(format, args...)}
	}
}

func (d *fieldDecoder) get(field string) (*jsonValue, bool) {
	raw, ok := d.m[field]
	if !ok {
		if d.err == nil {
			d.err = &dpEventError{Path: d.path, Class: d.class, Msg: fmt.Sprintf("missing field %q", field)}
		}
	}
	return raw, ok && d.err == nil
}

func (d *fieldDecoder) number(field string) (json.Number, bool) {
	v, ok := d.get(field)
	if !ok {
		return "", false
	}
	if v.kind != '0' {
		d.fail(field, "want a number, got %s", kindOf(v))
		return "", false
	}
	return json.Number(v.text), true
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
	x, whole, big := exactInt(string(n))
	switch {
	case big:
		d.fail(field, "%s is too large: want at most %d (2^53)", n, MaxCount)
		return 0
	case !whole:
		d.fail(field, "%s is not an integer", n)
		return 0
	}
	return int(x)
}

// exactInt reads a JSON number literal as an exact integer, without
// rounding through float64 (9007199254740993 is not a float64): x and
// whole = true for a whole number of magnitude at most MaxCount (1e3 and
// 5000.0 are whole), big = true for a whole number of larger magnitude,
// whole = false for a fractional one.
func exactInt(lit string) (x int64, whole, big bool) {
	neg := strings.HasPrefix(lit, "-")
	mant, expPart, hasExp := strings.Cut(strings.TrimPrefix(lit, "-"), "e")
	if !hasExp {
		mant, expPart, hasExp = strings.Cut(mant, "E")
	}
	ip, fp, _ := strings.Cut(mant, ".")
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(strings.TrimPrefix(expPart, "+"))
		if err != nil { // an exponent beyond ±2^63: 0, or tiny, or huge
			zero := strings.Trim(ip+fp, "0") == ""
			return 0, zero, !zero && !strings.HasPrefix(expPart, "-")
		}
		exp = e
	}
	digits := strings.TrimLeft(ip+fp, "0")
	shift := exp - len(fp) // value = digits · 10^shift
	for strings.HasSuffix(digits, "0") {
		digits, shift = digits[:len(digits)-1], shift+1
	}
	switch {
	case digits == "":
		return 0, true, false
	case len(digits)+shift > 17: // ≥ 10^16 > 2^53
		return 0, false, true
	case shift < 0:
		return 0, false, false
	}
	v, _ := strconv.ParseInt(digits, 10, 64)
	for ; shift > 0; shift-- {
		v *= 10
	}
	if v > MaxCount {
		return 0, false, true
	}
	if neg {
		v = -v
	}
	return v, true, false
}

// floats decodes a field that is a list of numbers.
func (d *fieldDecoder) floats(field string) []float64 {
	v, ok := d.get(field)
	if !ok {
		return nil
	}
	if v.kind != '[' {
		d.fail(field, "want a list of numbers, got %s", kindOf(v))
		return nil
	}
	out := make([]float64, len(v.vals))
	for i, x := range v.vals {
		at := fmt.Sprintf("%s[%d]", field, i)
		if x.kind != '0' {
			d.fail(at, "want a number, got %s", kindOf(x))
			return nil
		}
		y, err := strconv.ParseFloat(x.text, 64)
		if err != nil || !finite(y) {
			d.fail(at, "%s is not a finite float64", x.text)
			return nil
		}
		out[i] = y
	}
	return out
}

// ints decodes a field that is one integer (scalar true) or a list of
// integers, as dp_accounting's step_counts.
func (d *fieldDecoder) ints(field string) (out []int, scalar bool) {
	v, ok := d.get(field)
	if !ok {
		return nil, false
	}
	one := func(x *jsonValue, at string) (int, bool) {
		if x.kind != '0' {
			d.fail(at, "want an integer or a list of integers, got %s", kindOf(x))
			return 0, false
		}
		n, whole, big := exactInt(x.text)
		switch {
		case big:
			d.fail(at, "%s is too large: want at most %d (2^53)", x.text, MaxCount)
			return 0, false
		case !whole:
			d.fail(at, "%s is not an integer", x.text)
			return 0, false
		}
		return int(n), true
	}
	if v.kind != '[' {
		n, ok := one(v, field)
		if !ok {
			return nil, false
		}
		return []int{n}, true
	}
	out = make([]int, len(v.vals))
	for i, x := range v.vals {
		n, ok := one(x, fmt.Sprintf("%s[%d]", field, i))
		if !ok {
			return nil, false
		}
		out[i] = n
	}
	return out, false
}

// optBool decodes an optional boolean field (false when missing).
func (d *fieldDecoder) optBool(field string) bool {
	v, ok := d.m[field]
	if !ok || d.err != nil {
		return false
	}
	if v.kind != 't' && v.kind != 'f' {
		d.fail(field, "want true or false, got %s", kindOf(v))
		return false
	}
	return v.kind == 't'
}

// optString decodes an optional string field ("" when missing).
func (d *fieldDecoder) optString(field string) string {
	v, ok := d.m[field]
	if !ok || d.err != nil {
		return ""
	}
	if v.kind != '"' {
		d.fail(field, "want a string, got %s", kindOf(v))
		return ""
	}
	return v.text
}

// withAdjacency appends the adjacency field when one is stated.
func withAdjacency(fields []jsonField, adj string) []jsonField {
	if adj == "" {
		return fields
	}
	return append(fields, jsonField{"adjacency", adj})
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
	if raw.kind != '[' {
		d.fail(field, "want a list of events, got %s", kindOf(raw))
		return nil
	}
	list := raw.vals
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
