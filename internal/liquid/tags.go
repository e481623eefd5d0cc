package liquid

import (
	"math"
	"strings"
)

type tagParser func(p *parser, tk *topToken, t *tokenizer) (node, error)

var tagParsers map[string]tagParser

func init() {
	tagParsers = map[string]tagParser{
		"assign": parseAssign, "capture": parseCapture, "if": parseIf, "unless": parseUnless,
		"case": parseCase, "for": parseFor, "tablerow": parseTablerow, "cycle": parseCycle,
		"increment": parseIncrement(1), "decrement": parseIncrement(-1), "echo": parseEcho,
		"comment": parseComment, "raw": parseRaw, "liquid": parseLiquid, "#": parseInlineComment,
		"break":    func(*parser, *topToken, *tokenizer) (node, error) { return breakNode(true), nil },
		"continue": func(*parser, *topToken, *tokenizer) (node, error) { return breakNode(false), nil },
	}
}

// assign

type assignNode struct {
	key string
	v   *filtered
}

func parseAssign(p *parser, tk *topToken, t *tokenizer) (node, error) {
	b, e := t.readIdentifier()
	if b == e {
		return nil, errorf(tk.begin, "expected variable name")
	}
	t.skipBlank()
	if t.peek() != '=' {
		return nil, errorf(tk.begin, `expected "="`)
	}
	t.p++
	v, err := t.readFilteredValue()
	if err != nil {
		return nil, err
	}
	return &assignNode{key: t.src[b:e], v: v}, nil
}

func (a *assignNode) render(c *Context, _ *emitter) error {
	v, err := a.v.eval(c)
	if err != nil {
		return err
	}
	c.scopes[0][a.key] = v
	return nil
}

// capture

type captureNode struct {
	key   string
	nodes []node
}

func parseCapture(p *parser, tk *topToken, t *tokenizer) (node, error) {
	n := &captureNode{}
	if b, e := t.readIdentifier(); e > b {
		n.key = t.src[b:e]
	} else if q := t.readQuoted(); q != nil {
		n.key = q.lit.(string)
	} else {
		return nil, errorf(tk.begin, "invalid capture name")
	}
	for tok := p.next(); tok != nil; tok = p.next() {
		if tok.kind == kindTag && tok.name == "endcapture" {
			return n, nil
		}
		x, err := p.parseToken(tok)
		if err != nil {
			return nil, err
		}
		n.nodes = append(n.nodes, x)
	}
	return nil, errorf(tk.begin, "tag %s not closed", tk.text(p.src))
}

func (n *captureNode) render(c *Context, w *emitter) error {
	sub := w.capture()
	if err := renderNodes(c, sub, n.nodes); err != nil {
		return err
	}
	c.scopes[0][n.key] = sub.String()
	return nil
}

// if, unless

type branch struct {
	v       *filtered
	unless  bool // the branch runs when the value is falsy
	nodes   []node
	discard bool
}

type ifNode struct {
	branches []*branch
	els      []node
}

func parseIf(p *parser, tk *topToken, t *tokenizer) (node, error) {
	v, err := t.readFilteredValue()
	if err != nil {
		return nil, err
	}
	n := &ifNode{branches: []*branch{{v: v}}}
	cur := &n.branches[0].nodes
	hasElse := false
	err = p.stream(tk, func(tag *topToken) (bool, bool, error) {
		switch tag.name {
		case "elsif":
			if hasElse {
				return false, false, errorf(tag.begin, "unexpected elsif after else")
			}
			v, err := newTokenizer(p.src, tag.argsBegin, tag.cEnd).readFilteredValue()
			if err != nil {
				return false, false, err
			}
			b := &branch{v: v}
			n.branches = append(n.branches, b)
			cur = &b.nodes
			return true, false, nil
		case "else":
			if err := assertNoArgs(p, tag); err != nil {
				return false, false, err
			}
			if hasElse {
				return false, false, errorf(tag.begin, "duplicated else")
			}
			hasElse = true
			cur = &n.els
			return true, false, nil
		case "endif":
			return true, true, assertNoArgs(p, tag)
		}
		return false, false, nil
	}, func(x node) { *cur = append(*cur, x) })
	return n, err
}

