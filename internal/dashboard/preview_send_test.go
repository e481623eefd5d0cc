package dashboard_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPreviewAsSent: the dashboard's preview renders a step as a send
// would (engine.PreviewSend, the public API's step preview): {{t.key}} in
// the subscriber's locale, {{env.KEY}} from the environment's variables
// (a secret as its mask), context.<type> from the context sent, and an
// e-mail wrapped in its layout; a layout that does not exist is shown as
// an error, not thrown.
func TestPreviewAsSent(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f *fixture) {
		tok := f.signIn()
		call := func(method, path, body string, want int) map[string]any {
			t.Helper()
			rec := f.do(req{method: method, path: "/dashboard/api/env/development" + path, body: body, cookie: tok})
			require.Equal(t, want, rec.Code, rec.Body.String())
			var out map[string]any
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
			return out
		}
		call("POST", "/v2/layouts", `{"layoutId":"brand","name":"Brand"}`, http.StatusCreated)
		call("PUT", "/v2/layouts/brand", `{"name":"Brand","controlValues":{"email":{"editorType":"html",`+
			`"body":"<html><body><h1>{{subscriber.firstName}}</h1>{{ content }}<footer>Brand</footer></body></html>"}}}`, http.StatusOK)
		wf := call("POST", "/v2/workflows", `{"name":"Welcome","workflowId":"welcome","steps":[{"name":"Mail","type":"email",`+
			`"controlValues":{"subject":"{{t.subject}} {{context.tenant.data.name}}","body":"<p>{{t.greeting}} {{env.SUPPORT}}</p>","layoutId":"brand"}}]}`,
			http.StatusCreated)
		call("POST", "/v2/translations", `{"resourceId":"`+wf["_id"].(string)+`","resourceType":"workflow","locale":"en_US",`+
			`"content":{"subject":"Welcome","greeting":"Hello {{subscriber.firstName}}"}}`, http.StatusOK)
		call("POST", "/v2/translations", `{"resourceId":"welcome","resourceType":"workflow","locale":"fr_FR",`+
			`"content":{"subject":"Bienvenue","greeting":"Bonjour {{subscriber.firstName}}"}}`, http.StatusOK)
		env, err := f.db.EnvironmentGetByName(t.Context(), "development")
		require.NoError(t, err)
		envID := env.ID
		call("POST", "/v1/environment-variables", `{"key":"SUPPORT","values":[{"_environmentId":"`+envID+`","value":"help@example.com"}]}`,
			http.StatusOK)

		call("POST", "/v1/environment-variables", `{"key":"TOKEN","isSecret":true,"values":[{"_environmentId":"`+envID+`","value":"tok-dev"}]}`,
			http.StatusOK)
		preview := func(body string) map[string]any { return call("POST", "/preview", body, http.StatusOK) }
		out := preview(`{"workflowId":"welcome","stepId":"mail","controlValues":{"subject":"{{env.TOKEN}}","body":"b"}}`)
		require.Equal(t, "••••••••", out["result"].(map[string]any)["subject"], "a secret shows as its mask, never in clear")

		out = preview(`{"workflowId":"welcome","stepId":"mail","context":{"tenant":{"id":"acme","data":{"name":"Acme"}}}}`)
		require.Nil(t, out["error"])
		res := out["result"].(map[string]any)
		require.Equal(t, "Welcome Acme", res["subject"])
		require.Contains(t, res["body"], "<h1>Ada</h1><p>Hello Ada help@example.com</p><footer>Brand</footer>", "wrapped in the layout, translated, env")

		call("POST", "/v2/subscribers", `{"subscriberId":"amelie","firstName":"Amélie","locale":"fr_FR"}`, http.StatusCreated)
		out = preview(`{"workflowId":"welcome","stepId":"mail","subscriberId":"amelie"}`)
		res = out["result"].(map[string]any)
		require.Equal(t, "Bienvenue ", res["subject"], "the subscriber's locale")
		require.Contains(t, res["body"], "<h1>Amélie</h1><p>Bonjour Amélie help@example.com</p><footer>Brand</footer>")

		out = preview(`{"workflowId":"welcome","stepId":"mail","controlValues":{"subject":"s","body":"b","layoutId":"nope"}}`)
		require.Nil(t, out["result"])
		require.Equal(t, "layoutId", out["error"].(map[string]any)["field"])
		require.Contains(t, out["error"].(map[string]any)["message"], `"nope"`)
		out = preview(`{"workflowId":"welcome","stepId":"mail","controlValues":{"subject":"{{t.missing}}","body":"b"}}`)
		require.Nil(t, out["result"])
		require.NotEmpty(t, out["error"].(map[string]any)["message"], "a missing translation is shown")

		requireError(t, f.do(req{method: "POST", path: "/dashboard/api/env/development/preview", cookie: tok,
			body: `{"workflowId":"welcome","stepId":"mail","context":"x"}`}), http.StatusUnprocessableEntity)
	})
}
