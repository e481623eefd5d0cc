package jsonlogic

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/internal/jsvalue"
)

// Limits of a rule, checked by Parse.
const (
	maxDepth = 64    // levels of JSON nesting
	maxNodes = 10000 // JSON values
)

type opcode uint8

const (
	opLiteral opcode = iota // the value itself
	opArray                 // a new array of its elements' values
	opUnknown               // a name no one defines; throws when reached (data only)

	// json-logic-js 2.0.5, evaluated in its apply.
	opIf
	opAnd
	opOr
	opFilter
	opMap
	opReduce
	opAll
	opNone
	opSome

	// json-logic-js 2.0.5 operations that Novu keeps.
	opStrictEq
	opStrictNe
	opNotNot
	opNot
	opMod
	opLog
	opIn
	opCat
	opSubstr
	opAdd
	opMul
	opSub
	opDiv
	opMin
	opMax
	opMerge
	opVar
	opMissing
	opMissingSome

	// Novu's operations (query-parser.service.ts), replacing ==, !=, <, >,
	// <= and >=.
	opEq
	opNe
	opLt
	opGt
	opLe
	opGe
	opAssign // "="
	opStartsWith
	opEndsWith
	opContains
	opDoesNotContain
	opDoesNotBeginWith
	opDoesNotEndWith
	opContainsAny
	opDoesNotContainAny
	opNull
	opNotNull
	opNotIn
	opBetween
	opNotBetween
	opMoreThanXAgo
	opLessThanXAgo
	opWithinLast
	opNotWithinLast
	opExactlyXAgo
)

// operations are the names json-logic-js 2.0.5 and Novu define. There is no
// "method": json-logic-js 2.0.0 removed it, since a rule could run arbitrary
// code with it (npm advisory 1542), so it is an unknown name like any other.
// A dotted name ("a.b"), which json-logic-js resolves through the properties
// of its table of operations, is refused too: it throws there, except for
// tricks such as "!.prototype.constructor" that reach an operation again.
var operations = map[string]opcode{
	"if": opIf, "?:": opIf, "and": opAnd, "or": opOr,
	"filter": opFilter, "map": opMap, "reduce": opReduce,
	"all": opAll, "none": opNone, "some": opSome,
	"===": opStrictEq, "!==": opStrictNe, "!!": opNotNot, "!": opNot,
	"%": opMod, "log": opLog, "in": opIn, "cat": opCat, "substr": opSubstr,
	"+": opAdd, "*": opMul, "-": opSub, "/": opDiv, "min": opMin, "max": opMax,
	"merge": opMerge, "var": opVar, "missing": opMissing, "missing_some": opMissingSome,
	"==": opEq, "!=": opNe, "<": opLt, ">": opGt, "<=": opLe, ">=": opGe, "=": opAssign,
	"startsWith": opStartsWith, "endsWith": opEndsWith, "contains": opContains,
	"doesNotContain": opDoesNotContain, "doesNotBeginWith": opDoesNotBeginWith,
	"doesNotEndWith": opDoesNotEndWith, "containsAny": opContainsAny,
	"doesNotContainAny": opDoesNotContainAny, "null": opNull, "notNull": opNotNull,
	"notIn": opNotIn, "between": opBetween, "notBetween": opNotBetween,
	"moreThanXAgo": opMoreThanXAgo, "lessThanXAgo": opLessThanXAgo,
	"withinLast": opWithinLast, "notWithinLast": opNotWithinLast, "exactlyXAgo": opExactlyXAgo,
}

// node is a compiled rule: what jsonLogic.apply does with a value, decided
// once. An object with one key is an operation on its values (a value that
// is not an array is the one value); an array is the array of its elements'
// results; anything else, objects of other sizes included, is itself.
type node struct {
	op   opcode
	name string  // the operation as written
	lit  any     // opLiteral
	args []*node // the values of an operation, the elements of an array

	// A var whose path is a literal: whole reads the data itself ("", null
	// or no path), else path is the path split at dots.
	varLiteral bool
	whole      bool
	path       []pathSeg
}

