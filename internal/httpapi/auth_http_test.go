package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
)

// authRoutes is one request per authenticated route.
var authRoutes = []struct {
	method, url string
	body        any
}{
	{"POST", "/v2/subscribers", map[string]any{"subscriberId": "auth-x"}},
	{"GET", "/v2/subscribers", nil},
	{"GET", "/v2/subscribers/auth-x", nil},
	{"PATCH", "/v2/subscribers/auth-x", map[string]any{"firstName": "x"}},
	{"DELETE", "/v2/subscribers/auth-x", nil},
	{"PATCH", "/v1/subscribers/auth-x/credentials", map[string]any{"providerId": "fcm", "credentials": map[string]any{}}},
	{"PUT", "/v1/subscribers/auth-x/credentials", map[string]any{"providerId": "fcm", "credentials": map[string]any{}}},
	{"DELETE", "/v1/subscribers/auth-x/credentials/fcm", nil},
	{"POST", "/v1/integrations", map[string]any{"providerId": "sendgrid"}},
	{"GET", "/v1/integrations", nil},
	{"GET", "/v1/integrations/active", nil},
	{"PUT", "/v1/integrations/0123456789abcdef01234567", map[string]any{"name": "x"}},
	{"DELETE", "/v1/integrations/0123456789abcdef01234567", nil},
	{"POST", "/v1/integrations/0123456789abcdef01234567/set-primary", nil},
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		// A second development key, revoked.
		dev, err := h.DB.EnvironmentGetByName(ctx, "development")
		require.NoError(t, err)
		revokedKey := secret.NewAPIKey()
		rec := app.NewKeyRecord(dev.ID, revokedKey, time.Now())
		require.NoError(t, h.DB.APIKeyCreate(ctx, &rec))
		require.Equal(t, 200, h.call(t, "ApiKey "+revokedKey, "GET", "/v2/subscribers", nil, nil).Status, "the new key works before revocation")
		keys, err := h.DB.APIKeyList(ctx, dev.ID)
		require.NoError(t, err)
		revoked := false
		for _, k := range keys {
			if k.Hash == secret.HashAPIKey(revokedKey) {
				require.NoError(t, h.DB.APIKeyRevoke(ctx, &store.APIKeyRevokeParams{EnvironmentID: dev.ID, ID: k.ID, Now: time.Now()}))
				revoked = true
			}
		}
		require.True(t, revoked)

		owner, err := h.DB.MemberGetOwner(ctx, dev.OrganizationID)
		require.NoError(t, err)
		sign := func(k *secret.Keys, s secret.Session) string {
			tok, err := k.SignSession(s)
			require.NoError(t, err)
			return tok
		}
		valid := secret.Session{MemberID: owner.ID, OrganizationID: dev.OrganizationID, EnvironmentID: dev.ID, ExpiresAt: time.Now().Add(time.Hour)}
		expired := valid
		expired.ExpiresAt = time.Now().Add(-time.Minute)
		otherKeys, err := secret.Derive("another-secret-0123456789abcdef")
		require.NoError(t, err)
		wrongEnv := valid
		wrongEnv.EnvironmentID = "0123456789abcdef01234567"
		wrongOrg := valid
		wrongOrg.OrganizationID = "0123456789abcdef01234567"
		good := sign(h.Keys, valid)

		for _, c := range []struct{ name, auth string }{
			{"missing header", ""},
			{"unknown scheme", "Basic " + h.DevKey},
			{"key without scheme", h.DevKey},
			{"ApiKey without key", "ApiKey"},
			{"ApiKey with blank key", "ApiKey    "},
			{"unknown key", "ApiKey hk_0000000000000000000000000000000000000000000000000000000000000000"},
			{"key with a suffix", "ApiKey " + h.DevKey + "x"},
			{"revoked key", "ApiKey " + revokedKey},
			{"key as Bearer", "Bearer " + h.DevKey},
			{"forged Bearer", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"},
			{"Bearer garbage", "Bearer not-a-token"},
			{"expired Bearer", "Bearer " + sign(h.Keys, expired)},
			{"Bearer of another secret", "Bearer " + sign(otherKeys, valid)},
			{"Bearer of an unknown environment", "Bearer " + sign(h.Keys, wrongEnv)},
			{"Bearer of another organization", "Bearer " + sign(h.Keys, wrongOrg)},
			{"Bearer without signature", "Bearer " + strings.Join(strings.Split(good, ".")[:2], ".") + "."},
			{"session token as ApiKey", "ApiKey " + good},
		} {
			t.Run(c.name, func(t *testing.T) {
				for _, rt := range authRoutes {
					res := h.call(t, c.auth, rt.method, rt.url, rt.body, nil)
					requireError(t, res, 401, rt.method, rt.url)
				}
			})
		}

		t.Run("valid credentials", func(t *testing.T) {
			for _, auth := range []string{"ApiKey " + h.DevKey, "apikey " + h.DevKey, "Bearer " + good, "ApiKey " + h.ProdKey} {
				res := h.call(t, auth, "GET", "/v2/subscribers", nil, nil)
				require.Equal(t, 200, res.Status, "%s: %s", auth, res.Raw)
			}
		})

		t.Run("public routes need no key", func(t *testing.T) {
			require.Equal(t, 200, h.call(t, "", "GET", "/health", nil, nil).Status)
			require.Equal(t, 200, h.call(t, "", "GET", "/openapi.json", nil, nil).Status)
		})

		t.Run("a 401 leaves no trace", func(t *testing.T) {
			res := h.call(t, "ApiKey "+revokedKey, "POST", "/v2/subscribers", map[string]any{"subscriberId": "sneaky"}, nil)
			require.Equal(t, 401, res.Status)
			require.Equal(t, 404, h.call(t, "ApiKey "+h.DevKey, "GET", "/v2/subscribers/sneaky", nil, nil).Status)
		})
	})
}

