package jsonlogic

import (
	"math"
	"strings"

	"github.com/herald-notify/herald/internal/jsvalue"
)

// json-logic-js 2.0.5's own operations, as its logic.js writes them in
// JavaScript; the comments quote it where the coercions are not obvious.

// basic runs an operation of json-logic-js that takes at most three values.
func (e *evaluator) basic(op opcode, a, b, c, data any) any {
	switch op {
	case opStrictEq:
		return strictEquals(a, b)
	case opStrictNe:
		return !strictEquals(a, b)
	case opNotNot:
		return Truthy(a)
	case opNot:
		return !Truthy(a)
	case opMod:
		x := e.toNumber(a)
		return math.Mod(x, e.toNumber(b))
	case opLog: // console.log(a); return a
		return a
	case opIn:
		return e.in(a, b)
	case opSubstr:
		return e.substr(a, b, c)
	case opSub: // b === undefined ? -a : a - b
		if isUndefined(b) {
			return -e.toNumber(a)
		}
		x := e.toNumber(a)
		return x - e.toNumber(b)
	case opDiv:
		x := e.toNumber(a)
		return x / e.toNumber(b)
	case opMissingSome:
		return e.missingSome(a, b, data)
	}
	panic("jsonlogic: no operation " + opName(op))
}

// variadic runs an operation of json-logic-js over all its values.
func (e *evaluator) variadic(op opcode, vals []any, data any) any {
	switch op {
	case opCat: // Array.prototype.join.call(arguments, "")
		return e.join(vals, "")
	case opAdd: // reduce((a, b) => parseFloat(a) + parseFloat(b), 0)
		sum := 0.0
		for _, v := range vals {
			sum = e.parseFloat(sum) + e.parseFloat(v)
		}
		return sum
	case opMul: // reduce((a, b) => parseFloat(a) * parseFloat(b)), no initial value
		if len(vals) == 0 {
			throw("TypeError: Reduce of empty array with no initial value")
		}
		acc := vals[0]
		for _, v := range vals[1:] {
			acc = e.parseFloat(acc) * e.parseFloat(v)
		}
		return acc
	case opMin, opMax: // Math.min.apply(this, arguments)
		r := math.Inf(1)
		if op == opMax {
			r = math.Inf(-1)
		}
		for _, v := range vals {
			if op == opMin {
				r = math.Min(r, e.toNumber(v))
			} else {
				r = math.Max(r, e.toNumber(v))
			}
		}
		return r
	case opMerge: // reduce((a, b) => a.concat(b), [])
		out := make([]any, 0, len(vals))
		for _, v := range vals {
			if arr, ok := v.([]any); ok {
				e.charge(len(arr))
				out = append(out, arr...)
			} else {
				out = append(out, v)
			}
		}
		return out
	case opMissing:
		return e.missing(vals, data)
	}
	panic("jsonlogic: no operation " + opName(op))
}

// in is "in": b.indexOf(a) !== -1 for a string (a read as a string) or an
// array (a found with ===); false for anything falsy or without indexOf.
func (e *evaluator) in(a, b any) bool {
	if !jsTruthy(b) {
		return false
	}
	switch x := b.(type) {
	case string:
		e.chargeLen(x)
		return strings.Contains(x, e.toString(a))
	case []any:
		e.charge(len(x))
		for _, el := range x {
			if strictEquals(norm(el), a) {
				return true
			}
		}
	case map[string]any:
		if v, ok := x["indexOf"]; ok && !isUndefined(v) {
			throw("TypeError: b.indexOf is not a function")
		}
	}
	return false
}

// substr is "substr": String(source).substr(start, end), and for a negative
// end (as PHP's) the substring from start without its last -end characters.
func (e *evaluator) substr(source, start, end any) string {
	if e.toNumber(end) < 0 {
		temp := e.jsSubstr(e.toString(source), start, undefined)
		// temp.length + end: a string end is concatenated, not added.
		var length any
		switch x := end.(type) {
		case float64:
			length = float64(jsvalue.Len16(temp)) + x
		case []any:
			length = jsvalue.NumberToString(float64(jsvalue.Len16(temp))) + e.join(x, ",")
		case string:
			length = jsvalue.NumberToString(float64(jsvalue.Len16(temp))) + x
		default:
			length = float64(jsvalue.Len16(temp)) + e.toNumber(x)
		}
		return e.jsSubstr(temp, 0.0, length)
	}
	return e.jsSubstr(e.toString(source), start, end)
}

// jsSubstr is String.prototype.substr(start, length) in UTF-16 code units.
func (e *evaluator) jsSubstr(s string, start, length any) string {
	e.chargeLen(s)
	size := float64(jsvalue.Len16(s))
	from := jsvalue.ToIntegerOrInfinity(e.toNumber(start))
	switch {
	case math.IsInf(from, -1):
		from = 0
	case from < 0:
		from = math.Max(size+from, 0)
	default:
		from = math.Min(from, size)
	}
	n := size
	if !isUndefined(length) {
		n = jsvalue.ToIntegerOrInfinity(e.toNumber(length))
	}
	n = math.Min(math.Max(n, 0), size)
	to := math.Min(from+n, size)
	if to <= from {
		return ""
	}
	return jsvalue.Substring(s, int(from), int(to))
}

// missing lists the keys (the values, or the first value when it is an
// array) whose var is null or "". Each key goes through apply({"var": key}):
// an array key is var's [path, default], and a key that is itself a rule is
// evaluated.
func (e *evaluator) missing(vals []any, data any) any {
	keys := vals
	if len(vals) > 0 {
		if arr, ok := vals[0].([]any); ok {
			keys = arr
		}
	}
	out := make([]any, 0)
	e.charge(len(keys))
	for _, key := range keys {
		k := norm(key)
		a, b := undefined, undefined
		if arr, ok := k.([]any); ok {
			for i, el := range arr {
				v := e.applyValue(norm(el), data)
				switch i {
				case 0:
					a = v
				case 1:
					b = v
				}
			}
		} else {
			a = e.applyValue(k, data)
		}
		if v := e.varOp(a, b, data); v == nil || v == "" {
			out = append(out, key)
		}
	}
	return out
}

// missingSome is "missing_some": [] when at least need of the options are
// present, else the missing ones (apply({"missing": options}), then
// options.length - are_missing.length >= need_count).
func (e *evaluator) missingSome(need, options, data any) any {
	var vals []any
	if arr, ok := options.([]any); ok {
		vals = make([]any, len(arr))
		for i, el := range arr {
			vals[i] = e.applyValue(norm(el), data)
		}
	} else {
		vals = []any{e.applyValue(options, data)}
	}
	areMissing := e.missing(vals, data).([]any)
	if options == nil || isUndefined(options) {
		throw("TypeError: Cannot read properties of " + e.toString(options) + " (reading 'length')")
	}
	have := e.toNumber(e.getProp(options, pathSeg{key: "length", idx: -1})) - float64(len(areMissing))
	if have >= e.toNumber(need) {
		return make([]any, 0)
	}
	return areMissing
}