func parseUnless(p *parser, tk *topToken, t *tokenizer) (node, error) {
	v, err := t.readFilteredValue()
	if err != nil {
		return nil, err
	}
	n := &ifNode{branches: []*branch{{v: v, unless: true}}}
	cur := &n.branches[0].nodes
	elseCount := 0
	var scratch []node
	err = p.stream(tk, func(tag *topToken) (bool, bool, error) {
		switch tag.name {
		case "elsif":
			if elseCount > 0 {
				scratch = nil
				cur = &scratch
				return true, false, nil
			}
			v, err := newTokenizer(p.src, tag.argsBegin, tag.cEnd).readFilteredValue()
			if err != nil {
				return false, false, err
			}
			b := &branch{v: v}
			n.branches = append(n.branches, b)
			cur = &b.nodes
			return true, false, nil
		case "else":
			elseCount++
			if elseCount == 1 {
				cur = &n.els
			} else {
				cur = &scratch
			}
			return true, false, nil
		case "endunless":
			return true, true, nil
		}
		return false, false, nil
	}, func(x node) { *cur = append(*cur, x) })
	return n, err
}

func (n *ifNode) render(c *Context, w *emitter) error {
	for _, b := range n.branches {
		v, err := b.v.eval(c)
		if err != nil {
			return err
		}
		if Truthy(v) != b.unless {
			return renderNodes(c, w, b.nodes)
		}
	}
	return renderNodes(c, w, n.els)
}

// case

type caseNode struct {
	v        *filtered
	branches []caseBranch
	els      []node
}

type caseBranch struct {
	values []*value
	nodes  []node
}

func parseCase(p *parser, tk *topToken, t *tokenizer) (node, error) {
	v, err := t.readFilteredValue()
	if err != nil {
		return nil, err
	}
	n := &caseNode{v: v}
	var discard []node
	cur := &discard
	elseCount := 0
	inElse := false
	err = p.stream(tk, func(tag *topToken) (bool, bool, error) {
		switch tag.name {
		case "when":
			if elseCount > 0 {
				return true, false, nil
			}
			wt := newTokenizer(p.src, tag.argsBegin, tag.cEnd)
			var vals []*value
			for !wt.end() {
				x, err := wt.readValueOrThrow()
				if err != nil {
					return false, false, err
				}
				vals = append(vals, x)
				wt.skipBlank()
				if wt.peek() == ',' {
					wt.readTo(",")
				} else {
					wt.readTo("or")
				}
			}
			n.branches = append(n.branches, caseBranch{values: vals})
			i := len(n.branches) - 1
			cur = &n.branches[i].nodes
			inElse = false
			return true, false, nil
		case "else":
			elseCount++
			cur = &n.els
			inElse = true
			return true, false, nil
		case "endcase":
			return true, true, nil
		}
		return false, false, nil
	}, func(x node) {
		if !inElse || elseCount == 1 {
			*cur = append(*cur, x)
		}
	})
	return n, err
}

func (n *caseNode) render(c *Context, w *emitter) error {
	target, err := n.v.eval(c)
	if err != nil {
		return err
	}
	target = toValue(target)
	hit := false
	for _, b := range n.branches {
		for _, v := range b.values {
			x, err := v.eval(c)
			if err != nil {
				return err
			}
			if Equals(target, x) {
				if err := renderNodes(c, w, b.nodes); err != nil {
					return err
				}
				hit = true
				break
			}
		}
	}
	if !hit {
		return renderNodes(c, w, n.els)
	}
	return nil
}

// for, tablerow

type hashArg struct {
	key string
	v   *value // nil: the key alone (reversed)
}

func readHash(t *tokenizer) ([]hashArg, error) {
	var out []hashArg
	for {
		t.skipBlank()
		if t.peek() == ',' {
			t.p++
		}
		b, e := t.readIdentifier()
		if b == e {
			return out, nil
		}
		h := hashArg{key: t.src[b:e]}
		t.skipBlank()
		if t.peek() == ':' {
			t.p++
			v, err := t.readValue()
			if err != nil {
				return nil, err
			}
			h.v = v
		}
		out = append(out, h)
	}
}

func evalHash(c *Context, hash []hashArg) (map[string]any, error) {
	out := map[string]any{}
	for _, h := range hash {
		if h.v == nil {
			out[h.key] = true
			continue
		}
		v, err := h.v.eval(c)
		if err != nil {
			return nil, err
		}
		out[h.key] = v
	}
	return out, nil
}

