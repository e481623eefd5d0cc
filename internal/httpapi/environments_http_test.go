package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/id"
)

// envIDs returns the _id of the development and production environments.
func (h *harness) envIDs(t testing.TB) (dev, prod string) {
	t.Helper()
	for _, e := range objects(t, h.call(t, h.authFor(asDev), "GET", "/v1/environments", nil, nil).JSON(t)) {
		switch e["name"] {
		case "development":
			dev = e["_id"].(string)
		case "production":
			prod = e["_id"].(string)
		}
	}
	require.NotEmpty(t, dev)
	require.NotEmpty(t, prod)
	return dev, prod
}

// foreignEnvironment writes another organization with one environment
// around the API and returns the environment's _id.
func (h *harness) foreignEnvironment(t testing.TB) string {
	t.Helper()
	org, env, now := id.New(), id.New(), time.Now().UnixMilli()
	_, err := h.DB.Writer().ExecContext(context.Background(), "INSERT INTO organizations (id, name, created_at) VALUES ($1, 'Other', $2)", org, now)
	require.NoError(t, err)
	_, err = h.DB.Writer().ExecContext(context.Background(), "INSERT INTO environments (id, organization_id, name, identifier, created_at)"+
		" VALUES ($1, $2, 'production', $3, $4)", env, org, "app_"+env[:20], now)
	require.NoError(t, err)
	return env
}

func inboxWorkflow(key string) map[string]any {
	return map[string]any{"name": "Promoted " + key, "workflowId": key, "tags": []string{"promo", "v1"},
		"steps": []any{map[string]any{"name": "Inbox", "stepId": "inbox", "type": "in_app",
			"controlValues": map[string]any{"subject": "Hello", "body": "Hi {{subscriber.firstName}}, {{payload.item}} shipped"}}}}
}

// TestPublishDevelopmentToProduction: a workflow made with the development
// key is published into production, then triggered with the production key
// and delivered; the diff shows it before and not after; publishing again
// changes nothing.
func TestPublishDevelopmentToProduction(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.envIDs(t)
		h.createWorkflow(t, h.authFor(asDev), inboxWorkflow("order-shipped"))
		trigger := map[string]any{"name": "order-shipped", "to": map[string]any{"subscriberId": "ada", "firstName": "Ada"},
			"payload": map[string]any{"item": "the book"}}
		res := h.call(t, h.authFor(asProd), "POST", "/v1/events/trigger", trigger, nil)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "not in production yet: %s", res.Raw)

		diff := h.call(t, h.authFor(asDev), "POST", "/v2/environments/"+prod+"/diff", map[string]any{}, nil)
		require.Equal(t, http.StatusOK, diff.Status, "%s", diff.Raw)
		d := diff.Object(t)
		require.Equal(t, dev, d["sourceEnvironmentId"])
		require.Equal(t, prod, d["targetEnvironmentId"])
		require.Equal(t, map[string]any{"totalEntities": 1.0, "totalChanges": 2.0, "hasChanges": true}, d["summary"])
		r := objects(t, d["resources"])[0]
		require.Equal(t, "workflow", r["resourceType"])
		require.Nil(t, r["targetResource"])
		require.Equal(t, "order-shipped", r["sourceResource"].(map[string]any)["id"])
		require.Equal(t, []string{"workflow:added", "step:added"}, changeActions(t, r))

		dry := h.call(t, h.authFor(asDev), "POST", "/v2/environments/"+prod+"/publish", map[string]any{"dryRun": true}, nil)
		require.Equal(t, http.StatusOK, dry.Status, "%s", dry.Raw)
		require.Equal(t, map[string]any{"resources": 1.0, "successful": 0.0, "failed": 0.0, "skipped": 1.0}, dry.Object(t)["summary"])

		pub := h.call(t, h.authFor(asDev), "POST", "/v2/environments/"+prod+"/publish", nil, nil)
		require.Equal(t, http.StatusOK, pub.Status, "%s", pub.Raw)
		results := objects(t, pub.Object(t)["results"])
		require.Len(t, results, 1)
		require.Equal(t, []any{map[string]any{"resourceType": "workflow", "resourceId": "order-shipped",
			"resourceName": "Promoted order-shipped", "action": "created"}}, results[0]["successful"])

		diff = h.call(t, h.authFor(asDev), "POST", "/v2/environments/"+prod+"/diff", nil, nil)
		require.Equal(t, map[string]any{"totalEntities": 0.0, "totalChanges": 0.0, "hasChanges": false}, diff.Object(t)["summary"])
		before := h.call(t, h.authFor(asProd), "GET", "/v2/workflows/order-shipped", nil, nil).Object(t)
		again := h.call(t, h.authFor(asDev), "POST", "/v2/environments/"+prod+"/publish", map[string]any{}, nil)
		require.Equal(t, http.StatusOK, again.Status, "%s", again.Raw)
		require.Equal(t, []any{}, again.Object(t)["results"])
		require.Equal(t, before, h.call(t, h.authFor(asProd), "GET", "/v2/workflows/order-shipped", nil, nil).Object(t),
			"publishing twice changes nothing the second time")

		h.trigger(t, h.authFor(asProd), trigger)
		drain(t, h.newEngine(engine.Options{}))
		feed := h.call(t, h.authFor(asProd), "GET", feedPath("ada", nil), nil, nil)
		require.Equal(t, http.StatusOK, feed.Status, "%s", feed.Raw)
		items := objects(t, feed.Object(t)["data"])
		require.Len(t, items, 1)
		require.Equal(t, "Hi Ada, the book shipped", items[0]["content"])
		require.Equal(t, http.StatusNotFound, h.call(t, h.authFor(asDev), "GET", feedPath("ada", nil), nil, nil).Status,
			"nothing reached development")

		// A change in development shows as modified, and a deletion there as deleted.
		patch := h.call(t, h.authFor(asDev), "PATCH", "/v2/workflows/order-shipped", map[string]any{"name": "Shipped", "active": false}, nil)
		require.Equal(t, http.StatusOK, patch.Status, "%s", patch.Raw)
		r = objects(t, h.call(t, h.authFor(asDev), "POST", "/v2/environments/"+prod+"/diff", nil, nil).Object(t)["resources"])[0]
		require.Equal(t, []string{"workflow:modified"}, changeActions(t, r))
		require.Equal(t, map[string]any{"added": 0.0, "modified": 1.0, "deleted": 0.0, "unchanged": 1.0}, r["summary"])
		require.Equal(t, http.StatusNoContent, h.call(t, h.authFor(asDev), "DELETE", "/v2/workflows/order-shipped", nil, nil).Status)
		r = objects(t, h.call(t, h.authFor(asDev), "POST", "/v2/environments/"+prod+"/diff", nil, nil).Object(t)["resources"])[0]
		require.Nil(t, r["sourceResource"])
		require.Equal(t, []string{"workflow:deleted", "step:deleted"}, changeActions(t, r))
	})
}

