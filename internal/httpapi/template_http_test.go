package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/sandbox"
)

// hostileTemplates crash, hang or exhaust a renderer without a sandbox. want
// is "" when the template now renders (the job completes), or a phrase of
// the failed job's execution detail.
var hostileTemplates = []struct{ name, body, want string }{
	{"slice past the end", `{{ 'abc' | slice: 5 }}`, ""},
	{"slice negative length", `{{ 'abc' | slice: 1, -5 }}`, ""},
	{"slice past an array", `{{ payload.items | slice: 10, 5 | join: ',' }}`, ""},
	{"uniq over null", `{{ payload.withNull | uniq | size }}`, ""},
	{"uniq over maps", `{{ payload.maps | uniq | size }}`, ""},
	{"divided_by zero", `{{ 7 | divided_by: 0 }}`, ""},
	{"modulo zero", `{{ 7 | modulo: 0 }}`, ""},
	{"bad date", `{{ '31/31/31 x' | date: '%Y' }}`, ""},
	{"date of null", `{{ nil | date: '%Y' }}`, ""},
	{"truncate huge", `{{ payload.text | truncate: 99999999999 }}`, ""},
	{"truncatewords negative", `{{ payload.text | truncatewords: -7 }}`, ""},
	{"cycle outside a loop", `{% cycle 'a', 'b' %}`, ""},
	{"spoofed forloop", `{% assign forloop = 3 %}{% for i in (1..2) %}{% cycle 'a' %}{% endfor %}`, ""},
	{"runaway loop", `{% for i in (1..1000000000) %}{% endfor %}`, "larger than"},
	{"runaway nested loops", `{% for i in (1..100000) %}{% for j in (1..100000) %}{% endfor %}{% endfor %}`, "loop iterations"},
	{"exponential append", `{% assign s = 'xxxxxxxx' %}{% for i in (1..64) %}{% assign s = s | append: s %}{% endfor %}{{ s }}`, "larger than"},
	{"exponential capture", `{% assign s = 'xxxxxxxx' %}{% for i in (1..64) %}{% capture s %}{{ s }}{{ s }}{% endcapture %}{% endfor %}`, "larger than"},
	{"16 MiB of output", `{% for i in (1..2000000) %}xxxxxxxx{% endfor %}`, "larger than"},
	{"output past the limit", `{% assign s = 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' %}{% for i in (1..13) %}{% assign s = s | append: s %}{% endfor %}{{ s }}{{ s }}`, "rendered text is longer than"},
	{"range as a value", `{{ (1..1000000000) | join: ',' }}`, "larger than"},
	{"undefined filter", `{{ 'x' | no_such_filter }}`, ""},
	{"link from the payload", `{{ payload.text }}`, ""},
	{"NUL made by a filter", `a{{ '%00' | url_decode }}b`, "not valid JSON"},
	{"invalid UTF-8 made by a filter", `{{ '%C3%28' | url_decode }}`, "Message content could not be generated"},
}

// TestHostileTemplates triggers every hostile template through a workflow,
// interleaved with a good one: each hostile job completes or fails with a
// clear detail, never takes the worker down, and every good job completes —
// a failing render fails only its own job.
func TestHostileTemplates(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		// A generous time budget, so that each case meets the limit it aims
		// at even on a loaded machine (the time budget has its own tests in
		// the sandbox package).
		limits := sandbox.DefaultLimits
		limits.Timeout = 5 * time.Second
		eng := h.newEngine(engine.Options{Sandbox: sandbox.New(limits)})
		h.createWorkflow(t, dev, map[string]any{"name": "Good", "steps": []any{
			map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "good {{ payload.i }}"}}}})
		payload := map[string]any{"items": []any{"a", "b"}, "withNull": []any{nil, 1, nil}, "text": "one two three",
			"maps": []any{map[string]any{"a": 1}, map[string]any{"a": 1}, []any{1}}}
		for i, tc := range hostileTemplates {
			key := fmt.Sprintf("hostile-%d", i)
			h.createWorkflow(t, dev, map[string]any{"name": key, "steps": []any{
				map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": tc.body}}}})
			h.trigger(t, dev, map[string]any{"name": key, "to": "victim", "payload": payload, "transactionId": "tx-" + key})
			h.trigger(t, dev, map[string]any{"name": "good", "to": "bystander", "payload": map[string]any{"i": i},
				"transactionId": fmt.Sprintf("tx-good-%d", i)})
		}
		start := time.Now()
		drain(t, eng)
		t.Logf("%d hostile and %d good jobs in %s", len(hostileTemplates), len(hostileTemplates), time.Since(start).Round(time.Millisecond))
		for i, tc := range hostileTemplates {
			job := h.onlyJob(t, fmt.Sprintf("tx-hostile-%d", i))
			details := objects(t, job["executionDetails"])
			last := details[len(details)-1]
			if tc.want == "" {
				require.Equal(t, "completed", job["status"], "%s: %v", tc.name, last["detail"])
				continue
			}
			require.Equal(t, "failed", job["status"], tc.name)
			require.Equal(t, "Payload", last["source"], tc.name)
			require.Contains(t, last["detail"], "Message content could not be generated", tc.name)
			require.Contains(t, last["detail"], tc.want, tc.name)
		}
		require.Equal(t, len(hostileTemplates), len(h.feedItems(t, "bystander")), "every good job delivered")
		require.Equal(t, len(hostileTemplates), h.count(t, "SELECT COUNT(*) FROM jobs j JOIN notifications n ON n.id = j.notification_id"+
			" WHERE n.transaction_id LIKE 'tx-good-%' AND j.status = 'completed'"))
		require.Equal(t, http.StatusOK, h.Do("GET", "/health", nil).Status)
	})
}

