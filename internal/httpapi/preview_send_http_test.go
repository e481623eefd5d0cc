package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStepPreviewEnvAndContext: the step preview renders as a send would
// (engine.PreviewSend): {{env.KEY}} is the environment's variable, or the
// value sent in previewPayload.env; context.<type> comes from
// previewPayload.context.
func TestStepPreviewEnvAndContext(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		h.createWorkflow(t, dev, map[string]any{"name": "Env", "workflowId": "env-flow", "steps": []any{
			map[string]any{"name": "Sms", "stepId": "sms", "type": "sms", "controlValues": map[string]any{
				"body": "{{env.SUPPORT}} {{context.tenant.data.name}}"}}}})
		res := h.call(t, dev, "POST", envVarsPath, map[string]any{"key": "SUPPORT",
			"values": []any{map[string]any{"_environmentId": h.envID(t, "development"), "value": "help@example.com"}}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)

		res = h.call(t, dev, "POST", "/v2/workflows/env-flow/step/sms/preview", map[string]any{"previewPayload": map[string]any{
			"context": map[string]any{"tenant": map[string]any{"id": "acme", "data": map[string]any{"name": "Acme"}}}}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		require.Equal(t, map[string]any{"body": "help@example.com Acme"}, res.Object(t)["result"].(map[string]any)["preview"])

		res = h.call(t, dev, "POST", "/v2/workflows/env-flow/step/sms/preview", map[string]any{"previewPayload": map[string]any{
			"env": map[string]any{"SUPPORT": "sent"}}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		require.Equal(t, map[string]any{"body": "sent "}, res.Object(t)["result"].(map[string]any)["preview"])
	})
}
