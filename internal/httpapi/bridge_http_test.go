package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/bridge"
	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/netguard"
	"github.com/herald-notify/herald/internal/nodetest"
	"github.com/herald-notify/herald/internal/provider/email/sendgrid/sendgridfake"
)

// TestBridgeSync: POST /v1/bridge/sync (what `npx novu sync` sends) lists
// the bridge's workflows as the environment's, with their steps and control
// schemas; a re-sync keeps the control values set with PUT
// /v1/bridge/controls; a bridge that refuses Herald's signature or a
// workflowId made through the API is a 400 that says so and changes
// nothing; another environment sees none of it; GET /v1/bridge/status is
// the bridge's health check.
func TestBridgeSync(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		fb := newFakeBridge(t, h.DevKey)
		res := h.call(t, dev, "POST", "/v1/bridge/sync?source=cli", map[string]any{"bridgeUrl": fb.URL()}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		var ids []string
		for _, w := range objects(t, res.Object(t)["data"]) {
			ids = append(ids, w["workflowId"].(string))
			require.Len(t, w["_id"], 24)
		}
		require.Equal(t, []string{"welcome", "digest", "echo", "fails"}, ids)

		wf := h.call(t, dev, "GET", "/v2/workflows/welcome", nil, nil).Object(t)
		require.Equal(t, "BRIDGE", wf["type"], "a synced workflow is marked apart")
		require.Equal(t, "external", wf["origin"])
		var steps []string
		for _, s := range objects(t, wf["steps"]) {
			steps = append(steps, s["stepId"].(string)+":"+s["type"].(string))
		}
		require.Equal(t, []string{"inbox:in_app", "follow-up:email", "text:sms"}, steps)
		inbox := objects(t, wf["steps"])[0]
		schema := inbox["controls"].(map[string]any)["dataSchema"].(map[string]any)
		require.Equal(t, "object", schema["type"], "the step's control schema as the bridge declares it")

		res = h.call(t, dev, "PUT", "/v1/bridge/controls/welcome/inbox", map[string]any{"variables": map[string]any{"subject": "Hi {{payload.name}}"}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		res = h.call(t, dev, "POST", "/v1/bridge/sync?source=cli", map[string]any{"bridgeUrl": fb.URL()}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		again := h.call(t, dev, "GET", "/v2/workflows/welcome", nil, nil).Object(t)
		require.Equal(t, wf["_id"], again["_id"], "a re-sync keeps the workflow")
		require.Equal(t, map[string]any{"subject": "Hi {{payload.name}}"}, objects(t, again["steps"])[0]["controlValues"])

		status := h.call(t, dev, "GET", "/v1/bridge/status", nil, nil)
		require.Equal(t, http.StatusOK, status.Status, "%s", status.Raw)
		require.Equal(t, "ok", status.Object(t)["data"].(map[string]any)["status"])

		// Another secret: the framework's refusal, and nothing changes.
		other := newFakeBridge(t, "another-secret-key")
		res = h.call(t, dev, "POST", "/v1/bridge/sync?source=cli", map[string]any{"bridgeUrl": other.URL()}, nil)
		require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Raw)
		require.Contains(t, res.Object(t)["message"], "Signature does not match")
		require.Equal(t, http.StatusOK, h.call(t, dev, "GET", "/v1/bridge/status", nil, nil).Status, "the stored URL is kept")

		// A workflowId made through the API is never replaced.
		h.createWorkflow(t, h.authFor(asProd), map[string]any{"name": "Echo", "workflowId": "echo", "steps": []any{
			map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "x"}}}})
		made := h.call(t, h.authFor(asProd), "GET", "/v2/workflows/echo", nil, nil).Object(t)
		require.Equal(t, "REGULAR", made["type"], "a workflow made through the API")
		prodBridge := newFakeBridge(t, h.ProdKey)
		res = h.call(t, h.authFor(asProd), "POST", "/v1/bridge/sync?source=cli", map[string]any{"bridgeUrl": prodBridge.URL()}, nil)
		require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Raw)
		require.Equal(t, "Workflow echo was already created in Dashboard. Please use another workflowId.", res.Object(t)["message"])
		require.Equal(t, http.StatusNotFound, h.call(t, h.authFor(asProd), "GET", "/v2/workflows/welcome", nil, nil).Status,
			"nothing synced into production, and development's workflows are not production's")
		res = h.call(t, h.authFor(asProd), "GET", "/v1/bridge/status", nil, nil)
		require.Equal(t, http.StatusBadRequest, res.Status, "production has no bridge")

		// Controls of a workflow made through the API are not the bridge's.
		res = h.call(t, h.authFor(asProd), "PUT", "/v1/bridge/controls/echo/inbox", map[string]any{"variables": map[string]any{}}, nil)
		require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Raw)
		require.True(t, strings.Contains(res.Object(t)["message"].(string), "was not synced from a bridge"))

		// Without a key: 401, and the bridge is never called.
		before := fb.calls.Load()
		require.Equal(t, http.StatusUnauthorized, h.call(t, "", "POST", "/v1/bridge/sync", map[string]any{"bridgeUrl": fb.URL()}, nil).Status)
		require.Equal(t, before, fb.calls.Load())
	})
}