// TestIntegrationCredentialsVisibility: an API-key caller never receives the
// `credentials` key from any integration endpoint; a Bearer caller receives
// them decrypted (docs/api-behaviour.md, "Authentication and idempotency keys").
func TestIntegrationCredentialsVisibility(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		key, session := h.authFor(asDev), h.authFor(asSession)
		creds := map[string]any{"apiKey": "SG.top-secret", "from": "noreply@example.com", "domain": "mg.example.com", "accountSid": "AC-vis", "token": "tw-top-secret", "secure": true, "tlsOptions": map[string]any{"ca": "pem"}}

		noCredentials := func(t *testing.T, res response) {
			t.Helper()
			require.NotContains(t, string(res.Raw), `"credentials"`)
			require.NotContains(t, string(res.Raw), "top-secret")
		}
		withCredentials := func(t *testing.T, it map[string]any, want map[string]any) {
			t.Helper()
			require.Contains(t, it, "credentials")
			require.Equal(t, want, it["credentials"])
		}

		// API key: every integration endpoint.
		res := h.call(t, key, "POST", "/v1/integrations", withRequiredCredentials(map[string]any{"providerId": "sendgrid", "identifier": "k-mail", "active": true, "credentials": creds}), nil)
		require.Equal(t, 201, res.Status, "%s", res.Raw)
		noCredentials(t, res)
		keyID := res.Object(t)["_id"].(string)
		res = h.call(t, key, "POST", "/v1/integrations", map[string]any{"providerId": "mailgun", "identifier": "k-spare", "credentials": creds}, nil)
		require.Equal(t, 201, res.Status, "%s", res.Raw)
		spareID := res.Object(t)["_id"].(string)
		for _, rt := range []struct {
			method, url string
			body        any
		}{
			{"GET", "/v1/integrations", nil},
			{"GET", "/v1/integrations/active", nil},
			{"PUT", "/v1/integrations/" + keyID, map[string]any{"name": "Renamed", "credentials": creds}},
			{"POST", "/v1/integrations/" + spareID + "/set-primary", nil},
			{"DELETE", "/v1/integrations/" + spareID, nil},
		} {
			res := h.call(t, key, rt.method, rt.url, rt.body, nil)
			require.Equal(t, 200, res.Status, "%s %s: %s", rt.method, rt.url, res.Raw)
			noCredentials(t, res)
		}
		// Replays of an idempotent request answer the same to the same caller.
		idem := map[string]string{"Idempotency-Key": "vis-1"}
		for range 2 {
			res := h.call(t, key, "POST", "/v1/integrations", map[string]any{"providerId": "postmark", "credentials": creds}, idem)
			require.Equal(t, 201, res.Status)
			noCredentials(t, res)
		}

		// Bearer: decrypted, on every endpoint.
		res = h.call(t, session, "POST", "/v1/integrations", withRequiredCredentials(map[string]any{"providerId": "twilio", "identifier": "s-sms", "active": true, "credentials": creds}), nil)
		require.Equal(t, 201, res.Status, "%s", res.Raw)
		withCredentials(t, res.Object(t), creds)
		sessionID := res.Object(t)["_id"].(string)
		spareCreds := map[string]any{"accountSid": "MA-spare", "token": "plivo-secret", "from": "+15555550100"}
		res = h.call(t, session, "POST", "/v1/integrations", map[string]any{"providerId": "plivo", "identifier": "s-spare", "credentials": spareCreds}, nil)
		require.Equal(t, 201, res.Status, "%s", res.Raw)
		withCredentials(t, res.Object(t), spareCreds)
		sessionSpare := res.Object(t)["_id"].(string)

		for _, path := range []string{"/v1/integrations", "/v1/integrations/active"} {
			res := h.call(t, session, "GET", path, nil, nil)
			require.Equal(t, 200, res.Status)
			withCredentials(t, findIntegration(t, res, keyID), creds)
			withCredentials(t, findIntegration(t, res, sessionID), creds)
		}
		replaced := map[string]any{"accountSid": "AC-vis", "token": "new-secret", "from": "+15555550100"}
		res = h.call(t, session, "PUT", "/v1/integrations/"+sessionID, map[string]any{"credentials": replaced}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		withCredentials(t, res.Object(t), replaced)
		res = h.call(t, session, "POST", "/v1/integrations/"+sessionSpare+"/set-primary", nil, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		require.Contains(t, res.Object(t), "credentials")
		res = h.call(t, session, "DELETE", "/v1/integrations/"+sessionSpare, nil, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		withCredentials(t, findIntegration(t, res, sessionID), replaced)

		// And the API key still sees none of them.
		res = h.call(t, key, "GET", "/v1/integrations", nil, nil)
		noCredentials(t, res)
		require.NotContains(t, string(res.Raw), "new-secret")

		// Credentials are not stored in the clear.
		var stored string
		require.NoError(t, h.DB.Reader().QueryRow("SELECT credentials FROM integrations WHERE id = $1", keyID).Scan(&stored))
		require.NotEmpty(t, stored)
		require.NotContains(t, stored, "top-secret")
	})
}
