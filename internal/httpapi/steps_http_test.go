package httpapi_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/provider/email/sendgrid/sendgridfake"
)

// Workflows as Novu runs them (issue 26): step conditions, throttle, HTTP
// request, v2 delay and digest controls, through the public API on both
// stores.

// jobStatuses are the statuses of a transaction's jobs in step order.
func (h *harness) jobStatuses(t *testing.T, transactionID string) []string {
	t.Helper()
	var out []string
	for _, j := range h.jobsOf(t, transactionID) {
		out = append(out, j["status"].(string))
	}
	return out
}

// TestStepConditions: a step runs only when its conditions hold, evaluated
// when the step is reached — for the first in-app step (planned with the
// trigger) and a later one alike; a skipped step has its detail and the
// rule as raw, and the workflow goes on.
func TestStepConditions(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		h.createWorkflow(t, dev, map[string]any{"name": "Cond", "workflowId": "cond", "steps": []any{
			map[string]any{"name": "inbox", "type": "in_app", "controlValues": map[string]any{"body": "hello",
				"skip": map[string]any{"==": []any{map[string]any{"var": "payload.vip"}, true}}}},
			map[string]any{"name": "after", "type": "in_app", "controlValues": map[string]any{"body": "gold {{payload.plan}}",
				"skip": map[string]any{"and": []any{
					map[string]any{"==": []any{map[string]any{"var": "subscriber.data.tier"}, "gold"}},
					map[string]any{"in": []any{map[string]any{"var": "payload.plan"}, []any{"pro", "team"}}},
				}}}},
			map[string]any{"name": "always", "type": "in_app", "controlValues": map[string]any{"body": "always", "skip": map[string]any{}}},
		}})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "s2", "data": map[string]any{"tier": "gold"}})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "s3", "data": map[string]any{"tier": "silver"}})
		eng := h.newEngine(engine.Options{})

		h.trigger(t, dev, map[string]any{"name": "cond", "to": "s2", "payload": map[string]any{"vip": false, "plan": "pro"}, "transactionId": "c1"})
		h.trigger(t, dev, map[string]any{"name": "cond", "to": "s3", "payload": map[string]any{"vip": true, "plan": "pro"}, "transactionId": "c2"})
		// A subscriber the trigger creates: its first step runs in a worker.
		h.trigger(t, dev, map[string]any{"name": "cond", "to": map[string]any{"subscriberId": "s4", "data": map[string]any{"tier": "gold"}},
			"payload": map[string]any{"vip": "true", "plan": "team"}, "transactionId": "c3"})
		drain(t, eng)

		require.Equal(t, []string{"skipped", "completed", "completed"}, h.jobStatuses(t, "c1"))
		require.Equal(t, []string{"completed", "skipped", "completed"}, h.jobStatuses(t, "c2"))
		require.Equal(t, []string{"completed", "completed", "completed"}, h.jobStatuses(t, "c3"), `"true" == true as Novu compares`)
		contents := func(sub string) []string {
			var out []string
			for _, it := range h.feedItems(t, sub) {
				out = append(out, it["content"].(string))
			}
			return out
		}
		require.Equal(t, []string{"always", "gold pro"}, contents("s2"))
		require.Equal(t, []string{"always", "hello"}, contents("s3"))
		require.Equal(t, []string{"always", "gold team", "hello"}, contents("s4"))

		// env.name and env.type: the first in-app step (run with the
		// trigger) and a later one (a worker).
		h.createWorkflow(t, dev, map[string]any{"name": "Env cond", "workflowId": "env-cond", "steps": []any{
			map[string]any{"name": "dev", "type": "in_app", "controlValues": map[string]any{"body": "dev only",
				"skip": map[string]any{"==": []any{map[string]any{"var": "env.type"}, "dev"}}}},
			map[string]any{"name": "prod", "type": "in_app", "controlValues": map[string]any{"body": "prod only",
				"skip": map[string]any{"==": []any{map[string]any{"var": "env.name"}, "production"}}}},
		}})
		h.trigger(t, dev, map[string]any{"name": "env-cond", "to": "s2", "transactionId": "c4"})
		drain(t, eng)
		require.Equal(t, []string{"completed", "skipped"}, h.jobStatuses(t, "c4"))

		skipped := h.jobsOf(t, "c1")[0]
		details := objects(t, skipped["executionDetails"])
		last := details[len(details)-1]
		require.Equal(t, "Step skipped: its conditions are not met", last["detail"])
		require.JSONEq(t, `{"==":[{"var":"payload.vip"},true]}`, last["raw"].(string))
	})
}