// bridgeEngine is an engine whose bridge client reaches loopback and waits
// a millisecond between attempts, and that may reach the local provider
// fakes, on clock.
func (h *harness) bridgeEngine(clock *testClock) *engine.Engine {
	return h.newEngine(engine.Options{Now: clock.Now, Delivery: engine.DeliveryOptions{AllowPrivateNetworks: true},
		Bridge: bridge.New(bridge.Options{Dialer: &netguard.Dialer{AllowPrivate: true},
			Backoff: func(int) time.Duration { return time.Millisecond }})})
}

// syncFakeBridge syncs a fake bridge into the development environment.
func (h *harness) syncFakeBridge(t *testing.T) *fakeBridge {
	t.Helper()
	fb := newFakeBridge(t, h.DevKey)
	res := h.call(t, h.authFor(asDev), "POST", "/v1/bridge/sync?source=cli", map[string]any{"bridgeUrl": fb.URL()}, nil)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	return fb
}

// stateOf is the state entries of an execute request by stepId, and their
// order.
func stateOf(t *testing.T, x fakeExecution) (map[string]map[string]any, []string) {
	t.Helper()
	out := map[string]map[string]any{}
	var order []string
	for _, s := range x.Body["state"].([]any) {
		m := s.(map[string]any)
		out[m["stepId"].(string)] = m
		order = append(order, m["stepId"].(string))
	}
	return out, order
}

