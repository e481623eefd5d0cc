// Package liquid is a Liquid template engine that renders as LiquidJS 10
// renders, configured as Novu configures it: values behave as JavaScript
// values (every number a float64 printed as JavaScript prints it, strings
// measured in UTF-16 units, objects keeping their key order), `and`/`or`
// evaluate right to left, and the filters are LiquidJS's and Novu's. The
// conversions of strings, numbers and dates (Number(), String(), UTF-16
// lengths, new Date(string)) are package jsvalue's, which the step-condition
// evaluator shares.
//
// The engine has no file system (include, render and layout are refused)
// and renders under a Budget that bounds its time, loop iterations and the
// bytes its filters make; the sandbox package supplies that budget.
package liquid

import (
	"math"
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/herald-notify/herald/internal/jsvalue"
)

// The values a template sees and makes are JavaScript's:
//
//	undefined  nil
//	null       Null
//	boolean    bool
//	number     float64
//	string     string
//	array      []any
//	object     *Map
//
// plus the drops of the language (nil, empty, blank, forloop).

// nullType is JSON's null, which JavaScript tells apart from undefined.
type nullType struct{}

// Null is JSON's null.
var Null any = nullType{}

// IsNil reports undefined or null.
func IsNil(v any) bool { return v == nil || v == Null }

// Map is a JavaScript object: string keys in JavaScript's order (integer
// keys first, ascending; then the others in insertion order).
type Map struct {
	keys []string
	vals map[string]any
}

// NewMap returns an empty object with room for n keys.
func NewMap(n int) *Map { return &Map{keys: make([]string, 0, n), vals: make(map[string]any, n)} }

// Len is the number of keys.
func (m *Map) Len() int { return len(m.keys) }

// Keys returns the keys in order; the caller must not change the slice.
func (m *Map) Keys() []string { return m.keys }

// Get returns the value of key and whether the object has it.
func (m *Map) Get(key string) (any, bool) {
	v, ok := m.vals[key]
	return v, ok
}

// Set sets key, placing a new key where JavaScript would.
func (m *Map) Set(key string, v any) {
	if _, ok := m.vals[key]; ok {
		m.vals[key] = v
		return
	}
	m.vals[key] = v
	if idx, ok := jsvalue.ArrayIndex(key); ok {
		// Integer keys come first, ascending.
		i := sort.Search(len(m.keys), func(i int) bool {
			j, isIdx := jsvalue.ArrayIndex(m.keys[i])
			return !isIdx || j > idx
		})
		m.keys = append(m.keys, "")
		copy(m.keys[i+1:], m.keys[i:])
		m.keys[i] = key
		return
	}
	m.keys = append(m.keys, key)
}

// FromGo converts Go values (map[string]any, []any, numbers, strings) to
// the engine's values. Maps' keys are sorted, as Go keeps no order.
func FromGo(v any) any {
	switch t := v.(type) {
	case nil:
		return nil
	case *Map, string, bool, float64, nullType:
		return t
	case int:
		return float64(t)
	case int64:
		return float64(t)
	case int32:
		return float64(t)
	case uint64:
		return float64(t)
	case float32:
		return float64(t)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = FromGo(x)
		}
		return out
	case []string:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = x
		}
		return out
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		m := NewMap(len(t))
		for _, k := range keys {
			m.Set(k, FromGo(t[k]))
		}
		return m
	}
	return v
}

// ToGo converts the engine's values to plain Go values (map[string]any,
// []any, float64, string, bool, nil for null and undefined).
func ToGo(v any) any {
	switch t := toValue(v).(type) {
	case nullType:
		return nil
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = ToGo(x)
		}
		return out
	case *Map:
		out := make(map[string]any, len(t.keys))
		for _, k := range t.keys {
			out[k] = ToGo(t.vals[k])
		}
		return out
	default:
		return t
	}
}

// Drop is a value with properties computed by the engine.
type Drop interface {
	// Prop returns the property, or nil when there is none.
	Prop(key string) any
	// Value is the drop as a plain value (LiquidJS's valueOf).
	Value() any
}

// comparable drops (nil, empty, blank) compare by their own rules.
type comparableDrop interface {
	Drop
	equals(v any) bool
}

type nilDrop struct{}

