package render

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"strings"
)

// JSON writes v as dpcalc prints JSON: indented by two spaces, ending in a
// newline, without HTML escaping (so ">" stays ">"). Non-finite floats,
// which encoding/json refuses, are printed as null (see [Finite]) rather
// than losing the whole result to an error.
func JSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	var uv *json.UnsupportedValueError
	if errors.As(err, &uv) {
		buf.Reset()
		err = enc.Encode(Finite(v))
	}
	if err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// Finite returns a JSON-encodable copy of v (see finiteTree).
func Finite(v any) any { return finiteTree(reflect.ValueOf(v)) }

// finiteTree returns a JSON-encodable copy of v in which every NaN or ±Inf
// float is null. encoding/json refuses non-finite floats outright ("json:
// unsupported value: NaN"), which would replace a whole result by an error:
// a training run whose loss diverged, or an ε that is +Inf, must still print.
// Field names, omitempty, "-", embedded structs and Marshaler types follow
// encoding/json; struct fields keep their order. A Marshaler whose output
// fails (e.g. a ledger holding an infinite σ) becomes null.
func finiteTree(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	if v.Kind() != reflect.Pointer && v.CanAddr() {
		if _, ok := v.Addr().Interface().(json.Marshaler); ok {
			v = v.Addr()
		}
	}
	if v.CanInterface() {
		switch v.Interface().(type) {
		case json.Marshaler, encoding.TextMarshaler:
			if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
				return nil
			}
			b, err := json.Marshal(v.Interface())
			if err != nil {
				return nil
			}
			return json.RawMessage(b)
		}
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return finiteTree(v.Elem())
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		if v.Kind() == reflect.Float32 {
			return float32(f)
		}
		return f
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Bytes() // base64, as encoding/json does
		}
		fallthrough
	case reflect.Array:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = finiteTree(v.Index(i))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := make(map[string]any, v.Len())
		it := v.MapRange()
		for it.Next() {
			k, err := json.Marshal(it.Key().Interface())
			if err != nil {
				continue
			}
			var ks string
			if json.Unmarshal(k, &ks) != nil {
				ks = string(k)
			}
			out[ks] = finiteTree(it.Value())
		}
		return out
	case reflect.Struct:
		var obj orderedObject
		addFields(&obj, v)
		return obj
	}
	if v.CanInterface() {
		return v.Interface()
	}
	return nil
}

func addFields(obj *orderedObject, v reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				fv, ft = fv.Elem(), ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(obj, fv)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if strings.Contains(","+opts+",", ",omitempty,") && isEmptyValue(fv) {
			continue
		}
		*obj = append(*obj, field{name, finiteTree(fv)})
	}
}

// isEmptyValue is encoding/json's omitempty test.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

type field struct {
	name  string
	value any
}

// orderedObject is a JSON object that keeps its fields in order.
type orderedObject []field

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.name)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(f.value); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// MarshalFinite is json.Marshal that prints non-finite floats as null
// instead of failing (see finiteTree).
func MarshalFinite(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	var uv *json.UnsupportedValueError
	if err != nil && errors.As(err, &uv) {
		return json.Marshal(finiteTree(reflect.ValueOf(v)))
	}
	return b, err
}
