package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider/email/sendgrid/sendgridfake"
)

// TestLayoutTranslations: resourceType "layout" translations are kept like
// a workflow's (create, upload, get, group, master JSON); a layout with
// isTranslationEnabled renders its {{t.key}} in the subscriber's locale
// (per-key fallback to the default locale) when an e-mail is wrapped, in a
// send and in the step preview alike (and in the layout's preview); a layout without it leaves them to
// Liquid (empty); a layout naming env sees the environment's values; a key
// found nowhere fails the step; deleting a layout deletes its translations.
func TestLayoutTranslations(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		call := func(method, target string, body any) response {
			t.Helper()
			return h.call(t, dev, method, target, body, nil)
		}
		f := sendgridfake.New()
		defer f.Close()
		h.sendgridIntegration(t, f, "mail-main")
		h.createLayout(t, dev, map[string]any{"layoutId": "plain", "name": "Plain"}) // the default; isTranslationEnabled false
		h.putLayoutBody(t, dev, "plain", "html", "<html><body>{{content}}[{{t.footer}}]{{env.COMPANY}}</body></html>")
		// A layout naming env sees the environment's values though its step names none.
		res := h.call(t, dev, "POST", envVarsPath, map[string]any{"key": "COMPANY", "values": []any{
			map[string]any{"_environmentId": h.envID(t, "development"), "value": "Acme"}}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		h.createLayout(t, dev, map[string]any{"layoutId": "brand", "name": "Brand", "isTranslationEnabled": true})
		h.putLayoutBody(t, dev, "brand", "html", "<html><body>{{content}}<footer>{{t.footer}} · {{t.legal.note}}</footer></body></html>")
		h.call(t, dev, "PUT", "/v2/layouts/brand", map[string]any{"name": "Brand", "isTranslationEnabled": true}, nil)

		// The operations take resourceType "layout".
		h.putTranslation(t, dev, "layout", "brand", "en_US", map[string]any{"footer": "Bye", "legal": map[string]any{"note": "Terms"}})
		body, ct := multipartBody(t, map[string]string{"resourceId": "brand", "resourceType": "layout"},
			[3]string{"files", "fr_FR.json", `{"footer":"Au revoir {{subscriber.firstName}}"}`})
		res = h.call(t, dev, "POST", "/v2/translations/upload", body, ct)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.EqualValues(t, 1, res.Object(t)["successfulUploads"])
		h.putTranslation(t, dev, "layout", "plain", "en_US", map[string]any{"footer": "never"})
		res = call("GET", "/v2/translations/layout/brand/fr-FR", nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		got := res.Object(t)
		require.Equal(t, "layout", got["resourceType"])
		require.Equal(t, "brand", got["resourceId"])
		require.Equal(t, map[string]any{"footer": "Au revoir {{subscriber.firstName}}"}, got["content"])
		res = call("GET", "/v2/translations/group/layout/brand", nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, "Brand", res.Object(t)["resourceName"])
		require.Equal(t, []any{"en_US", "fr_FR"}, res.Object(t)["locales"])
		res = call("GET", "/v2/translations/master-json?locale=fr_FR", nil)
		require.Equal(t, map[string]any{"workflows": map[string]any{},
			"layouts": map[string]any{"brand": map[string]any{"footer": "Au revoir {{subscriber.firstName}}"}}}, res.Object(t))
		res = call("POST", "/v2/translations/master-json", map[string]any{"locale": "de_DE", "masterJson": map[string]any{
			"layouts": map[string]any{"brand": map[string]any{"footer": "Tschüss"}, "ghost": map[string]any{}}}})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, []any{"brand"}, res.Object(t)["successful"])
		require.Equal(t, []any{"ghost"}, res.Object(t)["failed"])

		// A send: the layout's text in the subscriber's locale.
		mail := func(layout string) map[string]any {
			return map[string]any{"name": "Mail", "stepId": "mail", "type": "email", "controlValues": map[string]any{
				"subject": "S", "body": "<p>{{subscriber.firstName}}</p>", "layoutId": layout}}
		}
		h.createWorkflow(t, dev, map[string]any{"name": "Branded", "workflowId": "branded", "steps": []any{mail("brand")}})
		h.createWorkflow(t, dev, map[string]any{"name": "Plainly", "workflowId": "plainly", "steps": []any{mail("plain")}})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "amelie", "firstName": "Amélie", "locale": "fr_FR",
			"email": "amelie@example.com"})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ann", "firstName": "Ann", "email": "ann@example.com"})
		eng := h.deliveryEngine(&testClock{t: time.Now().Add(time.Minute)})
		for _, c := range []struct{ tx, workflow, to, want string }{
			{"tx-fr", "branded", "amelie", "<html><body><p>Amélie</p><footer>Au revoir Amélie · Terms</footer></body></html>"},
			{"tx-en", "branded", "ann", "<html><body><p>Ann</p><footer>Bye · Terms</footer></body></html>"},
			{"tx-plain", "plainly", "ann", "<html><body><p>Ann</p>[]Acme</body></html>"},
		} {
			h.trigger(t, dev, map[string]any{"name": c.workflow, "to": c.to, "transactionId": c.tx})
			drain(t, eng)
			sent := f.Received()
			require.NotEmpty(t, sent, c.tx)
			require.Equal(t, c.want, sent[len(sent)-1].HTML, c.tx)
		}

		// The step preview wraps and translates alike.
		res = call("POST", "/v2/workflows/branded/step/mail/preview", map[string]any{"previewPayload": map[string]any{
			"subscriber": map[string]any{"firstName": "Zoé", "locale": "fr_FR"}}})
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		preview := res.Object(t)["result"].(map[string]any)["preview"].(map[string]any)
		require.Equal(t, "<html><body><p>Zoé</p><footer>Au revoir Zoé · Terms</footer></body></html>", preview["body"])
		// So does the layout's own preview.
		res = call("POST", "/v2/layouts/brand/preview", map[string]any{"previewPayload": map[string]any{
			"subscriber": map[string]any{"firstName": "Zoé", "locale": "fr_FR"}}})
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		require.Equal(t, map[string]any{"body": "<html><body><p data-content-placeholder>Dynamic placeholder content</p>" +
			"<footer>Au revoir Zoé · Terms</footer></body></html>"}, res.Object(t)["result"].(map[string]any)["preview"])

		// A key found in no translation of the layout fails the step.
		h.putLayoutBody(t, dev, "brand", "html", "<html><body>{{content}}{{t.nope}}</body></html>")
		h.call(t, dev, "PUT", "/v2/layouts/brand", map[string]any{"name": "Brand", "isTranslationEnabled": true}, nil)
		n := len(f.Received())
		h.trigger(t, dev, map[string]any{"name": "branded", "to": "ann", "transactionId": "tx-missing"})
		drain(t, eng)
		job := h.onlyJob(t, "tx-missing")
		require.Equal(t, "failed", job["status"])
		require.Contains(t, lastDetail(t, job), `layout: `)
		require.Contains(t, lastDetail(t, job), `no translation has the key "nope"`)
		require.Len(t, f.Received(), n, "nothing was sent")

		// Deleting a layout deletes its translations.
		res = call("DELETE", "/v2/layouts/brand", nil)
		require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Raw)
		h.createLayout(t, dev, map[string]any{"layoutId": "brand", "name": "Brand again"})
		for _, p := range []string{"/v2/translations/layout/brand/en_US", "/v2/translations/group/layout/brand"} {
			res = call("GET", p, nil)
			require.Equal(t, http.StatusNotFound, res.Status, "%s %s", p, res.Raw)
		}
		res = call("GET", "/v2/translations/layout/plain/en_US", nil)
		require.Equal(t, http.StatusOK, res.Status, "another layout's translations stay: %s", res.Raw)
	})
}

