package jsonlogic

import (
	"math"
	"strings"

	"github.com/herald-notify/herald/internal/jsvalue"
)

// Novu's operations, as libs/application-generic/src/services/query-parser/
// query-parser.service.ts registers them on json-logic-js at start
// (github.com/novuhq/novu at 0da9e0a; no date library, only Date). Herald's
// summary of them in its spec of step conditions differs from the source
// in these points, where the source is followed:
//   - "<" takes two values: Novu replaces json-logic-js's three-value "<"
//     (a between) with one that ignores a third; only "<=" keeps it.
//   - "==" and "!=" compare as numbers whatever Number() accepts, arrays
//     ([] is 0, [5] is 5) and null (0) included, and as dates any two
//     strings that V8's legacy parser reads ("vip 1" == "gold 1": both are
//     2001-01-01). No operation keeps JavaScript's loose ==.
//   - "=" evaluates its two values again, as a rule over empty data, before
//     comparing them with "==": an object with one key in the data is
//     applied as an operation.
//   - the relative-date operations read their date with new Date(value): a
//     number is milliseconds since the epoch and null is the epoch (so null
//     is "more than 1 day ago"); the amount may be fractional, and the
//     setters truncate the moved field (minutes - 1.5).

// novu runs one of Novu's operations on its first three values.
func (e *evaluator) novu(op opcode, a, b, c any) any {
	switch op {
	case opEq, opNe: // validateComparison, else a === b
		x, y, ok := e.comparable(a, b)
		eq := (ok && x == y) || (!ok && strictEquals(a, b))
		return eq == (op == opEq)
	case opLt, opGt, opGe:
		x, y, ok := e.comparable(a, b)
		switch {
		case !ok:
			return false
		case op == opLt:
			return x < y
		case op == opGt:
			return x > y
		}
		return x >= y
	case opLe: // with a third value: first <= second <= third
		if !isUndefined(c) {
			x1, y1, ok1 := e.comparable(a, b)
			_, y2, ok2 := e.comparable(b, c)
			return ok1 && ok2 && x1 <= y1 && y1 <= y2
		}
		x, y, ok := e.comparable(a, b)
		return ok && x <= y
	case opAssign: // jsonLogic.apply({"==": [a, b]}, {})
		if isContainer(a) || isContainer(b) {
			empty := any(map[string]any{})
			a, b = e.applyValue(a, empty), e.applyValue(b, empty)
		}
		return e.novu(opEq, a, b, undefined)
	case opStartsWith, opEndsWith, opContains, opDoesNotContain, opDoesNotBeginWith, opDoesNotEndWith:
		s, ok1 := a.(string)
		v, ok2 := b.(string)
		if !ok1 || !ok2 {
			return false
		}
		e.chargeLen(s)
		switch op {
		case opStartsWith:
			return strings.HasPrefix(s, v)
		case opEndsWith:
			return strings.HasSuffix(s, v)
		case opContains:
			return strings.Contains(s, v)
		case opDoesNotContain:
			return !strings.Contains(s, v)
		case opDoesNotBeginWith:
			return !strings.HasPrefix(s, v)
		}
		return !strings.HasSuffix(s, v)
	case opContainsAny, opDoesNotContainAny: // data.some(item => rule.includes(item))
		x, ok1 := a.([]any)
		y, ok2 := b.([]any)
		if !ok1 || !ok2 {
			return false
		}
		found := false
		for _, item := range x {
			if e.includes(y, norm(item)) {
				found = true
				break
			}
		}
		return found == (op == opContainsAny)
	case opNull:
		return a == nil
	case opNotNull:
		return a != nil
	case opNotIn:
		arr, ok := b.([]any)
		return ok && !e.includes(arr, a)
	case opBetween, opNotBetween:
		x, lo, hi, ok := rangeInput(a, b)
		switch {
		case !ok:
			return false
		case op == opBetween:
			return x >= lo && x <= hi
		}
		return x < lo || x > hi
	}
	return e.relativeDate(op, a, b)
}

// relativeDate runs moreThanXAgo, lessThanXAgo, withinLast, notWithinLast
// and exactlyXAgo: [date, {amount, unit}].
func (e *evaluator) relativeDate(op opcode, a, b any) bool {
	m, ok := b.(map[string]any)
	if !ok {
		return false
	}
	amount, ok := norm(m["amount"]).(float64)
	if !ok || amount <= 0 {
		return false
	}
	unit, _ := m["unit"].(string)
	tolerance, ok := relativeUnits[unit]
	if !ok {
		return false
	}
	t := e.newDate(a)
	if math.IsNaN(t) {
		return false
	}
	target := relativeDate(e.now, amount, unit)
	switch op {
	case opMoreThanXAgo, opNotWithinLast:
		return t < target
	case opLessThanXAgo:
		return t >= target
	case opWithinLast:
		return t >= target && t <= e.now
	}
	return math.Abs(t-target) <= tolerance // exactlyXAgo
}

// relativeUnits are the units of the relative-date operations, with the
// tolerance of exactlyXAgo in milliseconds.
var relativeUnits = map[string]float64{
	"minutes": jsvalue.MsPerMinute,
	"hours":   jsvalue.MsPerHour,
	"days":    jsvalue.MsPerDay,
	"weeks":   jsvalue.MsPerDay,
	"months":  jsvalue.MsPerDay,
	"years":   7 * jsvalue.MsPerDay,
}

// comparable is Novu's validateComparison: two booleans (or "true"/"false"),
// else two numbers by Number(), else two date strings; the pair as numbers.
func (e *evaluator) comparable(a, b any) (x, y float64, ok bool) {
	ba, oka := booleanInput(a)
	bb, okb := booleanInput(b)
	if oka && okb {
		return ba, bb, true
	}
	x, y = e.toNumber(a), e.toNumber(b)
	if !math.IsNaN(x) && !math.IsNaN(y) {
		return x, y, true
	}
	sa, oka := a.(string)
	sb, okb := b.(string)
	if oka && okb {
		e.chargeLen(sa)
		e.chargeLen(sb)
		x, y = jsvalue.ParseDate(sa), jsvalue.ParseDate(sb)
		if !math.IsNaN(x) && !math.IsNaN(y) {
			return x, y, true
		}
	}
	return 0, 0, false
}

// booleanInput is validateBooleanInput, the boolean as 0 or 1.
func booleanInput(v any) (float64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		switch x {
		case "true":
			return 1, true
		case "false":
			return 0, true
		}
	}
	return 0, false
}

// rangeInput is validateRangeInput: a number and an array of two numbers.
func rangeInput(a, b any) (x, lo, hi float64, ok bool) {
	arr, ok := b.([]any)
	if !ok || len(arr) != 2 {
		return 0, 0, 0, false
	}
	x, ok = a.(float64)
	if !ok {
		return 0, 0, 0, false
	}
	lo, ok1 := norm(arr[0]).(float64)
	hi, ok2 := norm(arr[1]).(float64)
	return x, lo, hi, ok1 && ok2
}

// includes is Array.prototype.includes (SameValueZero).
func (e *evaluator) includes(arr []any, v any) bool {
	e.charge(len(arr))
	for _, el := range arr {
		if sameValueZero(norm(el), v) {
			return true
		}
	}
	return false
}

func isContainer(v any) bool {
	switch v.(type) {
	case []any, map[string]any:
		return true
	}
	return false
}
