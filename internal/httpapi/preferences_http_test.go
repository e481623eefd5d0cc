package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// prefsPath is a subscriber's preferences path, with an optional suffix.
func prefsPath(subscriberID, suffix string) string {
	return "/v2/subscribers/" + url.PathEscape(subscriberID) + "/preferences" + suffix
}

// stepsOf are workflow steps of the given types.
func stepsOf(types ...string) []any {
	var out []any
	for i, typ := range types {
		ctl := map[string]any{"body": "Hello {{subscriber.firstName}}"}
		if typ == "email" || typ == "push" {
			ctl["subject"] = "Hi"
		}
		out = append(out, map[string]any{"name": fmt.Sprintf("%s %d", typ, i), "type": typ, "controlValues": ctl})
	}
	return out
}

// criticalPreferences make a workflow critical, as the established SDK
// sends them.
var criticalPreferences = map[string]any{"user": map[string]any{"all": map[string]any{"enabled": true, "readOnly": true},
	"channels": map[string]any{"in_app": map[string]any{"enabled": true}}}}

// workflowPrefs finds a workflow's entry in a preferences listing.
func workflowPrefs(t testing.TB, listing map[string]any, identifier string) map[string]any {
	t.Helper()
	for _, w := range objects(t, listing["workflows"]) {
		if w["workflow"].(map[string]any)["identifier"] == identifier {
			return w
		}
	}
	t.Fatalf("workflow %s not listed: %v", identifier, listing["workflows"])
	return nil
}

// identifiers are the workflows of a preferences listing.
func identifiers(t testing.TB, listing map[string]any) []string {
	t.Helper()
	var out []string
	for _, w := range objects(t, listing["workflows"]) {
		out = append(out, w["workflow"].(map[string]any)["identifier"].(string))
	}
	return out
}