// TestLayoutTranslationTenancy: another environment's layout and its
// translations are a 404 for every translation operation.
func TestLayoutTranslationTenancy(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.authFor(asDev), h.authFor(asProd)
		h.createLayout(t, dev, map[string]any{"layoutId": "dev-layout", "name": "Dev layout"})
		h.putTranslation(t, dev, "layout", "dev-layout", "en_US", map[string]any{"a": "dev"})
		body, ct := multipartBody(t, map[string]string{"resourceId": "dev-layout", "resourceType": "layout"},
			[3]string{"files[]", "en_US.json", `{"a":"prod"}`})
		for _, c := range []struct {
			method, target string
			body           any
			headers        map[string]string
		}{
			{"GET", "/v2/translations/layout/dev-layout/en_US", nil, nil},
			{"DELETE", "/v2/translations/layout/dev-layout/en_US", nil, nil},
			{"DELETE", "/v2/translations/layout/dev-layout", nil, nil},
			{"GET", "/v2/translations/group/layout/dev-layout", nil, nil},
			{"POST", "/v2/translations", map[string]any{"resourceId": "dev-layout", "resourceType": "layout", "locale": "en_US",
				"content": map[string]any{"a": "prod"}}, nil},
			{"POST", "/v2/translations/upload", body, ct},
		} {
			requireError(t, h.call(t, prod, c.method, c.target, c.body, c.headers), http.StatusNotFound, c.method, c.target)
		}
		res := h.call(t, prod, "GET", "/v2/translations/master-json?locale=en_US", nil, nil)
		require.Equal(t, map[string]any{"workflows": map[string]any{}, "layouts": map[string]any{}}, res.Object(t))
		res = h.call(t, dev, "GET", "/v2/translations/layout/dev-layout/en_US", nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, map[string]any{"a": "dev"}, res.Object(t)["content"], "unchanged")
	})
}
