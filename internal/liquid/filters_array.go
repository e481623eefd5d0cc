package liquid

// LiquidJS's array filters (sample, which is random, is left out).

import (
	"reflect"

	"github.com/herald-notify/herald/internal/jsvalue"
)

func init() {
	register("join", filterJoin)
	register("first", func(c *Context, v any, args []any) (any, error) { return fArrayLikeElem(v, 0), nil })
	register("last", func(c *Context, v any, args []any) (any, error) { return fArrayLikeElem(v, -1), nil })
	register("reverse", filterReverse)
	register("sort", func(c *Context, v any, args []any) (any, error) {
		return fSortBy(c, v, fArg(args, 0), fOrderedCompare), nil
	})
	register("sort_natural", func(c *Context, v any, args []any) (any, error) {
		return fSortBy(c, v, fArg(args, 0), fCaseInsensitiveCompare), nil
	})
	register("size", filterSize)
	register("map", filterMap)
	register("sum", filterSum)
	register("compact", filterCompact)
	register("concat", filterConcat)
	register("push", filterPush)
	register("unshift", filterUnshift)
	register("pop", filterPop)
	register("shift", filterShift)
	register("slice", filterSlice)
	register("where", func(c *Context, v any, args []any) (any, error) { return fFilter(c, true, v, args) })
	register("reject", func(c *Context, v any, args []any) (any, error) { return fFilter(c, false, v, args) })
	register("where_exp", func(c *Context, v any, args []any) (any, error) { return fFilterExp(c, true, v, args) })
	register("reject_exp", func(c *Context, v any, args []any) (any, error) { return fFilterExp(c, false, v, args) })
	register("group_by", filterGroupBy)
	register("group_by_exp", filterGroupByExp)
	register("has", func(c *Context, v any, args []any) (any, error) {
		i, _, err := fSearch(c, v, args)
		return i >= 0, err
	})
	register("has_exp", func(c *Context, v any, args []any) (any, error) {
		i, _, err := fSearchExp(c, v, args)
		return i >= 0, err
	})
	register("find_index", func(c *Context, v any, args []any) (any, error) {
		return fIndexResult(fSearch(c, v, args))
	})
	register("find_index_exp", func(c *Context, v any, args []any) (any, error) {
		return fIndexResult(fSearchExp(c, v, args))
	})
	register("find", func(c *Context, v any, args []any) (any, error) {
		_, item, err := fSearch(c, v, args)
		return item, err
	})
	register("find_exp", func(c *Context, v any, args []any) (any, error) {
		_, item, err := fSearchExp(c, v, args)
		return item, err
	})
	register("uniq", filterUniq)
}

func filterJoin(c *Context, v any, args []any) (any, error) {
	arr := fToArray(v)
	sep := " "
	if a := ToValue(fArg(args, 0)); !IsNil(a) {
		sep = Stringify(a)
	}
	if err := fWouldMake(c, len(arr)*len(sep)); err != nil {
		return nil, err
	}
	return arrayJoin(arr, sep), nil
}

// fArrayLikeElem is first and last: element idx (negative from the end)
// of what has a numeric length (arrays, strings, objects with a length),
// else "".
func fArrayLikeElem(v any, idx int) any {
	if _, ok := v.(*Forloop); ok {
		// A forloop has a length but no elements.
		return nil
	}
	switch t := ToValue(v).(type) {
	case string:
		if t == "" {
			return ""
		}
		u := fUnits(t)
		if idx < 0 {
			idx += len(u)
		}
		if idx < 0 || idx >= len(u) {
			return nil
		}
		return fFromUnits(u[idx : idx+1])
	case []any:
		if idx < 0 {
			idx += len(t)
		}
		if idx < 0 || idx >= len(t) {
			return nil
		}
		return t[idx]
	case *Map:
		l, _ := t.Get("length")
		n, ok := l.(float64)
		if !ok {
			return ""
		}
		i := float64(idx)
		if i < 0 {
			i += n
		}
		x, _ := t.Get(jsvalue.NumberToString(i))
		return x
	}
	return ""
}

func filterReverse(c *Context, v any, args []any) (any, error) {
	arr := fToArray(v)
	out := make([]any, len(arr))
	for i, x := range arr {
		out[len(arr)-1-i] = x
	}
	return out, nil
}

// size is `(v && v.length) || 0`: an object's size is its own length
// property, if any.
func filterSize(c *Context, v any, args []any) (any, error) {
	var l any
	switch t := v.(type) {
	case string:
		l = float64(jsvalue.Len16(t))
	case []any:
		l = float64(len(t))
	case *Map:
		l, _ = t.Get("length")
	case Drop:
		l = t.Prop("length")
	}
	if fTruthyJS(l) {
		return l, nil
	}
	return 0.0, nil
}

