package jsonlogic

import (
	"errors"
	"fmt"
	"strings"
)

// Bounds of one evaluation.
const (
	maxSteps   = 100000 // nodes evaluated, elements visited, values compiled
	stringCost = 64     // bytes of a built string that cost one step
)

var errBudget = fmt.Errorf("jsonlogic: the rule takes more than %d operations", maxSteps)

// thrown carries what JavaScript would throw, or the exhausted budget, up to
// Eval, which recovers it.
type thrown struct{ err error }

func throw(msg string) { panic(thrown{errors.New("jsonlogic: " + msg)}) }

// evaluator is one evaluation: its clock and its budget.
type evaluator struct {
	now   float64 // ms since the epoch
	steps int
}

// chargeLen charges for work over a string: one step per stringCost bytes.
func (e *evaluator) chargeLen(s string) { e.charge(len(s) / stringCost) }

func (e *evaluator) charge(n int) {
	e.steps += n
	if e.steps > maxSteps {
		panic(thrown{errBudget})
	}
}

// eval is jsonLogic.apply(n, data).
func (e *evaluator) eval(n *node, data any) any {
	e.charge(1)
	switch n.op {
	case opLiteral:
		return n.lit
	case opArray:
		out := make([]any, len(n.args))
		for i, a := range n.args {
			out[i] = e.eval(a, data)
		}
		return out
	case opVar:
		return e.evalVar(n, data)
	case opIf:
		i := 0
		for ; i < len(n.args)-1; i += 2 {
			if Truthy(e.eval(n.args[i], data)) {
				return e.eval(n.args[i+1], data)
			}
		}
		if len(n.args) == i+1 {
			return e.eval(n.args[i], data)
		}
		return nil
	case opAnd, opOr:
		current := undefined
		for _, a := range n.args {
			current = e.eval(a, data)
			if Truthy(current) == (n.op == opOr) {
				return current
			}
		}
		return current
	case opFilter, opMap, opReduce, opAll, opNone, opSome:
		return e.evalScoped(n, data)
	case opCat, opAdd, opMul, opMin, opMax, opMerge, opMissing:
		vals := make([]any, len(n.args))
		for i, a := range n.args {
			vals[i] = e.eval(a, data)
		}
		return e.variadic(n.op, vals, data)
	case opUnknown:
		for _, a := range n.args {
			e.eval(a, data)
		}
		throw("Unrecognized operation " + n.name)
	}
	// Every other operation gets all its values first, used or not.
	a, b, c := undefined, undefined, undefined
	for i, arg := range n.args {
		v := e.eval(arg, data)
		switch i {
		case 0:
			a = v
		case 1:
			b = v
		case 2:
			c = v
		}
	}
	if n.op >= opEq {
		return e.novu(n.op, a, b, c)
	}
	return e.basic(n.op, a, b, c, data)
}

// evalScoped runs filter, map, reduce, all, none and some: the logic (the
// second value) over each element of the array (the first), the element
// being its data ({current, accumulator} for reduce).
func (e *evaluator) evalScoped(n *node, data any) any {
	scoped := undefined
	if len(n.args) > 0 {
		scoped = e.eval(n.args[0], data)
	}
	apply := func(d any) any {
		if len(n.args) < 2 {
			return undefined
		}
		return e.eval(n.args[1], d)
	}
	arr, isArray := scoped.([]any)
	e.charge(len(arr))
	switch n.op {
	case opFilter:
		out := make([]any, 0)
		if isArray {
			for _, el := range arr {
				if Truthy(apply(norm(el))) {
					out = append(out, el)
				}
			}
		}
		return out
	case opMap:
		out := make([]any, 0, len(arr))
		for _, el := range arr {
			out = append(out, apply(norm(el)))
		}
		return out
	case opReduce:
		var acc any
		if len(n.args) > 2 {
			acc = e.eval(n.args[2], data)
		}
		if !isArray {
			return acc
		}
		for _, el := range arr {
			acc = apply(map[string]any{"current": norm(el), "accumulator": acc})
		}
		return acc
	}
	if !isArray || len(arr) == 0 {
		return n.op == opNone
	}
	for _, el := range arr {
		t := Truthy(apply(norm(el)))
		switch {
		case n.op == opAll && !t:
			return false
		case n.op == opSome && t:
			return true
		case n.op == opNone && t:
			return false
		}
	}
	return n.op != opSome
}

// evalVar is json-logic-js's var: the data at a dotted path, else the
// default (the second value, null when absent). A null on the way ends the
// walk with the default; a null at its end is the result.
func (e *evaluator) evalVar(n *node, data any) any {
	if !n.varLiteral {
		a, b := undefined, undefined
		for i, arg := range n.args {
			v := e.eval(arg, data)
			switch i {
			case 0:
				a = v
			case 1:
				b = v
			}
		}
		return e.varOp(a, b, data)
	}
	notFound := any(nil)
	for i := 1; i < len(n.args); i++ {
		if v := e.eval(n.args[i], data); i == 1 && !isUndefined(v) {
			notFound = v
		}
	}
	if n.whole {
		return data
	}
	d := data
	for _, seg := range n.path {
		if d == nil || isUndefined(d) {
			return notFound
		}
		if d = e.getProp(d, seg); isUndefined(d) {
			return notFound
		}
	}
	return d
}

// varOp is var over values computed at run time.
func (e *evaluator) varOp(a, b, data any) any {
	notFound := b
	if isUndefined(b) {
		notFound = nil
	}
	if isUndefined(a) || a == nil || a == "" {
		return data
	}
	d := data
	for _, key := range strings.Split(e.toString(a), ".") {
		if d == nil || isUndefined(d) {
			return notFound
		}
		if d = e.getProp(d, newPathSeg(key)); isUndefined(d) {
			return notFound
		}
	}
	return d
}

// applyValue is jsonLogic.apply(v, data) for a value computed at run time,
// which json-logic-js evaluates as a rule again in two places: Novu's "="
// and "missing"'s keys. An object with one key is an operation there too,
// and an unknown one throws.
func (e *evaluator) applyValue(v, data any) any {
	e.charge(1)
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			out[i] = e.applyValue(norm(el), data)
		}
		return out
	case map[string]any:
		if len(x) != 1 {
			return v
		}
		c := compiler{budget: maxSteps - e.steps + 1}
		n, err := c.compile(v, "")
		if err != nil {
			panic(thrown{err})
		}
		e.charge(c.nodes)
		return e.eval(n, data)
	}
	return v
}
