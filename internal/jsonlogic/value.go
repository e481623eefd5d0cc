package jsonlogic

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/herald-notify/herald/internal/jsvalue"
)

// JavaScript values as the evaluator holds them: nil (null), undefined, bool,
// float64, string, []any (an array) and map[string]any (an object). Data may
// also hold json.Number and Go integers: norm turns them into float64 where a
// value is read.

// undefinedType is JavaScript's undefined: an absent operand, the value of
// {"and": []}, an element of {"map": [xs]} without logic.
type undefinedType struct{}

// undefined is the one undefined value.
var undefined any = undefinedType{}

func isUndefined(v any) bool {
	_, ok := v.(undefinedType)
	return ok
}

// norm turns the numbers a caller's data may hold into float64; other
// values come back as they are (the same interface, so an array keeps its
// identity).
func norm(v any) any {
	switch x := v.(type) {
	case float64, string, bool, nil, []any, map[string]any, undefinedType:
		return v
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !math.IsInf(f, 0) {
			return math.NaN()
		}
		return f
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case int32:
		return float64(x)
	case uint:
		return float64(x)
	case uint64:
		return float64(x)
	case uint32:
		return float64(x)
	case float32:
		return float64(x)
	}
	return v
}

// sameObject reports whether a and b hold the same JavaScript object: the
// same map, or the same boxed array. An array read twice from the same place
// is the same interface value, so its data word is the same; two arrays
// built apart are boxed apart, even when both are empty (their backing
// arrays may share an address, their boxes do not). This is === on objects.
func sameObject(a, b any) bool {
	pa := (*[2]unsafe.Pointer)(unsafe.Pointer(&a))
	pb := (*[2]unsafe.Pointer)(unsafe.Pointer(&b))
	return pa[0] == pb[0] && pa[1] == pb[1]
}

// strictEquals is JavaScript's === over normalised values.
func strictEquals(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	case undefinedType:
		return isUndefined(b)
	}
	return sameObject(a, b)
}

// sameValueZero is the equality of Array.prototype.includes: === except that
// NaN equals NaN.
func sameValueZero(a, b any) bool {
	if x, ok := a.(float64); ok && x != x {
		y, ok := b.(float64)
		return ok && y != y
	}
	return strictEquals(a, b)
}

// jsTruthy is JavaScript's !!v.
func jsTruthy(v any) bool {
	switch x := norm(v).(type) {
	case nil, undefinedType:
		return false
	case bool:
		return x
	case float64:
		return x == x && x != 0
	case string:
		return x != ""
	}
	return true
}

// Truthy is json-logic-js's truthiness (jsonLogic.truthy): JavaScript's, except
// that an empty array is false. It is what "if", "and", "or", "!", "!!",
// "filter", "all", "some" and "none" test.
func Truthy(v any) bool {
	if a, ok := v.([]any); ok {
		return len(a) > 0
	}
	return jsTruthy(v)
}

// objectToString is ToString of a non-array object: "[object Object]", or a
// TypeError when the object has an own "toString" that is not a function
// (every own property of JSON data is not one).
func objectToString(m map[string]any) string {
	if _, ok := m["toString"]; ok {
		throw("TypeError: Cannot convert object to primitive value")
	}
	return "[object Object]"
}

// toString is JavaScript's String(v) (ToString for arrays: their elements
// joined by commas, null and undefined as "").
func (e *evaluator) toString(v any) string {
	switch x := norm(v).(type) {
	case nil:
		return "null"
	case undefinedType:
		return "undefined"
	case bool:
		if x {
			return "true"
		}
		return "false"
	case float64:
		return jsvalue.NumberToString(x)
	case string:
		return x
	case []any:
		return e.join(x, ",")
	case map[string]any:
		return objectToString(x)
	}
	return "[object Object]"
}

// join is Array.prototype.join.
func (e *evaluator) join(a []any, sep string) string {
	e.charge(len(a))
	var b strings.Builder
	for i, el := range a {
		if i > 0 {
			b.WriteString(sep)
		}
		var piece string
		switch x := norm(el).(type) {
		case nil, undefinedType:
		case string:
			piece = x
		default:
			piece = e.toString(x)
		}
		e.chargeLen(piece)
		b.WriteString(piece)
	}
	return b.String()
}

// toNumber is JavaScript's Number(v).
func (e *evaluator) toNumber(v any) float64 {
	switch x := norm(v).(type) {
	case nil:
		return 0
	case undefinedType:
		return math.NaN()
	case bool:
		if x {
			return 1
		}
		return 0
	case float64:
		return x
	case string:
		e.chargeLen(x)
		return jsvalue.StringToNumber(x)
	case []any:
		return jsvalue.StringToNumber(e.join(x, ","))
	case map[string]any:
		objectToString(x)
	}
	return math.NaN()
}

// parseFloat is JavaScript's parseFloat(v).
func (e *evaluator) parseFloat(v any) float64 {
	if f, ok := norm(v).(float64); ok {
		if f == 0 {
			return 0 // String(-0) is "0"
		}
		return f
	}
	return jsvalue.ParseFloat(e.toString(v))
}

// pathSeg is one step of a var path: a property name, with its value as an
// array index when it is one ("0", "12"; not "01" or "-1"), else -1.
type pathSeg struct {
	key string
	idx int
}

func newPathSeg(key string) pathSeg {
	idx, ok := jsvalue.ArrayIndex(key)
	if !ok {
		idx = -1
	}
	return pathSeg{key: key, idx: idx}
}

// getProp is v[key] for JSON-like values: own properties of objects, the
// elements and length of arrays and strings; undefined otherwise. Properties
// that JavaScript objects inherit (toString, constructor, __proto__, a
// number's toFixed ...) are functions or prototypes there and undefined
// here.
func (e *evaluator) getProp(v any, seg pathSeg) any {
	switch x := v.(type) {
	case map[string]any:
		if val, ok := x[seg.key]; ok {
			return norm(val)
		}
	case []any:
		if seg.idx >= 0 && seg.idx < len(x) {
			return norm(x[seg.idx])
		}
		if seg.key == "length" {
			return float64(len(x))
		}
	case string:
		e.chargeLen(x)
		if seg.key == "length" {
			return float64(jsvalue.Len16(x))
		}
		if seg.idx >= 0 && seg.idx < jsvalue.Len16(x) {
			return jsvalue.Substring(x, seg.idx, seg.idx+1)
		}
	}
	return undefined
}
