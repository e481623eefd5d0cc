package jsonlogic

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var testNow = time.Date(2025, 6, 15, 12, 30, 45, 678e6, time.UTC)

// mustJSON decodes a JSON document.
func mustJSON(t testing.TB, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v), s)
	return v
}

func mustParse(t testing.TB, rule string) *Rule {
	t.Helper()
	r, err := Parse(mustJSON(t, rule))
	require.NoError(t, err, rule)
	return r
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat(`{"!":`, 65) + "true" + strings.Repeat("}", 65)
	big := `{"and":[` + strings.Repeat(`1,`, 10000) + `1]}`
	tests := []struct {
		name, rule, path, msg string
	}{
		{"unknown operation", `{"frobnicate":[1]}`, "frobnicate", "unknown operation"},
		{"unknown nested", `{"and":[{"frobnicate":[{"var":"x"}]}]}`, "and.0.frobnicate", "unknown operation"},
		{"unknown in an untaken branch", `{"if":[false,{"nope":1},2]}`, "if.1.nope", "unknown operation"},
		{"unknown in a unary value", `{"!":{"nope":1}}`, "!.nope", "unknown operation"},
		{"unknown in an array", `[1,{"nope":1}]`, "1.nope", "unknown operation"},
		{"method, which 2.0.5 does not have", `{"method":["abc","toUpperCase"]}`, "method", "unknown operation"},
		{"a dotted name", `{"!.prototype.constructor":[0]}`, "!.prototype.constructor", "unknown operation"},
		{"an inherited name", `{"hasOwnProperty":["x"]}`, "hasOwnProperty", "unknown operation"},
		{"too deep", deep, strings.TrimSuffix(strings.Repeat("!.", 64), "."), "nested more than 64"},
		{"too big", big, "", "more than 10000 values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(mustJSON(t, tt.rule))
			var perr *Error
			require.ErrorAs(t, err, &perr)
			require.Equal(t, tt.path, perr.Path)
			require.Contains(t, perr.Msg, tt.msg)
			require.Contains(t, err.Error(), tt.msg)
		})
	}

	_, err := Parse(map[string]any{"==": []any{time.Now(), 1}})
	require.ErrorContains(t, err, "==.0: time.Time is not a JSON value")
}

func TestParseAccepts(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat(`{"!":`, 64) + "true" + strings.Repeat("}", 64)
	for _, rule := range []string{
		deep, `{}`, `null`, `true`, `[1,2]`, `{"a":{"frobnicate":1},"b":2}`,
		`{"==":[{"var":"payload.total"},{"a":1,"b":{"nope":2}}]}`,
	} {
		_, err := Parse(mustJSON(t, rule))
		require.NoError(t, err, rule)
	}
}

func TestParseCopies(t *testing.T) {
	t.Parallel()
	v := mustJSON(t, `{"==":[{"var":"a"},{"x":1,"y":2}]}`)
	r, err := Parse(v)
	require.NoError(t, err)
	v.(map[string]any)["=="].([]any)[1].(map[string]any)["x"] = 2.0
	got, err := r.Eval(map[string]any{"a": 1.0}, testNow)
	require.NoError(t, err)
	require.Equal(t, false, got)
}