type forNode struct {
	variable   string
	collection *value
	collText   string
	hash       []hashArg
	nodes, els []node
}

func parseFor(p *parser, tk *topToken, t *tokenizer) (node, error) {
	vb, ve := t.readIdentifier()
	ib, ie := t.readIdentifier()
	coll, err := t.readValue()
	if err != nil {
		return nil, err
	}
	if vb == ve || t.src[ib:ie] != "in" || coll == nil {
		return nil, errorf(tk.begin, "illegal tag: %s", tk.text(p.src))
	}
	hash, err := readHash(t)
	if err != nil {
		return nil, err
	}
	n := &forNode{variable: t.src[vb:ve], collection: coll, collText: coll.text(p.src), hash: hash}
	cur := &n.nodes
	err = p.stream(tk, func(tag *topToken) (bool, bool, error) {
		switch tag.name {
		case "else":
			cur = &n.els
			return true, false, assertNoArgs(p, tag)
		case "endfor":
			return true, true, assertNoArgs(p, tag)
		}
		return false, false, nil
	}, func(x node) { *cur = append(*cur, x) })
	return n, err
}

// enumerable is LiquidJS's toEnumerable.
func enumerable(v any) []any {
	switch t := toValue(v).(type) {
	case []any:
		return t
	case string:
		if t != "" {
			return []any{t}
		}
	case *Map:
		out := make([]any, 0, t.Len())
		for _, k := range t.keys {
			out = append(out, []any{k, t.vals[k]})
		}
		return out
	}
	return nil
}

// jsSlice is Array.prototype.slice(begin[, end]) with JavaScript's
// argument conversion.
func jsSlice(a []any, begin any, end any) []any {
	clamp := func(x any, def int) int {
		if x == nil {
			return def
		}
		f := jsNumber(toValue(x))
		if math.IsNaN(f) {
			f = 0
		}
		f = math.Trunc(f)
		if f < 0 {
			f = math.Max(float64(len(a))+f, 0)
		}
		return int(math.Min(f, float64(len(a))))
	}
	b, e := clamp(begin, 0), clamp(end, len(a))
	if b >= e {
		return []any{}
	}
	return a[b:e]
}

func (n *forNode) render(c *Context, w *emitter) error {
	v, err := n.collection.eval(c)
	if err != nil {
		return err
	}
	coll := enumerable(v)
	if len(coll) == 0 {
		return renderNodes(c, w, n.els)
	}
	continueKey := "continue-" + n.variable + "-" + n.collText
	reg, ok := c.regs[continueKey]
	if !ok {
		reg = NewMap(0)
		c.regs[continueKey] = reg
	}
	c.push(map[string]any{"continue": reg})
	hash, err := evalHash(c, n.hash)
	c.pop()
	if err != nil {
		return err
	}
	if off, ok := hash["offset"]; ok && off != nil {
		coll = jsSlice(coll, off, nil)
	}
	if lim, ok := hash["limit"]; ok && lim != nil {
		coll = jsSlice(coll, 0, lim)
	}
	if rev, ok := hash["reversed"]; ok && rev != nil {
		r := make([]any, len(coll))
		for i, x := range coll {
			r[len(coll)-1-i] = x
		}
		coll = r
	}
	off := hash["offset"]
	if !Truthy(off) || off == "" || off == 0.0 {
		off = 0.0
	}
	c.regs[continueKey] = jsAdd(off, float64(len(coll)))
	loop := &Forloop{length: len(coll), name: n.variable + "-" + n.collText}
	scope := map[string]any{"forloop": loop}
	c.push(scope)
	defer c.pop()
	for _, item := range coll {
		if err := c.budget.Tick(); err != nil {
			return err
		}
		scope[n.variable] = item
		c.breakCalled, c.continueCalled = false, false
		if err := renderNodes(c, w, n.nodes); err != nil {
			return err
		}
		if c.breakCalled {
			break
		}
		loop.next()
	}
	c.breakCalled, c.continueCalled = false, false
	return nil
}

// jsAdd is JavaScript's a + b for a number b.
func jsAdd(a any, b float64) any {
	switch t := toValue(a).(type) {
	case float64:
		return t + b
	case string:
		return t + NumberString(b)
	case bool, nil, nullType:
		return jsNumber(t) + b
	}
	return JSString(toValue(a)) + NumberString(b)
}

type tablerowNode struct {
	variable   string
	collection *value
	collText   string
	hash       []hashArg
	nodes      []node
}

