// The loop tags: for, tablerow, and cycle.

package liquid

import (
	"math"
	"strings"

	"github.com/herald-notify/herald/internal/jsvalue"
)

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
		return t + jsvalue.NumberToString(b)
	case bool, nil, nullType:
		return jsNumber(t) + b
	}
	return JSString(toValue(a)) + jsvalue.NumberToString(b)
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