func filterMap(c *Context, v any, args []any) (any, error) {
	arr := fToArray(v)
	path := Stringify(fArg(args, 0))
	out := make([]any, len(arr))
	for i, item := range arr {
		out[i] = c.GetPath(item, path)
	}
	return out, nil
}

func filterSum(c *Context, v any, args []any) (any, error) {
	prop := fArg(args, 0)
	sum := 0.0
	for _, item := range fToArray(v) {
		x := item
		if fTruthyJS(prop) {
			x = c.GetPath(item, Stringify(prop))
		}
		if f := fNumber(x); f == f {
			sum += f
		}
	}
	return sum, nil
}

func filterCompact(c *Context, v any, args []any) (any, error) {
	out := []any{}
	for _, x := range fToArray(v) {
		if !IsNil(ToValue(x)) {
			out = append(out, x)
		}
	}
	return out, nil
}

func fConcat(a, b []any) []any {
	out := make([]any, 0, len(a)+len(b))
	return append(append(out, a...), b...)
}

func filterConcat(c *Context, v any, args []any) (any, error) {
	return fConcat(fToArray(v), fToArray(fArg(args, 0))), nil
}

func filterPush(c *Context, v any, args []any) (any, error) {
	return fConcat(fToArray(v), []any{fArg(args, 0)}), nil
}

func filterUnshift(c *Context, v any, args []any) (any, error) {
	return fConcat([]any{fArg(args, 0)}, fToArray(v)), nil
}

func filterPop(c *Context, v any, args []any) (any, error) {
	arr := fToArray(v)
	if len(arr) == 0 {
		return []any{}, nil
	}
	return fConcat(arr[:len(arr)-1], nil), nil
}

func filterShift(c *Context, v any, args []any) (any, error) {
	arr := fToArray(v)
	if len(arr) == 0 {
		return []any{}, nil
	}
	return fConcat(arr[1:], nil), nil
}

// slice takes begin and length as JavaScript values: a negative begin
// counts from the end (in code points for strings), begin + length is
// JavaScript's + (so a string begin concatenates).
func filterSlice(c *Context, v any, args []any) (any, error) {
	val := ToValue(v)
	if IsNil(val) {
		return []any{}, nil
	}
	arr, isArr := val.([]any)
	var s string
	n := len(arr)
	if !isArr {
		s = Stringify(val)
		n = fCodePoints(s)
	}
	begin, length := fArg(args, 0), fArg(args, 1)
	if length == nil {
		length = 1.0
	}
	if Less(begin, 0.0) {
		begin = fAdd(float64(n), begin)
	}
	if Less(begin, 0.0) || Less(length, 0.0) {
		if isArr {
			return []any{}, nil
		}
		return "", nil
	}
	if isArr {
		start, end := fRelIndex(begin, len(arr)), fRelIndex(fAdd(begin, length), len(arr))
		if end < start {
			end = start
		}
		return fConcat(arr[start:end], nil), nil
	}
	u := fUnits(s)
	start := fAdvance(u, 0, fNumber(begin))
	end := fAdvance(u, start, fNumber(length))
	return fFromUnits(u[start:end]), nil
}

// fParseScope and fParseExp parse a property path or an expression before
// any item is looked at, as LiquidJS does: a bad one fails even on an
// empty array.
func fParseScope(c *Context, path string) error {
	if c.eng == nil {
		return nil
	}
	_, err := c.eng.scopeValue(path)
	return err
}

func fParseExp(c *Context, exp string) error {
	if c.eng == nil {
		return nil
	}
	_, err := c.eng.filteredValue(exp)
	return err
}

// fMatches is where's test: without an expected value, truth; else ==.
func fMatches(value, expected any) bool {
	if expected == nil {
		return Truthy(value)
	}
	return Equals(value, expected)
}

func fFilter(c *Context, include bool, v any, args []any) (any, error) {
	arr := fToArray(v)
	prop := Stringify(fArg(args, 0))
	expected := fArg(args, 1)
	if err := fParseScope(c, prop); err != nil {
		return nil, err
	}
	out := []any{}
	for _, item := range arr {
		value, err := c.ScopeValue(prop, item)
		if err != nil {
			return nil, err
		}
		if fMatches(value, expected) == include {
			out = append(out, item)
		}
	}
	return out, nil
}

// fFilterExp keeps the items whose expression is exactly true (where_exp)
// or exactly false (reject_exp).
func fFilterExp(c *Context, include bool, v any, args []any) (any, error) {
	name := fToStringJS(fArg(args, 0))
	exp := Stringify(fArg(args, 1))
	if err := fParseExp(c, exp); err != nil {
		return nil, err
	}
	out := []any{}
	for _, item := range fToArray(v) {
		value, err := c.EvalExp(exp, name, item)
		if err != nil {
			return nil, err
		}
		if b, ok := value.(bool); ok && b == include {
			out = append(out, item)
		}
	}
	return out, nil
}

