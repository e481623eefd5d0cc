package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
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

// TestBridgeWorkflowNotRunLocally: until Herald executes bridge steps, a
// trigger of a synced workflow fails its steps with a detail that says so
// and sends nothing (its content lives in the app).
func TestBridgeWorkflowNotRunLocally(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		fb := newFakeBridge(t, h.DevKey)
		res := h.call(t, dev, "POST", "/v1/bridge/sync?source=cli", map[string]any{"bridgeUrl": fb.URL()}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "code", "email": "code@example.com"})
		h.trigger(t, dev, map[string]any{"name": "welcome", "to": "code", "payload": map[string]any{"name": "Ada"}, "transactionId": "bw"})
		drain(t, h.newEngine(engine.Options{}))
		jobs := h.jobsOf(t, "bw")
		require.Equal(t, "failed", jobs[0]["status"])
		require.Contains(t, lastDetailOf(t, jobs[0])["detail"], "does not execute bridge steps yet")
		require.Empty(t, h.feedItems(t, "code"), "no message")
	})
}