func parseTablerow(p *parser, tk *topToken, t *tokenizer) (node, error) {
	vb, ve := t.readIdentifier()
	t.skipBlank()
	ib, ie := t.readIdentifier()
	coll, err := t.readValue()
	if err != nil {
		return nil, err
	}
	if t.src[ib:ie] != "in" || coll == nil {
		return nil, errorf(tk.begin, "illegal tag: %s", tk.text(p.src))
	}
	hash, err := readHash(t)
	if err != nil {
		return nil, err
	}
	n := &tablerowNode{variable: t.src[vb:ve], collection: coll, collText: coll.text(p.src), hash: hash}
	err = p.stream(tk, func(tag *topToken) (bool, bool, error) {
		return tag.name == "endtablerow", tag.name == "endtablerow", nil
	}, func(x node) { n.nodes = append(n.nodes, x) })
	return n, err
}

func (n *tablerowNode) render(c *Context, w *emitter) error {
	v, err := n.collection.eval(c)
	if err != nil {
		return err
	}
	coll := enumerable(v)
	args, err := evalHash(c, n.hash)
	if err != nil {
		return err
	}
	offset := args["offset"]
	if !Truthy(offset) {
		offset = 0.0
	}
	limit, ok := args["limit"]
	if !ok || limit == nil {
		limit = float64(len(coll))
	}
	end := jsAdd(offset, ToNumber(limit))
	coll = jsSlice(coll, offset, end)
	cols := len(coll)
	if cv := args["cols"]; Truthy(cv) {
		if f := jsNumber(toValue(cv)); f >= 1 && !math.IsInf(f, 0) {
			cols = int(f)
		}
	}
	if cols <= 0 {
		cols = 1
	}
	loop := &Forloop{length: len(coll), cols: cols, table: true, name: n.variable + "-" + n.collText}
	scope := map[string]any{"tablerowloop": loop}
	c.push(scope)
	defer c.pop()
	for idx := 0; idx < len(coll); idx, loop.i = idx+1, loop.i+1 {
		if err := c.budget.Tick(); err != nil {
			return err
		}
		scope[n.variable] = coll[idx]
		col0 := loop.i % cols
		row := loop.i/cols + 1
		if col0 == 0 {
			if row != 1 {
				if err := w.write("</tr>"); err != nil {
					return err
				}
			}
			if err := w.write(`<tr class="row` + itoa(row) + `">`); err != nil {
				return err
			}
		}
		if err := w.write(`<td class="col` + itoa(col0+1) + `">`); err != nil {
			return err
		}
		if err := renderNodes(c, w, n.nodes); err != nil {
			return err
		}
		if err := w.write("</td>"); err != nil {
			return err
		}
	}
	if len(coll) > 0 {
		return w.write("</tr>")
	}
	return nil
}

// cycle

type cycleNode struct {
	group      *value
	candidates []*filtered
	texts      []string
}

func parseCycle(p *parser, tk *topToken, t *tokenizer) (node, error) {
	n := &cycleNode{}
	begin := t.p
	g, err := t.readValue()
	if err != nil {
		return nil, err
	}
	t.skipBlank()
	if g != nil && t.peek() == ':' {
		n.group = g
		t.p++
	} else {
		t.p = begin
	}
	for !t.end() {
		v, err := t.readFilteredValue()
		if err != nil {
			return nil, err
		}
		n.candidates = append(n.candidates, v)
		n.texts = append(n.texts, p.src[v.begin:v.end])
		t.readTo(",")
	}
	if len(n.candidates) == 0 {
		return nil, errorf(tk.begin, "empty candidates: %s", JSONStringify(tk.text(p.src), ""))
	}
	return n, nil
}

func (n *cycleNode) render(c *Context, w *emitter) error {
	var group any
	if n.group != nil {
		g, err := n.group.eval(c)
		if err != nil {
			return err
		}
		group = g
	}
	fp := "cycle:" + JSString(group) + ":" + strings.Join(n.texts, ",")
	groups, _ := c.regs["cycle"].(map[string]int)
	if groups == nil {
		groups = map[string]int{}
		c.regs["cycle"] = groups
	}
	idx := groups[fp]
	cand := n.candidates[idx]
	groups[fp] = (idx + 1) % len(n.candidates)
	v, err := cand.eval(c)
	if err != nil {
		return err
	}
	if !cand.rawLast() {
		return w.write(c.eng.escape(v))
	}
	return w.write(Stringify(v))
}