// TestHostileDigestKey: a digest-first workflow renders its controls on the
// trigger path: a hostile digestKey template never answers 500 nor leaves
// the idempotency key stuck; the worker then fails the step with the reason.
func TestHostileDigestKey(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		for i, key := range []string{`{{ 'abc' | slice: 5 }}`, `{% for i in (1..1000000000) %}{% endfor %}`,
			`{% assign s = 'xx' %}{% for i in (1..64) %}{% assign s = s | append: s %}{% endfor %}{{ s }}`, `{{ 1 | divided_by: 0 }}`} {
			name := fmt.Sprintf("digest-%d", i)
			h.createWorkflow(t, dev, map[string]any{"name": name, "steps": []any{
				map[string]any{"name": "Digest", "type": "digest", "controlValues": map[string]any{"amount": 1, "unit": "minutes", "digestKey": key}},
				map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "{{ step.total_count }} updates"}},
			}})
			body := map[string]any{"name": name, "to": "ada", "payload": map[string]any{"x": 1}}
			headers := map[string]string{"Idempotency-Key": "idem-" + name}
			first := h.call(t, dev, "POST", "/v1/events/trigger", body, headers)
			require.Equal(t, http.StatusCreated, first.Status, "%s", first.Raw)
			again := h.call(t, dev, "POST", "/v1/events/trigger", body, headers)
			require.Equal(t, http.StatusCreated, again.Status, "%s", again.Raw)
			require.Equal(t, "true", again.Header.Get("Idempotency-Replay"))
		}
	})
}

