package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/testdb"
)

// TestServeSurvivesHostileTemplates runs the real binary on both stores and
// triggers the templates that used to crash-loop it (a panic inside the
// Liquid renderer on a worker, re-leased after each restart) and those that
// ran for minutes: the process stays up, every job ends, and a good workflow
// triggered among them is delivered.
func TestServeSurvivesHostileTemplates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := heraldBinary(t)
	hostile := []string{
		`{{ 'abc' | slice: 5 }}`, `{{ 'abc' | slice: 1, -5 }}`, `{{ payload.items | slice: 9, 3 | join: ',' }}`,
		`{{ payload.mixed | uniq | size }}`, `{{ 5 | modulo: 0 }}{{ 5 | divided_by: 0 }}`, `{{ 'x' | date: '%Q' }}`,
		`{% for i in (1..1000000000) %}{% endfor %}`,
		`{% assign s = 'ab' %}{% for i in (1..64) %}{% assign s = s | append: s %}{% endfor %}{{ s }}`,
		`{% assign forloop = 1 %}{% for i in (1..2) %}{% cycle 'a' %}{% endfor %}`, `{{ '%00' | url_decode }}`,
	}
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			env, db := serveStore(t, kind)
			s := startServer(t, bin, env)

			payload := map[string]any{"items": []any{"a"}, "mixed": []any{nil, map[string]any{"a": 1}, nil}}
			step := func(typ string, ctl map[string]any) map[string]any {
				return map[string]any{"name": typ, "type": typ, "controlValues": ctl}
			}
			workflows := map[string][]any{"good": {step("in_app", map[string]any{"body": "good {{ payload.i }}"})}}
			for i, body := range hostile {
				workflows[fmt.Sprintf("hostile-%d", i)] = []any{step("in_app", map[string]any{"subject": body, "body": "b"})}
				workflows[fmt.Sprintf("digest-%d", i)] = []any{
					step("digest", map[string]any{"amount": 1, "unit": "seconds", "digestKey": body}),
					step("in_app", map[string]any{"body": "{{ step.total_count }}"})}
			}
			for key, steps := range workflows {
				status, out := s.call(t, "POST", "/v2/workflows", map[string]any{"name": key, "workflowId": key, "steps": steps})
				require.Equal(t, http.StatusCreated, status, "%v", out)
			}
			triggers := 0
			for key := range workflows {
				for i := range 3 {
					status, out := s.call(t, "POST", "/v1/events/trigger", map[string]any{"name": key, "to": "victim",
						"payload": payload, "transactionId": fmt.Sprintf("%s-%d", key, i)})
					require.Equal(t, http.StatusCreated, status, "%s: %v", key, out)
					status, _ = s.call(t, "POST", "/v1/events/trigger", map[string]any{"name": "good", "to": "bystander",
						"payload": map[string]any{"i": triggers}})
					require.Equal(t, http.StatusCreated, status)
					triggers++
				}
			}
			count := func(q string) int {
				var n int
				require.NoError(t, db.QueryRow(q).Scan(&n), q)
				return n
			}
			require.Eventually(t, func() bool {
				return count("SELECT count(*) FROM jobs WHERE status IN ('queued', 'running', 'pending', 'delayed')") == 0
			}, 90*time.Second, 50*time.Millisecond, "every job ends")
			require.Nil(t, s.cmd.ProcessState, "the server is still running")
			status, _ := s.call(t, "GET", "/health", nil)
			require.Equal(t, http.StatusOK, status)
			status, out := s.call(t, "GET", "/v1/subscribers/bystander/notifications/feed?limit=1", nil)
			require.Equal(t, http.StatusOK, status)
			require.EqualValues(t, triggers, out.(map[string]any)["totalCount"], "every good trigger delivered")
			require.Positive(t, count("SELECT count(*) FROM execution_details WHERE detail LIKE 'Message content could not be generated%'"))
			require.NotContains(t, s.log(), "panic")
		})
	}
}
