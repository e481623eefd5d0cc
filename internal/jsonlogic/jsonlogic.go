// Package jsonlogic evaluates step conditions as Novu does: a step's
// controlValues.skip is a JSONLogic rule that json-logic-js 2.0.5 applies,
// with the operations Novu adds or replaces at start
// (libs/application-generic/src/services/query-parser/query-parser.service.ts
// in github.com/novuhq/novu), and the step runs when the result is truthy.
//
// It reproduces JavaScript's semantics where the result depends on them:
// Number() and parseFloat() coercions, String() of numbers and arrays,
// strings counted in UTF-16 code units, === (objects by identity), and
// new Date(string) as V8 parses it, in UTC; the conversions of strings,
// numbers and dates are package jsvalue's, shared with the Liquid engine,
// and this package applies them to its values. The differential
// test runs a corpus against the real json-logic-js with Novu's operations
// (clients/jsonlogic-oracle).
//
// Where it does not follow json-logic-js: properties that JavaScript values
// inherit (a var of "toString", "constructor", "__proto__" or a number's
// "toFixed") are functions or prototypes there and absent here; a code unit
// that is half of a surrogate pair, cut by substr or an index, becomes
// U+FFFD; Parse refuses rules that json-logic-js would run until it reached
// an unknown operation (see Parse); and Eval stops with an error after
// 100,000 steps, where json-logic-js has no limit.
package jsonlogic

import (
	"fmt"
	"sort"
	"time"

	"github.com/herald-notify/herald/internal/jsvalue"
)

// Rule is a parsed condition, safe for concurrent use.
type Rule struct {
	root *node
	vars []string
}

// Error is a refused rule: Path names where, in the rule's JSON, as keys and
// indexes joined by dots ("and.0.frobnicate"); it is empty for the rule as
// a whole.
type Error struct{ Path, Msg string }

// Error implements error.
func (e *Error) Error() string {
	if e.Path == "" {
		return "jsonlogic: " + e.Msg
	}
	return "jsonlogic: " + e.Path + ": " + e.Msg
}

// Parse reads a condition from its decoded JSON (map[string]any, []any,
// float64 or json.Number, string, bool, nil), as json-logic-js reads it: an
// object with one key is an operation, anything else a literal (so {} is a
// rule whose value, {}, is truthy, and Parse(nil) one whose value, null, is
// not). It refuses a rule naming an operation that neither json-logic-js
// 2.0.5 nor Novu defines, wherever it stands (json-logic-js would fail
// only on reaching it), a rule nested deeper than 64 levels or made of more
// than 10,000 JSON values, and values that are not JSON. The rule is
// copied: the caller may change v afterwards.
func Parse(v any) (*Rule, error) {
	count := 0
	v, err := normalize(v, 0, "", &count)
	if err != nil {
		return nil, err
	}
	c := compiler{strict: true}
	root, err := c.compile(v, "")
	if err != nil {
		return nil, err
	}
	r := &Rule{root: root}
	seen := map[string]bool{}
	collectVars(root, seen)
	for p := range seen {
		r.vars = append(r.vars, p)
	}
	sort.Strings(r.vars)
	return r, nil
}

// Eval evaluates the rule over data (decoded JSON, as for Parse) at the
// instant now, which the relative-date operations use instead of the clock.
// The result is JSON-like: float64 numbers (NaN and ±Inf included, which
// JSON cannot carry), JavaScript's undefined as nil. It fails where
// json-logic-js throws (an unknown operation in data that "=" evaluates,
// {"*": []}, an object whose own "toString" is not a function turned into a
// string ...) and after 100,000 steps; it never panics. A nil Rule is
// true.
func (r *Rule) Eval(data any, now time.Time) (any, error) {
	if r == nil {
		return true, nil
	}
	v, err := r.eval(data, now)
	if err != nil {
		return nil, err
	}
	return export(v), nil
}

// eval is Eval with JavaScript's values as they are: undefined kept.
func (r *Rule) eval(data any, now time.Time) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			if t, ok := p.(thrown); ok {
				err = t.err
				return
			}
			err = fmt.Errorf("jsonlogic: internal error: %v", p)
		}
	}()
	e := evaluator{now: float64(now.UnixMilli())}
	return e.eval(r.root, norm(data)), nil
}

// Runs says whether a step with this condition runs: true for a nil rule or
// {}, otherwise the JavaScript truthiness of Eval's result (false, null, 0,
// NaN and "" are falsy; [] and {} are truthy: plain !!, not Truthy).
func (r *Rule) Runs(data any, now time.Time) (bool, error) {
	if r == nil {
		return true, nil
	}
	v, err := r.eval(data, now)
	if err != nil {
		return false, err
	}
	return jsTruthy(v), nil
}

// Vars lists, sorted, the distinct var paths the rule reads from its data
// ("payload.vip", "steps.inbox.read"), with literal keys of missing and
// missing_some. "" stands for a path computed at run time or the whole data:
// the rule may read anything. Vars inside the logic of map, filter, reduce,
// all, some and none read the elements, not the data, and are left out.
func (r *Rule) Vars() []string {
	if r == nil {
		return nil
	}
	return append([]string(nil), r.vars...)
}

func collectVars(n *node, seen map[string]bool) {
	switch n.op {
	case opVar:
		switch {
		case !n.varLiteral:
			seen[""] = true
		case n.whole:
			seen[""] = true
		default:
			p := ""
			for i, seg := range n.path {
				if i > 0 {
					p += "."
				}
				p += seg.key
			}
			seen[p] = true
		}
	case opMissing, opMissingSome:
		args := n.args
		if n.op == opMissingSome {
			if len(args) < 2 {
				break
			}
			collectVars(args[0], seen)
			args = args[1:]
		}
		if len(args) == 1 && args[0].op == opArray {
			args = args[0].args
		}
		for _, a := range args {
			if a.op != opLiteral {
				seen[""] = true
				collectVars(a, seen)
				continue
			}
			switch x := a.lit.(type) {
			case string:
				seen[x] = true
			case float64:
				seen[jsvalue.NumberToString(x)] = true
			default:
				seen[""] = true
			}
		}
		return
	case opFilter, opMap, opAll, opNone, opSome, opReduce:
		for i, a := range n.args {
			if i != 1 {
				collectVars(a, seen)
			}
		}
		return
	}
	for _, a := range n.args {
		collectVars(a, seen)
	}
}

// export turns an evaluation's value into JSON-like values: undefined is
// nil (an object's undefined property is left out), numbers are float64.
func export(v any) any {
	switch x := v.(type) {
	case undefinedType:
		return nil
	case []any:
		if clean(v) {
			return v
		}
		out := make([]any, len(x))
		for i, el := range x {
			out[i] = export(el)
		}
		return out
	case map[string]any:
		if clean(v) {
			return v
		}
		out := make(map[string]any, len(x))
		for k, el := range x {
			if !isUndefined(el) {
				out[k] = export(el)
			}
		}
		return out
	}
	return norm(v)
}

// clean says whether v needs no export.
func clean(v any) bool {
	switch x := v.(type) {
	case nil, bool, float64, string:
		return true
	case []any:
		for _, el := range x {
			if !clean(el) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, el := range x {
			if !clean(el) {
				return false
			}
		}
		return true
	}
	return false
}

// opName is the name of an operation, for messages.
func opName(op opcode) string {
	for name, o := range operations {
		if o == op {
			return name
		}
	}
	return fmt.Sprintf("op %d", op)
}
