package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

func subscriptionPath(key, identifier string) string {
	return "/v2/topics/" + url.PathEscape(key) + "/subscriptions/" + url.PathEscape(identifier)
}

func TestTopicSubscriptionGetPatchHTTP(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.authFor(asDev), h.authFor(asProd)
		for _, sid := range []string{"ada", "bob"} {
			h.createSubscriber(t, dev, map[string]any{"subscriberId": sid, "firstName": sid})
		}
		alerts := h.createWorkflow(t, dev, map[string]any{"name": "Alerts", "workflowId": "alerts", "tags": []string{"ops"},
			"critical": true, "severity": "high", "steps": []any{map[string]any{"name": "In", "type": "in_app", "controlValues": map[string]any{"body": "x"}}}})
		h.createWorkflow(t, dev, map[string]any{"name": "Weekly", "workflowId": "weekly", "tags": []string{"ops", "digest"},
			"steps": []any{map[string]any{"name": "In", "type": "in_app", "controlValues": map[string]any{"body": "x"}}}})

		// A subscription made without identifier is shown with the default one, which names it.
		res := h.call(t, dev, "POST", "/v2/topics/team:ops/subscriptions", map[string]any{"subscriptions": []any{"ada",
			map[string]any{"subscriberId": "bob", "identifier": "bob-phone"}}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		data := objects(t, res.Object(t)["data"])
		require.Equal(t, "tk_team:ops:si_ada", data[0]["identifier"])
		require.Equal(t, "bob-phone", data[1]["identifier"])
		listed := objects(t, h.call(t, dev, "GET", "/v2/topics/team:ops/subscriptions?orderDirection=ASC", nil, nil).Object(t)["data"])
		require.Equal(t, "tk_team:ops:si_ada", listed[0]["identifier"])
		// Sending the default identifier back names the same subscription.
		res = h.call(t, dev, "POST", "/v2/topics/team:ops/subscriptions", map[string]any{"subscriptions": []any{
			map[string]any{"subscriberId": "ada", "identifier": "tk_team:ops:si_ada"}}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		require.Equal(t, data[0]["_id"], objects(t, res.Object(t)["data"])[0]["_id"])

		plain := subscriptionPath("team:ops", "tk_team:ops:si_ada")
		res = h.call(t, dev, "GET", plain, nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, map[string]any{"id": data[0]["_id"], "identifier": "tk_team:ops:si_ada", "preferences": []any{}}, res.Object(t))

		res = h.call(t, dev, "PATCH", plain, map[string]any{"name": "Ada at work", "preferences": []any{
			map[string]any{"workflowId": "alerts", "enabled": false, "condition": map[string]any{"==": []any{map[string]any{"var": "payload.tier"}, "gold"}}},
			map[string]any{"filter": map[string]any{"tags": []string{"ops"}}},
			"no-such-workflow",
		}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		upd := res.Object(t)
		require.Equal(t, data[0]["_id"], upd["_id"])
		require.Equal(t, "Ada at work", upd["name"])
		require.Equal(t, "team:ops", upd["topic"].(map[string]any)["key"])
		require.Equal(t, "ada", upd["subscriber"].(map[string]any)["subscriberId"])
		prefs := objects(t, upd["preferences"])
		require.Len(t, prefs, 2, "the unknown workflow adds nothing")
		require.Equal(t, map[string]any{"subscriptionId": "tk_team:ops:si_ada", "enabled": false,
			"condition": map[string]any{"==": []any{map[string]any{"var": "payload.tier"}, "gold"}},
			"workflow": map[string]any{"id": alerts["_id"], "identifier": "alerts", "name": "Alerts", "critical": true,
				"tags": []any{"ops"}, "severity": "high"}}, prefs[0])
		require.Equal(t, "weekly", prefs[1]["workflow"].(map[string]any)["identifier"])
		require.Equal(t, true, prefs[1]["enabled"])

		got := h.call(t, dev, "GET", plain, nil, nil).Object(t)
		require.Equal(t, "Ada at work", got["name"])
		require.Equal(t, upd["preferences"], got["preferences"])

		// An empty update changes nothing; null clears the name; [] clears the preferences.
		res = h.call(t, dev, "PATCH", plain, map[string]any{}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, upd["preferences"], res.Object(t)["preferences"])
		res = h.call(t, dev, "PATCH", plain, map[string]any{"name": nil, "preferences": []any{}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.NotContains(t, res.Object(t), "name")
		require.Empty(t, res.Object(t)["preferences"])

		res = h.call(t, dev, "PATCH", subscriptionPath("team:ops", "bob-phone"), map[string]any{"preferences": []string{"alerts"}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, "bob-phone", objects(t, res.Object(t)["preferences"])[0]["subscriptionId"])

		for _, c := range []struct {
			name, auth, method, path string
			body                     any
			status                   int
		}{
			{"unknown identifier", dev, "GET", subscriptionPath("team:ops", "nope"), nil, 404},
			{"not a member", dev, "GET", subscriptionPath("team:ops", "tk_team:ops:si_eve"), nil, 404},
			{"another topic's default identifier", dev, "GET", subscriptionPath("team:ops", "tk_other:si_ada"), nil, 404},
			{"unknown topic", dev, "PATCH", subscriptionPath("nope", "bob-phone"), map[string]any{"name": "x"}, 404},
			{"another environment", prod, "GET", plain, nil, 404},
			{"bad topic key", dev, "GET", subscriptionPath("bad key", "x"), nil, 422},
			{"preferences not an array", dev, "PATCH", plain, map[string]any{"preferences": "alerts"}, 422},
			{"a preference without workflowId or filter", dev, "PATCH", plain, map[string]any{"preferences": []any{map[string]any{"enabled": true}}}, 422},
			{"enabled not a boolean", dev, "PATCH", plain, map[string]any{"preferences": []any{map[string]any{"workflowId": "a", "enabled": "no"}}}, 422},
			{"condition not an object", dev, "PATCH", plain, map[string]any{"preferences": []any{map[string]any{"workflowId": "a", "condition": 1}}}, 422},
			{"an empty workflowId", dev, "PATCH", plain, map[string]any{"preferences": []any{""}}, 422},
			{"name not a string", dev, "PATCH", plain, map[string]any{"name": 1}, 422},
			{"no body", dev, "PATCH", plain, nil, 400},
		} {
			res := h.call(t, c.auth, c.method, c.path, c.body, nil)
			require.Equal(t, c.status, res.Status, "%s: %s", c.name, res.Raw)
		}

		// A custom identifier two subscribers share names no one subscription.
		h.call(t, dev, "POST", "/v2/topics/team:ops/subscriptions", map[string]any{"subscriptions": []any{
			map[string]any{"subscriberId": "ada", "identifier": "bob-phone"}}}, nil)
		require.Equal(t, http.StatusConflict, h.call(t, dev, "GET", subscriptionPath("team:ops", "bob-phone"), nil, nil).Status)
	})
}
