package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider/email/sendgrid/sendgridfake"
)

const brandLayout = "<html><body><h1>{{subscriber.firstName}}'s mail</h1>\n{{ content }}\n<footer>{{payload.org}}</footer></body></html>"

// createLayout creates a layout as the given caller and returns it.
func (h *harness) createLayout(t testing.TB, auth string, body map[string]any) map[string]any {
	t.Helper()
	res := h.call(t, auth, "POST", "/v2/layouts", body, nil)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	return res.Object(t)
}

// putLayoutBody sets a layout's e-mail body.
func (h *harness) putLayoutBody(t testing.TB, auth, key, editor, body string) map[string]any {
	t.Helper()
	res := h.call(t, auth, "PUT", "/v2/layouts/"+url.PathEscape(key), map[string]any{"name": key,
		"controlValues": map[string]any{"email": map[string]any{"body": body, "editorType": editor}}}, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
	return res.Object(t)
}

func layoutKeys(t *testing.T, list map[string]any) []string {
	var out []string
	for _, l := range objects(t, list["layouts"]) {
		out = append(out, l["layoutId"].(string))
	}
	return out
}

func TestLayoutCRUD(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		main := h.createLayout(t, dev, map[string]any{"layoutId": "main", "name": "Main", "__source": "dashboard"})
		require.Equal(t, true, main["isDefault"], "the environment's first layout is its default")
		require.Equal(t, "main", main["layoutId"])
		require.Equal(t, map[string]any{"values": map[string]any{}}, main["controls"])
		promo := h.createLayout(t, dev, map[string]any{"layoutId": "promo", "name": "Promo Mail", "isTranslationEnabled": true})
		require.Equal(t, false, promo["isDefault"], "at most one default")
		require.Equal(t, true, promo["isTranslationEnabled"])
		derived := h.createLayout(t, dev, map[string]any{"name": "Weekly Digest!"})
		require.Equal(t, "weekly-digest", derived["layoutId"], "derived from the name")

		res := h.call(t, dev, "POST", "/v2/layouts", map[string]any{"layoutId": "promo", "name": "Again"}, nil)
		requireError(t, res, http.StatusConflict, "POST", "/v2/layouts")
		res = h.call(t, dev, "POST", "/v2/layouts", map[string]any{"layoutId": "x", "name": ""}, nil)
		requireError(t, res, http.StatusUnprocessableEntity, "POST", "/v2/layouts", "name")
		res = h.call(t, dev, "POST", "/v2/layouts", map[string]any{"layoutId": 5, "name": "N", "isTranslationEnabled": "yes"}, nil)
		requireError(t, res, http.StatusUnprocessableEntity, "POST", "/v2/layouts", "layoutId", "isTranslationEnabled")

		for _, key := range []string{"promo", promo["_id"].(string)} {
			res := h.call(t, dev, "GET", "/v2/layouts/"+key, nil, nil)
			require.Equal(t, 200, res.Status, "%s", res.Raw)
			require.Equal(t, promo, res.Object(t), "found by layoutId or _id")
		}
		requireError(t, h.call(t, dev, "GET", "/v2/layouts/nope", nil, nil), http.StatusNotFound, "GET", "/v2/layouts/nope")

		list := h.call(t, dev, "GET", "/v2/layouts", nil, nil).Object(t)
		require.EqualValues(t, 3, list["totalCount"])
		require.Equal(t, []string{"weekly-digest", "promo", "main"}, layoutKeys(t, list), "newest first")
		list = h.call(t, dev, "GET", "/v2/layouts?orderBy=name&orderDirection=ASC&limit=2", nil, nil).Object(t)
		require.Equal(t, []string{"main", "promo"}, layoutKeys(t, list))
		list = h.call(t, dev, "GET", "/v2/layouts?orderBy=name&orderDirection=ASC&limit=2&offset=2", nil, nil).Object(t)
		require.Equal(t, []string{"weekly-digest"}, layoutKeys(t, list))
		list = h.call(t, dev, "GET", "/v2/layouts?query=MAIL", nil, nil).Object(t)
		require.Equal(t, []string{"promo"}, layoutKeys(t, list), "by name, ignoring case")
		require.EqualValues(t, 1, list["totalCount"])
		res = h.call(t, dev, "GET", "/v2/layouts?orderBy=layoutId&orderDirection=asc&limit=0", nil, nil)
		requireError(t, res, http.StatusUnprocessableEntity, "GET", "/v2/layouts", "orderBy", "orderDirection", "limit")

		// Update: the e-mail body's rules, nothing changed on a refusal.
		got := h.putLayoutBody(t, dev, "promo", "html", brandLayout)
		require.Equal(t, map[string]any{"email": map[string]any{"body": brandLayout, "editorType": "html"}},
			got["controls"].(map[string]any)["values"])
		require.Equal(t, "promo", got["name"])
		require.Equal(t, true, got["isTranslationEnabled"], "absent: kept")
		maily := `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Hi "},` +
			`{"type":"variable","attrs":{"id":"content","label":null}}]}]}`
		h.putLayoutBody(t, dev, "weekly-digest", "block", maily)
		for _, c := range []struct {
			name, editor, body, message string
		}{
			{"html without a document", "html", "<p>{{content}}</p>", "Content must be a valid HTML content"},
			{"html without content", "html", "<html><body>{{ contents }}</body></html>", `The layout body should contain the "content" variable`},
			{"block that is not Maily", "block", "<html><body>{{content}}</body></html>", "Content must be a valid Maily JSON content"},
			{"block without the variable", "block", `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"{{ content2 }}"}]}]}`,
				`The layout body should contain the "content" variable`},
		} {
			t.Run(c.name, func(t *testing.T) {
				res := h.call(t, dev, "PUT", "/v2/layouts/promo", map[string]any{"name": "Changed",
					"controlValues": map[string]any{"email": map[string]any{"body": c.body, "editorType": c.editor}}}, nil)
				requireError(t, res, http.StatusBadRequest, "PUT", "/v2/layouts/promo")
				require.Contains(t, res.Object(t)["message"], c.message)
			})
		}
		res = h.call(t, dev, "PUT", "/v2/layouts/promo", map[string]any{"name": "Changed", "controlValues": map[string]any{
			"email": map[string]any{"body": "<html><body>{% if %}{{content}}</body></html>", "editorType": "rich"}}}, nil)
		requireError(t, res, http.StatusUnprocessableEntity, "PUT", "/v2/layouts/promo",
			"controlValues.email.body", "controlValues.email.editorType")
		still := h.call(t, dev, "GET", "/v2/layouts/promo", nil, nil).Object(t)
		require.Equal(t, got, still, "nothing changed")
		res = h.call(t, dev, "PUT", "/v2/layouts/promo", map[string]any{"name": "Renamed"}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		require.Equal(t, "Renamed", res.Object(t)["name"])
		require.Equal(t, got["controls"], res.Object(t)["controls"], "controlValues absent: kept")
		requireError(t, h.call(t, dev, "PUT", "/v2/layouts/nope", map[string]any{"name": "N"}, nil), http.StatusNotFound,
			"PUT", "/v2/layouts/nope")
		requireError(t, h.call(t, dev, "PUT", "/v2/layouts/promo", map[string]any{"controlValues": nil}, nil),
			http.StatusUnprocessableEntity, "PUT", "/v2/layouts/promo", "name")

		// Duplicate: a copy of the controls, never the default.
		res = h.call(t, dev, "POST", "/v2/layouts/main/duplicate", map[string]any{"name": "Promo"}, nil)
		require.Equal(t, 201, res.Status, "%s", res.Raw)
		cp := res.Object(t)
		require.Regexp(t, `^promo-[a-z0-9]{6}$`, cp["layoutId"], "the derived layoutId was taken")
		require.Equal(t, false, cp["isDefault"])
		res = h.call(t, dev, "POST", "/v2/layouts/promo/duplicate", map[string]any{"name": "Promo copy", "layoutId": "promo-2"}, nil)
		require.Equal(t, 201, res.Status, "%s", res.Raw)
		cp = res.Object(t)
		require.Equal(t, "promo-2", cp["layoutId"])
		require.Equal(t, got["controls"], cp["controls"], "the original's control values")
		require.NotEqual(t, got["_id"], cp["_id"])
		res = h.call(t, dev, "POST", "/v2/layouts/promo/duplicate", map[string]any{"name": "Again", "layoutId": "promo-2"}, nil)
		requireError(t, res, http.StatusConflict, "POST", "/v2/layouts/promo/duplicate")

		// Preview: stored or given controls, the preview subscriber; a failure is still a 201.
		res = h.call(t, dev, "POST", "/v2/layouts/promo/preview", map[string]any{
			"previewPayload": map[string]any{"subscriber": map[string]any{"firstName": "Alice"}}}, nil)
		require.Equal(t, 201, res.Status, "%s", res.Raw)
		pv := res.Object(t)
		require.Equal(t, map[string]any{"subscriber": map[string]any{"firstName": "Alice"}}, pv["previewPayloadExample"])
		result := pv["result"].(map[string]any)
		require.Equal(t, "email", result["type"])
		body := result["preview"].(map[string]any)["body"].(string)
		require.True(t, strings.HasPrefix(body, "<html><body><h1>Alice's mail</h1>\n<p data-content-placeholder>"), body)
		res = h.call(t, dev, "POST", "/v2/layouts/promo/preview", map[string]any{"controlValues": map[string]any{
			"email": map[string]any{"body": "<html><body>{{subscriber.lastName | upcase}}{{content}}</body></html>", "editorType": "html"}},
			"previewPayload": map[string]any{"subscriber": map[string]any{"lastName": "Lovelace"}}}, nil)
		require.Equal(t, 201, res.Status, "%s", res.Raw)
		require.Contains(t, res.Object(t)["result"].(map[string]any)["preview"].(map[string]any)["body"], "<html><body>LOVELACE<p")
		res = h.call(t, dev, "POST", "/v2/layouts/promo/preview", map[string]any{"controlValues": map[string]any{
			"email": map[string]any{"body": "<html><body>{% for i in (1..1000) %}{% for j in (1..1000) %}{% endfor %}{% endfor %}{{content}}</body></html>",
				"editorType": "html"}}}, nil)
		require.Equal(t, 201, res.Status, "%s", res.Raw)
		require.Equal(t, map[string]any{"result": map[string]any{"type": "email"}, "previewPayloadExample": map[string]any{}}, res.Object(t),
			"a layout over a budget: no preview")
		require.Equal(t, still["controls"], h.call(t, dev, "GET", "/v2/layouts/promo", nil, nil).Object(t)["controls"], "nothing saved")
		res = h.call(t, dev, "POST", "/v2/layouts/main/preview", nil, nil)
		require.Equal(t, 201, res.Status, "%s", res.Raw)
		requireError(t, h.call(t, dev, "POST", "/v2/layouts/nope/preview", map[string]any{}, nil), http.StatusNotFound,
			"POST", "/v2/layouts/nope/preview")

		// Usage, and deleting: the default is kept, a used layout leaves its steps.
		h.createWorkflow(t, dev, map[string]any{"name": "Uses promo", "workflowId": "uses-promo", "steps": []any{
			map[string]any{"name": "Mail", "type": "email", "controlValues": map[string]any{"subject": "S", "body": "B", "layoutId": "promo"}}}})
		h.createWorkflow(t, dev, map[string]any{"name": "Another", "workflowId": "another", "steps": []any{
			map[string]any{"name": "Mail", "type": "email", "controlValues": map[string]any{"subject": "S", "body": "B", "layoutId": "main"}}}})
		res = h.call(t, dev, "GET", "/v2/layouts/promo/usage", nil, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		require.Equal(t, map[string]any{"workflows": []any{map[string]any{"name": "Uses promo", "workflowId": "uses-promo"}}}, res.Object(t))
		res = h.call(t, dev, "GET", "/v2/layouts/"+cp["_id"].(string)+"/usage", nil, nil)
		require.Equal(t, map[string]any{"workflows": []any{}}, res.Object(t))

		res = h.call(t, dev, "DELETE", "/v2/layouts/main", nil, nil)
		requireError(t, res, http.StatusConflict, "DELETE", "/v2/layouts/main")
		require.Contains(t, res.Object(t)["message"], "is being used as a default layout, it can not be deleted")
		res = h.call(t, dev, "DELETE", "/v2/layouts/promo", nil, nil)
		require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Raw)
		requireError(t, h.call(t, dev, "GET", "/v2/layouts/promo", nil, nil), http.StatusNotFound, "GET", "/v2/layouts/promo")
		requireError(t, h.call(t, dev, "DELETE", "/v2/layouts/promo", nil, nil), http.StatusNotFound, "DELETE", "/v2/layouts/promo")
		wf := h.call(t, dev, "GET", "/v2/workflows/uses-promo", nil, nil).Object(t)
		require.Equal(t, map[string]any{"subject": "S", "body": "B"}, objects(t, wf["steps"])[0]["controlValues"],
			"the deleted layout's id left the step's controls")
		wf = h.call(t, dev, "GET", "/v2/workflows/another", nil, nil).Object(t)
		require.Equal(t, "main", objects(t, wf["steps"])[0]["controlValues"].(map[string]any)["layoutId"])

		for _, cleared := range []any{nil, map[string]any{"email": nil}} {
			h.putLayoutBody(t, dev, "weekly-digest", "html", "<html><body>{{content}}</body></html>")
			res = h.call(t, dev, "PUT", "/v2/layouts/weekly-digest", map[string]any{"name": "W", "controlValues": cleared}, nil)
			require.Equal(t, 200, res.Status, "%s", res.Raw)
			require.Equal(t, map[string]any{"values": map[string]any{}}, res.Object(t)["controls"], "cleared by %v", cleared)
		}
	})
}

