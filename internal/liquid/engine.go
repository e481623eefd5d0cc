package liquid

import (
	"strings"
	"sync"
	"time"
)

// Engine parses and renders templates. It is safe for concurrent use.
type Engine struct {
	// Escape is applied to what {{ }}, echo and cycle print (LiquidJS's
	// outputEscape); nil prints Stringify(v).
	Escape func(v any) string

	mu    sync.Mutex
	exprs map[string]*filtered // parsed *_exp expressions and scope paths
}

// expr is a parsed value.
type expr interface {
	eval(c *Context) (any, error)
}

const maxCachedExprs = 4096

func (e *Engine) escape(v any) string {
	if e == nil || e.Escape == nil {
		return Stringify(v)
	}
	return e.Escape(v)
}

// Parse parses a template.
func (e *Engine) Parse(src string) (*Template, error) {
	toks, err := readTopLevel(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks, eng: e}
	nodes, err := p.parseAll()
	if err != nil {
		return nil, err
	}
	return &Template{src: src, nodes: nodes}, nil
}

// RenderOptions are the budget and clock of one render.
type RenderOptions struct {
	Budget Budget
	// Output is called with the bytes written so far; its error stops the render.
	Output func(total int) error
	// MaxOutput bounds the bytes written (0: no bound); past it the render
	// fails with an *OverflowError.
	MaxOutput int
	// Now is the time of 'now' (zero: the wall clock).
	Now time.Time
}

// Render renders t with the variables (which it may change: increment and
// decrement write to them, as in LiquidJS).
func (e *Engine) Render(t *Template, vars *Map, o RenderOptions) (string, error) {
	c := newContext(e, vars, o.Budget, o.Now)
	w := &emitter{budget: c.budget, output: o.Output, max: o.MaxOutput}
	if err := renderNodes(c, w, t.nodes); err != nil {
		return "", err
	}
	return w.String(), nil
}

func renderNodes(c *Context, w *emitter, nodes []node) error {
	for _, n := range nodes {
		if err := n.render(c, w); err != nil {
			return err
		}
		if c.breakCalled || c.continueCalled {
			break
		}
	}
	return nil
}

// emitter collects output; a capture's output counts as bytes made.
type emitter struct {
	b         strings.Builder
	budget    Budget
	output    func(int) error
	max       int
	capturing bool
}

func (w *emitter) write(s string) error {
	if s == "" {
		return nil
	}
	if w.max > 0 && w.b.Len()+len(s) > w.max {
		return &OverflowError{At: w.max - w.b.Len()}
	}
	w.b.WriteString(s)
	if w.capturing {
		return w.budget.Made(len(s))
	}
	if w.output != nil {
		return w.output(w.b.Len())
	}
	return nil
}

// OverflowError is output past RenderOptions.MaxOutput; At is how many
// bytes of the write that overflowed still fitted.
type OverflowError struct{ At int }

func (e *OverflowError) Error() string { return "the output is too long" }

func (w *emitter) capture() *emitter { return &emitter{budget: w.budget, capturing: true} }

func (w *emitter) String() string { return w.b.String() }

// filteredValue parses src as a value with filters (the *_exp filters).
func (e *Engine) filteredValue(src string) (expr, error) {
	if f := e.cached("v:" + src); f != nil {
		return f, nil
	}
	t := newTokenizer(src, 0, len(src))
	f, err := t.readFilteredValue()
	if err != nil {
		return nil, err
	}
	e.cache("v:"+src, f)
	return f, nil
}

// scopeValue parses a property path (where, group_by, find); nil when src
// holds none.
func (e *Engine) scopeValue(path string) (expr, error) {
	if f := e.cached("s:" + path); f != nil {
		if f.exp == nil {
			return nil, nil
		}
		return f, nil
	}
	t := newTokenizer(path, 0, len(path))
	t.skipBlank()
	begin := t.p
	props, err := t.readProperties(true)
	if err != nil {
		return nil, err
	}
	f := &filtered{}
	if len(props) > 0 {
		f.exp = &expression{items: []exprItem{{v: &value{kind: vProperty, begin: begin, end: t.p, props: props}}}}
	}
	e.cache("s:"+path, f)
	if f.exp == nil {
		return nil, nil
	}
	return f, nil
}

func (e *Engine) cached(key string) *filtered {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.exprs[key]
}

func (e *Engine) cache(key string, f *filtered) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.exprs == nil || len(e.exprs) >= maxCachedExprs {
		e.exprs = map[string]*filtered{}
	}
	e.exprs[key] = f
}