func TestSubscriberPreferencesHTTP(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.authFor(asDev), h.authFor(asProd)
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "firstName": "Ada"})
		news := h.createWorkflow(t, dev, map[string]any{"name": "News", "workflowId": "news", "steps": stepsOf("in_app", "email", "delay")})
		h.createWorkflow(t, dev, map[string]any{"name": "Texts", "workflowId": "texts", "steps": stepsOf("sms")})
		alerts := h.createWorkflow(t, dev, map[string]any{"name": "Alerts", "workflowId": "alerts", "steps": stepsOf("push"),
			"preferences": criticalPreferences})
		require.Equal(t, true, alerts["critical"], "readOnly preferences make the workflow critical")
		require.Equal(t, true, alerts["preferences"].(map[string]any)["user"].(map[string]any)["all"].(map[string]any)["readOnly"])
		h.createWorkflow(t, dev, map[string]any{"name": "Off", "workflowId": "off", "active": false, "steps": stepsOf("chat")})

		get := func(query string) map[string]any {
			t.Helper()
			res := h.call(t, dev, "GET", prefsPath("ada", query), nil, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			return res.Object(t)
		}
		patch := func(body map[string]any) map[string]any {
			t.Helper()
			res := h.call(t, dev, "PATCH", prefsPath("ada", ""), body, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			return res.Object(t)
		}

		// Defaults: every channel of the active workflows' steps on, decided by the workflow.
		p := get("")
		require.Equal(t, map[string]any{"enabled": true, "channels": map[string]any{"in_app": true, "email": true, "sms": true, "push": true}},
			p["global"], "the channels of the active workflows, critical ones included")
		require.ElementsMatch(t, []string{"news", "texts"}, identifiers(t, p), "inactive and critical workflows are not listed")
		n := workflowPrefs(t, p, "news")
		require.Equal(t, map[string]any{"in_app": true, "email": true}, n["channels"], "the workflow's step channels")
		require.Equal(t, []any{map[string]any{"channel": "in_app", "source": "template"}, map[string]any{"channel": "email", "source": "template"}},
			n["overrides"])
		require.Equal(t, map[string]any{"slug": "news", "identifier": "news", "name": "News", "updatedAt": news["updatedAt"]}, n["workflow"])
		require.NotContains(t, n, "updatedAt", "the subscriber set nothing yet")
		require.Equal(t, []string{"alerts"}, identifiers(t, get("?criticality=critical")))
		require.ElementsMatch(t, []string{"news", "texts", "alerts"}, identifiers(t, get("?criticality=all")))
		require.ElementsMatch(t, []string{"news", "texts"}, identifiers(t, get("?criticality=nonCritical")))

		// Global off: every workflow's email follows, decided by the subscriber.
		p = patch(map[string]any{"channels": map[string]any{"email": false}})
		require.Equal(t, false, p["global"].(map[string]any)["channels"].(map[string]any)["email"])
		n = workflowPrefs(t, p, "news")
		require.Equal(t, map[string]any{"in_app": true, "email": false}, n["channels"])
		require.Contains(t, n["overrides"], map[string]any{"channel": "email", "source": "subscriber"})

		// The workflow's own choice beats the global one.
		p = patch(map[string]any{"channels": map[string]any{"email": true}, "workflowId": "news"})
		n = workflowPrefs(t, p, "news")
		require.Equal(t, map[string]any{"in_app": true, "email": true}, n["channels"])
		require.Contains(t, n, "updatedAt")
		require.Equal(t, false, p["global"].(map[string]any)["channels"].(map[string]any)["email"], "global unchanged")
		// By _id too, merged with what was set.
		p = patch(map[string]any{"channels": map[string]any{"in_app": false}, "workflowId": news["_id"]})
		require.Equal(t, map[string]any{"in_app": false, "email": true}, workflowPrefs(t, p, "news")["channels"])
		require.Equal(t, map[string]any{"in_app": false, "email": true}, workflowPrefs(t, get(""), "news")["channels"], "kept")

		// A later global choice of a channel clears the workflows' choices of it.
		p = patch(map[string]any{"channels": map[string]any{"email": false}})
		require.Equal(t, map[string]any{"in_app": false, "email": false}, workflowPrefs(t, p, "news")["channels"])

		// A channel the subscriber set globally is listed even when no step uses it.
		p = patch(map[string]any{"channels": map[string]any{"chat": false}, "workflowId": ""})
		require.Equal(t, false, p["global"].(map[string]any)["channels"].(map[string]any)["chat"])
		// No channels: nothing changes.
		require.Equal(t, p, patch(map[string]any{}))

		// Bulk: one item per workflow, in the order first named.
		res := h.call(t, dev, "PATCH", prefsPath("ada", "/bulk"), map[string]any{"preferences": []any{
			map[string]any{"workflowId": "texts", "channels": map[string]any{"sms": false}},
			map[string]any{"workflowId": "news", "channels": map[string]any{"in_app": true}},
			map[string]any{"workflowId": "texts", "channels": map[string]any{"sms": true, "push": false}},
		}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		items := objects(t, res.JSON(t))
		require.Len(t, items, 2)
		require.Equal(t, "template", items[0]["level"])
		require.Equal(t, true, items[0]["enabled"])
		require.Equal(t, map[string]any{"sms": true}, items[0]["channels"], "the items of one workflow apply in order")
		require.Equal(t, "texts", items[0]["workflow"].(map[string]any)["identifier"])
		require.Equal(t, false, items[0]["workflow"].(map[string]any)["critical"])
		require.Equal(t, "none", items[0]["workflow"].(map[string]any)["severity"])
		require.Equal(t, news["_id"], items[1]["workflow"].(map[string]any)["id"])
		require.Equal(t, map[string]any{"in_app": true, "email": false}, items[1]["channels"])
		require.Equal(t, map[string]any{"sms": true}, workflowPrefs(t, get(""), "texts")["channels"])

		// Another environment sees none of it.
		require.Equal(t, http.StatusNotFound, h.call(t, prod, "GET", prefsPath("ada", ""), nil, nil).Status)
		require.Equal(t, http.StatusNotFound, h.call(t, prod, "PATCH", prefsPath("ada", ""),
			map[string]any{"channels": map[string]any{"sms": false}}, nil).Status)
	})
}

func TestSubscriberPreferencesErrors(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada"})
		h.createWorkflow(t, dev, map[string]any{"name": "News", "workflowId": "news", "steps": stepsOf("in_app")})
		h.createWorkflow(t, dev, map[string]any{"name": "Alerts", "workflowId": "alerts", "steps": stepsOf("in_app"),
			"preferences": criticalPreferences})
		before := h.call(t, dev, "GET", prefsPath("ada", "?criticality=all"), nil, nil).Raw
		many := make([]any, 101)
		for i := range many {
			many[i] = map[string]any{"workflowId": "news", "channels": map[string]any{"in_app": false}}
		}
		bulk := func(items ...any) map[string]any { return map[string]any{"preferences": items} }
		item := func(wf string) map[string]any {
			return map[string]any{"workflowId": wf, "channels": map[string]any{"in_app": false}}
		}
		for _, tc := range []struct {
			name, method, path string
			body               any
			status             int
			field, message     string // an offending field of a 422; a fragment of the message
		}{
			{name: "list of an unknown subscriber", method: "GET", path: prefsPath("nobody", ""), status: 404, message: `"nobody"`},
			{name: "unknown criticality", method: "GET", path: prefsPath("ada", "?criticality=everything"), status: 422, field: "criticality"},
			{name: "update of an unknown subscriber", method: "PATCH", path: prefsPath("nobody", ""),
				body: map[string]any{"channels": map[string]any{"in_app": false}}, status: 404, message: `"nobody"`},
			{name: "unknown workflow", method: "PATCH", path: prefsPath("ada", ""),
				body: map[string]any{"channels": map[string]any{"in_app": false}, "workflowId": "ghost"}, status: 404, message: `"ghost"`},
			{name: "critical workflow", method: "PATCH", path: prefsPath("ada", ""),
				body: map[string]any{"channels": map[string]any{"in_app": false}, "workflowId": "alerts"}, status: 400, message: "critical"},
			{name: "camelCase channel", method: "PATCH", path: prefsPath("ada", ""),
				body: map[string]any{"channels": map[string]any{"inApp": false}}, status: 422, field: "channels.inApp"},
			{name: "not a boolean", method: "PATCH", path: prefsPath("ada", ""),
				body: map[string]any{"channels": map[string]any{"email": "no"}}, status: 422, field: "channels.email"},
			{name: "channels not an object", method: "PATCH", path: prefsPath("ada", ""),
				body: map[string]any{"channels": []any{"email"}}, status: 422, field: "channels"},
			{name: "workflowId not a string", method: "PATCH", path: prefsPath("ada", ""),
				body: map[string]any{"workflowId": 7}, status: 422, field: "workflowId"},
			{name: "no body", method: "PATCH", path: prefsPath("ada", ""), status: 400},
			{name: "bulk without preferences", method: "PATCH", path: prefsPath("ada", "/bulk"), body: map[string]any{}, status: 422,
				field: "preferences"},
			{name: "bulk of nothing", method: "PATCH", path: prefsPath("ada", "/bulk"), body: bulk(), status: 422, field: "preferences"},
			{name: "bulk of 101", method: "PATCH", path: prefsPath("ada", "/bulk"), body: bulk(many...), status: 422, field: "preferences"},
			{name: "bulk item without channels", method: "PATCH", path: prefsPath("ada", "/bulk"),
				body: bulk(map[string]any{"workflowId": "news"}), status: 422, field: "preferences.0.channels"},
			{name: "bulk item without workflowId", method: "PATCH", path: prefsPath("ada", "/bulk"),
				body: bulk(item("news"), map[string]any{"channels": map[string]any{}}), status: 422, field: "preferences.1.workflowId"},
			{name: "bulk item not an object", method: "PATCH", path: prefsPath("ada", "/bulk"), body: bulk("news"), status: 422,
				field: "preferences.0"},
			{name: "bulk with unknown workflows, all named", method: "PATCH", path: prefsPath("ada", "/bulk"),
				body: bulk(item("news"), item("ghost"), item("phantom")), status: 404, message: `"ghost", "phantom"`},
			{name: "bulk with a critical workflow", method: "PATCH", path: prefsPath("ada", "/bulk"),
				body: bulk(item("news"), item("alerts")), status: 400, message: `"alerts"`},
			{name: "bulk of an unknown subscriber", method: "PATCH", path: prefsPath("nobody", "/bulk"), body: bulk(item("news")),
				status: 404, message: `"nobody"`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res := h.call(t, dev, tc.method, tc.path, tc.body, nil)
				require.Equal(t, tc.status, res.Status, "%s", res.Raw)
				e := res.Object(t)
				if tc.field != "" {
					require.Contains(t, e["errors"], tc.field, "%s", res.Raw)
				}
				require.True(t, strings.Contains(e["message"].(string), tc.message), "%s", res.Raw)
			})
		}
		require.JSONEq(t, string(before), string(h.call(t, dev, "GET", prefsPath("ada", "?criticality=all"), nil, nil).Raw),
			"refused requests changed nothing")
	})
}

