package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// prefsByIdentifier indexes a preferences listing by workflow identifier
// ("" for the global one).
func prefsByIdentifier(t *testing.T, data any) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, p := range objects(t, data) {
		key := ""
		if wf, ok := p["workflow"].(map[string]any); ok {
			key = wf["identifier"].(string)
			require.Equal(t, "template", p["level"])
		} else {
			require.Equal(t, "global", p["level"])
		}
		out[key] = p
	}
	return out
}

// TestInboxClientPreferences: the session subscriber's preferences in the
// clients' shape — listed by criticality, tags and severity; global and per
// workflow (by _id or identifier) and bulk updates; their effect on the
// next trigger; and another subscriber's left alone.
func TestInboxClientPreferences(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		x := newInbox2(t, h)
		critical := h.createWorkflow(t, x.dev, map[string]any{"name": "Security", "workflowId": "security",
			"preferences": criticalPreferences, "steps": []any{
				map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "Alert"}},
				map[string]any{"name": "Mail", "type": "email", "controlValues": map[string]any{"subject": "Alert", "body": "Alert"}}}})
		ada, bob := x.client(t, x.dev, "ada"), x.client(t, x.dev, "bob")

		list := prefsByIdentifier(t, ada.ok(t, "GET", "/v1/inbox/preferences", nil))
		require.Len(t, list, 3, "global and the two non-critical workflows")
		require.Equal(t, map[string]any{"level": "global", "enabled": true,
			"channels": map[string]any{"in_app": true, "email": true}}, list[""])
		require.Equal(t, map[string]any{"level": "template", "enabled": true, "channels": map[string]any{"in_app": true},
			"workflow": map[string]any{"id": x.wf["_id"], "identifier": "billing-alert", "name": "Billing alert", "critical": false,
				"tags": []any{"billing", "alerts"}, "severity": "high"}}, list["billing-alert"])
		for query, want := range map[string][]string{
			"criticality=critical":           {"", "security"},
			"criticality=all":                {"", "billing-alert", "plain", "security"},
			"criticality=nonCritical":        {"", "billing-alert", "plain"},
			"tags[]=billing&tags[]=nope":     {"", "billing-alert"},
			"severity=none":                  {"", "plain"},
			"severity[]=high&severity[]=low": {"", "billing-alert"},
		} {
			got := prefsByIdentifier(t, ada.ok(t, "GET", "/v1/inbox/preferences?"+query, nil))
			require.ElementsMatch(t, want, keys(got), query)
		}
		require.Equal(t, true, prefsByIdentifier(t, ada.ok(t, "GET", "/v1/inbox/preferences?criticality=critical", nil))["security"]["workflow"].(map[string]any)["critical"])
		for _, q := range []string{"criticality=some", "severity=urgent"} {
			requireError(t, ada.call(t, "GET", "/v1/inbox/preferences?"+q, nil), http.StatusUnprocessableEntity, "GET", "/v1/inbox/preferences?"+q)
		}

		// Per workflow, by _id (what the client sends) or identifier.
		p := ada.ok(t, "PATCH", "/v1/inbox/preferences/"+x.wf["_id"].(string), map[string]any{"in_app": false}).(map[string]any)
		require.Equal(t, map[string]any{"in_app": false}, p["channels"])
		require.Equal(t, "billing-alert", p["workflow"].(map[string]any)["identifier"])
		p = ada.ok(t, "PATCH", "/v1/inbox/preferences/plain", map[string]any{"in_app": true, "enabled": true}).(map[string]any)
		require.Equal(t, map[string]any{"in_app": true}, p["channels"])
		x.notify(t, "plain", "ada", 1, "")
		x.clock.Advance(1)
		x.h.trigger(t, x.dev, map[string]any{"name": "billing-alert", "to": "ada", "payload": map[string]any{"n": "2"}})
		drain(t, x.eng)
		ids, _ := ada.list(t, "limit=10")
		require.Len(t, ids, 1, "billing-alert is off in-app for ada")
		x.notify(t, "billing-alert", "bob", 3, "")
		ids, _ = bob.list(t, "limit=10")
		require.Len(t, ids, 1, "bob's preferences are his own")
		require.Equal(t, true, prefsByIdentifier(t, bob.ok(t, "GET", "/v1/inbox/preferences", nil))["billing-alert"]["channels"].(map[string]any)["in_app"])

		// Global.
		g := ada.ok(t, "PATCH", "/v1/inbox/preferences", map[string]any{"email": false}).(map[string]any)
		require.Equal(t, map[string]any{"level": "global", "enabled": true, "channels": map[string]any{"in_app": true, "email": false}}, g)
		require.Equal(t, g, ada.ok(t, "GET", "/v1/inbox/preferences/global", nil))
		require.Equal(t, true, bob.ok(t, "GET", "/v1/inbox/preferences/global", nil).(map[string]any)["channels"].(map[string]any)["email"])

		// Bulk.
		items := objects(t, ada.ok(t, "PATCH", "/v1/inbox/preferences/bulk", map[string]any{"preferences": []any{
			map[string]any{"workflowId": x.wf["_id"], "in_app": true}, map[string]any{"workflowId": "plain", "in_app": false}}}))
		require.Len(t, items, 2)
		require.Equal(t, map[string]any{"in_app": true}, items[0]["channels"])
		require.Equal(t, map[string]any{"in_app": false}, items[1]["channels"])
		list = prefsByIdentifier(t, ada.ok(t, "GET", "/v1/inbox/preferences", nil))
		require.Equal(t, false, list["plain"]["channels"].(map[string]any)["in_app"])

		// Refusals, which change nothing.
		for _, c := range []struct {
			method, target string
			body           any
			status         int
		}{
			{"PATCH", "/v1/inbox/preferences/security", map[string]any{"in_app": false}, http.StatusBadRequest},
			{"PATCH", "/v1/inbox/preferences/" + critical["_id"].(string), map[string]any{"in_app": false}, http.StatusBadRequest},
			{"PATCH", "/v1/inbox/preferences/nope", map[string]any{"in_app": false}, http.StatusNotFound},
			{"PATCH", "/v1/inbox/preferences/plain", map[string]any{"fax": false}, http.StatusUnprocessableEntity},
			{"PATCH", "/v1/inbox/preferences/plain", map[string]any{"in_app": "no"}, http.StatusUnprocessableEntity},
			{"PATCH", "/v1/inbox/preferences", map[string]any{"schedule": map[string]any{"isEnabled": true}}, http.StatusUnprocessableEntity},
			{"PATCH", "/v1/inbox/preferences", nil, http.StatusBadRequest},
			{"PATCH", "/v1/inbox/preferences/bulk", map[string]any{"preferences": []any{}}, http.StatusUnprocessableEntity},
			{"PATCH", "/v1/inbox/preferences/bulk", map[string]any{"preferences": []any{map[string]any{"in_app": true}}}, http.StatusUnprocessableEntity},
			{"PATCH", "/v1/inbox/preferences/bulk", map[string]any{"preferences": []any{
				map[string]any{"workflowId": "plain", "in_app": true}, map[string]any{"workflowId": "nope", "in_app": true}}}, http.StatusNotFound},
			{"PATCH", "/v1/inbox/preferences/bulk", map[string]any{"preferences": []any{
				map[string]any{"workflowId": "plain", "in_app": true}, map[string]any{"workflowId": "security", "in_app": false}}}, http.StatusBadRequest},
		} {
			requireError(t, ada.call(t, c.method, c.target, c.body), c.status, c.method, c.target)
		}
		require.Equal(t, list, prefsByIdentifier(t, ada.ok(t, "GET", "/v1/inbox/preferences", nil)), "refusals changed nothing")
	})
}

func keys(m map[string]map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