// TestBridgeExecution: each step of a synced workflow runs in its bridge
// (signed over the exact bytes sent): the in-app message is the bridge's
// outputs, the e-mail goes out through SendGrid with the subject and HTML
// exactly as the bridge wrote them (and its provider overrides), each
// request carries the payload, the raw control values, the subscriber, the
// environment and the state of every earlier step as it is when the step
// runs (the in-app message read in between); options.skip skips a step.
func TestBridgeExecution(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		fb := h.syncFakeBridge(t)
		res := h.call(t, dev, "PUT", "/v1/bridge/controls/welcome/inbox", map[string]any{"variables": map[string]any{"subject": "Hi {{payload.name}}"}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		f := sendgridfake.New()
		defer f.Close()
		h.sendgridIntegration(t, f, "mail-main")
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "code", "firstName": "Ada", "email": "code@example.com",
			"data": map[string]any{"team": "core"}})
		clock := &testClock{t: time.Now().Add(time.Minute)}
		eng := h.bridgeEngine(clock)

		h.trigger(t, dev, map[string]any{"name": "welcome", "to": "code", "transactionId": "bx",
			"payload": map[string]any{"name": "Ada", "skip": "text"}})
		n, err := eng.RunOnce(context.Background())
		require.NoError(t, err)
		require.Equal(t, 1, n, "the in-app step alone")

		items := h.feedItems(t, "code")
		require.Len(t, items, 1)
		msg := items[0]
		require.Equal(t, "Hi Ada", msg["content"])
		require.Equal(t, "Welcome", msg["subject"])
		require.Equal(t, map[string]any{"plan": "free"}, msg["data"])
		cta := msg["cta"].(map[string]any)
		require.Equal(t, "redirect", cta["type"])
		require.Equal(t, map[string]any{"url": "https://x.test/home", "target": "_blank"}, cta["data"])
		buttons := objects(t, cta["action"].(map[string]any)["buttons"])
		require.Len(t, buttons, 1)
		require.Equal(t, "Open", buttons[0]["content"])
		require.Equal(t, "primary", buttons[0]["type"])

		inbox := fb.execution(t, "inbox")
		require.Equal(t, "welcome", inbox.WorkflowID)
		require.Equal(t, map[string]any{"name": "Ada", "skip": "text"}, inbox.Body["payload"])
		require.Equal(t, map[string]any{"subject": "Hi {{payload.name}}"}, inbox.Body["controls"], "the raw control values")
		require.Equal(t, []any{}, inbox.Body["state"])
		require.Equal(t, map[string]any{"subscriberId": "code", "firstName": "Ada", "email": "code@example.com",
			"data": map[string]any{"team": "core"}}, inbox.Body["subscriber"])
		require.Equal(t, map[string]any{"name": "development", "type": "dev"}, inbox.Body["env"])
		require.Equal(t, map[string]any{}, inbox.Body["context"])

		res = h.call(t, dev, "POST", markPath("code"), map[string]any{"messageId": msg["_id"], "markAs": "read"}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		drain(t, eng)

		got := f.Received()
		require.Len(t, got, 1)
		require.Equal(t, "Hello Ada", got[0].Subject)
		require.Equal(t, "<p>Hi <b>Ada</b> &amp; co; read: true</p>", got[0].HTML, "outputs.body exactly, no layout")
		require.Equal(t, []string{"code@example.com"}, got[0].To)
		require.Contains(t, string(got[0].Body), `"ip_pool_name":"bridge-pool"`, "the bridge's providers.sendgrid reach the request in SendGrid's casing")
		require.Contains(t, string(got[0].Body), `"custom_args":{"orderId":"o-1"}`, "_passthrough.body is laid over the request as written")

		follow := fb.execution(t, "follow-up")
		state, _ := stateOf(t, follow)
		in := state["inbox"]
		require.Equal(t, map[string]any{"status": "completed", "error": nil}, in["state"])
		outs := in["outputs"].(map[string]any)
		require.Equal(t, true, outs["read"], "the message's state when the e-mail step runs")
		require.Equal(t, true, outs["seen"])
		require.NotNil(t, outs["lastReadDate"])

		text := fb.execution(t, "text")
		state, order := stateOf(t, text)
		require.Equal(t, []string{"follow-up", "inbox"}, order, "every earlier step, newest first")
		require.Equal(t, map[string]any{}, state["follow-up"]["outputs"])

		jobs := h.jobsOf(t, "bx")
		require.Len(t, jobs, 3)
		require.Equal(t, []any{"completed", "completed", "skipped"}, []any{jobs[0]["status"], jobs[1]["status"], jobs[2]["status"]})
		skipped := lastDetailOf(t, jobs[2])
		require.Equal(t, "Success", skipped["status"])
		require.Equal(t, `{"skip":true}`, skipped["raw"])

		mails := objects(t, h.messages(t, url.Values{"channel": {"email"}, "transactionId": {"bx"}})["data"])
		require.Len(t, mails, 1)
		require.Equal(t, "<p>Hi <b>Ada</b> &amp; co; read: true</p>", mails[0]["content"])
	})
}

