package sandbox

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/liquid"
)

func vars() map[string]any {
	return map[string]any{
		"subscriber": map[string]any{"firstName": "Ada", "lastName": "Lovelace"},
		"payload": map[string]any{
			"items":   []any{"a", "b", "c"},
			"nums":    []any{3.0, 1.0, 2.0},
			"mixed":   []any{nil, map[string]any{"a": 1.0}, map[string]any{"a": 1.0}, []any{1.0}, []any{1.0}, "x", nil},
			"order":   map[string]any{"id": "A-17", "total": 12.5},
			"n":       3.0,
			"when":    "2026-11-23T10:00:00Z",
			"text":    "one two three four five",
			"hostile": "<script>alert(1)</script>",
		},
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	s := New(Limits{})
	for _, tc := range []struct{ name, src, want string }{
		{"variable", "Hi {{ subscriber.firstName }}", "Hi Ada"},
		{"filters", "{{ subscriber.lastName | upcase | append: '!' }}", "LOVELACE!"},
		{"for with forloop", "{% for i in payload.items %}{{ forloop.index }}{{ i }}{% unless forloop.last %},{% endunless %}{% endfor %}", "1a,2b,3c"},
		{"for offset limit reversed", "{% for i in (1..10) offset: 2 limit: 3 reversed %}{{ i }}{% endfor %}", "543"},
		{"for limit from payload", "{% for i in payload.items limit: payload.n %}{{ i }}{% endfor %}", "abc"},
		{"for else", "{% for i in payload.none %}{{ i }}{% else %}empty{% endfor %}", "empty"},
		{"break and continue", "{% for i in (1..9) %}{% if i == 2 %}{% continue %}{% endif %}{% if i > 4 %}{% break %}{% endif %}{{ i }}{% endfor %}", "134"},
		{"object pairs in key order", "{% for p in payload.order %}{{ p[0] }}={{ p[1] }};{% endfor %}", "id=A-17;total=12.5;"},
		{"cycle", "{% for i in (1..4) %}{% cycle 'a', 'b' %}{% endfor %}", "abab"},
		{"tablerow", "{% tablerow i in (1..3) cols: 2 %}{{ i }}{% endtablerow %}", `<tr class="row1"><td class="col1">1</td><td class="col2">2</td></tr><tr class="row2"><td class="col1">3</td></tr>`},
		{"capture", "{% capture greeting %}Hello {{ subscriber.firstName }}{% endcapture %}{{ greeting | size }}", "9"},
		{"case", "{% case payload.n %}{% when 1, 2 %}low{% when 3 %}three{% else %}high{% endcase %}", "three"},
		{"if elsif else", "{% if payload.n > 5 %}big{% elsif payload.n > 2 %}mid{% else %}small{% endif %}", "mid"},
		{"assign", "{% assign total = payload.order.total | times: 2 %}{{ total }}", "25"},
		{"slice", "{{ 'abcdef' | slice: 1, 3 }}|{{ 'abc' | slice: 5 }}|{{ 'abc' | slice: 1, -5 }}|{{ 'abc' | slice: -2 }}", "bcd|||b"},
		{"slice array", "{{ payload.items | slice: 1, 9 | join: '+' }}", "b+c"},
		{"truncate", "{{ payload.text | truncate: 10 }}|{{ payload.text | truncatewords: 2 }}|{{ 'ab' | truncate: 5000 }}", "one two...|one two...|ab"},
		{"uniq with nulls and maps", "{{ payload.mixed | uniq | size }}", "6"},
		{"sort", "{{ payload.nums | sort | join: ',' }}", "1,2,3"},
		{"split and join", "{{ 'a b  c' | split: ' ' | join: '-' }}|{{ 'a,b' | split: ',' | size }}", "a-b--c|2"},
		{"replace", "{{ 'aaa' | replace: 'a', 'bb' }}|{{ 'aaa' | remove: 'a' }}|{{ 'aab' | replace_first: 'a', 'c' }}", "bbbbbb||cab"},
		{"escape", "{{ payload.hostile | escape }}", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{"date", "{{ payload.when | date: '%Y-%m-%d' }}", "2026-11-23"},
		{"raw and comment", "{% raw %}{{ x }}{% endraw %}{% comment %}{{ y }}{% endcomment %}", "{{ x }}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Render(tc.src, vars())
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func reasonOf(t *testing.T, err error) string {
	t.Helper()
	require.Error(t, err)
	var se *Error
	require.True(t, errors.As(err, &se), "want a *sandbox.Error, got %T: %v", err, err)
	return se.Reason
}

// TestHostile runs templates that crash, hang or exhaust a naive renderer:
// each fails with the reason named, quickly.
func TestHostile(t *testing.T) {
	t.Parallel()
	// A generous time budget, so that the limit each case aims at is the one
	// that trips on a loaded machine; TestTimeout tests the clock.
	s := New(Limits{Timeout: time.Minute})
	for _, tc := range []struct{ name, src, reason string }{
		{"billion iterations", "{% for i in (1..1000000000) %}{% endfor %}", ReasonValue},
		{"nested loops", "{% for i in (1..100000) %}{% for j in (1..100000) %}xxxxxxxxxxxxxxxxxxxx{% endfor %}{% endfor %}", ReasonOutput},
		{"nested empty loops", "{% for i in (1..100000) %}{% for j in (1..100000) %}{% endfor %}{% endfor %}", ReasonIterations},
		{"tablerow billion", "{% tablerow i in (1..1000000000) %}{% endtablerow %}", ReasonValue},
		{"tablerow wide", "{% tablerow i in (1..100000) %}{% endtablerow %}", ReasonOutput},
		{"exponential append", "{% assign s = 'xxxxxxxxxxxxxxxx' %}{% for i in (1..64) %}{% assign s = s | append: s %}{% endfor %}{{ s | size }}", ReasonValue},
		{"exponential capture", "{% assign s = 'xxxxxxxxxxxxxxxx' %}{% for i in (1..64) %}{% capture s %}{{ s }}{{ s }}{% endcapture %}{% endfor %}", ReasonValue},
		{"exponential concat", "{% assign a = payload.items %}{% for i in (1..64) %}{% assign a = a | concat: a %}{% endfor %}", ReasonValue},
		{"wide capture", "{% assign s = 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' | append: 'y' %}{% for i in (1..20) %}{% assign s = s | append: s %}{% endfor %}{% for i in (1..1000) %}{% capture t %}{{ s }}{{ s }}{{ s }}{{ s }}{% endcapture %}{% endfor %}", ReasonValue},
		{"work budget", "{% assign s = 'xxxxxxxxxxxxxxxx' %}{% for i in (1..15) %}{% assign s = s | append: s %}{% endfor %}{% for i in (1..100000) %}{% assign t = s | append: 'y' %}{% endfor %}", ReasonWork},
		{"replace blow-up", "{% assign s = 'aaaaaaaaaaaaaaaa' %}{% for i in (1..12) %}{% assign s = s | append: s %}{% endfor %}{{ s | replace: 'a', s }}", ReasonValue},
		{"join separator blow-up", "{% assign s = 'xxxxxxxxxxxxxxxx' %}{% for i in (1..14) %}{% assign s = s | append: s %}{% endfor %}{{ (1..1000) | join: s }}", ReasonValue},
		{"range join", "{{ (1..1000000000) | join: ',' }}", ReasonValue},
		{"range sort", "{% assign r = (1..1000000000) %}{{ r | sort | first }}", ReasonValue},
		{"split to characters", "{% assign s = 'xxxxxxxxxxxxxxxx' %}{% for i in (1..16) %}{% assign s = s | append: s %}{% endfor %}{{ s | split: '' | size }}", ReasonValue},
		{"output", "{% for i in (1..100000) %}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{% endfor %}", ReasonOutput},
		{"include", "{% include '/etc/passwd' %}", ReasonSyntax},
		{"unknown tag", "{% render 'x' %}", ReasonSyntax},
		{"unclosed", "{% if x %}", ReasonSyntax},
		{"double-quoted literal", `{{ x | default: "a" }}`, ReasonSyntax},
		{"NUL from url_decode", "a{{ '%00' | url_decode }}b", ReasonRender},
		{"NUL from an escape printed raw", "a{{ '\\u0000' | raw }}b", ReasonText},
		{"invalid UTF-8 from url_decode", "{{ '%ff%fe' | url_decode }}", ReasonRender},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := s.Render(tc.src, vars())
			require.Equal(t, tc.reason, reasonOf(t, err), "%v", err)
			require.Less(t, time.Since(start), 5*time.Second)
		})
	}
}

// TestNotFailuresInLiquidJS: what the old engine refused and LiquidJS
// renders (the outputs are LiquidJS's, as Novu configures it).
func TestNotFailuresInLiquidJS(t *testing.T) {
	t.Parallel()
	s := New(Limits{})
	for _, tc := range []struct{ name, src, want string }{
		{"divided by zero", "{{ 1 | divided_by: 0 }}", "Infinity"},
		{"modulo zero", "{{ 5 | modulo: 0 }}", "NaN"},
		{"bad date", "{{ 'not a date' | date: '%Y' }}", "not a date"},
		{"undefined filter", "{{ 'x' | no_such_filter }}", "x"},
		{"cycle outside loop", "{% cycle 'a', 'b' %}", "a"},
		{"spoofed forloop", "{% assign forloop = 1 %}{% cycle 'a' %}", "a"},
		{"break outside loop", "{% break %}x", ""},
		{"bad loop limit", "{% for i in (1..3) limit: 'x' %}{{ i }}{% endfor %}", ""},
		{"nil and empty print as objects", "{{ nil }}|{{ empty }}", "{}|{}"},
		{"forloop prints as an object", "{% for i in (1..2) %}{{ forloop }}{% endfor %}", "{'i':0,'length':2,'name':'i-(1..2)'}{'i':1,'length':2,'name':'i-(1..2)'}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Render(tc.src, vars())
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	s := New(Limits{Timeout: 20 * time.Millisecond, MaxIterations: 1 << 40, MaxWork: 1 << 40, MaxOutput: 1 << 30, MaxTotal: 1 << 30})
	start := time.Now()
	_, err := s.Render("{% for i in (1..100000) %}{% for j in (1..100000) %}{{ i | plus: 1 | minus: 1 }}{% endfor %}{% endfor %}", nil)
	require.Equal(t, ReasonTimeout, reasonOf(t, err))
	require.Contains(t, err.Error(), "ran longer than")
	require.Less(t, time.Since(start), 2*time.Second)
}

// TestOneBudgetPerRun: the templates of one run share the budget; the next
// run starts afresh.
func TestOneBudgetPerRun(t *testing.T) {
	t.Parallel()
	s := New(Limits{MaxOutput: 100, MaxTotal: 150})
	ctl := map[string]any{"subject": strings.Repeat("s", 100), "body": strings.Repeat("b", 60)}
	_, err := s.Controls(ctl, nil)
	require.Equal(t, ReasonOutput, reasonOf(t, err))
	var se *Error
	require.ErrorAs(t, err, &se)
	require.Contains(t, []string{"subject", "body"}, se.Field)

	out, err := s.Controls(map[string]any{"subject": "{{ 'x' }}", "cta": map[string]any{"url": "/a/{{ 1 | plus: 1 }}"}}, nil)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"subject": "x", "cta": map[string]any{"url": "/a/2"}}, out)
}

func TestSourceLimitAndCheckAll(t *testing.T) {
	t.Parallel()
	s := New(Limits{MaxSource: 10})
	require.Equal(t, ReasonSource, reasonOf(t, s.Check(strings.Repeat("x", 11))))
	errs := s.CheckAll(map[string]any{"body": "{% if %}", "ok": "fine", "a": []any{"{{ x | 'y' }}"}})
	require.Len(t, errs, 2)
	require.Equal(t, "a.0", errs[0].Field)
	require.Equal(t, "body", errs[1].Field)
}

// TestEveryFilterWithHostileArguments calls every filter with receivers and
// arguments of every kind, null and out of range included: each call
// returns, with output or an error, and never takes the process down.
func TestEveryFilterWithHostileArguments(t *testing.T) {
	t.Parallel()
	names := liquid.FilterNames()
	sort.Strings(names)
	require.Greater(t, len(names), 40)
	receivers := []string{"nil", "''", "'abc'", "-1", "0", "1e308", "payload.mixed", "payload.order", "(1..5)", "(1..1000000000)", "(5..1)", "payload.nums", "true"}
	argLists := []string{"", ": nil", ": 0", ": -99999999999", ": 99999999999", ": 5", ": 1, -5", ": '', ''", ": nil, nil, nil", ": 'a', 'b', 'c', 'd'", ": payload.mixed", ": (1..1000000000)", ": '%Q%%%-'", ": 1e308, -1e308"}
	s := New(Limits{})
	calls := 0
	for _, name := range names {
		for _, recv := range receivers {
			for _, args := range argLists {
				src := fmt.Sprintf("{{ %s | %s%s }}", recv, name, args)
				_, err := s.Render(src, vars())
				if err != nil {
					var se *Error
					require.ErrorAs(t, err, &se, src)
				}
				calls++
			}
		}
	}
	t.Logf("%d filter calls over %d filters", calls, len(names))
}

func TestConcurrentRuns(t *testing.T) {
	t.Parallel()
	s := New(Limits{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				want := fmt.Sprintf("%d-%d", g, i)
				got, err := s.Render("{% for x in (1..3) %}{% endfor %}{{ g }}-{{ i }}", map[string]any{"g": g, "i": i})
				if err != nil || got != want {
					t.Errorf("got %q, %v; want %q", got, err, want)
					return
				}
				if i%20 == 0 {
					_, err := s.Render("{% for x in (1..1000000000) %}{% endfor %}", nil)
					if err == nil {
						t.Error("a runaway loop passed")
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"", "/orders/17", "orders?id=1", "#top", "?q=1", "https://example.com/a?b=c", "HTTP://Example.com", "http://127.0.0.1:3000/x"} {
		require.NoError(t, CheckURL(ok), ok)
	}
	for _, bad := range []string{"javascript:alert(1)", "JavaScript:alert(1)", "java\tscript:alert(1)", " javascript:alert(1)",
		"data:text/html,<script>alert(1)</script>", "vbscript:msgbox(1)", "//evil.example/x", `/\evil.example`, `\\evil.example`,
		"https:///nohost", "ftp://example.com/x", "mailto:a@example.com", "http://exa mple.com", "x\x00y"} {
		require.ErrorIs(t, CheckURL(bad), ErrUnsafeURL, bad)
	}
	require.True(t, IsURLField("primaryAction.redirect.url"))
	require.True(t, IsURLField("avatar"))
	require.False(t, IsURLField("body"))
}

// TestTimeBudgetIsCPUTime: time spent waiting for a CPU does not count
// against a render's budget; computing does; and the wall-time cap holds.
func TestTimeBudgetIsCPUTime(t *testing.T) {
	l := Limits{Timeout: 40 * time.Millisecond}.withDefaults()
	threadClock{}.lock()
	defer threadClock{}.unlock()
	var b budget
	b.reset(&l, time.Now())
	if !b.cpu {
		t.Skip("no per-thread CPU clock on this OS: the budget is wall time")
	}
	<-time.After(60 * time.Millisecond) // off the CPU, like a descheduled render
	require.NoError(t, b.check(), "waiting is not computing")
	for start := time.Now(); time.Since(start) < 200*time.Millisecond && b.check() == nil; {
	}
	require.Equal(t, ReasonTimeout, reasonOf(t, b.check()), "computing 40 ms spends the budget")

	b.reset(&l, time.Now())
	b.wallEnd = time.Now().Add(-time.Millisecond)
	b.deadline = b.wallEnd
	require.Contains(t, b.check().Error(), "ran longer than 400ms", "the wall-time cap")
}
