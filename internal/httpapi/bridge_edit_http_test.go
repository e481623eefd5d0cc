package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSyncedWorkflowEdits: a synced workflow's settings and control values
// change through PUT /v2/workflows (its steps keep their bridge's control
// schema); its workflowId and steps are its code's, so a PUT changing them
// is a 400 that says so.
func TestSyncedWorkflowEdits(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		fb := newFakeBridge(t, h.DevKey)
		res := h.call(t, dev, "POST", "/v1/bridge/sync?source=cli", map[string]any{"bridgeUrl": fb.URL()}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		steps := []any{
			map[string]any{"name": "inbox", "stepId": "inbox", "type": "in_app", "controlValues": map[string]any{"subject": "Set here"}},
			map[string]any{"name": "follow-up", "stepId": "follow-up", "type": "email"},
			map[string]any{"name": "text", "stepId": "text", "type": "sms"},
		}
		res = h.call(t, dev, "PUT", "/v2/workflows/welcome", map[string]any{"name": "Welcome (renamed)", "steps": steps, "active": false}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		wf := res.Object(t)
		require.Equal(t, "Welcome (renamed)", wf["name"])
		inbox := objects(t, wf["steps"])[0]
		require.Equal(t, map[string]any{"subject": "Set here"}, inbox["controlValues"])
		require.Contains(t, inbox["controls"].(map[string]any), "dataSchema", "the bridge's schema is kept")

		res = h.call(t, dev, "PUT", "/v2/workflows/welcome", map[string]any{"name": "Welcome", "steps": steps[:2]}, nil)
		require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Raw)
		require.Contains(t, res.Object(t)["message"], "was synced from a bridge")
		res = h.call(t, dev, "PUT", "/v2/workflows/welcome", map[string]any{"name": "Welcome", "workflowId": "renamed", "steps": steps}, nil)
		require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Raw)
	})
}