func changeActions(t testing.TB, resource map[string]any) []string {
	var out []string
	for _, c := range objects(t, resource["changes"]) {
		out = append(out, c["resourceType"].(string)+":"+c["action"].(string))
	}
	return out
}

// TestEnvironmentCreateUpdateDelete: a new environment works at once with
// the key of its creation's answer; settings change with the environment's
// own key (or a session); development and production are protected.
func TestEnvironmentCreateUpdateDelete(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.envIDs(t)
		res := h.call(t, h.authFor(asDev), "POST", "/v1/environments", map[string]any{"name": "Staging", "color": "#4f46e5"}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		env := res.Object(t)
		staging := env["_id"].(string)
		require.Equal(t, "Staging", env["name"])
		require.Nil(t, env["type"])
		require.Equal(t, dev, env["_parentId"])
		keys := objects(t, env["apiKeys"])
		require.Len(t, keys, 1)
		stagingKey := "ApiKey " + keys[0]["key"].(string)
		me := h.call(t, stagingKey, "GET", "/v1/environments/me", nil, nil).Object(t)
		require.Equal(t, staging, me["_id"])
		require.NotContains(t, me, "apiKeys", "the key is shown once")
		active := h.call(t, stagingKey, "GET", "/v1/integrations/active", nil, nil)
		require.Equal(t, http.StatusOK, active.Status)
		require.Equal(t, "herald-inbox", objects(t, active.JSON(t))[0]["identifier"], "it has the in-app integration")
		require.Equal(t, http.StatusConflict, h.call(t, h.authFor(asDev), "POST", "/v1/environments", map[string]any{"name": "Staging"}, nil).Status)

		// Published into, it delivers with its own key.
		h.createWorkflow(t, h.authFor(asDev), inboxWorkflow("welcome"))
		sync := h.call(t, h.authFor(asDev), "PUT", "/v2/workflows/welcome/sync", map[string]any{"targetEnvironmentId": staging}, nil)
		require.Equal(t, http.StatusOK, sync.Status, "%s", sync.Raw)
		copied := sync.Object(t)
		require.Equal(t, "welcome", copied["workflowId"])
		h.trigger(t, stagingKey, map[string]any{"name": "welcome", "to": map[string]any{"subscriberId": "bo", "firstName": "Bo"},
			"payload": map[string]any{"item": "x"}})
		drain(t, h.newEngine(engine.Options{}))
		require.Len(t, objects(t, h.call(t, stagingKey, "GET", feedPath("bo", nil), nil, nil).Object(t)["data"]), 1)
		// Syncing again updates the same workflow.
		again := h.call(t, h.authFor(asDev), "PUT", "/v2/workflows/welcome/sync", map[string]any{"targetEnvironmentId": staging}, nil)
		require.Equal(t, copied["_id"], again.Object(t)["_id"])
		require.Equal(t, http.StatusBadRequest, h.call(t, h.authFor(asDev), "PUT", "/v2/workflows/welcome/sync",
			map[string]any{"targetEnvironmentId": dev}, nil).Status)

		tags := h.call(t, stagingKey, "GET", "/v2/environments/"+staging+"/tags", nil, nil)
		require.Equal(t, http.StatusOK, tags.Status, "%s", tags.Raw)
		require.Equal(t, []any{map[string]any{"name": "promo"}, map[string]any{"name": "v1"}}, tags.JSON(t))
		byIdentifier := h.call(t, h.authFor(asDev), "GET", "/v2/environments/"+env["identifier"].(string)+"/tags", nil, nil)
		require.Equal(t, tags.JSON(t), byIdentifier.JSON(t))

		// Settings: a key changes its own environment only.
		put := h.call(t, stagingKey, "PUT", "/v1/environments/"+staging, map[string]any{"name": "QA", "color": "#000000"}, nil)
		require.Equal(t, http.StatusOK, put.Status, "%s", put.Raw)
		require.Equal(t, "QA", put.Object(t)["name"])
		require.Equal(t, http.StatusForbidden, h.call(t, h.authFor(asDev), "PUT", "/v1/environments/"+staging, map[string]any{"name": "X"}, nil).Status)
		bySession := h.call(t, h.authFor(asSession), "PUT", "/v1/environments/"+staging, map[string]any{"color": "#ffffff"}, nil)
		require.Equal(t, http.StatusOK, bySession.Status, "%s", bySession.Raw)
		require.Equal(t, "QA", bySession.Object(t)["name"], "only the fields sent change")
		require.Equal(t, http.StatusBadRequest, h.call(t, h.authFor(asDev), "PUT", "/v1/environments/"+dev, map[string]any{"name": "dev2"}, nil).Status)
		require.Equal(t, http.StatusConflict, h.call(t, stagingKey, "PUT", "/v1/environments/"+staging,
			map[string]any{"name": "production"}, nil).Status)

		// Development and production are protected, for keys and sessions alike.
		for _, target := range []string{dev, prod} {
			res := h.call(t, h.authFor(asSession), "DELETE", "/v1/environments/"+target, nil, nil)
			require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Raw)
		}
		require.Equal(t, http.StatusBadRequest, h.call(t, h.authFor(asDev), "DELETE", "/v1/environments/"+dev, nil, nil).Status)
		del := h.call(t, h.authFor(asDev), "DELETE", "/v1/environments/"+staging, nil, nil)
		require.Equal(t, http.StatusOK, del.Status, "%s", del.Raw)
		require.Empty(t, del.Raw)
		require.Equal(t, http.StatusUnauthorized, h.call(t, stagingKey, "GET", "/v1/environments/me", nil, nil).Status)
		require.Len(t, objects(t, h.call(t, h.authFor(asDev), "GET", "/v1/environments", nil, nil).JSON(t)), 2)
		require.Equal(t, http.StatusNotFound, h.call(t, h.authFor(asSession), "DELETE", "/v1/environments/"+staging, nil, nil).Status)
	})
}

