package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
)

// identifierOf is an environment's application identifier, as GET
// /v1/environments/me gives it to the environment's key.
func (h *harness) identifierOf(t testing.TB, auth string) string {
	t.Helper()
	res := h.call(t, auth, "GET", "/v1/environments/me", nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
	return res.Object(t)["identifier"].(string)
}

// session opens an inbox session without credentials, as the clients do.
func (h *harness) session(t testing.TB, body any) response {
	t.Helper()
	return h.call(t, "", "POST", "/v1/inbox/session", body, map[string]string{
		"Novu-API-Version": "2024-06-26", "Novu-Client-Version": "@novu/js@3.19.2", "Origin": "https://app.example.com"})
}

// sessionBody is what @novu/js sends for a subscriber.
func sessionBody(identifier, hash string, subscriber map[string]any) map[string]any {
	return map[string]any{"applicationIdentifier": identifier, "subscriberHash": hash, "subscriber": subscriber,
		"contextHash": nil, "defaultSchedule": nil, "context": nil}
}

// openSession opens a session that must succeed and returns its data.
func (h *harness) openSession(t testing.TB, identifier, key string, subscriber map[string]any) map[string]any {
	t.Helper()
	res := h.session(t, sessionBody(identifier, secret.SubscriberHash(key, subscriber["subscriberId"].(string)), subscriber))
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	require.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"))
	return res.Object(t)["data"].(map[string]any)
}

func (h *harness) subscriber(t testing.TB, auth, sid string) map[string]any {
	t.Helper()
	res := h.call(t, auth, "GET", "/v2/subscribers/"+url.PathEscape(sid), nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
	return res.Object(t)
}

// TestInboxSession: a session opens for a subscriber proven by its hash
// (created, then updated, by the session), answers a token and the unread
// counts; every way of getting the proof wrong is refused in the error
// shape, with CORS headers, and writes nothing.
func TestInboxSession(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.authFor(asDev), h.authFor(asProd)
		devID, prodID := h.identifierOf(t, dev), h.identifierOf(t, prod)
		require.NotEqual(t, devID, prodID)

		// Created with its attributes.
		data := h.openSession(t, devID, h.DevKey, map[string]any{"subscriberId": "u-1", "firstName": "Ada", "email": "ada@example.com",
			"timezone": "Europe/London", "data": map[string]any{"plan": "pro"}})
		require.NotEmpty(t, data["token"])
		require.Equal(t, float64(0), data["totalUnreadCount"])
		require.Equal(t, map[string]any{"total": float64(0), "severity": map[string]any{"high": float64(0), "medium": float64(0),
			"low": float64(0), "none": float64(0)}}, data["unreadCount"])
		require.Equal(t, true, data["removeNovuBranding"])
		require.Equal(t, true, data["isDevelopmentMode"])
		require.Equal(t, float64(2160), data["maxSnoozeDurationHours"])
		require.NotContains(t, data, "applicationIdentifier", "only keyless identifiers are returned")
		sub := h.subscriber(t, dev, "u-1")
		require.Equal(t, "Ada", sub["firstName"])
		require.Equal(t, "ada@example.com", sub["email"])
		require.Equal(t, "Europe/London", sub["timezone"])
		require.Equal(t, map[string]any{"plan": "pro"}, sub["data"])

		// Unread counts of an existing subscriber, updated by the session.
		h.createWorkflow(t, dev, plainWorkflow("welcome"))
		eng := h.newEngine(engine.Options{})
		for range 3 {
			h.trigger(t, dev, map[string]any{"name": "welcome", "to": "u-1"})
		}
		drain(t, eng)
		items := h.feedItems(t, "u-1")
		require.Len(t, items, 3)
		res := h.call(t, dev, "POST", markPath("u-1"), map[string]any{"messageId": items[0]["_id"], "markAs": "read"}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		data = h.openSession(t, devID, h.DevKey, map[string]any{"subscriberId": "u-1", "lastName": "Lovelace", "timezone": "Etc/Nowhere"})
		require.Equal(t, float64(2), data["totalUnreadCount"])
		require.Equal(t, float64(2), data["unreadCount"].(map[string]any)["total"])
		require.Equal(t, float64(2), data["unreadCount"].(map[string]any)["severity"].(map[string]any)["none"])

		// Unread means not read, not archived, not snoozed; by the workflow's severity.
		h.createWorkflow(t, dev, map[string]any{"name": "Alert", "workflowId": "alert", "severity": "high", "steps": []any{
			map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "!"}}}})
		h.trigger(t, dev, map[string]any{"name": "alert", "to": "u-1"})
		drain(t, eng)
		res = h.call(t, dev, "PATCH", "/v2/subscribers/u-1/notifications/"+items[1]["_id"].(string)+"/archive", nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		data = h.openSession(t, devID, h.DevKey, map[string]any{"subscriberId": "u-1"})
		require.Equal(t, float64(2), data["totalUnreadCount"], "one archived, one more of high severity")
		require.Equal(t, map[string]any{"high": float64(1), "medium": float64(0), "low": float64(0), "none": float64(1)},
			data["unreadCount"].(map[string]any)["severity"])
		sub = h.subscriber(t, dev, "u-1")
		require.Equal(t, "Lovelace", sub["lastName"])
		require.Equal(t, "Ada", sub["firstName"], "fields not sent are kept")
		require.Equal(t, "Europe/London", sub["timezone"], "an unknown timezone is left out, not refused")
		require.Equal(t, 1, h.count(t, "SELECT count(*) FROM subscribers WHERE subscriber_id = 'u-1'"))

		// The production environment: its own identifier, signed by its own key.
		data = h.openSession(t, prodID, h.ProdKey, map[string]any{"subscriberId": "u-1"})
		require.Equal(t, false, data["isDevelopmentMode"])
		require.Equal(t, float64(0), data["totalUnreadCount"], "another environment's subscriber")
		// Older clients send a bare subscriberId.
		res = h.session(t, map[string]any{"applicationIdentifier": devID, "subscriberId": "u-2", "subscriberHash": secret.SubscriberHash(h.DevKey, "u-2")})
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		h.subscriber(t, dev, "u-2")

		before := h.count(t, "SELECT count(*) FROM subscribers")
		for _, tc := range []struct {
			name   string
			body   any
			status int
			says   string
		}{
			{"missing hash", sessionBody(devID, "", map[string]any{"subscriberId": "u-9"}), 401, "subscriberHash is required"},
			{"null hash", map[string]any{"applicationIdentifier": devID, "subscriberHash": nil, "subscriber": map[string]any{"subscriberId": "u-9"}}, 401, "subscriberHash is required"},
			{"another subscriber's hash", sessionBody(devID, secret.SubscriberHash(h.DevKey, "u-1"), map[string]any{"subscriberId": "u-9"}), 401, "does not match"},
			{"signed by another environment's key", sessionBody(devID, secret.SubscriberHash(h.ProdKey, "u-9"), map[string]any{"subscriberId": "u-9"}), 401, "does not match"},
			{"signed by an unknown key", sessionBody(devID, secret.SubscriberHash("hk_guess", "u-9"), map[string]any{"subscriberId": "u-9"}), 401, "does not match"},
			{"hash of the subscriberId keyed by the identifier", sessionBody(devID, secret.SubscriberHash(devID, "u-9"), map[string]any{"subscriberId": "u-9"}), 401, "does not match"},
			{"truncated hash", sessionBody(devID, secret.SubscriberHash(h.DevKey, "u-9")[:40], map[string]any{"subscriberId": "u-9"}), 401, "does not match"},
			{"unknown identifier", sessionBody("app_00000000000000000000", secret.SubscriberHash(h.DevKey, "u-9"), map[string]any{"subscriberId": "u-9"}), 400, "valid application identifier"},
			{"keyless identifier", sessionBody("pk_keyless_abc", "", map[string]any{"subscriberId": "u-9"}), 400, "valid application identifier"},
			{"an environment id", sessionBody(h.envID(t, "development"), secret.SubscriberHash(h.DevKey, "u-9"), map[string]any{"subscriberId": "u-9"}), 400, "valid application identifier"},
			{"no identifier", map[string]any{"subscriber": map[string]any{"subscriberId": "u-9"}}, 422, "applicationIdentifier"},
			{"no subscriber", map[string]any{"applicationIdentifier": devID, "subscriberHash": "00"}, 422, "subscriber"},
			{"empty subscriberId", sessionBody(devID, secret.SubscriberHash(h.DevKey, ""), map[string]any{"subscriberId": ""}), 422, "subscriber.subscriberId"},
			{"subscriber not an object", map[string]any{"applicationIdentifier": devID, "subscriber": "u-9"}, 422, "subscriber"},
			{"bad e-mail", sessionBody(devID, secret.SubscriberHash(h.DevKey, "u-9"), map[string]any{"subscriberId": "u-9", "email": "nope"}), 422, "subscriber.email"},
			{"not JSON", `{"applicationIdentifier":`, 400, "not valid JSON"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res := h.session(t, tc.body)
				require.Equal(t, tc.status, res.Status, "%s", res.Raw)
				requireErrorShape(t, res, "POST", "/v1/inbox/session")
				require.Contains(t, string(res.Raw), tc.says)
				require.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"))
			})
		}
		require.Equal(t, before, h.count(t, "SELECT count(*) FROM subscribers"), "a refused session creates no subscriber")
	})
}

