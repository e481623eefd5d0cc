package httpapi_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/sandbox"
)

// multipartBody builds a multipart/form-data body: fields, then files as
// (field, file name, content) triples; it returns the body and its Content-Type.
func multipartBody(t testing.TB, fields map[string]string, files ...[3]string) ([]byte, map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		require.NoError(t, mw.WriteField(k, v))
	}
	for _, f := range files {
		w, err := mw.CreateFormFile(f[0], f[1])
		require.NoError(t, err)
		_, err = w.Write([]byte(f[2]))
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	return buf.Bytes(), map[string]string{"Content-Type": mw.FormDataContentType()}
}

func (h *harness) putTranslation(t testing.TB, auth, typ, id, locale string, content map[string]any) {
	t.Helper()
	res := h.call(t, auth, "POST", "/v2/translations", map[string]any{"resourceId": id, "resourceType": typ, "locale": locale,
		"content": content}, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
}

// TestTranslationsRenderInTheSubscribersLocale: {{t.key}} in a step's
// controls is the text of the subscriber's locale, each key missing there
// taken from the default locale (en_US), and Liquid runs over the text
// afterwards; a subscriber whose locale has no translation gets the default
// locale's text. Both the workers and the trigger's in-app planner resolve
// them. A key found nowhere fails the step; a resource without translations
// renders the placeholder empty; the sandbox's size budget bounds the text.
func TestTranslationsRenderInTheSubscribersLocale(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		eng := h.newEngine(engine.Options{})
		h.createWorkflow(t, dev, map[string]any{"name": "Welcome", "workflowId": "welcome", "steps": []any{
			map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{
				"subject": "{{ t.welcome.subject }}", "body": "{{t.welcome.body}} {{t.footer}}"}}}})
		h.putTranslation(t, dev, "workflow", "welcome", "en_US", map[string]any{
			"welcome": map[string]any{"subject": "Welcome", "body": "Hello {{subscriber.firstName}}"}, "footer": "See you"})
		h.putTranslation(t, dev, "workflow", "welcome", "fr-FR", map[string]any{ // "-" read as "_"
			"welcome.subject": "Bienvenue", "welcome": map[string]any{"body": "Bonjour {{ subscriber.firstName | upcase }}"}})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "amelie", "firstName": "Amélie", "locale": "fr-FR"})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "hans", "firstName": "Hans", "locale": "de-DE"})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "nolocale", "firstName": "Ann"})

		check := func() {
			t.Helper()
			for sid, want := range map[string][2]string{
				"amelie":   {"Bienvenue", "Bonjour AMÉLIE See you"}, // the footer falls back, per key
				"hans":     {"Welcome", "Hello Hans See you"},       // no de_DE translation: the default locale
				"nolocale": {"Welcome", "Hello Ann See you"},
			} {
				items := h.feedItems(t, sid)
				require.NotEmpty(t, items, sid)
				require.Equal(t, want[0], items[0]["subject"], sid)
				require.Equal(t, want[1], items[0]["content"], sid)
			}
		}
		// The workers.
		for _, sid := range []string{"amelie", "hans", "nolocale"} {
			h.trigger(t, dev, map[string]any{"name": "welcome", "to": sid})
		}
		drain(t, eng)
		check()
		// The trigger's in-app planner, no worker running.
		h.DB.SetTriggerPlanner(engine.InAppPlanner(sandbox.New(sandbox.DefaultLimits), h.DB))
		h.putTranslation(t, dev, "workflow", "welcome", "fr_FR", map[string]any{"welcome": map[string]any{
			"subject": "Salut", "body": "Coucou {{subscriber.firstName}}"}})
		h.trigger(t, dev, map[string]any{"name": "welcome", "to": "amelie", "transactionId": "tx-planned"})
		require.Equal(t, "completed", h.onlyJob(t, "tx-planned")["status"])
		items := h.feedItems(t, "amelie")
		require.Equal(t, "Salut", items[0]["subject"])
		require.Equal(t, "Coucou Amélie See you", items[0]["content"])

		// A key found in no translation fails the step.
		h.createWorkflow(t, dev, map[string]any{"name": "Broken", "workflowId": "broken", "steps": []any{
			map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "{{t.nope}}"}}}})
		h.putTranslation(t, dev, "workflow", "broken", "en_US", map[string]any{"yes": "y"})
		h.trigger(t, dev, map[string]any{"name": "broken", "to": "hans", "transactionId": "tx-missing"})
		drain(t, eng)
		job := h.onlyJob(t, "tx-missing")
		require.Equal(t, "failed", job["status"])
		require.Contains(t, lastDetail(t, job), `no translation has the key "nope"`)

		// A workflow without translations: the placeholder is a missing variable.
		h.createWorkflow(t, dev, map[string]any{"name": "Plain", "workflowId": "plain", "steps": []any{
			map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "A{{t.x}}B"}}}})
		h.trigger(t, dev, map[string]any{"name": "plain", "to": "nolocale", "transactionId": "tx-plain"})
		drain(t, eng)
		require.Equal(t, "AB", h.feedItems(t, "nolocale")[0]["content"])

		// The sandbox's output budget bounds the translated text.
		big := strings.Repeat("x", 200<<10)
		h.createWorkflow(t, dev, map[string]any{"name": "Big", "workflowId": "big", "steps": []any{
			map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "{{t.big}}{{t.big}}"}}}})
		h.putTranslation(t, dev, "workflow", "big", "en_US", map[string]any{"big": big})
		h.trigger(t, dev, map[string]any{"name": "big", "to": "hans", "transactionId": "tx-big"})
		drain(t, eng)
		job = h.onlyJob(t, "tx-big")
		require.Equal(t, "failed", job["status"])
		require.Contains(t, lastDetail(t, job), "the translated text is longer than")
	})
}

