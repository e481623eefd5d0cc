package engine

import (
	"encoding/json"
	"testing"

	"github.com/herald-notify/herald/internal/store"

	"github.com/stretchr/testify/require"
)

func TestConditionsMatch(t *testing.T) {
	t.Parallel()
	vars := map[string]any{
		"subscriber": map[string]any{"email": "ada@example.com", "data": map[string]any{"plan": "pro", "seats": 12.0, "tags": []any{"eu", "beta"}}},
		"payload":    map[string]any{"region": "eu", "amount": 30.0},
	}
	email := "ada@example.com"
	bound := bindings(store.Subscriber{SubscriberID: "ada", Email: &email, Data: store.JSON(`{"plan":"pro","seats":12,"tags":["eu","beta"]}`)},
		store.JSON(`{"region":"eu","amount":30}`), nil)
	cond := func(value string, negated bool, children ...string) string {
		s := `{"isNegated":` + map[bool]string{true: "true", false: "false"}[negated] + `,"type":"GROUP","value":"` + value + `","children":[`
		for i, c := range children {
			if i > 0 {
				s += ","
			}
			s += c
		}
		return s + "]}"
	}
	child := func(on, field, op, value string) string {
		return `{"on":"` + on + `","field":"` + field + `","operator":"` + op + `","value":"` + value + `"}`
	}
	for _, tc := range []struct {
		name string
		raw  string
		want bool
	}{
		{"none", ``, true},
		{"empty", `[]`, true},
		{"equal", `[` + cond("AND", false, child("payload", "region", "EQUAL", "eu")) + `]`, true},
		{"not equal", `[` + cond("AND", false, child("payload", "region", "EQUAL", "us")) + `]`, false},
		{"nested subscriber data", `[` + cond("AND", false, child("subscriber", "data.plan", "EQUAL", "pro")) + `]`, true},
		{"and fails on one", `[` + cond("AND", false, child("payload", "region", "EQUAL", "eu"), child("payload", "amount", "LARGER", "50")) + `]`, false},
		{"or passes on one", `[` + cond("OR", false, child("payload", "region", "EQUAL", "us"), child("payload", "amount", "LARGER", "20")) + `]`, true},
		{"negated", `[` + cond("AND", true, child("payload", "region", "EQUAL", "eu")) + `]`, false},
		{"every filter must pass", `[` + cond("AND", false, child("payload", "region", "EQUAL", "eu")) + `,` + cond("AND", false, child("subscriber", "data.plan", "EQUAL", "free")) + `]`, false},
		{"numbers", `[` + cond("AND", false, child("subscriber", "data.seats", "LARGER_EQUAL", "12"), child("subscriber", "data.seats", "SMALLER", "13")) + `]`, true},
		{"between", `[` + cond("AND", false, child("payload", "amount", "BETWEEN", "10,30")) + `]`, true},
		{"not between", `[` + cond("AND", false, child("payload", "amount", "NOT_BETWEEN", "10,30")) + `]`, false},
		{"in", `[` + cond("AND", false, child("payload", "region", "IN", "us, eu")) + `]`, true},
		{"not in", `[` + cond("AND", false, child("payload", "region", "NOT_IN", "us,eu")) + `]`, false},
		{"any in an array", `[` + cond("AND", false, child("subscriber", "data.tags", "ANY_IN", "beta,gamma")) + `]`, true},
		{"all in an array", `[` + cond("AND", false, child("subscriber", "data.tags", "ALL_IN", "eu,beta,gamma")) + `]`, true},
		{"like", `[` + cond("AND", false, child("subscriber", "email", "LIKE", "@example.com")) + `]`, true},
		{"not like", `[` + cond("AND", false, child("subscriber", "email", "NOT_LIKE", "@example.com")) + `]`, false},
		{"missing field is not equal", `[` + cond("AND", false, child("payload", "nope", "NOT_EQUAL", "x")) + `]`, true},
		{"missing field never equal", `[` + cond("AND", false, child("payload", "nope", "EQUAL", "")) + `]`, false},
		{"non-number compared", `[` + cond("AND", false, child("payload", "region", "LARGER", "1")) + `]`, false},
		{"unreadable", `{"x":1}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, conditionsMatch([]byte(tc.raw), vars))
			// The step's own bindings (the template engine's ordered values), as deliveries pass them.
			require.Equal(t, tc.want, conditionsMatch([]byte(tc.raw), bound), "from the step's bindings")
		})
	}
}

func TestCandidatesOrder(t *testing.T) {
	t.Parallel()
	euOnly := []byte(`[{"type":"GROUP","value":"AND","children":[{"on":"payload","field":"region","operator":"EQUAL","value":"eu"}]}]`)
	ins := []store.Integration{
		{ID: "a", Identifier: "first", Channel: "email", Active: true},
		{ID: "b", Identifier: "second", Channel: "email", Active: true, Primary: true},
		{ID: "c", Identifier: "sms", Channel: "sms", Active: true},
		{ID: "d", Identifier: "off", Channel: "email", Active: false},
		{ID: "e", Identifier: "eu", Channel: "email", Active: true, Conditions: euOnly},
		{ID: "f", Identifier: "third", Channel: "email", Active: true},
	}
	ids := func(list []store.Integration) []string {
		var out []string
		for _, in := range list {
			out = append(out, in.ID)
		}
		return out
	}
	us := map[string]any{"payload": map[string]any{"region": "us"}}
	eu := map[string]any{"payload": map[string]any{"region": "eu"}}
	require.Equal(t, []string{"b", "a", "f"}, ids(candidates(ins, "email", "", us)), "primary first, then by creation; conditions honoured")
	require.Equal(t, []string{"b", "a", "e", "f"}, ids(candidates(ins, "email", "", eu)))
	require.Equal(t, []string{"f"}, ids(candidates(ins, "email", "third", us)), "pinned")
	require.Empty(t, candidates(ins, "email", "off", us), "an inactive integration is never pinned")
}

func FuzzConditionsMatch(f *testing.F) {
	f.Add(`[{"type":"GROUP","value":"AND","children":[{"on":"payload","field":"a.b","operator":"BETWEEN","value":"1,2"}]}]`, `{"a":{"b":1.5}}`)
	f.Add(`[{"isNegated":true,"value":"OR","children":[{"on":"subscriber","field":"data","operator":"ALL_IN","value":","}]}]`, `[]`)
	f.Fuzz(func(t *testing.T, conds, payload string) {
		var p any
		_ = json.Unmarshal([]byte(payload), &p)
		vars := map[string]any{"payload": p, "subscriber": map[string]any{"data": p}}
		a := conditionsMatch([]byte(conds), vars)
		require.Equal(t, a, conditionsMatch([]byte(conds), vars), "deterministic")
	})
}