// TestStepConditionsRefused: a condition that is not a JSONLogic object of
// known operations is a 422 naming the field, on create, update and the
// step preview; nothing is saved.
func TestStepConditionsRefused(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		for _, tc := range []struct {
			name string
			skip any
		}{
			{"unknown operation", map[string]any{"frobnicate": []any{1}}},
			{"nested unknown operation", map[string]any{"and": []any{map[string]any{"==": []any{1, 1}}, map[string]any{"nope": []any{}}}}},
			{"a string", "payload.vip"},
			{"an array", []any{1, 2}},
		} {
			res := h.call(t, dev, "POST", "/v2/workflows", map[string]any{"name": "Bad", "workflowId": "bad", "steps": []any{
				map[string]any{"name": "inbox", "type": "in_app", "controlValues": map[string]any{"body": "x"}},
				map[string]any{"name": "mail", "type": "email", "controlValues": map[string]any{"subject": "s", "body": "b", "skip": tc.skip}},
			}}, nil)
			requireError(t, res, http.StatusUnprocessableEntity, "POST", "/v2/workflows", "steps.1.controlValues.skip")
		}
		res := h.call(t, dev, "GET", "/v2/workflows/bad", nil, nil)
		require.Equal(t, http.StatusNotFound, res.Status, "nothing saved")
	})
}

// TestUnreadInAppThenEmail is Novu's most common workflow: in-app, wait,
// then an e-mail only if the in-app message was not read. Read in time: no
// e-mail; not read: the e-mail goes through the provider.
func TestUnreadInAppThenEmail(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		f := sendgridfake.New()
		defer f.Close()
		h.sendgridIntegration(t, f, "mail-main")
		h.createWorkflow(t, dev, map[string]any{"name": "Nudge", "workflowId": "nudge", "steps": []any{
			map[string]any{"name": "inbox", "type": "in_app", "controlValues": map[string]any{"body": "You have an order"}},
			map[string]any{"name": "wait", "type": "delay", "controlValues": map[string]any{"type": "regular", "amount": 1, "unit": "hours"}},
			map[string]any{"name": "mail", "type": "email", "controlValues": map[string]any{"subject": "Unread order", "body": "<p>Look</p>",
				"skip": map[string]any{"==": []any{map[string]any{"var": "steps.inbox.read"}, false}}}},
		}})
		for _, s := range []string{"reader", "ignorer"} {
			h.createSubscriber(t, dev, map[string]any{"subscriberId": s, "email": s + "@example.com"})
		}
		clock := &testClock{t: time.Now().Add(time.Minute)}
		eng := h.deliveryEngine(clock)
		h.trigger(t, dev, map[string]any{"name": "nudge", "to": "reader", "transactionId": "t-read"})
		h.trigger(t, dev, map[string]any{"name": "nudge", "to": "ignorer", "transactionId": "t-ignore"})
		drain(t, eng)
		require.Equal(t, []string{"completed", "delayed", "pending"}, h.jobStatuses(t, "t-read"))

		msg := h.feedItems(t, "reader")[0]["_id"].(string)
		res := h.call(t, dev, "POST", markPath("reader"), map[string]any{"messageId": msg, "markAs": "read"}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)

		clock.Advance(time.Hour + time.Second)
		drain(t, eng)
		require.Equal(t, []string{"completed", "completed", "skipped"}, h.jobStatuses(t, "t-read"), "read in time: no e-mail")
		require.Equal(t, []string{"completed", "completed", "completed"}, h.jobStatuses(t, "t-ignore"))
		got := f.Received()
		require.Len(t, got, 1)
		require.Equal(t, []string{"ignorer@example.com"}, got[0].To)
		require.Equal(t, "Unread order", got[0].Subject)
	})
}