// envID is the _id of a named environment.
func (h *harness) envID(t testing.TB, name string) string {
	t.Helper()
	env, err := h.DB.EnvironmentGetByName(context.Background(), name)
	require.NoError(t, err)
	return env.ID
}

// TestInboxSessionKeys: any unrevoked key of the environment signs; a
// revoked one no longer does; a key created before the store kept copies
// (migration 0013) signs once an API call has presented it.
func TestInboxSessionKeys(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		devID := h.identifierOf(t, h.authFor(asDev))
		second := secret.NewAPIKey()
		rec := app.NewKeyRecord(h.envID(t, "development"), second, time.Now())
		require.NoError(t, h.DB.APIKeyCreate(ctx, &rec))
		body := func(key string) map[string]any {
			return sessionBody(devID, secret.SubscriberHash(key, "u-1"), map[string]any{"subscriberId": "u-1"})
		}
		for _, key := range []string{h.DevKey, second} {
			res := h.session(t, body(key))
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		}
		require.NoError(t, h.DB.APIKeyRevoke(ctx, &store.APIKeyRevokeParams{EnvironmentID: rec.EnvironmentID, ID: rec.ID, Now: time.Now()}))
		res := h.session(t, body(second))
		require.Equal(t, http.StatusUnauthorized, res.Status, "a revoked key no longer signs: %s", res.Raw)
		require.Equal(t, http.StatusCreated, h.session(t, body(h.DevKey)).Status)

		// The development key as a store written before migration 0013 has it.
		_, err := h.DB.Writer().ExecContext(ctx, "UPDATE api_keys SET sealed_key = '' WHERE hash = $1", secret.HashAPIKey(h.DevKey))
		require.NoError(t, err)
		res = h.session(t, body(h.DevKey))
		require.Equal(t, http.StatusUnauthorized, res.Status, "%s", res.Raw)
		require.Contains(t, string(res.Raw), "cannot be checked yet")
		require.Contains(t, logsOf(t), "no API key of the environment has an encrypted copy")
		h.identifierOf(t, h.authFor(asDev)) // any API call with the key
		res = h.session(t, body(h.DevKey))
		require.Equal(t, http.StatusCreated, res.Status, "the key signs once presented: %s", res.Raw)
		require.NotContains(t, rawSealedKey(t, h, h.DevKey), h.DevKey)
	})
}