func lastDetail(t testing.TB, job map[string]any) string {
	t.Helper()
	ds := objects(t, job["executionDetails"])
	require.NotEmpty(t, ds)
	return ds[len(ds)-1]["detail"].(string)
}

// TestTranslationOperations: the statuses and shapes of every translation
// operation, its validation, and what each changes.
func TestTranslationOperations(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		wf := h.createWorkflow(t, dev, map[string]any{"name": "Welcome mail", "workflowId": "welcome", "steps": stepsOf("in_app")})
		call := func(method, target string, body any) response { return h.call(t, dev, method, target, body, nil) }
		refuse := func(status int, method, target string, body any, fields ...string) {
			t.Helper()
			requireError(t, call(method, target, body), status, method, target, fields...)
		}

		// Create, by workflowId or _id; a replacement replaces the whole content.
		res := call("POST", "/v2/translations", map[string]any{"resourceId": wf["_id"], "resourceType": "workflow", "locale": "en_US",
			"content": map[string]any{"a": "A", "b": "B"}})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, "welcome", res.Object(t)["resourceId"])
		h.putTranslation(t, dev, "workflow", "welcome", "en_US", map[string]any{"a": "A2"})
		res = call("GET", "/v2/translations/workflow/welcome/en-US", nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, map[string]any{"a": "A2"}, res.Object(t)["content"])
		require.Equal(t, "en_US", res.Object(t)["locale"])
		h.putTranslation(t, dev, "workflow", "welcome", "zh_Hans_CN", map[string]any{"a": "甲"})

		// Validation.
		for _, c := range []struct {
			body   map[string]any
			fields []string
		}{
			{map[string]any{"resourceId": "welcome", "resourceType": "workflow", "locale": "english", "content": map[string]any{}}, []string{"locale"}},
			{map[string]any{"resourceId": "welcome", "resourceType": "workflow", "locale": "en", "content": map[string]any{}}, []string{"locale"}},
			{map[string]any{"resourceId": "welcome", "resourceType": "step", "locale": "en_US", "content": map[string]any{}}, []string{"resourceType"}},
			{map[string]any{"resourceType": "workflow", "locale": "en_US", "content": []any{}}, []string{"resourceId", "content"}},
			{map[string]any{"resourceId": "welcome", "resourceType": "workflow", "locale": "en_US"}, []string{"content"}},
		} {
			refuse(http.StatusUnprocessableEntity, "POST", "/v2/translations", c.body, c.fields...)
		}
		refuse(http.StatusNotFound, "POST", "/v2/translations", map[string]any{"resourceId": "nope", "resourceType": "workflow",
			"locale": "en_US", "content": map[string]any{}})
		refuse(http.StatusNotFound, "POST", "/v2/translations", map[string]any{"resourceId": "welcome", "resourceType": "layout",
			"locale": "en_US", "content": map[string]any{}})
		for _, p := range []string{"/v2/translations/workflow/welcome/english", "/v2/translations/step/welcome/en_US",
			"/v2/translations/group/step/welcome"} {
			refuse(http.StatusBadRequest, "GET", p, nil)
		}
		for _, p := range []string{"/v2/translations/workflow/welcome/de_DE", "/v2/translations/workflow/nope/en_US"} {
			refuse(http.StatusNotFound, "GET", p, nil)
		}

		// The group.
		res = call("GET", "/v2/translations/group/workflow/welcome", nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		g := res.Object(t)
		require.Equal(t, "Welcome mail", g["resourceName"])
		require.Equal(t, []any{"en_US", "zh_Hans_CN"}, g["locales"])

		// Upload: good files replace their locale; a bad content fails alone.
		body, ct := multipartBody(t, map[string]string{"resourceId": "welcome", "resourceType": "workflow"},
			[3]string{"files[]", "fr_FR.json", `{"a":"Á"}`}, [3]string{"files", "es_ES.json", `{"a":`},
			[3]string{"files[]", "de_DE.json", `["a"]`}, [3]string{"files[]", "it_IT.json", "{\"a\":\"\\u0000\"}"})
		res = h.call(t, dev, "POST", "/v2/translations/upload", body, ct)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		up := res.Object(t)
		require.EqualValues(t, 4, up["totalFiles"])
		require.EqualValues(t, 1, up["successfulUploads"])
		require.EqualValues(t, 3, up["failedUploads"])
		require.Len(t, up["errors"], 3)
		require.Contains(t, up["errors"].([]any)[0], "Failed to process file 'es_ES.json'")
		res = call("GET", "/v2/translations/workflow/welcome/fr_FR", nil)
		require.Equal(t, map[string]any{"a": "Á"}, res.Object(t)["content"])
		refuse(http.StatusNotFound, "GET", "/v2/translations/workflow/welcome/es_ES", nil)

		// Upload refusals.
		uploads := []struct {
			name   string
			status int
			fields map[string]string
			files  [][3]string
			ct     string
		}{
			{"a badly named file", 400, map[string]string{"resourceId": "welcome", "resourceType": "workflow"},
				[][3]string{{"files[]", "en.json", "{}"}, {"files[]", "en_US.txt", "{}"}, {"files[]", "fr_FR.json", "{}"}}, ""},
			{"no file", 400, map[string]string{"resourceId": "welcome", "resourceType": "workflow"}, nil, ""},
			{"no resourceId", 422, map[string]string{"resourceType": "workflow"}, [][3]string{{"files[]", "en_US.json", "{}"}}, ""},
			{"a bad resourceType", 422, map[string]string{"resourceId": "welcome", "resourceType": "x"},
				[][3]string{{"files[]", "en_US.json", "{}"}}, ""},
			{"an unknown resource", 404, map[string]string{"resourceId": "nope", "resourceType": "workflow"},
				[][3]string{{"files[]", "en_US.json", "{}"}}, ""},
			{"not multipart", 400, nil, nil, "application/json"},
			{"a broken multipart body", 400, nil, nil, "multipart/form-data; boundary=zzz"},
		}
		for _, u := range uploads {
			body, ct := multipartBody(t, u.fields, u.files...)
			if u.ct != "" {
				body, ct = []byte(`{"resourceId":"welcome"}`), map[string]string{"Content-Type": u.ct}
			}
			res := h.call(t, dev, "POST", "/v2/translations/upload", body, ct)
			requireError(t, res, u.status, "POST", "/v2/translations/upload")
		}
		body, ct = multipartBody(t, map[string]string{"resourceId": "welcome", "resourceType": "workflow"},
			[3]string{"files[]", "en.json", "{}"})
		res = h.call(t, dev, "POST", "/v2/translations/upload", body, ct)
		require.Contains(t, res.Object(t)["errors"], "en.json", "%s", res.Raw)

		// Master JSON: export, import, upload.
		res = call("GET", "/v2/translations/master-json?locale=en_US", nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, map[string]any{"workflows": map[string]any{"welcome": map[string]any{"a": "A2"}}, "layouts": map[string]any{}}, res.Object(t))
		res = call("GET", "/v2/translations/master-json", nil) // the default locale
		require.Equal(t, map[string]any{"welcome": map[string]any{"a": "A2"}}, res.Object(t)["workflows"])
		res = call("GET", "/v2/translations/master-json?locale=pt_BR", nil)
		require.Equal(t, map[string]any{"workflows": map[string]any{}, "layouts": map[string]any{}}, res.Object(t))
		refuse(http.StatusUnprocessableEntity, "GET", "/v2/translations/master-json?locale=pt", nil, "locale")

		h.createWorkflow(t, dev, map[string]any{"name": "Second", "workflowId": "second", "steps": stepsOf("in_app")})
		res = call("POST", "/v2/translations/master-json", map[string]any{"locale": "pt_BR", "masterJson": map[string]any{
			"workflows": map[string]any{"welcome": map[string]any{"a": "Olá"}, "second": map[string]any{"b": "Dois"}, "ghost": map[string]any{}},
			"layouts":   map[string]any{"nolayout": map[string]any{}}}})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		imp := res.Object(t)
		require.Equal(t, true, imp["success"])
		require.Contains(t, imp["message"], "Partial import")
		require.ElementsMatch(t, []any{"second", "welcome"}, imp["successful"])
		require.ElementsMatch(t, []any{"ghost", "nolayout"}, imp["failed"])
		res = call("GET", "/v2/translations/master-json?locale=pt-BR", nil)
		require.Equal(t, map[string]any{"welcome": map[string]any{"a": "Olá"}, "second": map[string]any{"b": "Dois"}}, res.Object(t)["workflows"])
		res = call("POST", "/v2/translations/master-json", map[string]any{"locale": "pt_BR", "masterJson": map[string]any{
			"workflows": map[string]any{"ghost": map[string]any{}}}})
		require.Equal(t, map[string]any{"success": false, "message": "Failed to import any resources", "failed": []any{"ghost"}}, res.Object(t))
		res = call("POST", "/v2/translations/master-json", map[string]any{"locale": "pt_BR", "masterJson": map[string]any{}})
		require.Equal(t, map[string]any{"success": false, "message": "No supported resources found"}, res.Object(t))
		refuse(http.StatusUnprocessableEntity, "POST", "/v2/translations/master-json", map[string]any{"locale": "pt", "masterJson": "x"}, "locale", "masterJson")

		body, ct = multipartBody(t, nil, [3]string{"file", "it_IT.json", `{"workflows":{"second":{"c":"Ciao"}}}`})
		res = h.call(t, dev, "POST", "/v2/translations/master-json/upload", body, ct)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, []any{"second"}, res.Object(t)["successful"])
		res = call("GET", "/v2/translations/workflow/second/it_IT", nil)
		require.Equal(t, map[string]any{"c": "Ciao"}, res.Object(t)["content"])
		for name, files := range map[string][][3]string{
			"no file":        nil,
			"two files":      {{"file", "it_IT.json", "{}"}, {"file", "fr_FR.json", "{}"}},
			"a bad name":     {{"file", "it.json", "{}"}},
			"a text file":    {{"file", "it_IT.txt", "{}"}},
			"empty":          {{"file", "it_IT.json", ""}},
			"not JSON":       {{"file", "it_IT.json", "{nope"}},
			"not an object":  {{"file", "it_IT.json", "[1]"}},
			"invalid UTF-8":  {{"file", "it_IT.json", "{\"a\":\"\xff\"}"}},
			"a NUL":          {{"file", "it_IT.json", "{\"a\":\"\\u0000\"}"}},
			"the wrong part": {{"files", "it_IT.json", "{}"}},
		} {
			body, ct := multipartBody(t, nil, files...)
			require.Equal(t, http.StatusBadRequest, h.call(t, dev, "POST", "/v2/translations/master-json/upload", body, ct).Status, name)
		}

		// Deletes: one locale, then every locale; then 404s.
		res = call("DELETE", "/v2/translations/workflow/welcome/fr_FR", nil)
		require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Raw)
		refuse(http.StatusNotFound, "DELETE", "/v2/translations/workflow/welcome/fr_FR", nil)
		refuse(http.StatusBadRequest, "DELETE", "/v2/translations/workflow/welcome/fr", nil)
		res = call("DELETE", "/v2/translations/workflow/welcome", nil)
		require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Raw)
		refuse(http.StatusNotFound, "DELETE", "/v2/translations/workflow/welcome", nil)
		refuse(http.StatusNotFound, "GET", "/v2/translations/group/workflow/welcome", nil)
		require.Equal(t, http.StatusOK, call("GET", "/v2/translations/group/workflow/second", nil).Status)

		// A new workflowId keeps the translations.
		res = call("PUT", "/v2/workflows/second", map[string]any{"name": "Second", "workflowId": "second-renamed", "steps": stepsOf("in_app")})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, http.StatusOK, call("GET", "/v2/translations/workflow/second-renamed/it_IT", nil).Status)
		res = call("PUT", "/v2/workflows/second-renamed", map[string]any{"name": "Second", "workflowId": "second", "steps": stepsOf("in_app")})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)

		// Deleting a workflow deletes its translations: a new one of the same
		// workflowId starts without any.
		require.Equal(t, http.StatusNoContent, call("DELETE", "/v2/workflows/second", nil).Status)
		h.createWorkflow(t, dev, map[string]any{"name": "Second again", "workflowId": "second", "steps": stepsOf("in_app")})
		refuse(http.StatusNotFound, "GET", "/v2/translations/group/workflow/second", nil)
	})
}

