package jsonlogic

import (
	"encoding/json"
	"fmt"
	"math/rand"
)

// generatedSeed and generatedCases fix the generated cases.
const (
	generatedSeed  = 20250615
	generatedCases = 1500
)

// lit is a JSON number written as is: -0, 1e21, 1E-7.
type lit string

func (l lit) MarshalJSON() ([]byte, error) { return []byte(l), nil }

// gen draws random bindings and rules.
type gen struct{ r *rand.Rand }

func (g gen) pick(xs ...any) any { return xs[g.r.Intn(len(xs))] }

func (g gen) chance(n int) bool { return g.r.Intn(n) == 0 }

// scalar draws a value of the kinds conditions meet: numbers and numeric
// strings, booleans and "true"/"false", dates, blanks, null.
func (g gen) scalar() any {
	return g.pick(
		0.0, 1.0, 2.0, 5.0, 10.0, 99.5, 100.0, 150.0, -5.0, 0.1, 0.2, 1e21, 1e-7, lit("-0"), 3.14159, 42.0,
		"", "0", "5", "100", "99.5", " 12 ", "abc", "gold", "Gold", "vip", "vip 2", "true", "false",
		"2024-01-02", "2024-01-02T10:00:00Z", "2025-06-14T12:30:45Z", "2025-06-15T12:00:00.000Z",
		"2025-05-15", "Jan 5 2024", "2025/06/10", "0x1f", "1e3", "Infinity", "-Infinity", "😀é", "a.b", "1,2",
		true, false, nil,
	)
}

// value draws a scalar, an array or an object.
func (g gen) value(depth int) any {
	if depth <= 0 || g.r.Intn(4) > 0 {
		return g.scalar()
	}
	switch g.r.Intn(6) {
	case 0:
		return []any{}
	case 1, 2:
		n := 1 + g.r.Intn(3)
		a := make([]any, n)
		for i := range a {
			a[i] = g.value(depth - 1)
		}
		return a
	case 3:
		return map[string]any{}
	}
	return map[string]any{"a": g.value(depth - 1), "b": g.scalar()}
}

// data draws the bindings of a step condition.
func (g gen) data() map[string]any {
	payload := map[string]any{
		"total": g.scalar(), "vip": g.pick(true, false, "true", "false", nil, 1.0, 0.0),
		"name": g.pick("Ada", "ada@example.com", "", "Grace Hopper", "vip 2", "😀é"),
		"tags": g.pick([]any{}, []any{"a", "b"}, []any{"vip", 1.0, nil}, []any{5.0}, "a,b"),
		"items": []any{
			map[string]any{"price": g.scalar(), "qty": g.pick(1.0, 2.0, "3", nil)},
			map[string]any{"price": g.scalar(), "qty": g.pick(0.0, 5.0, "x")},
		},
		"createdAt": g.pick("2025-06-14T12:30:45Z", "2025-01-01", "2024-06-15T12:30:45.678Z", "not a date", nil, 1.7e12),
		"count":     g.value(2), "flag": g.value(1), "nested": map[string]any{"deep": map[string]any{"x": g.scalar()}},
		"rule":    g.pick(map[string]any{"var": "payload.total"}, map[string]any{"cat": []any{"a", 1.0}}, map[string]any{"a": 1.0, "b": 2.0}, "plain"),
		"nullish": nil,
	}
	if g.chance(8) {
		payload["rule"] = map[string]any{"frobnicate": 1.0}
	}
	return map[string]any{
		"payload": payload,
		"subscriber": map[string]any{
			"subscriberId": "sub-1", "email": g.pick("ada@example.com", "", nil),
			"data":     map[string]any{"plan": g.pick("gold", "free", nil, 3.0)},
			"isOnline": g.pick(true, false), "lastOnlineAt": g.pick("2025-06-15T12:00:00Z", "2025-06-01T00:00:00Z", nil),
		},
		"steps": map[string]any{
			"inbox": map[string]any{
				"seen": g.pick(true, false), "read": g.pick(true, false, "true", "false"),
				"lastSeenDate": g.pick(nil, "2025-06-15T11:30:45.678Z"), "lastReadDate": g.pick(nil, "2025-06-14T12:30:45.678Z"),
			},
			"crm":    map[string]any{"tier": g.pick("gold", "silver", nil), "score": g.scalar()},
			"digest": map[string]any{"eventCount": g.pick(0.0, 1.0, 3.0), "events": g.pick([]any{}, []any{map[string]any{"id": "e1", "payload": map[string]any{"n": 1.0}}})},
		},
		"workflow": map[string]any{"workflowId": "wf", "tags": []any{"beta", "ops"}, "severity": g.pick("high", "none")},
	}
}

var genPaths = []any{
	"payload.total", "payload.vip", "payload.name", "payload.tags", "payload.items", "payload.items.0.price",
	"payload.items.1.qty", "payload.createdAt", "payload.count", "payload.flag", "payload.missing", "payload.rule",
	"payload.nested.deep.x", "payload.name.length", "payload.tags.length", "payload.tags.1", "payload.nullish",
	"payload.nullish.x", "subscriber.email", "subscriber.data.plan", "subscriber.isOnline", "subscriber.lastOnlineAt",
	"steps.inbox.read", "steps.inbox.seen", "steps.inbox.lastReadDate", "steps.inbox.lastSeenDate", "steps.crm.tier",
	"steps.crm.score", "steps.digest.eventCount", "steps.digest.events", "steps.other.read", "workflow.tags",
	"workflow.severity", "", "payload", "nope.deep.path", 0.0, "payload.items.5",
}