func rawSealedKey(t testing.TB, h *harness, key string) string {
	t.Helper()
	var sealed string
	require.NoError(t, h.DB.Reader().QueryRow("SELECT sealed_key FROM api_keys WHERE hash = $1", secret.HashAPIKey(key)).Scan(&sealed))
	require.NotEmpty(t, sealed)
	return sealed
}

// TestInboxSessionHMACOff: an environment that turned the check off (local
// development) opens sessions without a hash — a wrong one is ignored — and
// only that environment; turned on again, the hash is required again.
func TestInboxSessionHMACOff(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		devID, prodID := h.identifierOf(t, h.authFor(asDev)), h.identifierOf(t, h.authFor(asProd))
		set := func(disabled bool) {
			_, err := h.DB.EnvironmentUpdate(ctx, &store.EnvironmentUpdateParams{ID: h.envID(t, "development"), InboxHMACDisabled: &disabled})
			require.NoError(t, err)
		}
		set(true)
		for _, hash := range []string{"", "0000", secret.SubscriberHash("hk_wrong", "u-1")} {
			res := h.session(t, sessionBody(devID, hash, map[string]any{"subscriberId": "u-1"}))
			require.Equal(t, http.StatusCreated, res.Status, "%q: %s", hash, res.Raw)
		}
		res := h.session(t, sessionBody(prodID, "", map[string]any{"subscriberId": "u-1"}))
		require.Equal(t, http.StatusUnauthorized, res.Status, "production still requires it: %s", res.Raw)
		set(false)
		res = h.session(t, sessionBody(devID, "", map[string]any{"subscriberId": "u-1"}))
		require.Equal(t, http.StatusUnauthorized, res.Status, "%s", res.Raw)
	})
}