// TestTranslationTenancy: another environment's translations are 404s to
// every operation, absent from its master JSON, and never changed.
func TestTranslationTenancy(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.authFor(asDev), h.authFor(asProd)
		h.createWorkflow(t, dev, map[string]any{"name": "Dev only", "workflowId": "dev-only", "steps": stepsOf("in_app")})
		h.putTranslation(t, dev, "workflow", "dev-only", "en_US", map[string]any{"a": "dev"})
		before := h.call(t, dev, "GET", "/v2/translations/workflow/dev-only/en_US", nil, nil)
		require.Equal(t, http.StatusOK, before.Status)

		body, ct := multipartBody(t, map[string]string{"resourceId": "dev-only", "resourceType": "workflow"},
			[3]string{"files[]", "en_US.json", `{"a":"prod"}`})
		for _, c := range []struct {
			method, target string
			body           any
			headers        map[string]string
		}{
			{"GET", "/v2/translations/workflow/dev-only/en_US", nil, nil},
			{"DELETE", "/v2/translations/workflow/dev-only/en_US", nil, nil},
			{"DELETE", "/v2/translations/workflow/dev-only", nil, nil},
			{"GET", "/v2/translations/group/workflow/dev-only", nil, nil},
			{"POST", "/v2/translations", map[string]any{"resourceId": "dev-only", "resourceType": "workflow", "locale": "en_US",
				"content": map[string]any{"a": "prod"}}, nil},
			{"POST", "/v2/translations/upload", body, ct},
		} {
			requireError(t, h.call(t, prod, c.method, c.target, c.body, c.headers), http.StatusNotFound, c.method, c.target)
		}
		res := h.call(t, prod, "GET", "/v2/translations/master-json?locale=en_US", nil, nil)
		require.Equal(t, map[string]any{"workflows": map[string]any{}, "layouts": map[string]any{}}, res.Object(t))
		res = h.call(t, prod, "POST", "/v2/translations/master-json", map[string]any{"locale": "en_US",
			"masterJson": map[string]any{"workflows": map[string]any{"dev-only": map[string]any{"a": "prod"}}}}, nil)
		require.Equal(t, false, res.Object(t)["success"])

		after := h.call(t, dev, "GET", "/v2/translations/workflow/dev-only/en_US", nil, nil)
		require.Equal(t, string(before.Raw), string(after.Raw))
	})
}