func (nilDrop) Prop(string) any       { return nil }
func (nilDrop) Value() any            { return Null }
func (nilDrop) equals(v any) bool     { return IsNil(toValue(v)) }
func (nilDrop) MarshalJS() string     { return "{}" }
func (emptyDrop) MarshalJS() string   { return "{}" }
func (blankDrop) MarshalJS() string   { return "{}" }
func (emptyDrop) Prop(string) any     { return nil }
func (emptyDrop) Value() any          { return "" }
func (d emptyDrop) equals(v any) bool { return emptyEquals(v) }
func (blankDrop) Prop(string) any     { return nil }
func (blankDrop) Value() any          { return "" }

type emptyDrop struct{}
type blankDrop struct{}

func emptyEquals(v any) bool {
	switch v.(type) {
	case emptyDrop, blankDrop:
		return false
	}
	switch t := toValue(v).(type) {
	case string:
		return t == ""
	case []any:
		return len(t) == 0
	case *Map:
		return t.Len() == 0
	}
	return false
}

func (blankDrop) equals(v any) bool {
	if v == false {
		return true
	}
	x := toValue(v)
	if IsNil(x) {
		return true
	}
	if s, ok := v.(string); ok {
		return jsvalue.TrimSpace(s) == ""
	}
	return emptyEquals(v)
}

// toValue turns a drop into its plain value.
func toValue(v any) any {
	if d, ok := v.(Drop); ok {
		return d.Value()
	}
	return v
}

// ToValue turns a drop into its plain value (LiquidJS's toValue).
func ToValue(v any) any { return toValue(v) }

// Stringify is LiquidJS's stringify: nil is "", arrays are their elements'
// strings joined without a separator, the rest as JavaScript's String().
func Stringify(v any) string {
	v = toValue(v)
	switch t := v.(type) {
	case string:
		return t
	case nil, nullType:
		return ""
	case []any:
		var b strings.Builder
		for _, x := range t {
			b.WriteString(Stringify(x))
		}
		return b.String()
	}
	return JSString(v)
}

// JSString is JavaScript's String(v).
func JSString(v any) string {
	switch t := v.(type) {
	case nil:
		return "undefined"
	case nullType:
		return "null"
	case string:
		return t
	case bool:
		if t {
			return "true"
		}
		return "false"
	case float64:
		return jsvalue.NumberToString(t)
	case []any:
		return arrayJoin(t, ",")
	case *Map, Drop:
		return "[object Object]"
	}
	return ""
}

// arrayJoin is Array.prototype.join: nil and null elements are empty.
func arrayJoin(a []any, sep string) string {
	var b strings.Builder
	for i, x := range a {
		if i > 0 {
			b.WriteString(sep)
		}
		if !IsNil(x) {
			b.WriteString(JSString(x))
		}
	}
	return b.String()
}

// ToNumber is LiquidJS's toNumber: +value || 0.
func ToNumber(v any) float64 {
	f := jsNumber(toValue(v))
	if math.IsNaN(f) || f == 0 {
		return 0 // +v || 0: NaN and -0 are falsy
	}
	return f
}

// jsNumber is JavaScript's unary +.
func jsNumber(v any) float64 {
	switch t := v.(type) {
	case nil:
		return math.NaN()
	case nullType:
		return 0
	case bool:
		if t {
			return 1
		}
		return 0
	case float64:
		return t
	case string:
		return jsvalue.StringToNumber(t)
	case []any:
		return jsvalue.StringToNumber(arrayJoin(t, ","))
	case Drop:
		return jsNumber(t.Value())
	}
	return math.NaN()
}

// Truthy is Liquid's truth: everything but false, null and undefined.
func Truthy(v any) bool {
	v = toValue(v)
	return !(v == false || IsNil(v))
}

// Equals is LiquidJS's ==.
func Equals(l, r any) bool {
	if d, ok := l.(comparableDrop); ok {
		return d.equals(r)
	}
	if d, ok := r.(comparableDrop); ok {
		return d.equals(l)
	}
	l, r = toValue(l), toValue(r)
	if la, ok := l.([]any); ok {
		ra, ok := r.([]any)
		if !ok || len(la) != len(ra) {
			return false
		}
		for i := range la {
			if !Equals(la[i], ra[i]) {
				return false
			}
		}
		return true
	}
	return strictEquals(l, r)
}

