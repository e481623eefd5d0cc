package liquid

import (
	"fmt"
	"time"
)

// FilterFunc is a filter. v is the value filtered (drops not yet turned into
// values: call ToValue or Stringify as LiquidJS's filter does); args are the
// evaluated arguments, a KV for each keyword argument (`allow_false: true`).
// An argument that evaluates to undefined is nil, as JavaScript passes it:
// the filter then takes its default.
type FilterFunc func(c *Context, v any, args []any) (any, error)

// KV is a keyword argument.
type KV struct {
	Key   string
	Value any
}

// filters holds every filter by name; the filters_*.go files register them.
var filters = map[string]FilterFunc{}

func register(name string, fn FilterFunc) {
	if _, dup := filters[name]; dup {
		panic("liquid: filter registered twice: " + name)
	}
	filters[name] = fn
}

// FilterNames lists the registered filters.
func FilterNames() []string {
	out := make([]string, 0, len(filters))
	for n := range filters {
		out = append(out, n)
	}
	return out
}

// Arg is the i-th positional argument, nil (undefined) when absent.
func Arg(args []any, i int) any {
	n := 0
	for _, a := range args {
		if _, kw := a.(KV); kw {
			continue
		}
		if n == i {
			return a
		}
		n++
	}
	return nil
}

// Keyword is the value of the keyword argument key, nil when absent.
func Keyword(args []any, key string) (any, bool) {
	for _, a := range args {
		if kv, ok := a.(KV); ok && kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// Error is a Liquid error: a template that does not parse or a filter or
// tag that failed. Pos is the byte offset in the source where it happened.
type Error struct {
	Msg string
	Pos int
}

func (e *Error) Error() string { return e.Msg }

func errorf(pos int, format string, a ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, a...), Pos: pos}
}

// Budget bounds a render. Each method returns a non-nil error once the
// render must stop; the render then returns that error.
type Budget interface {
	// Tick counts one loop iteration or filter call.
	Tick() error
	// Made counts n bytes a filter, capture or output made.
	Made(n int) error
	// WouldMake fails before a filter makes a value of n bytes.
	WouldMake(n int) error
}

type noBudget struct{}

func (noBudget) Tick() error         { return nil }
func (noBudget) Made(int) error      { return nil }
func (noBudget) WouldMake(int) error { return nil }

// WouldMake fails before a filter makes a value of n bytes (a padding
// width, a repeat count) that the budget does not allow.
func (c *Context) WouldMake(n int) error { return c.budget.WouldMake(n) }

// Now is the time the render treats as now ('now' and 'today' in dates).
func (c *Context) Now() time.Time {
	if c.now.IsZero() {
		return time.Now()
	}
	return c.now
}