// TestTemplatesCheckedAtCreation: a template that does not parse and a link
// that is not http(s) or relative are refused when the workflow is created
// or updated, naming the step and the field.
func TestTemplatesCheckedAtCreation(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		step := func(ctl map[string]any) map[string]any {
			return map[string]any{"name": "Bad", "steps": []any{
				map[string]any{"name": "Fine", "type": "in_app", "controlValues": map[string]any{"body": "ok"}},
				map[string]any{"name": "Inbox", "type": "in_app", "controlValues": ctl}}}
		}
		for _, tc := range []struct {
			name  string
			ctl   map[string]any
			field string
		}{
			{"unclosed block", map[string]any{"body": "{% if payload.x %}never closed"}, "steps.1.controlValues.body"},
			{"include", map[string]any{"subject": "{% include '/etc/passwd' %}"}, "steps.1.controlValues.subject"},
			{"double-quoted string in a tag", map[string]any{"body": `{{ payload.x | default: "none" }}`}, "steps.1.controlValues.body"},
			{"bad expression", map[string]any{"body": "{{ payload.x | 'upcase' }}"}, "steps.1.controlValues.body"},
			{"javascript redirect", map[string]any{"body": "b", "redirect": map[string]any{"url": "javascript:alert(1)"}}, "steps.1.controlValues.redirect.url"},
			{"javascript action", map[string]any{"body": "b", "primaryAction": map[string]any{"label": "Go",
				"redirect": map[string]any{"url": "JavaScript:alert(document.cookie)"}}}, "steps.1.controlValues.primaryAction.redirect.url"},
			{"data action", map[string]any{"body": "b", "secondaryAction": map[string]any{"label": "Go",
				"redirect": map[string]any{"url": "data:text/html,<script>alert(1)</script>"}}}, "steps.1.controlValues.secondaryAction.redirect.url"},
			{"vbscript", map[string]any{"body": "b", "redirect": map[string]any{"url": "vbscript:msgbox(1)"}}, "steps.1.controlValues.redirect.url"},
			{"rendered javascript", map[string]any{"body": "b", "redirect": map[string]any{"url": "{{ 'java' }}script:alert(1)"}}, "steps.1.controlValues.redirect.url"},
			{"tab in the scheme", map[string]any{"body": "b", "redirect": map[string]any{"url": "java\tscript:alert(1)"}}, "steps.1.controlValues.redirect.url"},
			{"protocol-relative", map[string]any{"body": "b", "redirect": map[string]any{"url": "//evil.example/"}}, "steps.1.controlValues.redirect.url"},
			{"avatar", map[string]any{"body": "b", "avatar": "javascript:alert(1)"}, "steps.1.controlValues.avatar"},
		} {
			res := h.call(t, dev, "POST", "/v2/workflows", step(tc.ctl), nil)
			require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s: %s", tc.name, res.Raw)
			errs, _ := res.Object(t)["errors"].(map[string]any)
			require.Contains(t, errs, tc.field, "%s: %s", tc.name, res.Raw)
		}
		require.Zero(t, h.count(t, "SELECT COUNT(*) FROM workflows WHERE name = 'Bad'"), "nothing half-written")

		// Updates are checked the same way; the stored workflow is left as it was.
		wf := h.createWorkflow(t, dev, step(map[string]any{"body": "fine", "redirect": map[string]any{"url": "/orders/{{ payload.id }}"}}))
		res := h.call(t, dev, "PUT", "/v2/workflows/"+wf["workflowId"].(string),
			step(map[string]any{"body": "{% for %}", "redirect": map[string]any{"url": "https://example.com/x"}}), nil)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Raw)
		require.Contains(t, res.Object(t)["errors"], "steps.1.controlValues.body")
	})
}

// TestUnsafeLinkAtRender: a link that only the payload makes unsafe fails
// that job at render time and never reaches the inbox; a safe one goes through.
func TestUnsafeLinkAtRender(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		eng := h.newEngine(engine.Options{})
		h.createWorkflow(t, dev, map[string]any{"name": "Linked", "steps": []any{
			map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "b",
				"primaryAction": map[string]any{"label": "Open", "redirect": map[string]any{"url": "{{ payload.url }}"}}}}}})
		for i, link := range []string{"javascript:alert(1)", "https://example.com/ok", " data:text/html,x", "/relative/ok"} {
			h.trigger(t, dev, map[string]any{"name": "linked", "to": "ada", "payload": map[string]any{"url": link},
				"transactionId": fmt.Sprintf("tx-link-%d", i)})
		}
		drain(t, eng)
		var got []string
		for _, m := range h.feedItems(t, "ada") {
			button := objects(t, m["cta"].(map[string]any)["action"].(map[string]any)["buttons"])[0]
			got = append(got, fmt.Sprint(button["url"]))
		}
		require.ElementsMatch(t, []string{"https://example.com/ok", "/relative/ok"}, got)
		for _, i := range []int{0, 2} {
			job := h.onlyJob(t, fmt.Sprintf("tx-link-%d", i))
			require.Equal(t, "failed", job["status"])
			details := objects(t, job["executionDetails"])
			detail := details[len(details)-1]["detail"].(string)
			require.True(t, strings.Contains(detail, "primaryAction.redirect.url") && strings.Contains(detail, "http(s) URL"), detail)
		}
	})
}

// TestControlsRenderInTheOrderSent: a step's controls render as one
// template in the order their keys were sent, as in Novu — a variable
// assigned in the subject is seen by the body sent after it.
func TestControlsRenderInTheOrderSent(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		eng := h.newEngine(engine.Options{})
		// Raw JSON: the subject comes first although "body" sorts before it.
		res := h.call(t, dev, "POST", "/v2/workflows", `{"name": "Ordered", "steps": [{"name": "Inbox", "type": "in_app",
			"controlValues": {"subject": "{% assign n = payload.name | upcase %}Hello", "body": "Dear {{ n }}, order {{ payload.id }}"}}]}`, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		h.trigger(t, dev, map[string]any{"name": "ordered", "to": "r1", "payload": map[string]any{"name": "Ada", "id": 1000191}})
		drain(t, eng)
		items := h.feedItems(t, "r1")
		require.Len(t, items, 1)
		require.Equal(t, "Dear ADA, order 1000191", items[0]["content"])
		require.Equal(t, "Hello", items[0]["subject"])
	})
}
