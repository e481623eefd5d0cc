package httpapi_test

import (
	"encoding/base64"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const webhookEndpointsPath = "/v2/webhooks/endpoints"

// createWebhookEndpoint creates an endpoint as the given caller.
func (h *harness) createWebhookEndpoint(t testing.TB, auth string, body map[string]any) map[string]any {
	t.Helper()
	res := h.call(t, auth, "POST", webhookEndpointsPath, body, nil)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	return res.Object(t)
}

// requireSecret checks a secret's shape: whsec_ and standard base64 of 24
// to 64 bytes.
func requireSecret(t *testing.T, v any) string {
	t.Helper()
	s, ok := v.(string)
	require.True(t, ok, "%v", v)
	require.True(t, strings.HasPrefix(s, "whsec_"), s)
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
	require.NoError(t, err, s)
	require.GreaterOrEqual(t, len(key), 24)
	require.LessOrEqual(t, len(key), 64)
	return s
}

// TestWebhookEndpointsAPI: the endpoints' routes, their shapes and 422s,
// the masked list, rotation, deletion, and another environment's
// endpoint, which is a 404 on every route.
func TestWebhookEndpointsAPI(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.authFor(asDev), h.authFor(asProd)
		first := h.createWebhookEndpoint(t, dev, map[string]any{"url": "https://hooks.example.com/herald"})
		require.ElementsMatch(t, []string{"id", "url", "eventTypes", "description", "disabled", "secret", "createdAt", "updatedAt"},
			slices.Collect(maps.Keys(first)))
		require.Regexp(t, `^[0-9a-f]{24}$`, first["id"])
		require.Equal(t, "https://hooks.example.com/herald", first["url"])
		require.Equal(t, []any{}, first["eventTypes"], "omitted: every type")
		require.Equal(t, "", first["description"])
		require.Equal(t, false, first["disabled"])
		secret := requireSecret(t, first["secret"])
		require.Equal(t, first["createdAt"], first["updatedAt"])
		second := h.createWebhookEndpoint(t, dev, map[string]any{"url": "http://93.184.216.34:8080/h?x=1",
			"eventTypes": []string{"message.read", "workflow.created", "message.read"}, "description": "Ops"})
		require.Equal(t, []any{"message.read", "workflow.created"}, second["eventTypes"])
		require.Equal(t, "Ops", second["description"])
		require.NotEqual(t, secret, second["secret"], "one secret per endpoint")
		empty := h.createWebhookEndpoint(t, dev, map[string]any{"url": "https://a.example.com/", "eventTypes": []any{}, "description": nil})
		require.Equal(t, []any{}, empty["eventTypes"])

		// The secret is sealed at rest, in the endpoint and in a stored
		// idempotent answer alike; the replay shows it.
		var stored string
		require.NoError(t, h.DB.Reader().QueryRow("SELECT secret FROM webhook_endpoints WHERE id = $1", first["id"]).Scan(&stored))
		require.NotContains(t, stored, strings.TrimPrefix(secret, "whsec_"))
		idem := map[string]string{"idempotency-key": "wh-create"}
		once := h.call(t, dev, "POST", webhookEndpointsPath, map[string]any{"url": "https://idem.example.com/h"}, idem)
		require.Equal(t, http.StatusCreated, once.Status, "%s", once.Raw)
		again := h.call(t, dev, "POST", webhookEndpointsPath, map[string]any{"url": "https://idem.example.com/h"}, idem)
		require.Equal(t, "true", again.Header.Get("Idempotency-Replay"))
		require.Equal(t, once.Object(t), again.Object(t))
		idemSecret := strings.TrimPrefix(once.Object(t)["secret"].(string), "whsec_")
		var kept []byte
		require.NoError(t, h.DB.Reader().QueryRow("SELECT body FROM idempotency_keys WHERE idem_key = 'wh-create'").Scan(&kept))
		require.True(t, strings.HasPrefix(string(kept), "sealed:"), "%.40q", kept)
		require.NotContains(t, string(kept), idemSecret)
		require.Equal(t, http.StatusNoContent, h.call(t, dev, "DELETE", webhookEndpointsPath+"/"+once.Object(t)["id"].(string), nil, nil).Status)

		for _, tc := range []struct {
			name  string
			body  any
			field string
		}{
			{"no url", map[string]any{}, "url"},
			{"null url", map[string]any{"url": nil}, "url"},
			{"url not a string", map[string]any{"url": 42}, "url"},
			{"relative url", map[string]any{"url": "/hooks"}, "url"},
			{"ftp url", map[string]any{"url": "ftp://hooks.example.com/x"}, "url"},
			{"localhost", map[string]any{"url": "http://localhost:3000/hooks"}, "url"},
			{"loopback", map[string]any{"url": "http://127.0.0.1/hooks"}, "url"},
			{"private", map[string]any{"url": "https://10.0.0.8/hooks"}, "url"},
			{"link-local", map[string]any{"url": "http://169.254.169.254/latest"}, "url"},
			{"ipv6 loopback", map[string]any{"url": "http://[::1]/hooks"}, "url"},
			{"eventTypes not an array", map[string]any{"url": "https://h.example.com", "eventTypes": "message.sent"}, "eventTypes"},
			{"eventTypes null", map[string]any{"url": "https://h.example.com", "eventTypes": nil}, "eventTypes"},
			{"eventTypes of numbers", map[string]any{"url": "https://h.example.com", "eventTypes": []any{1}}, "eventTypes"},
			{"unknown event type", map[string]any{"url": "https://h.example.com", "eventTypes": []any{"message.sent", "message.exploded"}},
				"eventTypes"},
			{"description not a string", map[string]any{"url": "https://h.example.com", "description": 7}, "description"},
			{"long description", map[string]any{"url": "https://h.example.com", "description": strings.Repeat("d", 1025)}, "description"},
		} {
			res := h.call(t, dev, "POST", webhookEndpointsPath, tc.body, nil)
			require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s: %s", tc.name, res.Raw)
			require.Contains(t, res.Object(t)["errors"], tc.field, "%s: %s", tc.name, res.Raw)
		}

		// The list: oldest first, never a secret.
		res := h.call(t, dev, "GET", webhookEndpointsPath, nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		list := objects(t, res.JSON(t))
		require.Len(t, list, 3)
		require.Equal(t, []any{first["id"], second["id"], empty["id"]}, []any{list[0]["id"], list[1]["id"], list[2]["id"]})
		for _, e := range list {
			require.Equal(t, "whsec_••••••••", e["secret"])
		}
		require.NotContains(t, string(res.Raw), strings.TrimPrefix(secret, "whsec_"))
		res = h.call(t, prod, "GET", webhookEndpointsPath, nil, nil)
		require.Equal(t, http.StatusOK, res.Status)
		require.Empty(t, res.Array(t), "per environment")

		// One endpoint, with its secret.
		path := webhookEndpointsPath + "/" + first["id"].(string)
		res = h.call(t, dev, "GET", path, nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, first, res.Object(t))

		// PATCH: the fields sent change.
		res = h.call(t, dev, "PATCH", path, map[string]any{"url": "https://hooks.example.com/v2", "eventTypes": []string{"message.sent"},
			"description": "New", "disabled": true}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		patched := res.Object(t)
		require.Equal(t, "https://hooks.example.com/v2", patched["url"])
		require.Equal(t, []any{"message.sent"}, patched["eventTypes"])
		require.Equal(t, "New", patched["description"])
		require.Equal(t, true, patched["disabled"])
		require.Equal(t, secret, patched["secret"])
		require.Equal(t, first["createdAt"], patched["createdAt"])
		res = h.call(t, dev, "PATCH", path, map[string]any{"disabled": false, "eventTypes": []any{}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, false, res.Object(t)["disabled"])
		require.Equal(t, []any{}, res.Object(t)["eventTypes"])
		require.Equal(t, "https://hooks.example.com/v2", res.Object(t)["url"], "left as it was")
		for field, bad := range map[string]any{"url": "http://192.168.1.1/x", "eventTypes": map[string]any{}, "disabled": "yes",
			"description": []any{}} {
			res = h.call(t, dev, "PATCH", path, map[string]any{field: bad}, nil)
			require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s: %s", field, res.Raw)
			require.Contains(t, res.Object(t)["errors"], field, "%s", res.Raw)
		}
		res = h.call(t, dev, "PATCH", path, "[1]", nil)
		require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Raw)

		// Rotation: a new secret, shown in full.
		res = h.call(t, dev, "POST", path+"/rotate-secret", nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		rotated := requireSecret(t, res.Object(t)["secret"])
		require.NotEqual(t, secret, rotated)
		require.Equal(t, rotated, h.call(t, dev, "GET", path, nil, nil).Object(t)["secret"])

		res = h.call(t, dev, "GET", path+"/deliveries", nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Empty(t, res.Array(t))

		// Another environment's endpoint is a 404 on every route; so is
		// an unknown one; a malformed id is a 422.
		for _, auth := range []string{prod, dev} {
			target := path
			if auth == dev {
				target = webhookEndpointsPath + "/0123456789abcdef01234567"
			}
			for _, rq := range [][2]string{{"GET", ""}, {"PATCH", ""}, {"DELETE", ""}, {"POST", "/rotate-secret"}, {"GET", "/deliveries"}} {
				var body any
				if rq[0] == "PATCH" {
					body = map[string]any{"description": "x"}
				}
				res := h.call(t, auth, rq[0], target+rq[1], body, nil)
				require.Equal(t, http.StatusNotFound, res.Status, "%s %s%s: %s", rq[0], target, rq[1], res.Raw)
			}
		}
		res = h.call(t, dev, "GET", webhookEndpointsPath+"/not-an-id", nil, nil)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Raw)
		require.Equal(t, "Ops", h.call(t, dev, "GET", webhookEndpointsPath+"/"+second["id"].(string), nil, nil).Object(t)["description"],
			"unchanged by the other environment")

		// Deleted: 404 everywhere.
		res = h.call(t, dev, "DELETE", path, nil, nil)
		require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Raw)
		require.Empty(t, res.Raw)
		for _, rq := range [][2]string{{"GET", ""}, {"DELETE", ""}, {"POST", "/rotate-secret"}, {"GET", "/deliveries"}} {
			require.Equal(t, http.StatusNotFound, h.call(t, dev, rq[0], path+rq[1], nil, nil).Status, rq)
		}
		require.Len(t, h.call(t, dev, "GET", webhookEndpointsPath, nil, nil).Array(t), 2)
	})
}

// webhookSweepFixtures makes what the bad-input sweep's webhook routes name.
func webhookSweepFixtures(t *testing.T, h *harness, vars map[string]string) {
	t.Helper()
	dev := h.authFor(asDev)
	vars["webhookEndpoint"] = h.createWebhookEndpoint(t, dev, map[string]any{"url": "https://hooks.example.com/sw"})["id"].(string)
	vars["doomedWebhookEndpoint"] = h.createWebhookEndpoint(t, dev, map[string]any{"url": "https://hooks.example.com/doomed",
		"eventTypes": []string{"message.sent"}})["id"].(string)
}