// fSameValueZero is the equality of JavaScript's Map and Set keys.
func fSameValueZero(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || x != x && y != y)
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && cap(x) == cap(y) && (len(x) == 0 || &x[0] == &y[0])
	}
	if a == nil || b == nil {
		return a == b
	}
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}

// fKeySet finds values by SameValueZero: hashed where Go can hash them.
type fKeySet struct {
	hashed map[any]int
	nan    int
	others []any
	oidx   []int
}

func newFKeySet() *fKeySet { return &fKeySet{hashed: map[any]int{}, nan: -1} }

func (s *fKeySet) slot(v any) (any, bool) {
	switch t := v.(type) {
	case float64:
		if t == 0 {
			return 0.0, true
		}
		return t, true
	case nil, string, bool, nullType, *Map:
		return v, true
	}
	return nil, false
}

// find returns the index stored for v, or -1.
func (s *fKeySet) find(v any) int {
	if f, ok := v.(float64); ok && f != f {
		return s.nan
	}
	if k, ok := s.slot(v); ok {
		if i, found := s.hashed[k]; found {
			return i
		}
		return -1
	}
	for j, o := range s.others {
		if fSameValueZero(o, v) {
			return s.oidx[j]
		}
	}
	return -1
}

func (s *fKeySet) add(v any, i int) {
	if f, ok := v.(float64); ok && f != f {
		s.nan = i
		return
	}
	if k, ok := s.slot(v); ok {
		s.hashed[k] = i
		return
	}
	s.others = append(s.others, v)
	s.oidx = append(s.oidx, i)
}

// fGroup groups items by key, in the order keys first appear, as
// [{name, items}].
func fGroup(items []any, key func(any) (any, error)) (any, error) {
	set := newFKeySet()
	var names []any
	var groups [][]any
	for _, item := range items {
		k, err := key(item)
		if err != nil {
			return nil, err
		}
		i := set.find(k)
		if i < 0 {
			i = len(names)
			set.add(k, i)
			names = append(names, k)
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], item)
	}
	out := make([]any, len(names))
	for i := range names {
		m := NewMap(2)
		m.Set("name", names[i])
		m.Set("items", groups[i])
		out[i] = m
	}
	return out, nil
}

func filterGroupBy(c *Context, v any, args []any) (any, error) {
	prop := Stringify(fArg(args, 0))
	if err := fParseScope(c, prop); err != nil {
		return nil, err
	}
	return fGroup(enumerable(v), func(item any) (any, error) { return c.ScopeValue(prop, item) })
}

func filterGroupByExp(c *Context, v any, args []any) (any, error) {
	name := fToStringJS(fArg(args, 0))
	exp := Stringify(fArg(args, 1))
	if err := fParseExp(c, exp); err != nil {
		return nil, err
	}
	return fGroup(enumerable(v), func(item any) (any, error) { return c.EvalExp(exp, name, item) })
}

// fSearch is the first item whose property matches (find, find_index,
// has): its index, -1 when none.
func fSearch(c *Context, v any, args []any) (int, any, error) {
	prop := Stringify(fArg(args, 0))
	expected := fArg(args, 1)
	if err := fParseScope(c, prop); err != nil {
		return -1, nil, err
	}
	for i, item := range fToArray(v) {
		value, err := c.ScopeValue(prop, item)
		if err != nil {
			return -1, nil, err
		}
		if fMatches(value, expected) {
			return i, item, nil
		}
	}
	return -1, nil, nil
}

// fSearchExp is the first item whose expression is truthy in JavaScript's
// sense.
func fSearchExp(c *Context, v any, args []any) (int, any, error) {
	name := fToStringJS(fArg(args, 0))
	exp := Stringify(fArg(args, 1))
	if err := fParseExp(c, exp); err != nil {
		return -1, nil, err
	}
	for i, item := range fToArray(v) {
		value, err := c.EvalExp(exp, name, item)
		if err != nil {
			return -1, nil, err
		}
		if fTruthyJS(value) {
			return i, item, nil
		}
	}
	return -1, nil, nil
}

func fIndexResult(i int, _ any, err error) (any, error) {
	if err != nil || i < 0 {
		return nil, err
	}
	return float64(i), nil
}

func filterUniq(c *Context, v any, args []any) (any, error) {
	set := newFKeySet()
	out := []any{}
	for _, x := range fToArray(v) {
		if set.find(x) < 0 {
			set.add(x, len(out))
			out = append(out, x)
		}
	}
	return out, nil
}
