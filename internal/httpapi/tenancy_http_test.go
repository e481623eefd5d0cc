package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTenancy proves that the production environment's key cannot read,
// change, delete or even detect the development environment's subscribers,
// credentials and integrations on any endpoint: every attempt answers as if
// the data were absent, and the development data is unchanged afterwards.
//
// The integration lists (GET /v1/integrations and /v1/integrations/active)
// are organization-wide by design — the established API returns "all active
// integrations created in the organization" (docs/api-behaviour.md,
// "Integrations") — so they are the one place
// where the production key sees development integrations; it never sees
// their credentials, and it cannot change them.
func TestTenancy(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.authFor(asDev), h.authFor(asProd)
		devPush := h.createIntegration(t, dev, map[string]any{"providerId": "fcm", "identifier": "dev-push", "active": true,
			"credentials": map[string]any{"apiKey": "dev-secret"}})
		devChat := h.createIntegration(t, dev, map[string]any{"providerId": "slack", "identifier": "dev-chat"})
		const sid = "tenant|ada/1"
		h.createSubscriber(t, dev, map[string]any{"subscriberId": sid, "firstName": "Ada", "email": "ada@dev.example"})
		res := h.call(t, dev, "PATCH", credPath(sid), map[string]any{"providerId": "fcm", "credentials": map[string]any{"deviceTokens": []string{"dev-token"}}}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)

		devSnapshot := func() (string, string) {
			sub := h.call(t, dev, "GET", subPath(sid), nil, nil)
			require.Equal(t, 200, sub.Status)
			ins := h.call(t, h.authFor(asSession), "GET", "/v1/integrations", nil, nil)
			require.Equal(t, 200, ins.Status)
			return string(sub.Raw), string(ins.Raw)
		}
		subBefore, insBefore := devSnapshot()

		pushID, chatID := devPush["_id"].(string), devChat["_id"].(string)
		fcm := map[string]any{"providerId": "fcm", "credentials": map[string]any{"deviceTokens": []string{"prod-token"}}}
		for _, c := range []struct {
			name, method, url string
			body              any
		}{
			{"get the subscriber", "GET", subPath(sid), nil},
			{"patch the subscriber", "PATCH", subPath(sid), map[string]any{"firstName": "Mallory"}},
			{"delete the subscriber", "DELETE", subPath(sid), nil},
			{"append credentials", "PATCH", credPath(sid), fcm},
			{"replace credentials", "PUT", credPath(sid), fcm},
			{"delete credentials", "DELETE", credPath(sid) + "/fcm", nil},
			{"update an integration", "PUT", "/v1/integrations/" + pushID, map[string]any{"name": "Mallory", "active": false}},
			{"update an inactive integration", "PUT", "/v1/integrations/" + chatID, map[string]any{"active": true}},
			{"set an integration primary", "POST", "/v1/integrations/" + chatID + "/set-primary", nil},
			{"delete an integration", "DELETE", "/v1/integrations/" + pushID, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				res := h.call(t, prod, c.method, c.url, c.body, nil)
				requireError(t, res, http.StatusNotFound, c.method, c.url)
				// Exactly the answer for data that exists nowhere.
				absent := h.call(t, prod, c.method, replaceTarget(c.url, sid, pushID, chatID), c.body, nil)
				require.Equal(t, absent.Status, res.Status)
				require.Equal(t, stripVolatile(t, absent, sid, pushID, chatID), stripVolatile(t, res, sid, pushID, chatID))
			})
		}

		t.Run("search does not see it", func(t *testing.T) {
			for _, q := range []string{"subscriberId=tenant%7Cada%2F1", "email=ada%40dev", "name=Ada", ""} {
				res := h.call(t, prod, "GET", "/v2/subscribers?"+q, nil, nil)
				require.Equal(t, 200, res.Status)
				require.Equal(t, map[string]any{"data": []any{}, "next": nil, "previous": nil, "totalCount": float64(0), "totalCountCapped": false},
					res.Object(t), "query %q", q)
			}
		})

		t.Run("a cursor of the other environment finds nothing", func(t *testing.T) {
			h.createSubscriber(t, dev, map[string]any{"subscriberId": "tenant-2"})
			page := h.call(t, dev, "GET", "/v2/subscribers?limit=1", nil, nil).Object(t)
			res := h.call(t, prod, "GET", "/v2/subscribers?limit=1&after="+page["next"].(string), nil, nil)
			require.Equal(t, 200, res.Status)
			require.Empty(t, res.Object(t)["data"])
			require.EqualValues(t, 0, res.Object(t)["totalCount"])
		})

		t.Run("credentials cannot attach to its integrations", func(t *testing.T) {
			h.createSubscriber(t, prod, map[string]any{"subscriberId": "prod-only"})
			res := h.call(t, prod, "PATCH", credPath("prod-only"), fcm, nil)
			requireError(t, res, 422, "PATCH", credPath("prod-only"), "providerId")
			body := map[string]any{"providerId": "fcm", "integrationIdentifier": "dev-push", "credentials": map[string]any{}}
			res = h.call(t, prod, "PATCH", credPath("prod-only"), body, nil)
			requireError(t, res, 422, "PATCH", credPath("prod-only"), "integrationIdentifier")
		})

		t.Run("creating does not detect it", func(t *testing.T) {
			// failIfExists does not see the other environment's subscriber.
			res := h.call(t, prod, "POST", "/v2/subscribers?failIfExists=true", map[string]any{"subscriberId": sid, "firstName": "Prod"}, nil)
			require.Equal(t, 201, res.Status, "%s", res.Raw)
			prodSub := res.Object(t)
			require.Equal(t, "Prod", prodSub["firstName"])
			require.Nil(t, prodSub["email"])
			require.Empty(t, prodSub["channels"])
			require.NotEqual(t, prodSub["_environmentId"], devPush["_environmentId"])
			// Integration identifiers are per environment.
			res = h.call(t, prod, "POST", "/v1/integrations", map[string]any{"providerId": "fcm", "identifier": "dev-push"}, nil)
			require.Equal(t, 201, res.Status, "%s", res.Raw)
			// Each key reads its own.
			require.Equal(t, "Prod", h.call(t, prod, "GET", subPath(sid), nil, nil).Object(t)["firstName"])
			require.Equal(t, "Ada", h.call(t, dev, "GET", subPath(sid), nil, nil).Object(t)["firstName"])
			// And deleting the production one leaves the development one.
			require.Equal(t, 200, h.call(t, prod, "DELETE", subPath(sid), nil, nil).Status)
		})

		t.Run("integration lists are organization-wide, without credentials", func(t *testing.T) {
			for _, path := range []string{"/v1/integrations", "/v1/integrations/active"} {
				res := h.call(t, prod, "GET", path, nil, nil)
				require.Equal(t, 200, res.Status)
				require.NotContains(t, string(res.Raw), "dev-secret")
				require.NotContains(t, string(res.Raw), `"credentials"`)
				require.NotNil(t, findIntegration(t, res, pushID), "the API contract: all active integrations of the organization")
			}
			// A production DELETE answers with the production environment's integrations only.
			prodIn := h.createIntegration(t, prod, map[string]any{"providerId": "sendgrid"})
			res := h.call(t, prod, "DELETE", "/v1/integrations/"+prodIn["_id"].(string), nil, nil)
			require.Equal(t, 200, res.Status)
			require.Nil(t, findIntegration(t, res, pushID))
			require.Nil(t, findIntegration(t, res, chatID))
		})

		subAfter, insAfter := devSnapshot()
		require.JSONEq(t, subBefore, subAfter, "the development subscriber is unchanged")
		require.JSONEq(t, insBefore, withoutEnvironment(t, insAfter, insBefore), "the development integrations are unchanged")
		require.Equal(t, []string{"dev-token"}, deviceTokens(t, h.getSubscriber(t, sid), "fcm"))
	})
}

