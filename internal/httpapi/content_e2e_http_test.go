package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider/email/sendgrid/sendgridfake"
)

// TestContentPublishedToProduction is issue 21's end-to-end proof: in
// development, a layout with its own translations, an environment variable
// with a value per environment, a workflow whose e-mail step uses the
// layout, {{t.key}} and {{env.KEY}}, and translations in en_US and fr_FR;
// the diff shows the layout and the workflow with their translations;
// publishing into production writes them (twice changes nothing); a
// trigger with the production key to a fr_FR subscriber delivers, through
// the e-mail provider, the e-mail wrapped in the layout, in French, with
// production's value; the step preview in production renders the same.
func TestContentPublishedToProduction(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.authFor(asDev), h.authFor(asProd)
		devEnv, prodEnv := h.envIDs(t)

		// An environment variable: each key writes its own environment's value.
		res := h.call(t, dev, "POST", envVarsPath, map[string]any{"key": "COMPANY", "values": []any{
			map[string]any{"_environmentId": devEnv, "value": "Acme (dev)"}}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		res = h.call(t, prod, "PATCH", envVarsPath+"/COMPANY", map[string]any{"values": []any{
			map[string]any{"_environmentId": prodEnv, "value": "Acme Inc."}}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)

		// Development: the layout, the workflow, their translations.
		h.createLayout(t, dev, map[string]any{"layoutId": "brand", "name": "Brand", "isTranslationEnabled": true})
		res = h.call(t, dev, "PUT", "/v2/layouts/brand", map[string]any{"name": "Brand", "isTranslationEnabled": true,
			"controlValues": map[string]any{"email": map[string]any{"editorType": "html",
				"body": "<html><body>{{content}}<footer>{{t.footer}}</footer></body></html>"}}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		h.createWorkflow(t, dev, map[string]any{"name": "Welcome", "workflowId": "welcome", "steps": []any{
			map[string]any{"name": "Mail", "stepId": "mail", "type": "email", "controlValues": map[string]any{
				"subject": "{{t.subject}}", "layoutId": "brand",
				"body": "<p>{{t.greeting}} {{subscriber.firstName}}, {{env.COMPANY}}</p>"}}}})
		h.putTranslation(t, dev, "workflow", "welcome", "en_US", map[string]any{"subject": "Welcome", "greeting": "Hello"})
		h.putTranslation(t, dev, "workflow", "welcome", "fr_FR", map[string]any{"subject": "Bienvenue", "greeting": "Bonjour"})
		h.putTranslation(t, dev, "layout", "brand", "en_US", map[string]any{"footer": "Thanks"})
		h.putTranslation(t, dev, "layout", "brand", "fr_FR", map[string]any{"footer": "Merci"})

		// The diff: the layout, then the workflow, each with its translations.
		diff := h.call(t, dev, "POST", "/v2/environments/"+prodEnv+"/diff", nil, nil)
		require.Equal(t, http.StatusOK, diff.Status, "%s", diff.Raw)
		resources := objects(t, diff.Object(t)["resources"])
		require.Len(t, resources, 2)
		require.Equal(t, "layout", resources[0]["resourceType"])
		require.Equal(t, "brand", resources[0]["sourceResource"].(map[string]any)["id"])
		require.Equal(t, []string{"layout:added", "localization_group:added"}, changeActions(t, resources[0]))
		require.Equal(t, "workflow", resources[1]["resourceType"])
		require.Equal(t, []string{"workflow:added", "step:added", "localization_group:added"}, changeActions(t, resources[1]))
		require.Equal(t, map[string]any{"totalEntities": 2.0, "totalChanges": 5.0, "hasChanges": true}, diff.Object(t)["summary"])

		// Publish layouts, translations (with their resources) and workflows.
		pub := h.call(t, dev, "POST", "/v2/environments/"+prodEnv+"/publish", map[string]any{"resources": []any{
			map[string]any{"resourceType": "layout", "resourceId": "brand"},
			map[string]any{"resourceType": "workflow", "resourceId": "welcome"}}}, nil)
		require.Equal(t, http.StatusOK, pub.Status, "%s", pub.Raw)
		results := objects(t, pub.Object(t)["results"])
		require.Len(t, results, 2)
		require.Equal(t, []any{map[string]any{"resourceType": "layout", "resourceId": "brand", "resourceName": "Brand",
			"action": "created"}}, results[0]["successful"])
		require.Equal(t, []any{map[string]any{"resourceType": "workflow", "resourceId": "welcome", "resourceName": "Welcome",
			"action": "created"}}, results[1]["successful"])
		diff = h.call(t, dev, "POST", "/v2/environments/"+prodEnv+"/diff", nil, nil)
		require.Equal(t, map[string]any{"totalEntities": 0.0, "totalChanges": 0.0, "hasChanges": false}, diff.Object(t)["summary"])
		again := h.call(t, dev, "POST", "/v2/environments/"+prodEnv+"/publish", nil, nil)
		require.Equal(t, http.StatusOK, again.Status, "%s", again.Raw)
		require.Equal(t, []any{}, again.Object(t)["results"], "publishing twice changes nothing the second time")
		res = h.call(t, prod, "GET", "/v2/translations/layout/brand/fr_FR", nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "the layout's translations are in production: %s", res.Raw)

		// Production: a trigger with its key, delivered through SendGrid.
		f := sendgridfake.New()
		defer f.Close()
		h.createIntegration(t, prod, map[string]any{"providerId": "sendgrid", "identifier": "mail-prod", "active": true,
			"credentials": map[string]any(f.Credentials())})
		h.createSubscriber(t, prod, map[string]any{"subscriberId": "amelie", "firstName": "Amélie", "locale": "fr_FR",
			"email": "amelie@example.com"})
		h.trigger(t, prod, map[string]any{"name": "welcome", "to": "amelie", "transactionId": "tx-prod"})
		drain(t, h.deliveryEngine(&testClock{t: time.Now().Add(time.Minute)}))
		got := f.Received()
		require.Len(t, got, 1)
		want := "<html><body><p>Bonjour Amélie, Acme Inc.</p><footer>Merci</footer></body></html>"
		require.Equal(t, "Bienvenue", got[0].Subject)
		require.Equal(t, want, got[0].HTML, "wrapped in the layout, in French, with production's value")
		require.Equal(t, []string{"amelie@example.com"}, got[0].To)

		// The step preview in production renders the same.
		res = h.call(t, prod, "POST", "/v2/workflows/welcome/step/mail/preview", map[string]any{"previewPayload": map[string]any{
			"subscriber": map[string]any{"firstName": "Amélie", "locale": "fr_FR"}}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		preview := res.Object(t)["result"].(map[string]any)["preview"].(map[string]any)
		require.Equal(t, map[string]any{"subject": "Bienvenue", "body": want}, preview)
		// And in development, development's value; previewPayload.env is laid over the environment's values.
		res = h.call(t, dev, "POST", "/v2/workflows/welcome/step/mail/preview", map[string]any{"previewPayload": map[string]any{
			"subscriber": map[string]any{"firstName": "Ann"}}}, nil)
		require.Equal(t, "<html><body><p>Hello Ann, Acme (dev)</p><footer>Thanks</footer></body></html>",
			res.Object(t)["result"].(map[string]any)["preview"].(map[string]any)["body"])
		res = h.call(t, dev, "POST", "/v2/workflows/welcome/step/mail/preview", map[string]any{"previewPayload": map[string]any{
			"subscriber": map[string]any{"firstName": "Ann"}, "env": map[string]any{"COMPANY": "Given"}}}, nil)
		require.Equal(t, "<html><body><p>Hello Ann, Given</p><footer>Thanks</footer></body></html>",
			res.Object(t)["result"].(map[string]any)["preview"].(map[string]any)["body"])
		// A secret's value is never shown by a preview: it renders as its mask.
		res = h.call(t, dev, "POST", envVarsPath, map[string]any{"key": "TOKEN", "isSecret": true, "values": []any{
			map[string]any{"_environmentId": devEnv, "value": "s3cr3t"}}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		res = h.call(t, dev, "POST", "/v2/workflows/welcome/step/mail/preview", map[string]any{"controlValues": map[string]any{
			"subject": "S", "body": "<p>[{{env.TOKEN}}]</p>"}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		require.Equal(t, "<p>[••••••••]</p>", res.Object(t)["result"].(map[string]any)["preview"].(map[string]any)["body"])
		require.NotContains(t, string(res.Raw), "s3cr3t")
	})
}