// TestThrottleStep: the first threshold executions in a window pass; past
// it the throttle job is skipped with Novu's detail and every later step
// with it; a new window opens when the last closes; the key groups.
func TestThrottleStep(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		h.createWorkflow(t, dev, map[string]any{"name": "Limited", "workflowId": "limited", "steps": []any{
			map[string]any{"name": "limit", "type": "throttle", "controlValues": map[string]any{"type": "fixed", "amount": 1, "unit": "hours",
				"threshold": 2, "throttleKey": "{{payload.orderId}}"}},
			map[string]any{"name": "inbox", "type": "in_app", "controlValues": map[string]any{"body": "order {{payload.orderId}}",
				"skip": map[string]any{"==": []any{map[string]any{"var": "steps.limit.throttled"}, false}}}},
		}})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "th"})
		clock := &testClock{t: time.Now().Add(time.Minute)}
		eng := h.deliveryEngine(clock)
		for i, order := range []string{"a", "a", "a", "b"} {
			tx := "th-" + order + string(rune('0'+i))
			h.trigger(t, dev, map[string]any{"name": "limited", "to": "th", "payload": map[string]any{"orderId": order}, "transactionId": tx})
			drain(t, eng)
		}
		require.Equal(t, []string{"completed", "completed"}, h.jobStatuses(t, "th-a0"))
		require.Equal(t, []string{"completed", "completed"}, h.jobStatuses(t, "th-a1"))
		require.Equal(t, []string{"skipped", "skipped"}, h.jobStatuses(t, "th-a2"), "past the threshold: throttled")
		require.Equal(t, []string{"completed", "completed"}, h.jobStatuses(t, "th-b3"), "another key, another window")
		jobs := h.jobsOf(t, "th-a2")
		details := objects(t, jobs[0]["executionDetails"])
		last := details[len(details)-1]
		require.Equal(t, "Throttle limit exceeded", last["detail"])
		require.Equal(t, "Success", last["status"])
		var raw map[string]any
		require.NoError(t, json.Unmarshal([]byte(last["raw"].(string)), &raw))
		require.EqualValues(t, 3, raw["executionCount"])
		require.EqualValues(t, 2, raw["threshold"])
		require.Len(t, h.feedItems(t, "th"), 3)

		clock.Advance(time.Hour + time.Second)
		h.trigger(t, dev, map[string]any{"name": "limited", "to": "th", "payload": map[string]any{"orderId": "a"}, "transactionId": "th-later"})
		drain(t, eng)
		require.Equal(t, []string{"completed", "completed"}, h.jobStatuses(t, "th-later"), "a new window")

		res := h.call(t, dev, "POST", "/v2/workflows", map[string]any{"name": "Bad", "workflowId": "bad-throttle", "steps": []any{
			map[string]any{"name": "limit", "type": "throttle", "controlValues": map[string]any{"type": "fixed", "amount": 0, "unit": "seconds", "threshold": 0.5}},
		}}, nil)
		requireError(t, res, http.StatusUnprocessableEntity, "POST", "/v2/workflows",
			"steps.0.controlValues.amount", "steps.0.controlValues.unit", "steps.0.controlValues.threshold")
	})
}

