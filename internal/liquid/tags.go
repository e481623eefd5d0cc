package liquid

import (
	"strings"

	"github.com/herald-notify/herald/internal/jsvalue"
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
		return w.write(jsvalue.NumberToString(f))
	}
	c.env.Set(n.key, f-1)
	return w.write(jsvalue.NumberToString(f - 1))
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
		rest := strings.TrimLeftFunc(args[i+1:], jsvalue.IsSpace)
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

func itoa(n int) string { return jsvalue.NumberToString(float64(n)) }