// replaceTarget swaps the development identifiers of a path for ones that
// exist nowhere.
func replaceTarget(target, sid string, ids ...string) string {
	for _, id := range ids {
		target = strings.ReplaceAll(target, id, "0123456789abcdef01234567")
	}
	return strings.ReplaceAll(target, subPath(sid)[len("/v2/subscribers/"):], "nobody-at-all")
}

// stripVolatile drops what differs between two 404s for different ids: the
// time, the path and the id named in the message.
func stripVolatile(t testing.TB, res response, sid string, ids ...string) map[string]any {
	body := res.Object(t)
	delete(body, "timestamp")
	delete(body, "path")
	msg := body["message"].(string)
	for _, id := range ids {
		msg = strings.ReplaceAll(msg, id, "ID")
	}
	msg = strings.ReplaceAll(msg, "0123456789abcdef01234567", "ID")
	msg = strings.ReplaceAll(msg, sid, "SID")
	body["message"] = strings.ReplaceAll(msg, "nobody-at-all", "SID")
	return body
}

// withoutEnvironment keeps, of the integrations in after, those whose ids
// were in before (the production environment created some in between).
func withoutEnvironment(t testing.TB, after, before string) string {
	a := response{Raw: []byte(after)}
	b := response{Raw: []byte(before)}
	keep := map[string]bool{}
	for _, id := range integrationIDs(t, b) {
		keep[id] = true
	}
	var out []any
	for _, it := range a.Array(t) {
		if keep[it.(map[string]any)["_id"].(string)] {
			out = append(out, it)
		}
	}
	return mustJSON(t, out)
}
