package jsvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSON as JavaScript reads and writes it. Novu signs and sends
// JSON.stringify(JSON.parse(text)), and a Novu Framework bridge checks a
// signature over JSON.stringify(JSON.parse(body)): to send bytes that verify,
// Herald parses into JavaScript's model of the text (property order, float64
// numbers, the last duplicate key winning) and writes it the way
// JSON.stringify does. Whatever Stringify writes, ParseJSON then Stringify
// writes again unchanged.
//
// One difference remains: an escaped lone surrogate ("\ud800"), which a
// JavaScript string holds and JSON.stringify writes back escaped, becomes
// U+FFFD, as a Go string cannot hold it.

// Object is a JavaScript object parsed from JSON: its values by key and its
// keys in the order they were first set.
type Object struct {
	keys []string
	vals map[string]any // nil, bool, float64, string, []any, *Object
}

// NewObject returns an empty object.
func NewObject() *Object { return &Object{vals: map[string]any{}} }

// Set assigns a property; a key set again keeps its first position.
func (o *Object) Set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// Get returns a property's value and whether the object has it.
func (o *Object) Get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// Len is the number of properties.
func (o *Object) Len() int { return len(o.keys) }

// Keys returns the keys as JavaScript enumerates them (Object.keys,
// JSON.stringify): array indexes ascending first, then the other keys in
// the order they were first set.
func (o *Object) Keys() []string {
	type index struct {
		n int
		k string
	}
	var idx []index
	var rest []string
	for _, k := range o.keys {
		if n, ok := ArrayIndex(k); ok {
			idx = append(idx, index{n, k})
		} else {
			rest = append(rest, k)
		}
	}
	if len(idx) == 0 {
		return o.keys
	}
	sort.Slice(idx, func(i, j int) bool { return idx[i].n < idx[j].n })
	out := make([]string, 0, len(o.keys))
	for _, i := range idx {
		out = append(out, i.k)
	}
	return append(out, rest...)
}

// maxDepth bounds nesting in a parsed text.
const maxDepth = 1000

var errTrailing = errors.New("unexpected data after the JSON value")

// ParseJSON parses one JSON text as JSON.parse does, into nil, bool,
// float64, string, []any and *Object values. Numbers out of range become
// ±Inf (JSON.stringify writes null) and tiny ones zero, as Number() does;
// nesting deeper than 1000 levels is refused.
func ParseJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	v, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errTrailing
	}
	return v, nil
}

func parseValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested more than %d levels deep", maxDepth)
	}
	t, err := dec.Token()
	if err == io.EOF {
		return nil, errors.New("unexpected end of JSON input")
	}
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return arr, nil
		case '{':
			obj := NewObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				obj.Set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return obj, nil
		}
		return nil, fmt.Errorf("unexpected %q", rune(t))
	case json.Number:
		f, _ := strconv.ParseFloat(string(t), 64)
		return f, nil
	default: // string, bool, nil
		return t, nil
	}
}

// Stringify writes v (a value ParseJSON returns) as JSON.stringify does,
// without spaces. A value of any other type is written as null.
func Stringify(v any) []byte {
	var b bytes.Buffer
	writeJSON(&b, v)
	return b.Bytes()
}

func writeJSON(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case float64:
		b.WriteString(JSONNumber(v))
	case string:
		writeJSONString(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	case *Object:
		b.WriteByte('{')
		for i, k := range v.Keys() {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			writeJSON(b, v.vals[k])
		}
		b.WriteByte('}')
	default:
		b.WriteString("null")
	}
}

// writeJSONString quotes s as JSON.stringify does: only '"', '\\' and
// control characters are escaped (lower-case hex); bytes that are not UTF-8
// (which a JavaScript string cannot hold) are written as U+FFFD.
func writeJSONString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
		default:
			b.WriteRune(r) // utf8.RuneError for an invalid byte
		}
	}
	b.WriteByte('"')
}

// JSONNumber formats f as JSON.stringify does: Number::toString, and null
// for a number that is not finite.
func JSONNumber(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null"
	}
	return NumberToString(f)
}