func TestRuns(t *testing.T) {
	t.Parallel()
	data := mustJSON(t, `{"steps":{"inbox":{"read":false}},"payload":{"total":150,"list":[],"obj":{},"zero":0}}`)
	tests := []struct {
		name, rule string
		runs       bool
	}{
		{"empty object", `{}`, true},
		{"true", `true`, true},
		{"null", `null`, false},
		{"an empty array runs", `{"var":"payload.list"}`, true},
		{"an empty object runs", `{"var":"payload.obj"}`, true},
		{"zero does not", `{"var":"payload.zero"}`, false},
		{"empty string does not", `""`, false},
		{"NaN does not", `{"/":[0,0]}`, false},
		{"missing does not", `{"var":"payload.nope"}`, false},
		{"undefined does not", `{"and":[]}`, false},
		{"unread and big", `{"and":[{"==":[{"var":"steps.inbox.read"},false]},{">=":[{"var":"payload.total"},100]}]}`, true},
		{"read", `{"==":[{"var":"steps.inbox.read"},true]}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			runs, err := mustParse(t, tt.rule).Runs(data, testNow)
			require.NoError(t, err)
			require.Equal(t, tt.runs, runs)
		})
	}

	var nilRule *Rule
	runs, err := nilRule.Runs(data, testNow)
	require.NoError(t, err)
	require.True(t, runs)
	v, err := nilRule.Eval(data, testNow)
	require.NoError(t, err)
	require.Equal(t, true, v)

	_, err = mustParse(t, `{"*":[]}`).Runs(data, testNow)
	require.ErrorContains(t, err, "Reduce of empty array")
}

func TestTruthy(t *testing.T) {
	t.Parallel()
	for _, v := range []any{nil, false, 0.0, math.NaN(), "", []any{}, json.Number("0")} {
		require.False(t, Truthy(v), "%#v", v)
	}
	for _, v := range []any{true, 1.0, "0", []any{0.0}, map[string]any{}, json.Number("2")} {
		require.True(t, Truthy(v), "%#v", v)
	}
}

func TestVars(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rule string
		vars []string
	}{
		{`{}`, nil},
		{`{"and":[{"==":[{"var":"steps.inbox.read"},false]},{">=":[{"var":"payload.total"},100]},{"var":"payload.total"}]}`,
			[]string{"payload.total", "steps.inbox.read"}},
		{`{"var":["payload.vip",{"var":"payload.default"}]}`, []string{"payload.default", "payload.vip"}},
		{`{"var":{"cat":["payload.",{"var":"payload.key"}]}}`, []string{"", "payload.key"}},
		{`{"var":""}`, []string{""}},
		{`{"var":[]}`, []string{""}},
		{`{"var":0}`, []string{"0"}},
		{`{"missing":["payload.a","payload.b"]}`, []string{"payload.a", "payload.b"}},
		{`{"missing_some":[1,["payload.a","subscriber.email"]]}`, []string{"payload.a", "subscriber.email"}},
		{`{"missing":{"var":"payload.keys"}}`, []string{"", "payload.keys"}},
		{`{"some":[{"var":"payload.items"},{">":[{"var":"price"},10]}]}`, []string{"payload.items"}},
		{`{"reduce":[{"var":"steps.digest.events"},{"+":[{"var":"accumulator"},1]},{"var":"payload.start"}]}`,
			[]string{"payload.start", "steps.digest.events"}},
	}
	for _, tt := range tests {
		require.Equal(t, tt.vars, mustParse(t, tt.rule).Vars(), tt.rule)
	}
	var nilRule *Rule
	require.Nil(t, nilRule.Vars())
}

func TestBudget(t *testing.T) {
	t.Parallel()
	big := make([]any, 60000)
	for i := range big {
		big[i] = float64(i)
	}
	data := map[string]any{"big": big}
	for _, rule := range []string{
		`{"map":[{"var":"big"},{"+":[{"var":""},1]}]}`,
		`{"filter":[{"var":"big"},{"var":"x"}]}`,
		`{"map":[{"var":"big"},{"map":[{"var":"big"}]}]}`,
		`{"reduce":[{"var":"big"},{"cat":[{"var":"accumulator"},{"var":"accumulator"},"x"]},"x"]}`,
		`{"reduce":[{"var":"big"},{"merge":[{"var":"accumulator"},{"var":"accumulator"}]},[1]]}`,
		`{"some":[{"var":"big"},{"containsAny":[{"var":"big"},{"var":"big"}]}]}`,
	} {
		start := time.Now()
		_, err := mustParse(t, rule).Eval(data, testNow)
		require.ErrorIs(t, err, errBudget, rule)
		require.Less(t, time.Since(start), 5*time.Second, rule)
	}
	v, err := mustParse(t, `{"reduce":[{"var":"big"},{"+":[{"var":"accumulator"},1]},0]}`).Eval(
		map[string]any{"big": big[:20000]}, testNow)
	require.NoError(t, err)
	require.Equal(t, 20000.0, v)
}

func TestEvalValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rule, data string
		want       any
	}{
		{`{"map":[[1,2],{"and":[]}]}`, `{}`, []any{nil, nil}},
		{`{"reduce":[[1],{"var":""},{"and":[]}]}`, `{}`, map[string]any{"current": 1.0}},
		{`{"var":"a"}`, `{"a":[1,{"b":2}]}`, []any{1.0, map[string]any{"b": 2.0}}},
		{`{"===":[[],[]]}`, `{}`, false},
		{`{"===":[{"var":"a"},{"var":"a"}]}`, `{"a":[]}`, true},
		{`{"===":[{"var":"a"},{"var":"b"}]}`, `{"a":[],"b":[]}`, false},
		{`{"in":[{"var":"a.0"},{"var":"a"}]}`, `{"a":[[]]}`, true},
		{`{"cat":[0.1,"|",1e21,"|",-0,"|",null,"|",[1,[2,null]]]}`, `{}`, "0.1|1e+21|0||1,2,"},
	}
	for _, tt := range tests {
		got, err := mustParse(t, tt.rule).Eval(mustJSON(t, tt.data), testNow)
		require.NoError(t, err, tt.rule)
		require.Equal(t, tt.want, got, tt.rule)
	}

	// json.Number in data and rules is a number; results are float64.
	var data any
	dec := json.NewDecoder(strings.NewReader(`{"n":"5","m":5,"xs":[1.5]}`))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&data))
	got, err := mustParse(t, `{"merge":[{"var":"xs"},{"+":[{"var":"m"},{"var":"n"}]}]}`).Eval(data, testNow)
	require.NoError(t, err)
	require.Equal(t, []any{1.5, 10.0}, got)
}

func TestConcurrentEval(t *testing.T) {
	t.Parallel()
	r := mustParse(t, `{"and":[{"==":[{"var":"steps.inbox.read"},false]},{"withinLast":[{"var":"at"},{"amount":1,"unit":"days"}]}]}`)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(read bool) {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				data := map[string]any{"steps": map[string]any{"inbox": map[string]any{"read": read}}, "at": "2025-06-15T00:00:00Z"}
				runs, err := r.Runs(data, testNow)
				if err != nil || runs == read {
					t.Errorf("read=%v: runs=%v err=%v", read, runs, err)
					return
				}
			}
		}(i%2 == 0)
	}
	wg.Wait()
}

func TestEvalRecoversPanics(t *testing.T) {
	t.Parallel()
	r := &Rule{root: &node{op: opArray, args: []*node{nil}}}
	_, err := r.Eval(nil, testNow)
	require.Error(t, err)
	require.False(t, errors.Is(err, errBudget))
}

func BenchmarkRuns(b *testing.B) {
	r, err := Parse(mustJSON(b, `{"and":[{"==":[{"var":"steps.inbox.read"},false]},{">=":[{"var":"payload.total"},100]}]}`))
	require.NoError(b, err)
	data := mustJSON(b, `{"steps":{"inbox":{"seen":true,"read":false,"lastSeenDate":null}},
		"payload":{"total":150,"orderId":"o-1"},"subscriber":{"subscriberId":"s","email":"a@b.c"}}`)
	b.ReportAllocs()
	for b.Loop() {
		runs, err := r.Runs(data, testNow)
		if err != nil || !runs {
			b.Fatal(runs, err)
		}
	}
}