// TestLayoutWorkflowControls: an e-mail step's layoutId is a string or null.
func TestLayoutWorkflowControls(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		step := func(layoutID any) map[string]any {
			return map[string]any{"name": "W", "workflowId": "w", "steps": []any{map[string]any{"name": "Mail", "type": "email",
				"controlValues": map[string]any{"subject": "S", "body": "B", "layoutId": layoutID}}}}
		}
		for _, bad := range []any{5, true, map[string]any{"id": "x"}, strings.Repeat("x", 1025)} {
			res := h.call(t, dev, "POST", "/v2/workflows", step(bad), nil)
			requireError(t, res, http.StatusUnprocessableEntity, "POST", "/v2/workflows", "steps.0.controlValues.layoutId")
		}
		wf := h.createWorkflow(t, dev, step(nil))
		require.Nil(t, objects(t, wf["steps"])[0]["controlValues"].(map[string]any)["layoutId"])
		res := h.call(t, dev, "PUT", "/v2/workflows/w", step("not-yet-created"), nil)
		require.Equal(t, 200, res.Status, "a layout is looked up when the step runs: %s", res.Raw)
	})
}

// TestLayoutEmailWrapped proves end to end that a triggered e-mail reaches
// the provider inside its layout, that the trigger's overrides choose
// another layout or none, and that a missing layout or one over a sandbox
// budget fails the step cleanly.
func TestLayoutEmailWrapped(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		f := sendgridfake.New()
		defer f.Close()
		h.sendgridIntegration(t, f, "mail-main")
		h.createLayout(t, dev, map[string]any{"layoutId": "plain", "name": "Plain"}) // the default: not applied to steps without layoutId
		h.putLayoutBody(t, dev, "plain", "html", "<html><body>PLAIN {{content}}</body></html>")
		h.createLayout(t, dev, map[string]any{"layoutId": "brand", "name": "Brand"})
		h.putLayoutBody(t, dev, "brand", "html", brandLayout)
		h.createLayout(t, dev, map[string]any{"layoutId": "slow", "name": "Slow"})
		h.putLayoutBody(t, dev, "slow", "html",
			"<html><body>{% for i in (1..1000) %}{% for j in (1..1000) %}{% endfor %}{% endfor %}{{content}}</body></html>")
		h.createWorkflow(t, dev, map[string]any{"name": "Wrapped", "workflowId": "wrapped", "steps": []any{
			map[string]any{"name": "Mail", "stepId": "mail", "type": "email", "controlValues": map[string]any{
				"subject": "Hi {{subscriber.firstName}}", "layoutId": "brand",
				"body": `<p class="x">Hello <b>{{subscriber.firstName}}</b> & "{{payload.org}}"</p>`}}}})
		h.createWorkflow(t, dev, map[string]any{"name": "Bare", "workflowId": "bare", "steps": []any{
			map[string]any{"name": "Mail", "stepId": "mail", "type": "email", "controlValues": map[string]any{
				"subject": "Bare", "body": "<p>bare</p>"}}}})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "firstName": "Ada", "email": "ada@example.com"})
		clock := &testClock{t: time.Now().Add(time.Minute)}
		eng := h.deliveryEngine(clock)

		step := `<p class="x">Hello <b>Ada</b> & "A&B"</p>`
		wrapped := func(inner string) string {
			return "<html><body><h1>Ada's mail</h1>\n" + inner + "\n<footer>A&B</footer></body></html>"
		}
		for _, c := range []struct {
			tx, workflow string
			overrides    map[string]any
			want         string
		}{
			{"tx-layout", "wrapped", nil, wrapped(step)},
			{"tx-bare", "bare", nil, "<p>bare</p>"},
			{"tx-none", "wrapped", map[string]any{"channels": map[string]any{"email": map[string]any{"layoutId": nil}}}, step},
			{"tx-step", "bare", map[string]any{"steps": map[string]any{"mail": map[string]any{"layoutId": "brand"}},
				"channels": map[string]any{"email": map[string]any{"layoutId": "plain"}}}, wrapped("<p>bare</p>")},
			{"tx-channel", "wrapped", map[string]any{"channels": map[string]any{"email": map[string]any{"layoutId": "plain"}}},
				"<html><body>PLAIN " + step + "</body></html>"},
			{"tx-deprecated", "bare", map[string]any{"layoutIdentifier": "plain"}, "<html><body>PLAIN <p>bare</p></body></html>"},
		} {
			body := map[string]any{"name": c.workflow, "to": "ada", "payload": map[string]any{"org": "A&B"}, "transactionId": c.tx}
			if c.overrides != nil {
				body["overrides"] = c.overrides
			}
			h.trigger(t, dev, body)
			drain(t, eng)
			got := f.Received()
			require.NotEmpty(t, got, c.tx)
			require.Equal(t, c.want, got[len(got)-1].HTML, c.tx)
			require.Equal(t, "completed", h.jobsOf(t, c.tx)[0]["status"], c.tx)
		}
		require.Equal(t, "Hi Ada", f.Received()[0].Subject)
		require.Equal(t, "Ada's mail\n\nHello Ada & \"A&B\"\n\nA&B", f.Received()[0].Text, "the text part is the wrapped e-mail's")

		sent := len(f.Received())
		for _, c := range []struct {
			tx        string
			overrides map[string]any
			detail    string
		}{
			{"tx-missing", map[string]any{"steps": map[string]any{"mail": map[string]any{"layoutId": "gone"}}},
				`The e-mail's layout "gone" was not found: nothing was sent`},
			{"tx-budget", map[string]any{"layoutIdentifier": "slow"}, "Message content could not be generated: layout: "},
		} {
			h.trigger(t, dev, map[string]any{"name": "bare", "to": "ada", "transactionId": c.tx, "overrides": c.overrides})
			drain(t, eng)
			job := h.jobsOf(t, c.tx)[0]
			require.Equal(t, "failed", job["status"], c.tx)
			texts := detailTexts(t, job)
			require.Contains(t, texts[len(texts)-1], c.detail, c.tx)
		}
		require.Len(t, f.Received(), sent, "nothing was sent for the failed steps")

		// A layout deleted after the workflow named it: the step renders without it.
		res := h.call(t, dev, "DELETE", "/v2/layouts/brand", nil, nil)
		require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Raw)
		h.trigger(t, dev, map[string]any{"name": "wrapped", "to": "ada", "payload": map[string]any{"org": "A&B"}, "transactionId": "tx-after"})
		drain(t, eng)
		require.Equal(t, step, f.Received()[len(f.Received())-1].HTML)
	})
}

