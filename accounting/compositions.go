package accounting

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
)

// FormatCompositions is the composition ledger: a JSON object
//
//	{"schema_version": 1,
//	 "config": {"neighboring_relation": "ADD_OR_REMOVE_ONE"},
//	 "compositions": [{"event": DpEvent, "count": n}, ...]}
//
// each entry being count adaptive repetitions of a dp_accounting DpEvent,
// the entries run in order. It is the shape described for Flower's
// accountant state; Flower's published sources hold no accountant format
// to check it against, so the name says what the file is, not who wrote
// it. [ReadLedgerFile] reads it, [MarshalCompositions] writes it.
const FormatCompositions LedgerFormat = "compositions"

// compositionsSchema is the one schema_version read and written.
const compositionsSchema = 1

// relationNames are dp_accounting's NeighboringRelation names of the
// relations, as config.neighboring_relation spells them.
var relationNames = map[Adjacency]string{AddRemove: "ADD_OR_REMOVE_ONE", ReplaceOne: "REPLACE_ONE"}

// decodeCompositions decodes a composition ledger read under adj: exactly
// the keys schema_version (1), config (an object whose only key is the
// optional neighboring_relation, which must name adj: the relation of a
// file is not silently changed) and compositions (a list of objects with
// exactly event, a DpEvent, and count, a whole number ≥ 0). It returns the
// run and the number of entries.
func decodeCompositions(ctx context.Context, root *jsonValue, adj Adjacency) (Event, int, error) {
	m := map[string]*jsonValue{}
	for i, k := range root.keys {
		if _, dup := m[k]; dup {
			return nil, 0, fmt.Errorf("key %q given twice", k)
		}
		switch k {
		case "schema_version", "config", "compositions":
		default:
			return nil, 0, fmt.Errorf(`unknown key %q (a composition ledger has "schema_version", "config" and "compositions")`, k)
		}
		m[k] = root.vals[i]
	}
	sv, ok := m["schema_version"]
	if !ok {
		return nil, 0, fmt.Errorf(`missing key "schema_version" (want %d)`, compositionsSchema)
	}
	if v, whole, _ := exactInt(sv.text); sv.kind != '0' || !whole || v != compositionsSchema {
		got := kindOf(sv)
		if sv.kind == '0' {
			got = sv.text
		}
		return nil, 0, fmt.Errorf("schema_version is %s, want %d (the only version dpcalc reads)", got, compositionsSchema)
	}
	if cv, ok := m["config"]; ok {
		if cv.kind != '{' {
			return nil, 0, fmt.Errorf("config is %s, want an object", kindOf(cv))
		}
		seen := map[string]bool{}
		for i, k := range cv.keys {
			if seen[k] {
				return nil, 0, fmt.Errorf("config: key %q given twice", k)
			}
			seen[k] = true
			if k != "neighboring_relation" {
				return nil, 0, fmt.Errorf(`config: unknown key %q (dpcalc reads only "neighboring_relation"; it would not account for a setting it does not know)`, k)
			}
			v := cv.vals[i]
			if v.kind != '"' || (v.text != relationNames[AddRemove] && v.text != relationNames[ReplaceOne]) {
				got := kindOf(v)
				if v.kind == '"' {
					got = strconv.Quote(v.text)
				}
				return nil, 0, fmt.Errorf("config: neighboring_relation is %s, want %s or %s", got, relationNames[AddRemove], relationNames[ReplaceOne])
			}
			if v.text != relationNames[adj] {
				return nil, 0, fmt.Errorf("config: neighboring_relation is %s but the accounting is under %s: give --adjacency %s", v.text, adj, adjacencyFlag(v.text))
			}
		}
	}
	lv, ok := m["compositions"]
	if !ok {
		return nil, 0, fmt.Errorf(`missing key "compositions" (a list of {"event": ..., "count": ...})`)
	}
	if lv.kind != '[' {
		return nil, 0, fmt.Errorf("compositions is %s, want a list of {\"event\": ..., \"count\": ...}", kindOf(lv))
	}
	evs := make([]Event, 0, len(lv.vals))
	for i, c := range lv.vals {
		at := fmt.Sprintf("compositions[%d]", i)
		if c.kind != '{' {
			return nil, 0, fmt.Errorf("%s is %s, want {\"event\": ..., \"count\": ...}", at, kindOf(c))
		}
		var ev, cnt *jsonValue
		for j, k := range c.keys {
			switch {
			case k == "event" && ev == nil:
				ev = c.vals[j]
			case k == "count" && cnt == nil:
				cnt = c.vals[j]
			case k == "event" || k == "count":
				return nil, 0, fmt.Errorf("%s: key %q given twice", at, k)
			default:
				return nil, 0, fmt.Errorf(`%s: unknown key %q (an entry has "event" and "count")`, at, k)
			}
		}
		if ev == nil || cnt == nil {
			missing := "event"
			if ev != nil {
				missing = "count"
			}
			return nil, 0, fmt.Errorf("%s: missing key %q", at, missing)
		}
		if cnt.kind != '0' {
			return nil, 0, fmt.Errorf("%s: count is %s, want a whole number", at, kindOf(cnt))
		}
		n, whole, big := exactInt(cnt.text)
		switch {
		case big:
			return nil, 0, fmt.Errorf("%s: count = %s is too large: want at most %d (2^53)", at, cnt.text, MaxCount)
		case !whole || n < 0:
			return nil, 0, fmt.Errorf("%s: count = %s, want a whole number >= 0", at, cnt.text)
		}
		e, err := decodeEvent(ctx, ev, "$."+at+".event", 0)
		if err != nil {
			return nil, 0, err
		}
		evs = append(evs, SelfComposed{Event: e, Count: int(n)})
	}
	switch len(evs) {
	case 0:
		return NoOp{}, 0, nil
	case 1:
		return evs[0], 1, nil
	}
	return Composed{Events: evs}, len(evs), nil
}

// adjacencyFlag is the --adjacency value of a dp_accounting relation name.
func adjacencyFlag(name string) string {
	if name == relationNames[ReplaceOne] {
		return ReplaceOne.String()
	}
	return AddRemove.String()
}

// MarshalCompositions writes e as a composition ledger (see
// [FormatCompositions]) under the relation adj: a [Composed] event gives
// one entry per part, a [SelfComposed] part its event and count, any
// other part count 1; an event that is neither is one entry. The events
// are written as [MarshalEvent] writes them, so the errors are its.
func MarshalCompositions(e Event, adj Adjacency) ([]byte, error) {
	name, ok := relationNames[adj]
	if !ok {
		return nil, CheckAdjacency(adj)
	}
	if err := checkEventTree(e, ""); err != nil {
		return nil, err
	}
	parts := []Event{e}
	if c, ok := e.(Composed); ok {
		parts = c.Events
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"schema_version":%d,"config":{"neighboring_relation":%q},"compositions":[`, compositionsSchema, name)
	for i, p := range parts {
		count := 1
		if s, ok := p.(SelfComposed); ok {
			p, count = s.Event, s.Count
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"event":`)
		if err := writeEvent(&b, p, fmt.Sprintf("compositions[%d]", i)); err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, `,"count":%d}`, count)
	}
	b.WriteString("]}")
	return b.Bytes(), nil
}

// describeCompositions is the user's description of a composition ledger.
func describeCompositions(n int) string {
	return strings.TrimSpace(fmt.Sprintf("composition ledger (schema_version %d, %s)", compositionsSchema, plural(n, "entry", "entries")))
}