// TestInboxSessionThrottled: wrong hashes and unknown identifiers spend the
// address's failed-authentication budget; past it even a right hash waits.
func TestInboxSessionThrottled(t *testing.T) {
	t.Parallel()
	forEachStoreWith(t, func(o *httpapi.Options) { o.AuthFailureLimit = 2 }, func(t *testing.T, h *harness) {
		devID := h.identifierOf(t, h.authFor(asDev))
		good := sessionBody(devID, secret.SubscriberHash(h.DevKey, "u-1"), map[string]any{"subscriberId": "u-1"})
		require.Equal(t, http.StatusCreated, h.session(t, good).Status)
		require.Equal(t, http.StatusUnauthorized, h.session(t, sessionBody(devID, "00", map[string]any{"subscriberId": "u-1"})).Status)
		require.Equal(t, http.StatusBadRequest, h.session(t, sessionBody("app_nope", "", map[string]any{"subscriberId": "u-1"})).Status)
		res := h.session(t, good)
		require.Equal(t, http.StatusTooManyRequests, res.Status, "%s", res.Raw)
		require.NotEmpty(t, res.Header.Get("Retry-After"))
		require.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"))
	})
}

// TestInboxSessionToken: an inbox token names one subscriber of one
// environment on the inbox routes, and nothing else: it is refused by the
// admin API, and API keys and dashboard tokens are refused by the inbox
// routes; it stops working when it expires or its subscriber is deleted.
func TestInboxSessionToken(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		server := h.Handler.(*httpapi.Server)
		server.HandleInboxForTest("GET /v1/inbox/whoami", func(w http.ResponseWriter, r *http.Request) error {
			scope, sub := httpapi.InboxCallerForTest(r)
			w.Header().Set("X-Env", scope.EnvironmentID)
			w.Header().Set("X-Subscriber", sub.ID+" "+sub.SubscriberID)
			w.WriteHeader(http.StatusNoContent)
			return nil
		})
		whoami := func(auth string) response {
			return h.serve(newRequest(t, auth, "GET", "/v1/inbox/whoami", nil, nil))
		}
		dev, prod := h.authFor(asDev), h.authFor(asProd)
		devID, prodID := h.identifierOf(t, dev), h.identifierOf(t, prod)
		tokens := map[string]string{}
		for _, tc := range []struct{ name, identifier, key, sid string }{
			{"dev u-1", devID, h.DevKey, "u-1"}, {"dev u-2", devID, h.DevKey, "u-2"}, {"prod u-1", prodID, h.ProdKey, "u-1"},
		} {
			tokens[tc.name] = h.openSession(t, tc.identifier, tc.key, map[string]any{"subscriberId": tc.sid})["token"].(string)
		}
		for _, tc := range []struct{ token, auth, env, sid string }{
			{"dev u-1", dev, "development", "u-1"}, {"dev u-2", dev, "development", "u-2"}, {"prod u-1", prod, "production", "u-1"},
		} {
			res := whoami("Bearer " + tokens[tc.token])
			require.Equal(t, http.StatusNoContent, res.Status, "%s: %s", tc.token, res.Raw)
			require.Equal(t, h.envID(t, tc.env), res.Header.Get("X-Env"), tc.token)
			require.Equal(t, h.subscriber(t, tc.auth, tc.sid)["_id"].(string)+" "+tc.sid, res.Header.Get("X-Subscriber"), tc.token)
			require.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"))
		}

		// The token is no API credential.
		for _, path := range []string{"/v2/subscribers", "/v1/environments/me", "/v2/subscribers/u-1", "/v1/integrations"} {
			res := h.call(t, "Bearer "+tokens["dev u-1"], "GET", path, nil, nil)
			require.Equal(t, http.StatusUnauthorized, res.Status, "%s: %s", path, res.Raw)
		}
		// And nothing else is an inbox session.
		sessionAuth := h.authFor(asSession)
		refused := map[string]string{"no credentials": "", "API key": dev, "API key as a Bearer token": "Bearer " + h.DevKey,
			"dashboard session": sessionAuth, "garbage": "Bearer x.y.z", "token as an API key": "ApiKey " + tokens["dev u-1"],
			"tampered": "Bearer " + tamper(tokens["dev u-1"], tokens["dev u-2"])}
		for name, auth := range refused {
			res := whoami(auth)
			require.Equal(t, http.StatusUnauthorized, res.Status, "%s: %s", name, res.Raw)
			requireErrorShape(t, res, "GET", "/v1/inbox/whoami")
			require.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"), name)
		}

		// Deleting the subscriber ends its sessions, also once the
		// subscriberId names a new subscriber.
		require.Equal(t, http.StatusOK, h.call(t, dev, "DELETE", "/v2/subscribers/u-2", nil, nil).Status)
		require.Equal(t, http.StatusUnauthorized, whoami("Bearer "+tokens["dev u-2"]).Status)
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "u-2"})
		require.Equal(t, http.StatusUnauthorized, whoami("Bearer "+tokens["dev u-2"]).Status)
		require.Equal(t, http.StatusNoContent, whoami("Bearer "+tokens["dev u-1"]).Status, "other sessions go on")
	})
}

