package httpapi_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLogsHoldNoSecrets drives every kind of request that carries a secret —
// API keys, Bearer tokens, subscriber channel credentials, integration
// credentials — through success and failure, then checks the server log
// contains none of them.
func TestLogsHoldNoSecrets(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod, session := h.authFor(asDev), h.authFor(asProd), h.authFor(asSession)
		const (
			integrationSecret = "SG.integration-secret-value"
			deviceToken       = "device-token-secret-value"
			webhook           = "https://hooks.example/webhook-secret-value"
			unknownKey        = "hk_unknown-key-secret-value"
			badBearer         = "bad-bearer-secret-value"
		)
		creds := map[string]any{"apiKey": integrationSecret, "password": integrationSecret}
		fcm := h.createIntegration(t, dev, map[string]any{"providerId": "fcm", "active": true, "credentials": creds})
		h.createIntegration(t, session, map[string]any{"providerId": "slack", "active": true, "credentials": creds})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "logged"})

		for _, c := range []struct {
			auth, method, url string
			body              any
		}{
			{dev, "PATCH", credPath("logged"), map[string]any{"providerId": "fcm", "credentials": map[string]any{"deviceTokens": []string{deviceToken}}}},
			{dev, "PATCH", credPath("logged"), map[string]any{"providerId": "slack", "credentials": map[string]any{"webhookUrl": webhook}}},
			{dev, "PUT", credPath("logged"), map[string]any{"providerId": "fcm", "credentials": map[string]any{"deviceTokens": []string{deviceToken, ""}}}},
			{dev, "PATCH", credPath("nobody"), map[string]any{"providerId": "fcm", "credentials": map[string]any{"deviceTokens": []string{deviceToken}}}},
			{dev, "PATCH", credPath("logged"), `{"providerId":"fcm","credentials":{"deviceTokens":["` + deviceToken + `"]`},
			{dev, "PATCH", credPath("logged"), map[string]any{"providerId": "expo", "credentials": map[string]any{"webhookUrl": webhook}}},
			{prod, "PATCH", credPath("logged"), map[string]any{"providerId": "fcm", "credentials": map[string]any{"deviceTokens": []string{deviceToken}}}},
			{session, "GET", "/v1/integrations", nil},
			{session, "GET", "/v1/integrations/active", nil},
			{session, "PUT", "/v1/integrations/" + fcm["_id"].(string), map[string]any{"credentials": creds}},
			{dev, "POST", "/v1/integrations", map[string]any{"providerId": "sendgrid", "credentials": map[string]any{"apiKey": integrationSecret, "bogus": integrationSecret}}},
			{dev, "POST", "/v1/integrations", `{"providerId":"sendgrid","credentials":{"apiKey":"` + integrationSecret + `"`},
			{"ApiKey " + unknownKey, "GET", "/v2/subscribers", nil},
			{"Bearer " + badBearer, "GET", "/v1/integrations", nil},
			{"Basic " + unknownKey, "GET", "/v2/subscribers", nil},
			{dev, "GET", "/v2/subscribers?email=" + deviceToken, nil},
		} {
			h.call(t, c.auth, c.method, c.url, c.body, map[string]string{"Idempotency-Key": "log-" + c.method + c.url})
		}

		logs := logsOf(t)
		require.NotEmpty(t, logs, "the access log is written")
		require.Contains(t, logs, "/v1/subscribers/logged/credentials", "the access log names the path")
		for _, secret := range []string{
			h.DevKey, h.ProdKey, strings.TrimPrefix(session, "Bearer "), integrationSecret, deviceToken, webhook,
			unknownKey, badBearer,
		} {
			require.NotContains(t, logs, secret)
		}
	})
}