// TestHTTPRequestStep: the request is rendered, signed as Novu signs it
// with the environment's API key, and its response is what later steps'
// conditions and templates read; a failure stops the workflow (later steps
// canceled) unless continueOnFailure.
func TestHTTPRequestStep(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		var mu sync.Mutex
		var seen []*http.Request
		var bodies []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			seen, bodies = append(seen, r), append(bodies, string(b))
			mu.Unlock()
			if strings.HasSuffix(r.URL.Path, "/fail") {
				http.Error(w, `{"error":"down"}`, http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"tier":"gold","id":"` + r.URL.Query().Get("id") + `"}`))
		}))
		defer srv.Close()
		h.createWorkflow(t, dev, map[string]any{"name": "CRM", "workflowId": "crm", "steps": []any{
			map[string]any{"name": "crm", "type": "http_request", "controlValues": map[string]any{"method": "POST",
				"url": srv.URL + "/o?id={{payload.id}}", "headers": []any{map[string]any{"key": "X-Plan", "value": "{{subscriber.data.plan}}"}},
				"body": `{"id":"{{payload.id}}"}`, "responseBodySchema": map[string]any{"type": "object", "required": []any{"tier"}},
				"enforceSchemaValidation": true}},
			map[string]any{"name": "vip", "type": "in_app", "controlValues": map[string]any{"body": "tier {{steps.crm.tier}}",
				"skip": map[string]any{"==": []any{map[string]any{"var": "steps.crm.tier"}, "gold"}}}},
		}})
		h.createWorkflow(t, dev, map[string]any{"name": "Fails", "workflowId": "fails", "steps": []any{
			map[string]any{"name": "call", "type": "http_request", "controlValues": map[string]any{"method": "GET", "url": srv.URL + "/fail"}},
			map[string]any{"name": "inbox", "type": "in_app", "controlValues": map[string]any{"body": "after"}},
		}})
		h.createWorkflow(t, dev, map[string]any{"name": "Goes on", "workflowId": "goes-on", "steps": []any{
			map[string]any{"name": "call", "type": "http_request", "controlValues": map[string]any{"method": "GET", "url": srv.URL + "/fail",
				"continueOnFailure": true}},
			map[string]any{"name": "inbox", "type": "in_app", "controlValues": map[string]any{"body": "after"}},
		}})
		// The step preview renders the request as it would be sent, with
		// the earlier steps' outputs supposed by previewPayload.steps.
		res := h.call(t, dev, "POST", "/v2/workflows/crm/step/crm/preview", map[string]any{"previewPayload": map[string]any{
			"payload": map[string]any{"id": "o-9"}, "subscriber": map[string]any{"data": map[string]any{"plan": "team"}}}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		preview := res.Object(t)["result"].(map[string]any)["preview"].(map[string]any)
		require.Equal(t, srv.URL+"/o?id=o-9", preview["url"])
		require.Equal(t, `{"id":"o-9"}`, preview["body"])
		res = h.call(t, dev, "POST", "/v2/workflows/crm/step/vip/preview", map[string]any{"previewPayload": map[string]any{
			"steps": map[string]any{"crm": map[string]any{"tier": "silver"}}}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		require.Equal(t, "tier silver", res.Object(t)["result"].(map[string]any)["preview"].(map[string]any)["body"])
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "hs", "data": map[string]any{"plan": "pro"}})
		clock := &testClock{t: time.Now().Add(time.Minute)}
		eng := h.deliveryEngine(clock)
		h.trigger(t, dev, map[string]any{"name": "crm", "to": "hs", "payload": map[string]any{"id": "o-1"}, "transactionId": "h1"})
		h.trigger(t, dev, map[string]any{"name": "fails", "to": "hs", "transactionId": "h2"})
		h.trigger(t, dev, map[string]any{"name": "goes-on", "to": "hs", "transactionId": "h3"})
		drain(t, eng)

		require.Equal(t, []string{"completed", "completed"}, h.jobStatuses(t, "h1"))
		require.Equal(t, []string{"tier gold"}, func() []string {
			var out []string
			for _, it := range h.feedItems(t, "hs") {
				if strings.HasPrefix(it["content"].(string), "tier") {
					out = append(out, it["content"].(string))
				}
			}
			return out
		}())
		require.Equal(t, []string{"failed", "canceled"}, h.jobStatuses(t, "h2"))
		require.Equal(t, []string{"failed", "completed"}, h.jobStatuses(t, "h3"))
		failed := objects(t, h.jobsOf(t, "h2")[0]["executionDetails"])
		require.Contains(t, failed[len(failed)-1]["detail"], "500")

		mu.Lock()
		defer mu.Unlock()
		var crm *http.Request
		var crmBody string
		for i, r := range seen {
			if r.URL.Path == "/o" {
				crm, crmBody = r, bodies[i]
			}
		}
		require.NotNil(t, crm)
		require.Equal(t, "o-1", crm.URL.Query().Get("id"))
		require.Equal(t, "pro", crm.Header.Get("X-Plan"))
		require.JSONEq(t, `{"id":"o-1"}`, crmBody)
		require.Equal(t, "application/json", crm.Header.Get("Content-Type"))
		sig := crm.Header.Get("novu-signature")
		ts, v1, ok := strings.Cut(strings.TrimPrefix(sig, "t="), ",v1=")
		require.True(t, ok, sig)
		mac := hmac.New(sha256.New, []byte(h.DevKey))
		mac.Write([]byte(ts + "." + crmBody))
		require.Equal(t, hex.EncodeToString(mac.Sum(nil)), v1, "signed with the environment's API key")
	})
}
