package sandbox

import (
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/osteele/liquid/expressions"
	lrender "github.com/osteele/liquid/render"
	"github.com/osteele/liquid/values"
)

// Herald's tags: the standard Liquid set minus include (no file access),
// with loops that count against the budget and captures of bounded size.

// loopKey is the scope entry holding the innermost loop's state (for cycle).
const loopKey = "\x00loop"

var (
	errBreak    = errors.New("break outside a loop")
	errContinue = errors.New("continue outside a loop")
	identifier  = regexp.MustCompile(`^[A-Za-z_][\w-]*$`)
)

func addTags(c lrender.Config) {
	c.AddTag("assign", assignTag)
	c.AddTag("break", func(string) (func(io.Writer, lrender.Context) error, error) {
		return func(io.Writer, lrender.Context) error { return errBreak }, nil
	})
	c.AddTag("continue", func(string) (func(io.Writer, lrender.Context) error, error) {
		return func(io.Writer, lrender.Context) error { return errContinue }, nil
	})
	c.AddTag("cycle", cycleTag)
	c.AddBlock("capture").Compiler(captureTag)
	c.AddBlock("case").Clause("when").Clause("else").Compiler(caseTag)
	c.AddBlock("comment")
	c.AddBlock("for").Clause("else").Compiler(loopTag(false))
	c.AddBlock("if").Clause("else").Clause("elsif").Compiler(ifTag(true))
	c.AddBlock("raw")
	c.AddBlock("tablerow").Compiler(loopTag(true))
	c.AddBlock("unless").Clause("else").Compiler(ifTag(false))
}

// budgetFrom finds the render's budget; a scope without one fails closed.
func budgetFrom(ctx lrender.Context) (*budget, error) {
	if b, ok := ctx.Bindings()[budgetKey].(*budget); ok {
		return b, nil
	}
	return nil, errors.New("the template ran outside Herald's sandbox")
}

// cause unwraps Liquid's error wrappers.
func cause(err error) error {
	for {
		c, ok := err.(interface{ Cause() error })
		if !ok || c.Cause() == nil || c.Cause() == err {
			return err
		}
		err = c.Cause()
	}
}

func assignTag(args string) (func(io.Writer, lrender.Context) error, error) {
	stmt, err := expressions.ParseStatement(expressions.AssignStatementSelector, args)
	if err != nil {
		return nil, err
	}
	a := stmt.Assignment
	return func(_ io.Writer, ctx lrender.Context) error {
		v, err := ctx.Evaluate(a.ValueFn)
		if err != nil {
			return err
		}
		ctx.Set(a.Variable, v)
		return nil
	}, nil
}

func captureTag(node lrender.BlockNode) (func(io.Writer, lrender.Context) error, error) {
	name := strings.TrimSpace(node.Args)
	if !identifier.MatchString(name) {
		return nil, fmt.Errorf("capture needs a variable name, not %q", name)
	}
	return func(_ io.Writer, ctx lrender.Context) error {
		b, err := budgetFrom(ctx)
		if err != nil {
			return err
		}
		w := &limitWriter{b: b, max: b.l.MaxValue, reason: ReasonValue, work: true}
		if err := ctx.RenderChildren(w); err != nil {
			return err
		}
		ctx.Set(name, string(w.buf))
		return nil
	}, nil
}

func ifTag(polarity bool) lrender.BlockCompiler {
	return func(node lrender.BlockNode) (func(io.Writer, lrender.Context) error, error) {
		type branch struct {
			test expressions.Expression
			body *lrender.BlockNode
		}
		test, err := expressions.Parse(node.Args)
		if err != nil {
			return nil, err
		}
		if !polarity {
			test = expressions.Not(test)
		}
		branches := []branch{{test, &node}}
		for i, c := range node.Clauses {
			switch {
			case c.Name == "elsif" && polarity:
				t, err := expressions.Parse(c.Args)
				if err != nil {
					return nil, err
				}
				branches = append(branches, branch{t, c})
			case c.Name == "else" && i == len(node.Clauses)-1:
				branches = append(branches, branch{expressions.Constant(true), c})
			default:
				return nil, fmt.Errorf("%s is out of place in %s", c.Name, node.Name)
			}
		}
		return func(w io.Writer, ctx lrender.Context) error {
			for _, br := range branches {
				v, err := ctx.Evaluate(br.test)
				if err != nil {
					return err
				}
				if v != nil && v != false {
					return ctx.RenderBlock(w, br.body)
				}
			}
			return nil
		}, nil
	}
}