// leaf draws a var or a literal.
func (g gen) leaf() any {
	if g.r.Intn(3) > 0 {
		p := g.pick(genPaths...)
		if g.chance(6) {
			return map[string]any{"var": []any{p, g.scalar()}}
		}
		return map[string]any{"var": p}
	}
	if g.chance(5) {
		return g.value(2)
	}
	return g.scalar()
}

var (
	genComparisons = []string{"==", "!=", "<", ">", "<=", ">=", "===", "!==", "="}
	genArithmetic  = []string{"+", "-", "*", "/", "%", "min", "max", "cat", "merge"}
	genStrings     = []string{"startsWith", "endsWith", "contains", "doesNotContain", "doesNotBeginWith", "doesNotEndWith"}
	genDates       = []string{"moreThanXAgo", "lessThanXAgo", "withinLast", "notWithinLast", "exactlyXAgo"}
	genScoped      = []string{"map", "filter", "all", "some", "none"}
)

func (g gen) args(depth, min, max int) []any {
	n := min + g.r.Intn(max-min+1)
	a := make([]any, n)
	for i := range a {
		a[i] = g.expr(depth - 1)
	}
	return a
}

func op(name string, values any) map[string]any { return map[string]any{name: values} }

func (g gen) pickString(xs []string) string { return xs[g.r.Intn(len(xs))] }

// expr draws a rule.
func (g gen) expr(depth int) any {
	if depth <= 0 || g.chance(4) {
		return g.leaf()
	}
	switch g.r.Intn(16) {
	case 0, 1, 2:
		name := g.pickString(genComparisons)
		if name == "<=" && g.chance(3) {
			return op(name, g.args(depth, 3, 3))
		}
		if g.chance(12) {
			return op(name, g.args(depth, 0, 3))
		}
		return op(name, g.args(depth, 2, 2))
	case 3, 4:
		return op(g.pickString([]string{"and", "or"}), g.args(depth, 0, 4))
	case 5:
		if g.chance(3) {
			return op(g.pickString([]string{"!", "!!"}), g.expr(depth-1))
		}
		return op(g.pickString([]string{"!", "!!"}), g.args(depth, 0, 2))
	case 6:
		return op(g.pickString([]string{"if", "?:"}), g.args(depth, 0, 5))
	case 7:
		return op(g.pickString(genArithmetic), g.args(depth, 0, 3))
	case 8:
		return op("substr", g.args(depth, 1, 3))
	case 9:
		return op(g.pickString([]string{"in", "notIn", "containsAny", "doesNotContainAny"}), g.args(depth, 1, 2))
	case 10:
		return op(g.pickString(genStrings), g.args(depth, 2, 2))
	case 11:
		if g.chance(2) {
			return op(g.pickString([]string{"null", "notNull"}), g.expr(depth-1))
		}
		return op(g.pickString([]string{"between", "notBetween"}),
			[]any{g.expr(depth - 1), g.pick([]any{0.0, 100.0}, []any{g.scalar(), g.scalar()}, g.expr(depth-1), []any{1.0})})
	case 12:
		rel := map[string]any{
			"amount": g.pick(1.0, 2.0, 0.5, 1.5, 30.0, 0.0, -1.0, "1", 400.0),
			"unit":   g.pick("minutes", "hours", "days", "weeks", "months", "years", "seconds", nil),
		}
		return op(g.pickString(genDates), []any{g.expr(depth - 1), g.pick(rel, rel, nil, []any{1.0, "days"})})
	case 13:
		scoped := g.pick(
			op("var", ""), op(">", []any{op("var", ""), 1.0}), op("==", []any{op("var", ""), g.scalar()}),
			op("var", "price"), op("+", []any{op("var", ""), 1.0}), g.expr(depth-1),
		)
		values := []any{g.pick(op("var", g.pick(genPaths...)), g.value(2), g.expr(depth-1)), scoped}
		if g.chance(10) {
			values = values[:g.r.Intn(2)]
		}
		return op(g.pickString(genScoped), values)
	case 14:
		values := []any{
			g.pick(op("var", "payload.items"), op("var", "payload.tags"), []any{1.0, 2.0, 3.0}, g.expr(depth-1)),
			g.pick(op("+", []any{op("var", "accumulator"), op("var", "current")}),
				op("cat", []any{op("var", "accumulator"), op("var", "current.price")}), op("var", "current")),
		}
		if !g.chance(3) {
			values = append(values, g.scalar())
		}
		return op("reduce", values)
	}
	keys := []any{g.pick(genPaths...), g.pick(genPaths...)}
	if g.chance(2) {
		return op("missing", g.pick(keys, []any{keys}, g.expr(depth-1)))
	}
	return op("missing_some", []any{g.pick(1.0, 2.0, "1", 0.0), g.pick(keys, g.expr(depth-1))})
}

// generateCases draws n cases from seed.
func generateCases(seed int64, n int) []diffCase {
	g := gen{rand.New(rand.NewSource(seed))}
	nows := []string{defaultNow, "2024-02-29T23:59:59.999Z", "2025-03-31T00:00:00Z", "2025-01-01T00:00:30Z"}
	cases := make([]diffCase, n)
	for i := range cases {
		rule, err := json.Marshal(g.expr(1 + g.r.Intn(4)))
		if err != nil {
			panic(err)
		}
		data, err := json.Marshal(g.data())
		if err != nil {
			panic(err)
		}
		cases[i] = diffCase{Name: fmt.Sprintf("generated/%d", i), Rule: rule, Data: data, Now: nows[g.r.Intn(len(nows))]}
	}
	return cases
}