// TestBridgeExecutionFailures: a step whose bridge answers an error (after
// the client's retries, or at once for a framework error) fails with
// "Bridge execution failed" and the bridge's error as raw, sends nothing,
// and the later steps still run and see it failed.
func TestBridgeExecutionFailures(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		fb := h.syncFakeBridge(t)
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "code", "email": "code@example.com"})
		clock := &testClock{t: time.Now().Add(time.Minute)}
		eng := h.bridgeEngine(clock)

		h.trigger(t, dev, map[string]any{"name": "fails", "to": "code", "payload": map[string]any{}, "transactionId": "bf"})
		drain(t, eng)
		job := h.onlyJob(t, "bf")
		require.Equal(t, "failed", job["status"])
		d := lastDetailOf(t, job)
		require.Equal(t, "Failed", d["status"])
		require.Equal(t, "Bridge execution failed", d["detail"])
		var raw map[string]any
		require.NoError(t, json.Unmarshal([]byte(d["raw"].(string)), &raw))
		require.Equal(t, "Failed to execute Step with id: `boom`: the step blew up", raw["message"])
		require.Equal(t, "StepExecutionFailedError", raw["code"])
		require.Empty(t, h.feedItems(t, "code"), "no message")

		// A failing first step: the next runs, and sees it failed.
		h.trigger(t, dev, map[string]any{"name": "welcome", "to": "code", "transactionId": "bf2",
			"payload": map[string]any{"name": "Ada", "fail": "inbox", "skip": "text"}})
		drain(t, eng)
		jobs := h.jobsOf(t, "bf2")
		require.Equal(t, "failed", jobs[0]["status"])
		require.NotEqual(t, "pending", jobs[1]["status"], "the e-mail step ran")
		state, _ := stateOf(t, fb.execution(t, "follow-up"))
		require.Equal(t, map[string]any{"status": "failed", "error": nil}, state["inbox"]["state"])
		require.Equal(t, false, state["inbox"]["outputs"].(map[string]any)["read"])
		require.Empty(t, h.feedItems(t, "code"))

		// A bridge that is down: three attempts, then failed.
		fb.down.Store(http.StatusServiceUnavailable)
		before := len(fb.executions())
		calls := fb.calls.Load()
		h.trigger(t, dev, map[string]any{"name": "echo", "to": "code", "payload": map[string]any{}, "transactionId": "bf3"})
		drain(t, eng)
		require.Len(t, fb.executions(), before, "no request got through")
		require.Equal(t, calls+3, fb.calls.Load(), "the client's three attempts")
		job = h.onlyJob(t, "bf3")
		require.Equal(t, "failed", job["status"])
		d = lastDetailOf(t, job)
		require.Equal(t, "Bridge execution failed", d["detail"])
		require.Contains(t, d["raw"], "the bridge is down")
		require.Empty(t, h.feedItems(t, "code"))
	})
}

// TestBridgeDigestAndDelay: a synced digest step takes its window from the
// bridge's outputs {amount, unit}, merges the events that reach it inside
// the window, and a synced delay its wait; the step after them gets the
// digest's events and count in state, and the delay's duration.
func TestBridgeDigestAndDelay(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		fb := h.syncFakeBridge(t)
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "code"})
		clock := &testClock{t: time.Now().Add(time.Minute)}
		eng := h.bridgeEngine(clock)

		h.trigger(t, dev, map[string]any{"name": "digest", "to": "code", "payload": map[string]any{"n": 1}, "transactionId": "bd1"})
		h.trigger(t, dev, map[string]any{"name": "digest", "to": "code", "payload": map[string]any{"n": 2}, "transactionId": "bd2"})
		for range 3 {
			drain(t, eng)
			clock.Advance(2 * time.Second)
		}
		drain(t, eng)

		items := h.feedItems(t, "code")
		require.Len(t, items, 1, "one summary for both events")
		require.Equal(t, "2 events", items[0]["content"])
		summary := fb.execution(t, "summary")
		state, order := stateOf(t, summary)
		require.Equal(t, []string{"wait", "collect"}, order)
		digest := state["collect"]["outputs"].(map[string]any)
		require.EqualValues(t, 2, digest["eventCount"])
		events := objects(t, digest["events"])
		require.Equal(t, map[string]any{"n": float64(1)}, events[0]["payload"])
		require.NotEmpty(t, events[0]["id"])
		require.NotEmpty(t, events[0]["time"])
		// The milliseconds since the delay's job was created, when the summary
		// ran: at least the delay's second (the test clock runs ahead).
		waited := state["wait"]["outputs"].(map[string]any)["duration"].(float64)
		require.GreaterOrEqual(t, waited, 1000.0)
		require.Less(t, waited, float64(5*time.Minute/time.Millisecond))
		require.Equal(t, "merged", h.jobsOf(t, "bd2")[0]["status"])
	})
}