// TestPromotionAcrossOrganizations: another organization's environment is
// a 404 for every environment operation; a key promotes only from its own.
func TestPromotionAcrossOrganizations(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.envIDs(t)
		foreign := h.foreignEnvironment(t)
		h.createWorkflow(t, h.authFor(asDev), inboxWorkflow("secret-flow"))
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{"POST", "/v2/environments/" + foreign + "/diff", nil},
			{"POST", "/v2/environments/" + foreign + "/publish", nil},
			{"GET", "/v2/environments/" + foreign + "/tags", nil},
			{"PUT", "/v1/environments/" + foreign, map[string]any{"name": "mine"}},
			{"DELETE", "/v1/environments/" + foreign, nil},
			{"PUT", "/v2/workflows/secret-flow/sync", map[string]any{"targetEnvironmentId": foreign}},
			{"POST", "/v2/environments/" + prod + "/diff", map[string]any{"sourceEnvironmentId": foreign}},
		} {
			for _, who := range []string{asDev, asSession} {
				res := h.call(t, h.authFor(who), c.method, c.path, c.body, nil)
				require.Equal(t, http.StatusNotFound, res.Status, "%s %s: %s", c.method, c.path, res.Raw)
			}
		}
		// Another environment's workflow is absent for the workflow operations.
		before := h.call(t, h.authFor(asDev), "GET", "/v2/workflows/secret-flow", nil, nil).Object(t)
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{"PATCH", "/v2/workflows/secret-flow", map[string]any{"name": "Mallory"}},
			{"GET", "/v2/workflows/secret-flow/steps/inbox", nil},
			{"POST", "/v2/workflows/secret-flow/step/inbox/preview", map[string]any{}},
			{"PUT", "/v2/workflows/secret-flow/sync", map[string]any{"targetEnvironmentId": dev}},
		} {
			res := h.call(t, h.authFor(asProd), c.method, c.path, c.body, nil)
			requireError(t, res, http.StatusNotFound, c.method, c.path)
			absent := h.call(t, h.authFor(asProd), c.method, strings.Replace(c.path, "secret-flow", "no-such-flow", 1), c.body, nil)
			require.Equal(t, stripVolatile(t, absent, "no-such-flow"), stripVolatile(t, res, "secret-flow"),
				"%s %s answers as for a workflow that exists nowhere", c.method, c.path)
		}
		require.Equal(t, before, h.call(t, h.authFor(asDev), "GET", "/v2/workflows/secret-flow", nil, nil).Object(t))

		var n int
		require.NoError(t, h.DB.Reader().QueryRowContext(context.Background(),
			"SELECT count(*) FROM workflows WHERE environment_id = $1", foreign).Scan(&n))
		require.Zero(t, n)

		// The production key may not promote development's workflows; a session may.
		res := h.call(t, h.authFor(asProd), "POST", "/v2/environments/"+prod+"/publish", map[string]any{"sourceEnvironmentId": dev}, nil)
		require.Equal(t, http.StatusForbidden, res.Status, "%s", res.Raw)
		res = h.call(t, h.authFor(asProd), "POST", "/v2/environments/"+prod+"/diff", nil, nil)
		require.Equal(t, http.StatusBadRequest, res.Status, "source = target: %s", res.Raw)
		res = h.call(t, "Bearer "+h.Session("production"), "POST", "/v2/environments/"+prod+"/publish",
			map[string]any{"sourceEnvironmentId": dev, "resources": []any{map[string]any{"resourceType": "workflow", "resourceId": "secret-flow"}}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, 1.0, res.Object(t)["summary"].(map[string]any)["successful"])
		require.Equal(t, http.StatusBadRequest, h.call(t, h.authFor(asDev), "POST", "/v2/environments/not-an-id/diff", nil, nil).Status)
		require.Equal(t, http.StatusUnprocessableEntity, h.call(t, h.authFor(asDev), "POST", "/v2/environments/"+prod+"/publish",
			map[string]any{"resources": []any{map[string]any{"resourceType": "REGULAR", "resourceId": "x"}}}, nil).Status)
	})
}