func caseTag(node lrender.BlockNode) (func(io.Writer, lrender.Context) error, error) {
	subject, err := expressions.Parse(node.Args)
	if err != nil {
		return nil, err
	}
	type when struct {
		exprs []expressions.Expression // nil: else
		body  *lrender.BlockNode
	}
	var whens []when
	for i, c := range node.Clauses {
		switch {
		case c.Name == "when":
			stmt, err := expressions.ParseStatement(expressions.WhenStatementSelector, c.Args)
			if err != nil {
				return nil, err
			}
			whens = append(whens, when{stmt.When.Exprs, c})
		case c.Name == "else" && i == len(node.Clauses)-1:
			whens = append(whens, when{nil, c})
		default:
			return nil, fmt.Errorf("%s is out of place in case", c.Name)
		}
	}
	return func(w io.Writer, ctx lrender.Context) error {
		v, err := ctx.Evaluate(subject)
		if err != nil {
			return err
		}
		for _, wh := range whens {
			if wh.exprs == nil {
				return ctx.RenderBlock(w, wh.body)
			}
			for _, e := range wh.exprs {
				x, err := ctx.Evaluate(e)
				if err != nil {
					return err
				}
				if values.Equal(v, x) {
					return ctx.RenderBlock(w, wh.body)
				}
			}
		}
		return nil
	}, nil
}

// loopState is what cycle needs of the innermost loop.
type loopState struct{ cycles map[string]int }

func cycleTag(args string) (func(io.Writer, lrender.Context) error, error) {
	stmt, err := expressions.ParseStatement(expressions.CycleStatementSelector, args)
	if err != nil {
		return nil, err
	}
	c := stmt.Cycle
	if len(c.Values) == 0 {
		return nil, errors.New("cycle needs at least one value")
	}
	return func(w io.Writer, ctx lrender.Context) error {
		st, ok := ctx.Bindings()[loopKey].(*loopState)
		if !ok {
			return errors.New("cycle must be within a for loop")
		}
		n := st.cycles[c.Group]
		st.cycles[c.Group] = n + 1
		_, err := io.WriteString(w, c.Values[n%len(c.Values)])
		return err
	}, nil
}

// forloop is the forloop object of an iteration, made into a map only when
// a template reads it.
type forloop struct{ i, n int }

// ToLiquid implements Liquid's drop interface.
func (f forloop) ToLiquid() any {
	return map[string]any{
		"first": f.i == 0, "last": f.i == f.n-1, "index": f.i + 1, "index0": f.i,
		"rindex": f.n - f.i, "rindex0": f.n - f.i - 1, "length": f.n,
	}
}

// sequence is what a loop iterates over.
type sequence interface {
	Len() int
	Index(int) any
}

type slice []any

func (s slice) Len() int        { return len(s) }
func (s slice) Index(i int) any { return s[i] }

type window struct {
	s        sequence
	from, n  int
	reversed bool
}

func (w window) Len() int { return w.n }
func (w window) Index(i int) any {
	if w.reversed {
		i = w.n - 1 - i
	}
	return w.s.Index(w.from + i)
}

// sequenceOf is the items a loop visits: arrays, ranges (lazily), and the
// [key, value] pairs of an object in key order. Anything else is empty.
func sequenceOf(v any) sequence {
	switch t := v.(type) {
	case nil:
		return slice(nil)
	case []any:
		return slice(t)
	case values.Range:
		if t.Len() < 0 {
			return slice(nil)
		}
		return t
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make(slice, len(keys))
		for i, k := range keys {
			out[i] = []any{k, t[k]}
		}
		return out
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		out := make(slice, rv.Len())
		for i := range out {
			out[i] = rv.Index(i).Interface()
		}
		return out
	}
	return slice(nil)
}