// tamper returns a's header and signature around b's claims.
func tamper(a, b string) string {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	return pa[0] + "." + pb[1] + "." + pa[2]
}

// TestInboxSessionExpiry: a token is valid for the configured time.
func TestInboxSessionExpiry(t *testing.T) {
	t.Parallel()
	clock := &testClock{t: time.Now().Add(-2 * time.Hour)}
	forEachStoreWith(t, func(o *httpapi.Options) { o.InboxSessionTTL, o.Now = time.Hour, clock.Now }, func(t *testing.T, h *harness) {
		server := h.Handler.(*httpapi.Server)
		server.HandleInboxForTest("GET /v1/inbox/whoami", func(w http.ResponseWriter, _ *http.Request) error {
			w.WriteHeader(http.StatusNoContent)
			return nil
		})
		devID := h.identifierOf(t, h.authFor(asDev))
		expired := h.openSession(t, devID, h.DevKey, map[string]any{"subscriberId": "u-1"})["token"].(string) // made 2 h ago, for 1 h
		res := h.serve(newRequest(t, "Bearer "+expired, "GET", "/v1/inbox/whoami", nil, nil))
		require.Equal(t, http.StatusUnauthorized, res.Status, "%s", res.Raw)
		require.Contains(t, string(res.Raw), "expired")
	})
}

// TestEnvironments: GET /v1/environments/me is the caller's environment with
// its application identifier; GET /v1/environments the organization's.
func TestEnvironments(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		envs := map[string]map[string]any{}
		for _, tc := range []struct{ who, name, typ string }{
			{asDev, "development", "dev"}, {asProd, "production", "prod"}, {asSession, "development", "dev"},
		} {
			res := h.call(t, h.authFor(tc.who), "GET", "/v1/environments/me", nil, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			env := res.Object(t)
			require.Equal(t, h.envID(t, tc.name), env["_id"])
			require.Equal(t, tc.name, env["name"])
			require.Equal(t, tc.typ, env["type"])
			require.Regexp(t, `^app_[0-9a-f]{20}$`, env["identifier"])
			require.NotContains(t, string(res.Raw), h.DevKey)
			require.NotContains(t, string(res.Raw), h.ProdKey)
			envs[tc.name] = env
		}
		require.NotEqual(t, envs["development"]["identifier"], envs["production"]["identifier"])
		for _, who := range []string{asDev, asProd} {
			res := h.call(t, h.authFor(who), "GET", "/v1/environments", nil, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			require.Equal(t, []any{envs["development"], envs["production"]}, res.Array(t))
		}
		require.Equal(t, http.StatusUnauthorized, h.call(t, "", "GET", "/v1/environments/me", nil, nil).Status)
	})
}