// TestWorkflowStepAndPreview: a step with its controls' schema and
// variables, and its preview rendered by the engine.
func TestWorkflowStepAndPreview(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		wf := h.createWorkflow(t, h.authFor(asDev), map[string]any{"name": "Preview", "workflowId": "preview", "steps": []any{
			map[string]any{"name": "Inbox", "stepId": "inbox", "type": "in_app", "controlValues": map[string]any{
				"subject": "{{payload.order.id}}", "body": "Hi {{subscriber.firstName | upcase}}",
				"primaryAction": map[string]any{"label": "Open", "redirect": map[string]any{"url": "/orders/{{payload.order.id}}"}}}},
			map[string]any{"name": "Mail", "stepId": "mail", "type": "email", "controlValues": map[string]any{
				"subject": "Order {{payload.order.id}}", "body": "<p>{{payload.note}}</p>"}},
		}})
		stepDBID := objects(t, wf["steps"])[1]["_id"].(string)
		res := h.call(t, h.authFor(asDev), "GET", "/v2/workflows/preview/steps/"+stepDBID, nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		st := res.Object(t)
		require.Equal(t, "mail", st["stepId"])
		require.Contains(t, st["controls"].(map[string]any)["dataSchema"].(map[string]any)["properties"], "subject")
		vars := st["variables"].(map[string]any)["properties"].(map[string]any)
		payload := vars["payload"].(map[string]any)["properties"].(map[string]any)
		require.Contains(t, payload, "note")
		require.Contains(t, payload["order"].(map[string]any)["properties"], "id")
		require.Contains(t, vars["steps"].(map[string]any)["properties"], "inbox")
		require.Equal(t, http.StatusNotFound, h.call(t, h.authFor(asDev), "GET", "/v2/workflows/preview/steps/nope", nil, nil).Status)
		require.Equal(t, http.StatusNotFound, h.call(t, h.authFor(asProd), "GET", "/v2/workflows/preview/steps/mail", nil, nil).Status)

		res = h.call(t, h.authFor(asDev), "POST", "/v2/workflows/preview/step/inbox/preview", map[string]any{
			"previewPayload": map[string]any{"subscriber": map[string]any{"firstName": "Ada"}, "payload": map[string]any{"order": map[string]any{"id": "A-1"}}}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		p := res.Object(t)
		require.Equal(t, map[string]any{"type": "in_app", "preview": map[string]any{"subject": "A-1", "body": "Hi ADA",
			"primaryAction": map[string]any{"label": "Open", "redirect": map[string]any{"url": "/orders/A-1"}}}}, p["result"])
		require.Equal(t, "A-1", p["previewPayloadExample"].(map[string]any)["payload"].(map[string]any)["order"].(map[string]any)["id"])

		// No payload: placeholders; controlValues sent render instead and are not saved.
		res = h.call(t, h.authFor(asDev), "POST", "/v2/workflows/preview/step/mail/preview", map[string]any{}, nil)
		require.Equal(t, map[string]any{"subject": "Order {{payload.order.id}}", "body": "<p>{{payload.note}}</p>"},
			res.Object(t)["result"].(map[string]any)["preview"])
		res = h.call(t, h.authFor(asDev), "POST", "/v2/workflows/preview/step/mail/preview", map[string]any{
			"controlValues": map[string]any{"subject": "Draft {{payload.x}}", "body": "b"}, "previewPayload": map[string]any{"payload": map[string]any{"x": 1}}}, nil)
		require.Equal(t, map[string]any{"subject": "Draft 1", "body": "b"}, res.Object(t)["result"].(map[string]any)["preview"])
		got := h.call(t, h.authFor(asDev), "GET", "/v2/workflows/preview/steps/mail", nil, nil).Object(t)
		require.Equal(t, "Order {{payload.order.id}}", got["controlValues"].(map[string]any)["subject"])
		// A template that fails at render time: 201 with an empty preview.
		res = h.call(t, h.authFor(asDev), "POST", "/v2/workflows/preview/step/mail/preview", map[string]any{
			"controlValues": map[string]any{"subject": "{% for i in (1..100000000) %}x{% endfor %}"}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		require.Equal(t, map[string]any{}, res.Object(t)["result"].(map[string]any)["preview"])

		// PATCH changes only what was sent.
		res = h.call(t, h.authFor(asDev), "PATCH", "/v2/workflows/preview", map[string]any{"tags": []string{"a"}, "description": "d"}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		patched := res.Object(t)
		require.Equal(t, []any{"a"}, patched["tags"])
		require.Equal(t, "Preview", patched["name"])
		require.Equal(t, true, patched["active"])
		require.Equal(t, wf["steps"], patched["steps"])
		require.Equal(t, http.StatusUnprocessableEntity, h.call(t, h.authFor(asDev), "PATCH", "/v2/workflows/preview",
			map[string]any{"active": "yes", "name": ""}, nil).Status)
	})
}

// TestEnvironmentCreateReplayIsSealed: the new environment's key, in an
// API-key caller's idempotent answer, is stored sealed and replayed whole.
func TestEnvironmentCreateReplayIsSealed(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		body := map[string]any{"name": "sealed"}
		first := h.call(t, h.authFor(asDev), "POST", "/v1/environments", body, map[string]string{"Idempotency-Key": "env-create-1"})
		require.Equal(t, http.StatusCreated, first.Status, "%s", first.Raw)
		key := objects(t, first.Object(t)["apiKeys"])[0]["key"].(string)
		var stored []byte
		require.NoError(t, h.DB.Reader().QueryRowContext(context.Background(),
			"SELECT body FROM idempotency_keys WHERE idem_key = 'env-create-1'").Scan(&stored))
		require.NotEmpty(t, stored)
		require.NotContains(t, string(stored), key)
		again := h.call(t, h.authFor(asDev), "POST", "/v1/environments", body, map[string]string{"Idempotency-Key": "env-create-1"})
		require.Equal(t, "true", again.Header.Get("Idempotency-Replay"))
		require.JSONEq(t, string(first.Raw), string(again.Raw))
	})
}