// TestWorkflowCriticalFromPreferences: preferences a subscriber may not
// change (all.readOnly) make a workflow critical.
func TestWorkflowCriticalFromPreferences(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada"})
		readOnly := func(ro bool) map[string]any {
			return map[string]any{"workflow": map[string]any{"all": map[string]any{"enabled": true, "readOnly": ro}, "channels": map[string]any{}}}
		}
		for i, tc := range []struct {
			name   string
			body   map[string]any
			update map[string]any // a PUT after the creation, when set
			want   bool
		}{
			{name: "neither", body: map[string]any{}, want: false},
			{name: "critical", body: map[string]any{"critical": true}, want: true},
			{name: "readOnly preferences", body: map[string]any{"preferences": readOnly(true)}, want: true},
			{name: "readOnly beats critical false", body: map[string]any{"critical": false, "preferences": readOnly(true)}, want: true},
			{name: "critical with preferences that are not readOnly", body: map[string]any{"critical": true, "preferences": readOnly(false)},
				want: true},
			{name: "preferences no longer readOnly", body: map[string]any{"preferences": readOnly(true)},
				update: map[string]any{"preferences": readOnly(false)}, want: false},
			{name: "an update without preferences keeps it", body: map[string]any{"preferences": readOnly(true)},
				update: map[string]any{"description": "d"}, want: true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				key := fmt.Sprintf("wf-%d", i)
				body := map[string]any{"name": key, "workflowId": key, "steps": stepsOf("in_app")}
				for k, v := range tc.body {
					body[k] = v
				}
				w := h.createWorkflow(t, dev, body)
				if tc.update != nil {
					upd := map[string]any{"name": key, "workflowId": key}
					for k, v := range tc.update {
						upd[k] = v
					}
					res := h.call(t, dev, "PUT", "/v2/workflows/"+key, upd, nil)
					require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
					w = res.Object(t)
				}
				require.Equal(t, tc.want, w["critical"])
				crit := "nonCritical"
				if tc.want {
					crit = "critical"
				}
				listed := h.call(t, dev, "GET", prefsPath("ada", "?criticality="+crit), nil, nil)
				require.Equal(t, http.StatusOK, listed.Status, "%s", listed.Raw)
				require.Contains(t, identifiers(t, listed.Object(t)), key, "listed as %s", crit)
			})
		}
	})
}