// intArg evaluates a loop modifier that must be a whole number.
func intArg(ctx lrender.Context, e expressions.Expression, name string) (int, error) {
	v, err := ctx.Evaluate(e)
	if err != nil {
		return 0, err
	}
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		return int(n), nil
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int(n), nil
		}
	}
	return 0, fmt.Errorf("the loop's %s must be a whole number", name)
}

// loopTag compiles for (and tablerow): offset, then limit, then reversed,
// as LiquidJS does; each iteration counts against the budget.
func loopTag(table bool) lrender.BlockCompiler {
	return func(node lrender.BlockNode) (func(io.Writer, lrender.Context) error, error) {
		stmt, err := expressions.ParseStatement(expressions.LoopStatementSelector, node.Args)
		if err != nil {
			return nil, err
		}
		loop := stmt.Loop
		var otherwise *lrender.BlockNode
		for _, c := range node.Clauses {
			if c.Name != "else" || otherwise != nil || table {
				return nil, fmt.Errorf("%s is out of place in %s", c.Name, node.Name)
			}
			otherwise = c
		}
		return func(w io.Writer, ctx lrender.Context) error {
			b, err := budgetFrom(ctx)
			if err != nil {
				return err
			}
			v, err := ctx.Evaluate(loop.Expr)
			if err != nil {
				return err
			}
			seq := sequenceOf(v)
			win := window{s: seq, n: seq.Len(), reversed: loop.Reversed}
			if loop.Offset != nil {
				off, err := intArg(ctx, loop.Offset, "offset")
				if err != nil {
					return err
				}
				off = min(max(off, 0), win.n)
				win.from, win.n = off, win.n-off
			}
			if loop.Limit != nil {
				lim, err := intArg(ctx, loop.Limit, "limit")
				if err != nil {
					return err
				}
				win.n = min(max(lim, 0), win.n)
			}
			if win.n == 0 {
				if otherwise != nil {
					return ctx.RenderBlock(w, otherwise)
				}
				return nil
			}
			cols := math.MaxInt
			if table && loop.Cols != nil {
				c, err := intArg(ctx, loop.Cols, "cols")
				if err != nil {
					return err
				}
				if c > 0 {
					cols = c
				}
			}
			scope := ctx.Bindings()
			prevVar, prevLoop, prevState := scope[loop.Variable], scope["forloop"], scope[loopKey]
			defer func() {
				ctx.Set(loop.Variable, prevVar)
				ctx.Set("forloop", prevLoop)
				ctx.Set(loopKey, prevState)
			}()
			ctx.Set(loopKey, &loopState{cycles: map[string]int{}})
			l := win.n
			for i := 0; i < l; i++ {
				if err := b.tick(); err != nil {
					return err
				}
				ctx.Set(loop.Variable, win.Index(i))
				ctx.Set("forloop", forloop{i, l})
				if table {
					if i%cols == 0 {
						if _, err := fmt.Fprintf(w, `<tr class="row%d">`, i/cols+1); err != nil {
							return err
						}
					}
					if _, err := fmt.Fprintf(w, `<td class="col%d">`, i%cols+1); err != nil {
						return err
					}
				}
				err := ctx.RenderChildren(w)
				if table {
					if _, werr := io.WriteString(w, `</td>`); werr != nil {
						return werr
					}
					if (i+1)%cols == 0 || i == l-1 {
						if _, werr := io.WriteString(w, `</tr>`); werr != nil {
							return werr
						}
					}
				}
				if err != nil {
					switch cause(err) {
					case errBreak:
						return nil
					case errContinue:
						continue
					}
					return err
				}
			}
			return nil
		}, nil
	}
}
