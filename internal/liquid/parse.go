package liquid

import (
	"errors"
	"strings"
)

// node is a parsed piece of a template.
type node interface {
	render(c *Context, w *emitter) error
}

// Template is a parsed template.
type Template struct {
	src   string
	nodes []node
}

// Source is the template's source.
func (t *Template) Source() string { return t.src }

// parser turns top-level tokens into nodes; blocks take the tokens up to
// their end tag from the shared queue.
type parser struct {
	src  string
	toks []*topToken
	eng  *Engine
}

func (p *parser) next() *topToken {
	if len(p.toks) == 0 {
		return nil
	}
	tk := p.toks[0]
	p.toks = p.toks[1:]
	return tk
}

func (p *parser) parseAll() ([]node, error) {
	var out []node
	for tk := p.next(); tk != nil; tk = p.next() {
		n, err := p.parseToken(tk)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func (p *parser) parseToken(tk *topToken) (node, error) {
	n, err := p.parseNode(tk)
	if err != nil || tk.kind == kindHTML {
		return n, err
	}
	return &posNode{node: n, pos: tk.begin}, nil
}

// posNode names where a failing tag or output is in the source.
type posNode struct {
	node
	pos  int
	text bool // a text: an overflow is placed where the output stopped in it
}

func (n *posNode) render(c *Context, w *emitter) error {
	err := n.node.render(c, w)
	if err == nil {
		return nil
	}
	var pe *PosError
	if errors.As(err, &pe) {
		return err
	}
	pos := n.pos
	var oe *OverflowError
	if n.text && errors.As(err, &oe) {
		pos += oe.At
	}
	return &PosError{Err: err, Pos: pos}
}

// PosError is a render error with the offset of the tag or output that
// failed in the source.
type PosError struct {
	Err error
	Pos int
}

func (e *PosError) Error() string { return e.Err.Error() }
func (e *PosError) Unwrap() error { return e.Err }

func (p *parser) parseNode(tk *topToken) (node, error) {
	switch tk.kind {
	case kindHTML:
		return &posNode{node: textNode(tk.htmlContent(p.src)), pos: tk.begin + tk.tl, text: true}, nil
	case kindOutput:
		t := newTokenizer(p.src, tk.cBegin, tk.cEnd)
		v, err := t.readFilteredValue()
		if err != nil {
			return nil, err
		}
		return &outputNode{v: v, pos: tk.begin}, nil
	}
	parse, ok := tagParsers[tk.name]
	if !ok {
		switch tk.name {
		case "include", "render", "layout", "block":
			return nil, errorf(tk.begin, "tag %q is not supported: templates cannot read files", tk.name)
		}
		return nil, errorf(tk.begin, "tag %q not found", tk.name)
	}
	return parse(p, tk, newTokenizer(p.src, tk.argsBegin, tk.cEnd))
}

// stream parses the tokens after a block tag, calling onTag for the tags
// the block handles (returning stop to end the block) and onNode for the
// rest; it fails when the tokens end before the block does.
func (p *parser) stream(open *topToken, onTag func(tk *topToken) (handled, stop bool, err error), onNode func(n node)) error {
	for tk := p.next(); tk != nil; tk = p.next() {
		if tk.kind == kindTag {
			handled, stop, err := onTag(tk)
			if err != nil {
				return err
			}
			if stop {
				return nil
			}
			if handled {
				continue
			}
		}
		n, err := p.parseToken(tk)
		if err != nil {
			return err
		}
		onNode(n)
	}
	return errorf(open.begin, "tag %s not closed", open.text(p.src))
}

func argsOf(p *parser, tk *topToken) string { return strings.TrimSpace(p.src[tk.argsBegin:tk.cEnd]) }

func assertNoArgs(p *parser, tk *topToken) error {
	if a := p.src[tk.argsBegin:tk.cEnd]; a != "" {
		return errorf(tk.begin, "unexpected %s", JSONStringify(a, ""))
	}
	return nil
}

type textNode string

func (t textNode) render(_ *Context, w *emitter) error { return w.write(string(t)) }

type outputNode struct {
	v   *filtered
	pos int
}

func (o *outputNode) render(c *Context, w *emitter) error {
	v, err := o.v.eval(c)
	if err != nil {
		return err
	}
	if !o.v.rawLast() {
		return w.write(c.eng.escape(v))
	}
	return w.write(Stringify(v))
}

func (f *filtered) rawLast() bool {
	return len(f.filters) > 0 && f.filters[len(f.filters)-1].raw
}
