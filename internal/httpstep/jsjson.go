package httpstep

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

	"github.com/herald-notify/herald/internal/jsvalue"
)

// Novu sends JSON.stringify(JSON.parse(renderedBody)) and signs the same
// string. To send (and sign) the bytes Novu would for the same body, the body
// is parsed into JavaScript's model of it (property order, float64 numbers,
// last duplicate key wins) and written the way JSON.stringify writes it.
// One difference remains: an escaped lone surrogate ("\ud800"), which a
// JavaScript string holds and JSON.stringify writes back escaped, becomes
// U+FFFD, as a Go string cannot hold it.

// jsObject is a JavaScript object parsed from JSON: its values by key and
// its keys in the order they were first set.
type jsObject struct {
	keys []string
	vals map[string]any // nil, bool, float64, string, []any, *jsObject
}

func newJSObject() *jsObject { return &jsObject{vals: map[string]any{}} }

// set assigns a property; a key set again keeps its first position.
func (o *jsObject) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// order returns the keys as JavaScript enumerates them: array indices
// ascending first, then the other keys in the order they were first set.
func (o *jsObject) order() []string {
	var idx, rest []string
	for _, k := range o.keys {
		if isIndex(k) {
			idx = append(idx, k)
		} else {
			rest = append(rest, k)
		}
	}
	if len(idx) == 0 {
		return o.keys
	}
	sort.Slice(idx, func(i, j int) bool {
		a, _ := strconv.ParseUint(idx[i], 10, 64)
		b, _ := strconv.ParseUint(idx[j], 10, 64)
		return a < b
	})
	return append(idx, rest...)
}

// maxDepth bounds nesting in a parsed body.
const maxDepth = 1000

var errTrailing = errors.New("unexpected data after the JSON value")

// parseJS parses one JSON text as JSON.parse does.
func parseJS(s string) (any, error) {
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
			obj := newJSObject()
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
				obj.set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return obj, nil
		}
		return nil, fmt.Errorf("unexpected %q", rune(t))
	case json.Number:
		// Out of range parses to ±Inf (JSON.stringify writes null), tiny
		// values to zero, as Number() does.
		f, _ := strconv.ParseFloat(string(t), 64)
		return f, nil
	default: // string, bool, nil
		return t, nil
	}
}

// stringifyJS writes v as JSON.stringify does (no spaces).
func stringifyJS(v any) []byte {
	var b bytes.Buffer
	writeJS(&b, v)
	return b.Bytes()
}

func writeJS(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case float64:
		b.WriteString(jsNumber(v))
	case string:
		writeJSString(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJS(b, e)
		}
		b.WriteByte(']')
	case *jsObject:
		b.WriteByte('{')
		for i, k := range v.order() {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSString(b, k)
			b.WriteByte(':')
			writeJS(b, v.vals[k])
		}
		b.WriteByte('}')
	default:
		b.WriteString("null")
	}
}

// writeJSString quotes s as JSON.stringify does: only '"', '\\' and control
// characters are escaped (lower-case hex); bytes that are not UTF-8 (which
// a JavaScript string cannot hold) are written as U+FFFD.
func writeJSString(b *bytes.Buffer, s string) {
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

// jsNumber formats f as JSON.stringify does: Number::toString, and null
// for a number that is not finite.
func jsNumber(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null"
	}
	return jsvalue.NumberToString(f)
}

// isIndex reports whether k is an array index, which JavaScript enumerates
// before an object's other keys.
func isIndex(k string) bool {
	_, ok := jsvalue.ArrayIndex(k)
	return ok
}
