package dashboard_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWebhookEndpointsForwarded: the Webhooks page's calls reach the public
// API's /v2/webhooks/endpoints routes through the dashboard, in the
// environment the path names: the event types to choose from, create (the
// secret shown), list (masked), patch, rotate, deliveries, delete; another
// environment's endpoint is a 404.
func TestWebhookEndpointsForwarded(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f *fixture) {
		tok := f.signIn()
		const dev = "/dashboard/api/env/development/v2/webhooks/endpoints"
		type endpoint struct {
			ID          string   `json:"id"`
			URL         string   `json:"url"`
			EventTypes  []string `json:"eventTypes"`
			Description string   `json:"description"`
			Disabled    bool     `json:"disabled"`
			Secret      string   `json:"secret"`
		}
		call := func(method, path, body string, status int) []byte {
			t.Helper()
			rec := f.do(req{method: method, path: path, body: body, cookie: tok})
			require.Equal(t, status, rec.Code, rec.Body.String())
			return rec.Body.Bytes()
		}
		var types struct {
			Data []string `json:"data"`
		}
		require.NoError(t, json.Unmarshal(call("GET", "/dashboard/api/webhook-event-types", "", http.StatusOK), &types))
		require.Len(t, types.Data, 16)
		require.Equal(t, "message.sent", types.Data[0])
		require.Contains(t, types.Data, "preference.updated")

		var created endpoint
		require.NoError(t, json.Unmarshal(call("POST", dev, `{"url":"https://hooks.example.com/in","description":"Orders",`+
			`"eventTypes":["message.sent","message.failed"]}`, http.StatusCreated), &created))
		require.True(t, strings.HasPrefix(created.Secret, "whsec_"), created.Secret)
		require.Equal(t, []string{"message.sent", "message.failed"}, created.EventTypes)

		var list []endpoint
		require.NoError(t, json.Unmarshal(call("GET", dev, "", http.StatusOK), &list))
		require.Len(t, list, 1)
		require.Equal(t, "whsec_••••••••", list[0].Secret, "the list never shows a secret")
		require.Equal(t, "Orders", list[0].Description)

		var patched endpoint
		require.NoError(t, json.Unmarshal(call("PATCH", dev+"/"+created.ID, `{"disabled":true,"eventTypes":[]}`, http.StatusOK), &patched))
		require.True(t, patched.Disabled)
		require.Empty(t, patched.EventTypes)
		var rotated endpoint
		require.NoError(t, json.Unmarshal(call("POST", dev+"/"+created.ID+"/rotate-secret", "", http.StatusOK), &rotated))
		require.NotEqual(t, created.Secret, rotated.Secret)
		require.JSONEq(t, `[]`, string(call("GET", dev+"/"+created.ID+"/deliveries", "", http.StatusOK)))
		requireError(t, f.do(req{method: "POST", path: dev, body: `{"url":"ftp://x","eventTypes":["nope"]}`, cookie: tok}),
			http.StatusUnprocessableEntity)

		prod := "/dashboard/api/env/production/v2/webhooks/endpoints"
		require.JSONEq(t, `[]`, string(call("GET", prod, "", http.StatusOK)), "another environment's endpoints are its own")
		requireError(t, f.do(req{method: "GET", path: prod + "/" + created.ID + "/deliveries", cookie: tok}), http.StatusNotFound)
		requireError(t, f.do(req{method: "DELETE", path: prod + "/" + created.ID, cookie: tok}), http.StatusNotFound)

		call("DELETE", dev+"/"+created.ID, "", http.StatusNoContent)
		require.JSONEq(t, `[]`, string(call("GET", dev, "", http.StatusOK)))
		requireError(t, f.do(req{method: "GET", path: "/dashboard/api/webhook-event-types"}), http.StatusUnauthorized)
	})
}
