package liquid

import (
	"math"
	"strings"

	"github.com/herald-notify/herald/internal/jsvalue"
)

// Values and expressions: LiquidJS's readValue, readFilteredValue and
// Expression, evaluated with its operators.

type valueKind int

const (
	vLiteral  valueKind = iota // a constant: number, string, true, nil, empty, …
	vProperty                  // a variable and its properties
	vRange                     // (a..b)
	vWord                      // an identifier used as a key
)

// value is a value token.
type value struct {
	kind       valueKind
	begin, end int
	lit        any      // vLiteral, vWord
	base       *value   // vProperty: the value properties are read from; nil: a variable
	props      []*value // vProperty
	lo, hi     *value   // vRange
}

func (v *value) text(src string) string { return src[v.begin:v.end] }

// eval is LiquidJS's evalToken (drops kept).
func (v *value) eval(c *Context) (any, error) {
	switch v.kind {
	case vLiteral, vWord:
		return v.lit, nil
	case vRange:
		lo, err := v.lo.eval(c)
		if err != nil {
			return nil, err
		}
		hi, err := v.hi.eval(c)
		if err != nil {
			return nil, err
		}
		l, h := jsNumber(toValue(lo)), jsNumber(toValue(hi))
		n := h - l + 1
		if n > 0 {
			if err := c.budget.WouldMake(int(math.Min(n, math.MaxInt32)) * 8); err != nil {
				return nil, err
			}
		}
		var out []any
		for i := l; i < h+1; i++ {
			out = append(out, i)
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	}
	keys := make([]any, len(v.props))
	for i, p := range v.props {
		k, err := p.eval(c)
		if err != nil {
			return nil, err
		}
		keys[i] = toValue(k)
	}
	var cur any
	if v.base != nil {
		b, err := v.base.eval(c)
		if err != nil {
			return nil, err
		}
		cur = b
		for _, k := range keys {
			cur = ReadProperty(cur, k)
		}
		return cur, nil
	}
	if len(keys) == 0 {
		return nil, nil
	}
	cur = c.lookup(propertyKey(keys[0]))
	for _, k := range keys[1:] {
		cur = ReadProperty(cur, k)
	}
	return cur, nil
}

// literals are Liquid's keyword values.
var literals = map[string]any{
	"true": true, "false": false, "nil": nilDrop{}, "null": nilDrop{}, "empty": emptyDrop{}, "blank": blankDrop{},
}

var operators = []string{"==", "!=", ">", "<", ">=", "<=", "contains", "not", "and", "or"}

func precedence(op string) int {
	switch op {
	case "not":
		return 1
	case "and", "or":
		return 0
	}
	return 2
}

// matchWord matches the longest of words at p, a word-ending one only at a
// word boundary (LiquidJS's trie).
func (t *tokenizer) matchWord(words []string) (string, int) {
	best, bestEnd := "", -1
	for _, w := range words {
		if t.p+len(w) <= t.n && t.src[t.p:t.p+len(w)] == w && len(w) > len(best) {
			best, bestEnd = w, t.p+len(w)
		}
	}
	if bestEnd < 0 {
		return "", -1
	}
	if last := rune(best[len(best)-1]); isWordRune(last) {
		if r, size := t.peekAt(bestEnd); size > 0 && isWordRune(r) {
			return "", -1
		}
	}
	return best, bestEnd
}

var literalWords = []string{"true", "false", "nil", "null", "empty", "blank"}

func (t *tokenizer) readLiteral() *value {
	t.skipBlank()
	w, end := t.matchWord(literalWords)
	if end < 0 {
		return nil
	}
	v := &value{kind: vLiteral, begin: t.p, end: end, lit: literals[w]}
	t.p = end
	return v
}

func (t *tokenizer) readQuoted() *value {
	t.skipBlank()
	begin := t.p
	q := t.peek()
	if q != '"' && q != '\'' {
		return nil
	}
	t.p++
	escaped := false
	for t.p < t.n {
		t.p++
		c := t.src[t.p-1]
		if c == q && !escaped {
			break
		}
		if escaped {
			escaped = false
		} else if c == '\\' {
			escaped = true
		}
	}
	return &value{kind: vLiteral, begin: begin, end: t.p, lit: parseStringLiteral(t.src[begin:t.p])}
}

// parseStringLiteral is LiquidJS's: the quotes dropped (the last byte is
// dropped even when the string was not closed), escapes read.
func parseStringLiteral(s string) string {
	if len(s) < 2 {
		return ""
	}
	in := s[1 : len(s)-1]
	if !strings.Contains(in, `\`) {
		return in
	}
	var b strings.Builder
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(in) {
			// "\" at the end: JavaScript appends str[i+1], the closing quote.
			b.WriteByte(s[len(s)-1])
			i++
			continue
		}
		n := in[i+1]
		switch n {
		case 'b':
			b.WriteByte('\b')
			i++
		case 'f':
			b.WriteByte('\f')
			i++
		case 'n':
			b.WriteByte('\n')
			i++
		case 'r':
			b.WriteByte('\r')
			i++
		case 't':
			b.WriteByte('\t')
			i++
		case 'v':
			b.WriteByte('\v')
			i++
		case 'u':
			val, j := 0, i+2
			for j <= i+5 && j < len(in) && isHex(in[j]) {
				val = val*16 + hexVal(in[j])
				j++
			}
			i = j - 1
			b.WriteRune(rune(val))
		default:
			if n >= '0' && n <= '7' {
				val, j := 0, i+1
				for j <= i+3 && j < len(in) && in[j] >= '0' && in[j] <= '7' {
					val = val*8 + int(in[j]-'0')
					j++
				}
				i = j - 1
				b.WriteRune(rune(val))
			} else {
				i++
				b.WriteByte(in[i])
			}
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= 'a':
		return int(c-'a') + 10
	case c >= 'A':
		return int(c-'A') + 10
	}
	return int(c - '0')
}

func (t *tokenizer) readNumber() *value {
	t.skipBlank()
	n := 0
	if t.peek() == '-' || t.peek() == '+' {
		n++
	}
	decimal, digit := false, false
	for t.p+n <= t.n {
		c := t.peekN(n)
		switch {
		case c >= '0' && c <= '9':
			digit = true
			n++
			continue
		case c == '.' && t.peekN(n+1) != '.':
			if decimal || !digit {
				return nil
			}
			decimal = true
			n++
			continue
		}
		break
	}
	if !digit {
		return nil
	}
	if r, size := t.peekAt(t.p + n); size > 0 && isWordRune(r) {
		return nil
	}
	txt := t.src[t.p : t.p+n]
	v := &value{kind: vLiteral, begin: t.p, end: t.p + n, lit: jsvalue.StringToNumber(txt)}
	t.p += n
	return v
}

// readValue is LiquidJS's readValue; nil when there is no value at p.
func (t *tokenizer) readValue() (*value, error) {
	t.skipBlank()
	begin := t.p
	v := t.readLiteral()
	if v == nil {
		v = t.readQuoted()
	}
	if v == nil {
		v = t.readNumber()
	}
	if v == nil && t.peek() == '(' {
		r, err := t.readRange()
		if err != nil {
			return nil, err
		}
		v = r
	}
	props, err := t.readProperties(v == nil)
	if err != nil {
		return nil, err
	}
	if len(props) == 0 {
		return v, nil
	}
	return &value{kind: vProperty, begin: begin, end: t.p, base: v, props: props}, nil
}

func (t *tokenizer) readRange() (*value, error) {
	t.skipBlank()
	begin := t.p
	t.p++
	lo, err := t.readValueOrThrow()
	if err != nil {
		return nil, err
	}
	t.skipBlank()
	if t.peek() == '.' && t.peekN(1) == '.' {
		t.p += 2
		hi, err := t.readValueOrThrow()
		if err != nil {
			return nil, err
		}
		t.skipBlank()
		c := t.peek()
		t.p++
		if c != ')' {
			return nil, t.errorf(t.p, "invalid range syntax")
		}
		return &value{kind: vRange, begin: begin, end: t.p, lo: lo, hi: hi}, nil
	}
	return nil, t.errorf(t.p, "invalid range syntax")
}

func (t *tokenizer) readValueOrThrow() (*value, error) {
	v, err := t.readValue()
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, t.errorf(t.p, "unexpected token %s, value expected", t.snapshot(t.p))
	}
	return v, nil
}

func (t *tokenizer) readProperties(isBegin bool) ([]*value, error) {
	var props []*value
	for {
		if t.peek() == '[' {
			t.p++
			p, err := t.readValue()
			if err != nil {
				return nil, err
			}
			if p == nil {
				p = &value{kind: vWord, begin: t.p, end: t.p, lit: ""}
			}
			if t.readTo("]") == -1 {
				return nil, t.errorf(t.p, "[ not closed")
			}
			props = append(props, p)
			continue
		}
		if isBegin && len(props) == 0 {
			if b, e := t.readIdentifier(); e > b {
				props = append(props, &value{kind: vWord, begin: b, end: e, lit: t.src[b:e]})
				continue
			}
		}
		if t.peek() == '.' && t.peekN(1) != '.' {
			t.p++
			b, e := t.readIdentifier()
			if e == b {
				break
			}
			props = append(props, &value{kind: vWord, begin: b, end: e, lit: t.src[b:e]})
			continue
		}
		break
	}
	return props, nil
}

// expression is a postfix expression of values and operators.
type expression struct {
	items []exprItem
}

type exprItem struct {
	op string // an operator, or "" for a value
	v  *value
}

func (t *tokenizer) readOperator() (string, bool) {
	t.skipBlank()
	w, end := t.matchWord(operators)
	if end < 0 {
		return "", false
	}
	t.p = end
	return w, true
}

func (t *tokenizer) readExpression() (*expression, error) {
	var out []exprItem
	var ops []string
	for t.p < t.n {
		if op, ok := t.readOperator(); ok {
			for len(ops) > 0 && precedence(ops[len(ops)-1]) > precedence(op) {
				out = append(out, exprItem{op: ops[len(ops)-1]})
				ops = ops[:len(ops)-1]
			}
			ops = append(ops, op)
			continue
		}
		v, err := t.readValue()
		if err != nil {
			return nil, err
		}
		if v == nil {
			break
		}
		out = append(out, exprItem{v: v})
	}
	for i := len(ops) - 1; i >= 0; i-- {
		out = append(out, exprItem{op: ops[i]})
	}
	return &expression{items: out}, nil
}

func (e *expression) eval(c *Context) (any, error) {
	var stack []any
	pop := func() any {
		if len(stack) == 0 {
			return nil
		}
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		return v
	}
	for _, it := range e.items {
		if it.op == "" {
			v, err := it.v.eval(c)
			if err != nil {
				return nil, err
			}
			stack = append(stack, v)
			continue
		}
		r := pop()
		if it.op == "not" {
			stack = append(stack, !Truthy(r))
			continue
		}
		l := pop()
		stack = append(stack, operate(it.op, l, r))
	}
	if len(stack) == 0 {
		return nil, nil
	}
	return stack[0], nil
}

func operate(op string, l, r any) any {
	switch op {
	case "==":
		return Equals(l, r)
	case "!=":
		return !Equals(l, r)
	case ">", "<", ">=", "<=":
		_, lc := l.(comparableDrop)
		_, rc := r.(comparableDrop)
		if lc || rc {
			return false
		}
		c, ok := compare(l, r)
		if !ok {
			return false
		}
		switch op {
		case ">":
			return c > 0
		case "<":
			return c < 0
		case ">=":
			return c >= 0
		}
		return c <= 0
	case "contains":
		lv := toValue(l)
		switch a := lv.(type) {
		case []any:
			for _, x := range a {
				if Equals(x, r) {
					return true
				}
			}
			return false
		case string:
			return strings.Contains(a, JSString(toValue(r)))
		}
		return false
	case "and":
		return Truthy(l) && Truthy(r)
	case "or":
		return Truthy(l) || Truthy(r)
	}
	return false
}

// filterCall is one filter of a filtered value.
type filterCall struct {
	name string
	pos  int
	fn   FilterFunc // nil: an unknown filter, which passes its input on
	raw  bool
	args []filterArg
}

type filterArg struct {
	key string // a keyword argument
	v   *value // nil: a keyword without a value
}

// filtered is a value with filters: LiquidJS's Value.
type filtered struct {
	begin, end int
	exp        *expression
	filters    []*filterCall
}

func (t *tokenizer) readFilteredValue() (*filtered, error) {
	begin := t.p
	exp, err := t.readExpression()
	if err != nil {
		return nil, err
	}
	if len(exp.items) == 0 {
		return nil, t.errorf(begin, "invalid value expression: %s", t.snapshot(t.p))
	}
	fs, err := t.readFilters()
	if err != nil {
		return nil, err
	}
	return &filtered{begin: begin, end: t.p, exp: exp, filters: fs}, nil
}

func (t *tokenizer) readFilters() ([]*filterCall, error) {
	var out []*filterCall
	for {
		t.skipBlank()
		if t.end() || t.peek() == ')' || t.peek() == ',' {
			return out, nil
		}
		if t.peek() != '|' {
			t.p++
			return nil, t.errorf(t.p, `expected "|" before filter`)
		}
		t.p++
		b, e := t.readIdentifier()
		if b == e {
			if !t.end() {
				return nil, t.errorf(t.p, "expected filter name")
			}
			return out, nil
		}
		f := &filterCall{name: t.src[b:e], pos: b}
		f.fn = filters[f.name]
		f.raw = f.name == "raw"
		t.skipBlank()
		if t.peek() == ':' {
			for {
				t.p++
				a, ok, err := t.readFilterArg()
				if err != nil {
					return nil, err
				}
				if ok {
					f.args = append(f.args, a)
				}
				t.skipBlank()
				if !(t.end() || t.peek() == ',' || t.peek() == '|' || t.peek() == ')') {
					return nil, t.errorf(t.p, "unexpected character %s", t.snapshot(t.p))
				}
				if t.peek() != ',' {
					break
				}
			}
		} else if !(t.peek() == '|' || t.peek() == ')' || t.peek() == ',' || t.end()) {
			return nil, t.errorf(t.p, `expected ":" after filter name`)
		}
		out = append(out, f)
	}
}

func (t *tokenizer) readFilterArg() (filterArg, bool, error) {
	key, err := t.readValue()
	if err != nil || key == nil {
		return filterArg{}, false, err
	}
	t.skipBlank()
	if t.peek() != ':' {
		return filterArg{v: key}, true, nil
	}
	t.p++
	v, err := t.readValue()
	if err != nil {
		return filterArg{}, false, err
	}
	return filterArg{key: key.text(t.src), v: v}, true, nil
}

func (f *filtered) eval(c *Context) (any, error) {
	v, err := f.exp.eval(c)
	if err != nil {
		return nil, err
	}
	for _, fc := range f.filters {
		if v, err = fc.apply(c, v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func (fc *filterCall) apply(c *Context, v any) (any, error) {
	if err := c.budget.Tick(); err != nil {
		return nil, err
	}
	if fc.fn == nil {
		return v, nil
	}
	args := make([]any, len(fc.args))
	for i, a := range fc.args {
		var x any
		if a.v != nil {
			var err error
			if x, err = a.v.eval(c); err != nil {
				return nil, err
			}
		}
		if a.key != "" {
			args[i] = KV{Key: a.key, Value: x}
		} else {
			args[i] = x
		}
	}
	out, err := fc.fn(c, v, args)
	if err != nil {
		if le, ok := err.(*Error); ok && le.Pos == 0 {
			le.Pos = fc.pos
		}
		return nil, err
	}
	if err := c.budget.Made(sizeOf(out, 1<<30)); err != nil {
		return nil, err
	}
	return out, nil
}

// sizeOf estimates the bytes of a value, stopping once past limit.
func sizeOf(v any, limit int) int {
	n := 0
	var walk func(v any)
	walk = func(v any) {
		if n > limit {
			return
		}
		switch t := v.(type) {
		case string:
			n += 16 + len(t)
		case []any:
			n += 16
			for _, x := range t {
				walk(x)
			}
		case *Map:
			n += 16
			for _, k := range t.keys {
				n += 16 + len(k)
				walk(t.vals[k])
			}
		default:
			n += 8
		}
	}
	walk(v)
	return n
}
