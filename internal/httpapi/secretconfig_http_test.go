package httpapi_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSecretConfigurationsVisibility: `configurations.inboundWebhookSigningKey`
// is kept like credentials: sealed at rest, shown only to session callers,
// absent (the field itself) from every answer to an API key, and not erased
// when an API-key caller sends back the configurations it was shown.
func TestSecretConfigurationsVisibility(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		key, session := h.authFor(asDev), h.authFor(asSession)
		const signing = "whsec_signing-key-secret-value"
		confs := map[string]any{"inboundWebhookEnabled": true, "inboundWebhookSigningKey": signing}
		hidden := func(t *testing.T, res response) {
			t.Helper()
			require.NotContains(t, string(res.Raw), signing)
			require.NotContains(t, string(res.Raw), "inboundWebhookSigningKey")
		}
		sessionConfs := func(t *testing.T, id string) any {
			t.Helper()
			res := h.call(t, session, "GET", "/v1/integrations", nil, nil)
			require.Equal(t, 200, res.Status)
			return findIntegration(t, res, id)["configurations"]
		}

		res := h.call(t, key, "POST", "/v1/integrations", withRequiredCredentials(map[string]any{"providerId": "twilio", "identifier": "sms-hook", "active": true,
			"configurations": confs}), idem("conf-1"))
		require.Equal(t, 201, res.Status, "%s", res.Raw)
		hidden(t, res)
		require.Equal(t, map[string]any{"inboundWebhookEnabled": true}, res.Object(t)["configurations"])
		id := res.Object(t)["_id"].(string)
		again := h.call(t, key, "POST", "/v1/integrations", withRequiredCredentials(map[string]any{"providerId": "twilio", "identifier": "sms-hook", "active": true,
			"configurations": confs}), idem("conf-1"))
		require.Equal(t, "true", again.Header.Get("Idempotency-Replay"))
		hidden(t, again)
		spare := h.createIntegration(t, key, map[string]any{"providerId": "plivo", "identifier": "sms-spare", "configurations": confs,
			"credentials": map[string]any{"accountSid": "MA-spare", "token": "plivo-spare-token", "from": "+15555550100"}})

		for _, rt := range []struct {
			method, url string
			body        any
		}{
			{"GET", "/v1/integrations", nil},
			{"GET", "/v1/integrations/active", nil},
			{"PUT", "/v1/integrations/" + id, map[string]any{"name": "Renamed"}},
			{"POST", "/v1/integrations/" + spare["_id"].(string) + "/set-primary", nil},
			{"DELETE", "/v1/integrations/" + spare["_id"].(string), nil},
		} {
			res := h.call(t, key, rt.method, rt.url, rt.body, nil)
			require.Equal(t, 200, res.Status, "%s %s: %s", rt.method, rt.url, res.Raw)
			hidden(t, res)
		}

		// A session sees it, on every endpoint's answer.
		require.Equal(t, confs, sessionConfs(t, id))
		res = h.call(t, session, "PUT", "/v1/integrations/"+id, map[string]any{"name": "By session"}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		require.Equal(t, confs, res.Object(t)["configurations"])

		// What an API key read and sends back keeps the secret; null removes it.
		res = h.call(t, key, "PUT", "/v1/integrations/"+id, map[string]any{"configurations": map[string]any{"inboundWebhookEnabled": false}}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		hidden(t, res)
		require.Equal(t, map[string]any{"inboundWebhookEnabled": false, "inboundWebhookSigningKey": signing}, sessionConfs(t, id))
		res = h.call(t, key, "PUT", "/v1/integrations/"+id, map[string]any{"configurations": map[string]any{"inboundWebhookSigningKey": "rotated-key"}}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		require.Equal(t, map[string]any{}, res.Object(t)["configurations"])
		require.Equal(t, map[string]any{"inboundWebhookSigningKey": "rotated-key"}, sessionConfs(t, id))
		res = h.call(t, key, "PUT", "/v1/integrations/"+id, map[string]any{"configurations": map[string]any{"inboundWebhookSigningKey": nil, "inboundWebhookEnabled": true}}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		require.Equal(t, map[string]any{"inboundWebhookEnabled": true}, sessionConfs(t, id))
		h.call(t, session, "PUT", "/v1/integrations/"+id, map[string]any{"configurations": confs}, nil)
		res = h.call(t, key, "PUT", "/v1/integrations/"+id, map[string]any{"configurations": nil}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		require.Equal(t, map[string]any{}, sessionConfs(t, id), "null clears every field")

		// Never at rest in the clear: not in the integration's public
		// column, not in any stored idempotent answer, not in the log.
		h.call(t, session, "PUT", "/v1/integrations/"+id, map[string]any{"configurations": confs}, idem("conf-2"))
		require.Equal(t, confs, sessionConfs(t, id))
		for _, q := range []string{"SELECT configurations || secret_configurations FROM integrations", "SELECT body FROM idempotency_keys WHERE body IS NOT NULL"} {
			rows, err := h.DB.Reader().Query(q)
			require.NoError(t, err)
			for rows.Next() {
				var b []byte
				require.NoError(t, rows.Scan(&b))
				require.NotContains(t, string(b), signing, q)
			}
			require.NoError(t, rows.Err())
			rows.Close()
		}
		require.NotContains(t, logsOf(t), signing)
	})
}