// increment, decrement

type incrementNode struct {
	key string
	by  float64
}

func parseIncrement(by float64) tagParser {
	return func(p *parser, tk *topToken, t *tokenizer) (node, error) {
		b, e := t.readIdentifier()
		return &incrementNode{key: t.src[b:e], by: by}, nil
	}
}

func (n *incrementNode) render(c *Context, w *emitter) error {
	cur, _ := c.env.Get(n.key)
	f, ok := cur.(float64)
	if !ok {
		f = 0
	}
	if n.by > 0 {
		c.env.Set(n.key, f+1)
		return w.write(NumberString(f))
	}
	c.env.Set(n.key, f-1)
	return w.write(NumberString(f - 1))
}

// echo

type echoNode struct{ v *filtered }

func parseEcho(p *parser, tk *topToken, t *tokenizer) (node, error) {
	t.skipBlank()
	if t.end() {
		return &echoNode{}, nil
	}
	v, err := t.readFilteredValue()
	if err != nil {
		return nil, err
	}
	return &echoNode{v: v}, nil
}

func (n *echoNode) render(c *Context, w *emitter) error {
	if n.v == nil {
		return nil
	}
	v, err := n.v.eval(c)
	if err != nil {
		return err
	}
	if !n.v.rawLast() {
		return w.write(c.eng.escape(v))
	}
	return w.write(Stringify(v))
}

// comment, raw, inline comment, liquid

type nopNode struct{}

func (nopNode) render(*Context, *emitter) error { return nil }

func parseComment(p *parser, tk *topToken, _ *tokenizer) (node, error) {
	for tok := p.next(); tok != nil; tok = p.next() {
		if tok.kind == kindTag && tok.name == "endcomment" {
			return nopNode{}, nil
		}
	}
	return nil, errorf(tk.begin, "tag %s not closed", tk.text(p.src))
}

func parseInlineComment(p *parser, tk *topToken, _ *tokenizer) (node, error) {
	args := p.src[tk.argsBegin:tk.cEnd]
	for i := strings.IndexByte(args, '\n'); i >= 0; {
		rest := strings.TrimLeftFunc(args[i+1:], isJSSpace)
		if rest != "" && rest[0] != '#' {
			return nil, errorf(tk.begin, "every line of an inline comment must start with a '#' character")
		}
		j := strings.IndexByte(args[i+1:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
	}
	return nopNode{}, nil
}

type rawNode string

func (r rawNode) render(_ *Context, w *emitter) error { return w.write(string(r)) }

func parseRaw(p *parser, tk *topToken, _ *tokenizer) (node, error) {
	var b strings.Builder
	for tok := p.next(); tok != nil; tok = p.next() {
		if tok.kind == kindTag && tok.name == "endraw" {
			return rawNode(b.String()), nil
		}
		b.WriteString(tok.text(p.src))
	}
	return nil, errorf(tk.begin, "tag %s not closed", tk.text(p.src))
}

type blockNode []node

func (b blockNode) render(c *Context, w *emitter) error { return renderNodes(c, w, b) }

func parseLiquid(p *parser, tk *topToken, t *tokenizer) (node, error) {
	var toks []*topToken
	for {
		t.skipBlank()
		if t.end() {
			break
		}
		begin := t.p
		t.readToDelimiter("\n", false)
		lt := newDelimited(kindTag, p.src, begin, t.p, begin, t.p)
		lt.trimLeft, lt.trimRight = false, false
		nt := newTokenizer(p.src, lt.cBegin, lt.cEnd)
		name, err := nt.readTagName()
		if err != nil {
			return nil, errorf(begin, "illegal liquid tag syntax")
		}
		lt.name = name
		nt.skipBlank()
		lt.argsBegin = nt.p
		toks = append(toks, lt)
	}
	sub := &parser{src: p.src, toks: toks, eng: p.eng}
	nodes, err := sub.parseAll()
	if err != nil {
		return nil, err
	}
	return blockNode(nodes), nil
}

// break, continue

type breakNode bool

func (b breakNode) render(c *Context, _ *emitter) error {
	if b {
		c.breakCalled = true
	} else {
		c.continueCalled = true
	}
	return nil
}

func itoa(n int) string { return NumberString(float64(n)) }