// compiler turns values into nodes. Parse's is strict: a name no one
// defines is an error. At run time, values that json-logic-js evaluates again
// (Novu's "=", "missing") are compiled leniently, and budget counts the nodes.
type compiler struct {
	strict bool
	nodes  int
	budget int
}

func (c *compiler) compile(v any, path string) (*node, error) {
	c.nodes++
	if c.budget > 0 && c.nodes > c.budget {
		return nil, errBudget
	}
	switch x := v.(type) {
	case []any:
		n := &node{op: opArray, args: make([]*node, len(x))}
		for i, el := range x {
			var err error
			if n.args[i], err = c.compile(norm(el), join(path, strconv.Itoa(i))); err != nil {
				return nil, err
			}
		}
		return n, nil
	case map[string]any:
		if len(x) == 1 {
			for name, values := range x {
				return c.compileOp(name, norm(values), path)
			}
		}
	}
	return &node{op: opLiteral, lit: v}, nil
}

func (c *compiler) compileOp(name string, values any, path string) (*node, error) {
	path = join(path, name)
	op, ok := operations[name]
	if !ok {
		if c.strict {
			return nil, &Error{Path: path, Msg: fmt.Sprintf("unknown operation %q", name)}
		}
		op = opUnknown
	}
	n := &node{op: op, name: name}
	if a, isArray := values.([]any); isArray {
		n.args = make([]*node, len(a))
		for i, el := range a {
			var err error
			if n.args[i], err = c.compile(norm(el), join(path, strconv.Itoa(i))); err != nil {
				return nil, err
			}
		}
	} else {
		arg, err := c.compile(values, path)
		if err != nil {
			return nil, err
		}
		n.args = []*node{arg}
	}
	if op == opVar {
		n.resolveVar()
	}
	return n, nil
}

// resolveVar splits a literal var path once.
func (n *node) resolveVar() {
	if len(n.args) == 0 {
		n.varLiteral, n.whole = true, true
		return
	}
	a := n.args[0]
	if a.op != opLiteral {
		return
	}
	var s string
	switch x := a.lit.(type) {
	case nil:
		n.varLiteral, n.whole = true, true
		return
	case string:
		s = x
	case float64:
		s = jsvalue.NumberToString(x)
	case bool:
		s = strconv.FormatBool(x)
	default:
		return // String() of an object: left to run time
	}
	n.varLiteral = true
	if s == "" {
		n.whole = true
		return
	}
	for _, p := range strings.Split(s, ".") {
		n.path = append(n.path, newPathSeg(p))
	}
}

func join(path, seg string) string {
	if path == "" {
		return seg
	}
	return path + "." + seg
}

// normalize copies a decoded rule with its numbers as float64, and checks
// its size and depth.
func normalize(v any, depth int, path string, count *int) (any, error) {
	*count++
	if *count > maxNodes {
		return nil, &Error{Msg: fmt.Sprintf("the rule has more than %d values", maxNodes)}
	}
	switch x := v.(type) {
	case nil, bool, string, float64:
		return v, nil
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !math.IsInf(f, 0) {
			return nil, &Error{Path: path, Msg: fmt.Sprintf("invalid number %q", string(x))}
		}
		return f, nil
	case []any:
		if depth >= maxDepth {
			return nil, &Error{Path: path, Msg: fmt.Sprintf("the rule is nested more than %d levels deep", maxDepth)}
		}
		out := make([]any, len(x))
		for i, el := range x {
			var err error
			if out[i], err = normalize(el, depth+1, join(path, strconv.Itoa(i)), count); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		if depth >= maxDepth {
			return nil, &Error{Path: path, Msg: fmt.Sprintf("the rule is nested more than %d levels deep", maxDepth)}
		}
		out := make(map[string]any, len(x))
		for k, el := range x {
			var err error
			if out[k], err = normalize(el, depth+1, join(path, k), count); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if f, ok := norm(v).(float64); ok {
		return f, nil
	}
	return nil, &Error{Path: path, Msg: fmt.Sprintf("%T is not a JSON value", v)}
}
