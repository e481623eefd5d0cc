package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// environmentSweepFixtures adds what the environment routes of the sweep
// name: the development and production environments, and an environment to
// delete.
func environmentSweepFixtures(t *testing.T, h *harness, vars map[string]string) {
	vars["devEnv"], vars["prodEnv"] = h.envIDs(t)
	res := h.call(t, h.authFor(asDev), "POST", "/v1/environments", map[string]any{"name": "sw-doomed"}, nil)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	vars["doomedEnv"] = res.Object(t)["_id"].(string)
}

// environmentSweepRoutes are the environment and workflow-promotion routes
// of the sweep (the destructive one among sweepRoutes' last).
var environmentSweepRoutes = []sweepRoute{
	{pattern: "POST /v1/environments", body: `{"name":"sw-env-#N#","color":"#4f46e5","parentId":"{{devEnv}}"}`},
	{pattern: "PUT /v1/environments/{environmentId}", params: map[string]string{"environmentId": "{{devEnv}}"},
		body: `{"name":"development","identifier":"{{appIdentifier}}","color":"#123456","parentId":"{{prodEnv}}","dns":{},"bridge":{}}`},
	{pattern: "GET /v2/environments/{environmentId}/tags", params: map[string]string{"environmentId": "{{devEnv}}"}},
	{pattern: "POST /v2/environments/{targetEnvironmentId}/diff", params: map[string]string{"targetEnvironmentId": "{{prodEnv}}"},
		body: `{"sourceEnvironmentId":"{{devEnv}}"}`},
	{pattern: "POST /v2/environments/{targetEnvironmentId}/publish", params: map[string]string{"targetEnvironmentId": "{{prodEnv}}"},
		bodyEnums: []string{"resources.0.resourceType"},
		body:      `{"sourceEnvironmentId":"{{devEnv}}","dryRun":false,"resources":[{"resourceType":"workflow","resourceId":"sw-flow"}]}`},
	{pattern: "PATCH /v2/workflows/{workflowId}", params: map[string]string{"workflowId": "sw-flow"},
		body: `{"active":true,"name":"sw-flow","description":"d","tags":["t"],"payloadSchema":null,"validatePayload":false,"isTranslationEnabled":false}`},
	{pattern: "GET /v2/workflows/{workflowId}/steps/{stepId}", params: map[string]string{"workflowId": "sw-flow", "stepId": "inbox"}},
	{pattern: "POST /v2/workflows/{workflowId}/step/{stepId}/preview", params: map[string]string{"workflowId": "sw-flow", "stepId": "inbox"},
		body: `{"controlValues":{"body":"Hi {{subscriber.firstName}} {{payload.x}}"},` +
			`"previewPayload":{"subscriber":{"firstName":"Ada"},"payload":{"x":"y"},"steps":{},"context":{},"env":{}}}`},
	{pattern: "PUT /v2/workflows/{workflowId}/sync", params: map[string]string{"workflowId": "sw-flow"},
		body: `{"targetEnvironmentId":"{{prodEnv}}"}`},
}

// environmentSweepDestructive are the environment routes that delete.
var environmentSweepDestructive = []sweepRoute{
	{pattern: "DELETE /v1/environments/{environmentId}", params: map[string]string{"environmentId": "{{doomedEnv}}"}},
}

// The environment routes join the sweep after every other route: they need
// only fixtures no other route deletes, and the one that deletes comes last.
func init() {
	sweepRoutes = append(append(sweepRoutes, environmentSweepRoutes...), environmentSweepDestructive...)
}