// strictEquals is JavaScript's ===.
func strictEquals(l, r any) bool {
	switch a := l.(type) {
	case nil:
		return r == nil
	case nullType:
		return r == Null
	case bool:
		b, ok := r.(bool)
		return ok && a == b
	case float64:
		b, ok := r.(float64)
		return ok && a == b
	case string:
		b, ok := r.(string)
		return ok && a == b
	case *Map:
		b, ok := r.(*Map)
		return ok && a == b
	case []any:
		b, ok := r.([]any)
		return ok && len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
	}
	return false
}

// compare is JavaScript's abstract relational comparison: -1, 0 or 1, or
// ok false when the values are not ordered (NaN).
func compare(l, r any) (int, bool) {
	pl, pr := toPrimitive(l), toPrimitive(r)
	if ls, ok := pl.(string); ok {
		if rs, ok := pr.(string); ok {
			return compareUTF16(ls, rs), true
		}
	}
	a, b := jsNumber(pl), jsNumber(pr)
	if math.IsNaN(a) || math.IsNaN(b) {
		return 0, false
	}
	switch {
	case a < b:
		return -1, true
	case a > b:
		return 1, true
	}
	return 0, true
}

// toPrimitive is JavaScript's ToPrimitive for the engine's values: arrays
// join with commas, objects are "[object Object]", drops their value.
func toPrimitive(v any) any {
	switch t := toValue(v).(type) {
	case []any:
		return arrayJoin(t, ",")
	case *Map:
		return "[object Object]"
	default:
		return t
	}
}

// Less is JavaScript's l < r.
func Less(l, r any) bool { c, ok := compare(l, r); return ok && c < 0 }

// compareUTF16 compares strings by UTF-16 code units, as JavaScript does.
func compareUTF16(a, b string) int {
	if jsvalue.IsASCII(a) && jsvalue.IsASCII(b) {
		return strings.Compare(a, b)
	}
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			if ua[i] < ub[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(ua) < len(ub):
		return -1
	case len(ua) > len(ub):
		return 1
	}
	return 0
}

// Size is the size property: the length of strings and arrays, the number
// of an object's keys (or its own size).
func Size(v any) any {
	switch t := toValue(v).(type) {
	case string:
		return float64(jsvalue.Len16(t))
	case []any:
		return float64(len(t))
	case *Map:
		if s, ok := t.Get("size"); ok {
			return s
		}
		return float64(t.Len())
	}
	return nil
}

// ReadProperty reads obj[key] as LiquidJS does (own properties only; size,
// first and last where the object has none of its own).
func ReadProperty(obj, key any) any {
	if d, ok := obj.(Drop); ok {
		return d.Prop(Stringify(key))
	}
	key = toValue(key)
	if IsNil(obj) {
		return obj
	}
	switch o := obj.(type) {
	case []any:
		if f, ok := key.(float64); ok {
			return index(o, f)
		}
		k := propertyKey(key)
		switch k {
		case "length", "size":
			return float64(len(o))
		case "first":
			return index(o, 0)
		case "last":
			return index(o, -1)
		}
		if i, ok := jsvalue.ArrayIndex(k); ok && i < len(o) {
			return o[i]
		}
		return nil
	case string:
		k := propertyKey(key)
		switch k {
		case "length", "size":
			return float64(jsvalue.Len16(o))
		}
		if i, ok := jsvalue.ArrayIndex(k); ok && i < jsvalue.Len16(o) {
			return jsvalue.Substring(o, i, i+1)
		}
		return nil
	case *Map:
		k := propertyKey(key)
		if v, ok := o.Get(k); ok {
			return v
		}
		if k == "size" {
			return float64(o.Len())
		}
		return nil
	}
	return nil
}

func index(a []any, f float64) any {
	if f != math.Trunc(f) {
		return nil
	}
	i := int(f)
	if i < 0 {
		i += len(a)
	}
	if i < 0 || i >= len(a) {
		return nil
	}
	return a[i]
}

// propertyKey is JavaScript's ToPropertyKey.
func propertyKey(key any) string {
	if s, ok := key.(string); ok {
		return s
	}
	return JSString(key)
}
