package accounting

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The legacy JSON form of events, with a "type" tag, of ledger versions 1
// and 2 (before dp_accounting's DpEvent form, see dpevent.go). It is only
// read (and re-encoded to verify a version 2 checksum); never change it.
const (
	tagGaussian       = "gaussian"
	tagPoissonSampled = "poisson_sampled"
	tagSelfComposed   = "self_composed"
	tagComposed       = "composed"
	tagEpsilonDelta   = "epsilon_delta"
	tagZCDP           = "zcdp"
	tagNoOp           = "noop"
	tagNonPrivate     = "non_private"
)

// marshalLegacyEvent encodes e as a JSON object with a "type" tag,
// recursively:
//
//	{"type":"poisson_sampled","sampling_rate":0.01,"event":{"type":"gaussian","noise_multiplier":4}}
//
// It returns an *UnsupportedEventError for nil events and for events the
// legacy form has no tag for.
func marshalLegacyEvent(e Event) ([]byte, error) {
	if err := checkEventTree(e, ""); err != nil {
		return nil, err
	}
	v, err := eventToJSON(e)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func eventToJSON(e Event) (any, error) {
	switch e := e.(type) {
	case Gaussian:
		return struct {
			Type string  `json:"type"`
			S    float64 `json:"noise_multiplier"`
		}{tagGaussian, e.NoiseMultiplier}, nil
	case PoissonSampled:
		in, err := eventToJSON(e.Event)
		if err != nil {
			return nil, err
		}
		return struct {
			Type  string  `json:"type"`
			Q     float64 `json:"sampling_rate"`
			Event any     `json:"event"`
		}{tagPoissonSampled, e.SamplingRate, in}, nil
	case SelfComposed:
		in, err := eventToJSON(e.Event)
		if err != nil {
			return nil, err
		}
		return struct {
			Type  string `json:"type"`
			Event any    `json:"event"`
			Count int    `json:"count"`
		}{tagSelfComposed, in, e.Count}, nil
	case Composed:
		evs := make([]any, len(e.Events))
		for i, s := range e.Events {
			v, err := eventToJSON(s)
			if err != nil {
				return nil, err
			}
			evs[i] = v
		}
		return struct {
			Type   string `json:"type"`
			Events []any  `json:"events"`
		}{tagComposed, evs}, nil
	case EpsilonDelta:
		return struct {
			Type    string  `json:"type"`
			Epsilon float64 `json:"epsilon"`
			Delta   float64 `json:"delta"`
		}{tagEpsilonDelta, e.Epsilon, e.Delta}, nil
	case ZCDP:
		return struct {
			Type string  `json:"type"`
			Rho  float64 `json:"rho"`
			Xi   float64 `json:"xi"`
		}{tagZCDP, e.Rho, e.Xi}, nil
	case NoOp:
		return struct {
			Type string `json:"type"`
		}{tagNoOp}, nil
	case NonPrivate:
		return struct {
			Type string `json:"type"`
		}{tagNonPrivate}, nil
	}
	return nil, &UnsupportedEventError{Event: e, Reason: "no legacy JSON encoding for this event type"}
}

// unmarshalLegacyEvent decodes an event written by marshalLegacyEvent.
// Unknown type tags and unknown fields are errors.
func unmarshalLegacyEvent(b []byte) (Event, error) {
	return unmarshalEvent(b, 0)
}

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func unmarshalEvent(b []byte, depth int) (Event, error) {
	if depth > maxEventDepth {
		return nil, fmt.Errorf("accounting: event nested deeper than %d", maxEventDepth)
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("accounting: event: %w", err)
	}
	switch head.Type {
	case tagGaussian:
		var v struct {
			Type string   `json:"type"`
			S    *float64 `json:"noise_multiplier"`
		}
		if err := strictUnmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("accounting: gaussian event: %w", err)
		}
		if v.S == nil {
			return nil, fmt.Errorf("accounting: gaussian event: missing noise_multiplier")
		}
		return Gaussian{NoiseMultiplier: *v.S}, nil
	case tagPoissonSampled:
		var v struct {
			Type  string          `json:"type"`
			Q     *float64        `json:"sampling_rate"`
			Event json.RawMessage `json:"event"`
		}
		if err := strictUnmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("accounting: poisson_sampled event: %w", err)
		}
		if v.Q == nil {
			return nil, fmt.Errorf("accounting: poisson_sampled event: missing sampling_rate")
		}
		in, err := unmarshalEvent(v.Event, depth+1)
		if err != nil {
			return nil, err
		}
		return PoissonSampled{SamplingRate: *v.Q, Event: in}, nil
	case tagSelfComposed:
		var v struct {
			Type  string          `json:"type"`
			Event json.RawMessage `json:"event"`
			Count int             `json:"count"`
		}
		if err := strictUnmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("accounting: self_composed event: %w", err)
		}
		in, err := unmarshalEvent(v.Event, depth+1)
		if err != nil {
			return nil, err
		}
		return SelfComposed{Event: in, Count: v.Count}, nil
	case tagComposed:
		var v struct {
			Type   string            `json:"type"`
			Events []json.RawMessage `json:"events"`
		}
		if err := strictUnmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("accounting: composed event: %w", err)
		}
		evs := make([]Event, len(v.Events))
		for i, r := range v.Events {
			e, err := unmarshalEvent(r, depth+1)
			if err != nil {
				return nil, err
			}
			evs[i] = e
		}
		return Composed{Events: evs}, nil
	case tagEpsilonDelta:
		var v struct {
			Type    string  `json:"type"`
			Epsilon float64 `json:"epsilon"`
			Delta   float64 `json:"delta"`
		}
		if err := strictUnmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("accounting: epsilon_delta event: %w", err)
		}
		return EpsilonDelta{Epsilon: v.Epsilon, Delta: v.Delta}, nil
	case tagZCDP:
		var v struct {
			Type string  `json:"type"`
			Rho  float64 `json:"rho"`
			Xi   float64 `json:"xi"`
		}
		if err := strictUnmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("accounting: zcdp event: %w", err)
		}
		return ZCDP{Rho: v.Rho, Xi: v.Xi}, nil
	case tagNoOp:
		return NoOp{}, nil
	case tagNonPrivate:
		return NonPrivate{}, nil
	}
	return nil, fmt.Errorf("accounting: unknown event type %q", head.Type)
}

// checkEventTree rejects nil events at any depth, naming the path in the
// format of [Normalize].
func checkEventTree(e Event, path string) error {
	switch e := e.(type) {
	case nil:
		return &UnsupportedEventError{Event: nil, Path: path, Reason: "nil event"}
	case PoissonSampled:
		return checkEventTree(e.Event, join(path, "PoissonSampled"))
	case SelfComposed:
		return checkEventTree(e.Event, join(path, "SelfComposed"))
	case SampledWithoutReplacement:
		return checkEventTree(e.Event, join(path, "SampledWithoutReplacement"))
	case Shuffled:
		return checkEventTree(e.Event, join(path, "Shuffled"))
	case RandomAllocation:
		return checkEventTree(e.Event, join(path, "RandomAllocation"))
	case Composed:
		for i, s := range e.Events {
			if err := checkEventTree(s, join(path, fmt.Sprintf("Composed[%d]", i))); err != nil {
				return err
			}
		}
	}
	return nil
}