// TestBridgeFrameworkApp: the real @novu/framework app (clients/bridge-app)
// synced and run end to end: the in-app message is its Liquid rendered by
// the framework, the e-mail reads the in-app message's read state and is
// sent unread (skipped once read), a control value turns the SMS off, a
// payload without its required property and a step that throws fail with
// the framework's own messages.
func TestBridgeFrameworkApp(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		url0 := nodetest.StartBridgeApp(t, h.DevKey)
		res := h.call(t, dev, "POST", "/v1/bridge/sync?source=cli", map[string]any{"bridgeUrl": url0}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		res = h.call(t, dev, "PUT", "/v1/bridge/controls/welcome/text", map[string]any{"variables": map[string]any{"off": true}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		f := sendgridfake.New()
		defer f.Close()
		h.sendgridIntegration(t, f, "mail-main")
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "fw", "firstName": "Ada", "email": "fw@example.com"})
		clock := &testClock{t: time.Now().Add(time.Minute)}
		eng := h.bridgeEngine(clock)

		h.trigger(t, dev, map[string]any{"name": "welcome", "to": "fw", "payload": map[string]any{"name": "Ada"}, "transactionId": "fw1"})
		drain(t, eng)
		items := h.feedItems(t, "fw")
		require.Len(t, items, 1)
		require.Equal(t, "Welcome, Ada!", items[0]["subject"])
		require.Equal(t, "You are on the free plan.", items[0]["content"])
		require.Equal(t, map[string]any{"plan": "free"}, items[0]["data"])
		got := f.Received()
		require.Len(t, got, 1)
		require.Equal(t, "Still there, Ada?", got[0].Subject)
		require.Equal(t, "<p>Your welcome message is unread.</p>", got[0].HTML)
		jobs := h.jobsOf(t, "fw1")
		require.Equal(t, []any{"completed", "completed", "skipped"}, []any{jobs[0]["status"], jobs[1]["status"], jobs[2]["status"]})

		// Read before the e-mail step runs: the app skips it.
		h.trigger(t, dev, map[string]any{"name": "welcome", "to": "fw", "payload": map[string]any{"name": "Ada"}, "transactionId": "fw2"})
		_, err := eng.RunOnce(context.Background())
		require.NoError(t, err)
		items = h.feedItems(t, "fw")
		require.Len(t, items, 2)
		res = h.call(t, dev, "POST", markPath("fw"), map[string]any{"messageId": items[0]["_id"], "markAs": "read"}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		drain(t, eng)
		require.Len(t, f.Received(), 1, "no second e-mail")
		require.Equal(t, "skipped", h.jobsOf(t, "fw2")[1]["status"])

		h.trigger(t, dev, map[string]any{"name": "welcome", "to": "fw", "payload": map[string]any{}, "transactionId": "fw3"})
		h.trigger(t, dev, map[string]any{"name": "fails", "to": "fw", "payload": map[string]any{}, "transactionId": "fw4"})
		drain(t, eng)
		invalid := h.jobsOf(t, "fw3")[0]
		require.Equal(t, "failed", invalid["status"])
		require.Equal(t, "Bridge execution failed", lastDetailOf(t, invalid)["detail"])
		require.Contains(t, lastDetailOf(t, invalid)["raw"], "must have required property 'name'")
		boom := h.onlyJob(t, "fw4")
		require.Equal(t, "failed", boom["status"])
		require.Contains(t, lastDetailOf(t, boom)["raw"], "the step blew up")
		require.Len(t, h.feedItems(t, "fw"), 2, "no message from a failed step")
	})
}

// TestBridgeStepPreview: the step preview of a synced workflow is its
// bridge's preview of the step: the controls sent (else the stored ones)
// raw, previewPayload.payload and .subscriber, no state.
func TestBridgeStepPreview(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		fb := newFakeBridge(t, h.DevKey)
		res := h.call(t, dev, "POST", "/v1/bridge/sync?source=cli", map[string]any{"bridgeUrl": fb.URL()}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		res = h.call(t, dev, "POST", "/v2/workflows/welcome/step/inbox/preview", map[string]any{
			"controlValues":  map[string]any{"subject": "Preview {{payload.name}}"},
			"previewPayload": map[string]any{"payload": map[string]any{"name": "Ada"}, "subscriber": map[string]any{"subscriberId": "p1"}}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		result := res.Object(t)["result"].(map[string]any)
		require.Equal(t, "in_app", result["type"])
		require.NotEmpty(t, result["preview"], "the bridge's outputs")
		fb.mu.Lock()
		last := fb.executed[len(fb.executed)-1]
		fb.mu.Unlock()
		require.Equal(t, "welcome", last.WorkflowID)
		require.Equal(t, "inbox", last.StepID)
		require.Equal(t, map[string]any{"name": "Ada"}, last.Body["payload"])
		require.Equal(t, map[string]any{"subject": "Preview {{payload.name}}"}, last.Body["controls"], "raw: the bridge renders")
		require.Equal(t, []any{}, last.Body["state"])

		// A bridge that fails: a 400 that says why.
		fb.down.Store(http.StatusInternalServerError)
		res = h.call(t, dev, "POST", "/v2/workflows/welcome/step/inbox/preview", map[string]any{}, nil)
		require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Raw)
	})
}

