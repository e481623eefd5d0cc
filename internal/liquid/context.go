package liquid

import (
	"strings"
	"time"
)

// Context is the state of one render: the variables, the scopes tags push,
// the counters of increment and cycle, and the budget.
type Context struct {
	env      *Map             // the render's variables; increment writes here
	envValue any              // the variables when they are not an object (spawn)
	scopes   []map[string]any // scopes[0] holds assign and capture
	regs     map[string]any   // cycle positions, for-loop continue offsets
	budget   Budget
	now      time.Time
	eng      *Engine

	breakCalled, continueCalled bool
}

func newContext(eng *Engine, env *Map, b Budget, now time.Time) *Context {
	if env == nil {
		env = NewMap(0)
	}
	if b == nil {
		b = noBudget{}
	}
	return &Context{env: env, scopes: []map[string]any{{}}, regs: map[string]any{}, budget: b, now: now, eng: eng}
}

// spawn is a context whose variables are v's properties (LiquidJS's
// ctx.spawn(item)), sharing the budget.
func (c *Context) spawn(v any) *Context {
	m, _ := toValue(v).(*Map)
	n := newContext(c.eng, m, c.budget, c.now)
	if m == nil {
		n.envValue = v
	}
	return n
}

func (c *Context) push(s map[string]any) { c.scopes = append(c.scopes, s) }
func (c *Context) pop()                  { c.scopes = c.scopes[:len(c.scopes)-1] }

// lookup finds a variable: the innermost scope that has it, else the
// render's variables.
func (c *Context) lookup(name string) any {
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if v, ok := c.scopes[i][name]; ok {
			return v
		}
	}
	if c.envValue != nil {
		return ReadProperty(c.envValue, name)
	}
	v, _ := c.env.Get(name)
	return v
}

// GetPath reads a dotted property path from item ("author.name"), as the
// map, sum and sort filters do.
func (c *Context) GetPath(item any, path string) any {
	for _, p := range strings.Split(path, ".") {
		item = ReadProperty(item, p)
	}
	return item
}

// ScopeValue evaluates a property path ("a.b", "a[0]") with item's
// properties as the variables, as where, group_by and find do.
func (c *Context) ScopeValue(path string, item any) (any, error) {
	e, err := c.eng.scopeValue(path)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, nil
	}
	return e.eval(c.spawn(item))
}

// EvalExp evaluates exp (a value with filters) with the variable name set
// to item, as where_exp and the other *_exp filters do.
func (c *Context) EvalExp(exp, name string, item any) (any, error) {
	v, err := c.eng.filteredValue(exp)
	if err != nil {
		return nil, err
	}
	c.push(map[string]any{name: item})
	defer c.pop()
	return v.eval(c)
}