// TestLayoutTenancy: another environment's layout is a 404 everywhere, and
// its lists and usage never show it.
func TestLayoutTenancy(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.authFor(asDev), h.authFor(asProd)
		l := h.createLayout(t, dev, map[string]any{"layoutId": "secret", "name": "Secret"})
		other := h.createLayout(t, dev, map[string]any{"layoutId": "other", "name": "Other"})
		h.createWorkflow(t, prod, map[string]any{"name": "Prod", "workflowId": "prod", "steps": []any{
			map[string]any{"name": "Mail", "type": "email", "controlValues": map[string]any{"subject": "S", "body": "B", "layoutId": "secret"}}}})
		before := h.call(t, dev, "GET", "/v2/layouts", nil, nil)
		for _, key := range []string{"secret", l["_id"].(string), other["_id"].(string)} {
			for _, c := range []struct {
				method, path string
				body         any
			}{
				{"GET", "", nil}, {"PUT", "", map[string]any{"name": "Mallory"}}, {"DELETE", "", nil},
				{"POST", "/duplicate", map[string]any{"name": "Stolen"}}, {"POST", "/preview", map[string]any{}}, {"GET", "/usage", nil},
			} {
				target := "/v2/layouts/" + key + c.path
				res := h.call(t, prod, c.method, target, c.body, nil)
				requireError(t, res, http.StatusNotFound, c.method, target)
				absent := h.call(t, prod, c.method, "/v2/layouts/"+strings.Repeat("0", 24)+c.path, c.body, nil)
				require.Equal(t, strings.ReplaceAll(absent.Object(t)["message"].(string), strings.Repeat("0", 24), key),
					res.Object(t)["message"], "the same answer as for a layout that exists nowhere")
			}
		}
		list := h.call(t, prod, "GET", "/v2/layouts?query=secret", nil, nil).Object(t)
		require.Equal(t, map[string]any{"layouts": []any{}, "totalCount": float64(0)}, list)
		mine := h.createLayout(t, prod, map[string]any{"layoutId": "secret", "name": "Mine"})
		require.Equal(t, true, mine["isDefault"], "each environment has its own default")
		res := h.call(t, dev, "GET", "/v2/layouts/secret/usage", nil, nil)
		require.Equal(t, map[string]any{"workflows": []any{}}, res.Object(t), "another environment's workflow is no use")
		after := h.call(t, dev, "GET", "/v2/layouts", nil, nil)
		var b, a any
		require.NoError(t, json.Unmarshal(before.Raw, &b))
		require.NoError(t, json.Unmarshal(after.Raw, &a))
		require.Equal(t, b, a, "the development layouts are unchanged")
	})
}

// layoutSweepFixtures creates the layouts the bad-input sweep names: the
// default, one to update, one to delete, and a workflow using one.
func layoutSweepFixtures(t *testing.T, h *harness) {
	dev := h.authFor(asDev)
	for _, key := range []string{"sw-layout", "sw-put-layout", "sw-victim-layout"} {
		h.createLayout(t, dev, map[string]any{"layoutId": key, "name": key})
	}
	h.putLayoutBody(t, dev, "sw-layout", "html", "<html><body>{{content}}</body></html>")
	h.createWorkflow(t, dev, map[string]any{"name": "sw-layout-flow", "workflowId": "sw-layout-flow", "steps": []any{
		map[string]any{"name": "Mail", "type": "email", "controlValues": map[string]any{"subject": "S", "body": "B", "layoutId": "sw-victim-layout"}}}})
}