// TestBridgeThatNeverAnswers: a bridge that never answers holds no worker
// beyond its bound: every attempt times out, the job fails with the
// timeout's code, and the engine is free again within the bound.
func TestBridgeThatNeverAnswers(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		fb := h.syncFakeBridge(t)
		fb.hang.Store(true)
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "hang", "email": "hang@example.com"})
		clock := &testClock{t: time.Now().Add(time.Minute)}
		eng := h.newEngine(engine.Options{Now: clock.Now, Delivery: engine.DeliveryOptions{AllowPrivateNetworks: true},
			Bridge: bridge.New(bridge.Options{Dialer: &netguard.Dialer{AllowPrivate: true}, Timeout: 200 * time.Millisecond,
				Attempts: 2, Backoff: func(int) time.Duration { return time.Millisecond }})})
		h.trigger(t, dev, map[string]any{"name": "echo", "to": "hang", "payload": map[string]any{"name": "Ada"}, "transactionId": "hang-1"})
		start := time.Now()
		drain(t, eng)
		require.Less(t, time.Since(start), 5*time.Second, "two 200 ms attempts, not the bridge's silence")
		jobs := h.jobsOf(t, "hang-1")
		require.Equal(t, "failed", jobs[0]["status"])
		d := lastDetailOf(t, jobs[0])
		require.Equal(t, "Bridge execution failed", d["detail"])
		require.Contains(t, d["raw"], "BRIDGE_REQUEST_TIMEOUT")
		require.Empty(t, h.feedItems(t, "hang"))
	})
}

// TestHostileBridge: a bridge that answers without end, too much, JSON of
// the wrong shape or a web page fails its step with the bridge's error
// code, sends nothing, and holds the worker no longer than its bounds.
func TestHostileBridge(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		fb := h.syncFakeBridge(t)
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "mal", "email": "mal@example.com"})
		clock := &testClock{t: time.Now().Add(time.Minute)}
		eng := h.newEngine(engine.Options{Now: clock.Now, Delivery: engine.DeliveryOptions{AllowPrivateNetworks: true},
			Bridge: bridge.New(bridge.Options{Dialer: &netguard.Dialer{AllowPrivate: true}, Timeout: 2 * time.Second,
				Attempts: 1})})
		for _, c := range []struct{ mode, code string }{
			{"endless", bridge.CodeTooLarge}, {"huge", bridge.CodeTooLarge},
			{"shape", bridge.CodeInvalidResponse}, {"html", bridge.CodeParse},
		} {
			mode := c.mode
			fb.hostile.Store(&mode)
			tx := "hostile-" + c.mode
			h.trigger(t, dev, map[string]any{"name": "echo", "to": "mal", "payload": map[string]any{"name": "Ada"}, "transactionId": tx})
			start := time.Now()
			drain(t, eng)
			require.Less(t, time.Since(start), 10*time.Second, "%s: the worker is held no longer than the bounds", c.mode)
			jobs := h.jobsOf(t, tx)
			require.Equal(t, "failed", jobs[0]["status"], c.mode)
			d := lastDetailOf(t, jobs[0])
			require.Equal(t, "Bridge execution failed", d["detail"], c.mode)
			require.Contains(t, d["raw"], c.code, c.mode)
			require.Less(t, len(d["raw"].(string)), 64<<10, "%s: the detail keeps a bounded part of the answer", c.mode)
		}
		require.Empty(t, h.feedItems(t, "mal"), "nothing was sent")
	})
}
