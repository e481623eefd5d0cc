package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/provider/email/sendgrid/sendgridfake"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
)

const envVarsPath = "/v1/environment-variables"

func TestEnvironmentVariablesAPI(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod, session := h.authFor(asDev), h.authFor(asProd), h.authFor(asSession)
		devEnv, prodEnv := h.envID(t, "development"), h.envID(t, "production")

		res := h.call(t, dev, "POST", envVarsPath, map[string]any{"key": "API_TOKEN", "isSecret": true,
			"values": []any{map[string]any{"_environmentId": devEnv, "value": "tok-dev"}}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		v := res.Object(t)
		require.Equal(t, "API_TOKEN", v["key"])
		require.Equal(t, "string", v["type"])
		require.Equal(t, true, v["isSecret"])
		require.Equal(t, []any{map[string]any{"_environmentId": devEnv, "value": "••••••••"}}, v["values"])
		require.NotContains(t, string(res.Raw), "tok-dev")

		requireError(t, h.call(t, dev, "POST", envVarsPath, map[string]any{"key": "API_TOKEN"}, nil), 409, "POST", envVarsPath)
		requireError(t, h.call(t, dev, "POST", envVarsPath, map[string]any{"key": "9LIVES"}, nil), 422, "POST", envVarsPath, "key")
		requireError(t, h.call(t, dev, "POST", envVarsPath, map[string]any{"key": "K", "type": "number"}, nil), 422, "POST", envVarsPath, "type")
		requireError(t, h.call(t, dev, "POST", envVarsPath, map[string]any{"key": "K", "values": []any{
			map[string]any{"_environmentId": "nope", "value": 1}}}, nil), 422, "POST", envVarsPath,
			"values.0._environmentId", "values.0.value")
		// The mask is never saved as a value.
		requireError(t, h.call(t, dev, "POST", envVarsPath, map[string]any{"key": "MASKED", "isSecret": true, "values": []any{
			map[string]any{"_environmentId": devEnv, "value": "••••••••"}}}, nil), 400, "POST", envVarsPath)
		// An API key writes only its own environment's value; an
		// environment of no one's is a 404.
		requireError(t, h.call(t, dev, "POST", envVarsPath, map[string]any{"key": "K", "values": []any{
			map[string]any{"_environmentId": prodEnv, "value": "p"}}}, nil), 403, "POST", envVarsPath)
		requireError(t, h.call(t, dev, "POST", envVarsPath, map[string]any{"key": "K", "values": []any{
			map[string]any{"_environmentId": id.New(), "value": "p"}}}, nil), 404, "POST", envVarsPath)
		require.Equal(t, 404, h.call(t, dev, "GET", envVarsPath+"/K", nil, nil).Status, "nothing was created")

		// The production key sets its own value; values merge.
		path := envVarsPath + "/API_TOKEN"
		res = h.call(t, prod, "PATCH", path, map[string]any{"values": []any{map[string]any{"_environmentId": prodEnv, "value": "tok-prod"}}}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		require.Len(t, res.Object(t)["values"], 2)
		requireError(t, h.call(t, dev, "PATCH", path, map[string]any{}, nil), 400, "PATCH", path)
		values, err := h.DB.EnvironmentVariableValues(context.Background(), prodEnv)
		require.NoError(t, err)
		require.Equal(t, map[string]string{"API_TOKEN": "tok-prod"}, values)

		// A dashboard session is not scoped to one environment.
		res = h.call(t, session, "POST", envVarsPath, map[string]any{"key": "BASE_URL", "values": []any{
			map[string]any{"_environmentId": devEnv, "value": "https://dev.example"},
			map[string]any{"_environmentId": prodEnv, "value": "https://example.com"}}}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		require.Contains(t, string(res.Raw), "https://example.com", "a value that is no secret is shown")

		list := h.call(t, dev, "GET", envVarsPath+"?search=base", nil, nil)
		require.Equal(t, 200, list.Status, "%s", list.Raw)
		require.Len(t, list.Array(t), 1)
		require.Len(t, h.call(t, prod, "GET", envVarsPath, nil, nil).Array(t), 2, "keys are organization-wide")

		// Rename; a rename onto a key in use is a 409.
		requireError(t, h.call(t, dev, "PATCH", envVarsPath+"/BASE_URL", map[string]any{"key": "API_TOKEN"}, nil), 409, "PATCH", envVarsPath+"/BASE_URL")
		res = h.call(t, dev, "PATCH", envVarsPath+"/BASE_URL", map[string]any{"key": "SITE_URL"}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		require.Equal(t, 404, h.call(t, dev, "GET", envVarsPath+"/BASE_URL", nil, nil).Status)
		got := h.call(t, dev, "GET", envVarsPath+"/SITE_URL", nil, nil)
		require.Equal(t, 200, got.Status)
		require.Len(t, got.Object(t)["values"], 2, "values follow the rename")

		// Usage: workflows whose step controls name env.SITE_URL, not env.SITE_URL_2.
		h.createWorkflow(t, dev, map[string]any{"name": "Uses it", "workflowId": "uses", "steps": []any{map[string]any{
			"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "Go to {{ env.SITE_URL }}/home"}}}})
		h.createWorkflow(t, dev, map[string]any{"name": "Other", "workflowId": "other", "steps": []any{map[string]any{
			"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "{{env.SITE_URL_2}} {{payload.env.SITE_URL}}"}}}})
		usage := h.call(t, dev, "GET", envVarsPath+"/SITE_URL/usage", nil, nil)
		require.Equal(t, 200, usage.Status, "%s", usage.Raw)
		require.Equal(t, map[string]any{"workflows": []any{map[string]any{"name": "Uses it", "workflowId": "uses"}}}, usage.Object(t))
		require.Equal(t, 404, h.call(t, dev, "GET", envVarsPath+"/NOPE/usage", nil, nil).Status)

		// Secret flag changes keep the values, sealed or not.
		res = h.call(t, dev, "PATCH", path, map[string]any{"isSecret": false}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		require.Contains(t, string(res.Raw), "tok-dev")

		res = h.call(t, dev, "DELETE", path, nil, nil)
		require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Raw)
		require.Empty(t, res.Raw)
		requireError(t, h.call(t, dev, "DELETE", path, nil, nil), 404, "DELETE", path)
		requireError(t, h.call(t, dev, "GET", path, nil, nil), 404, "GET", path)
	})
}

func TestContextsAPI(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.authFor(asDev), h.authFor(asProd)
		res := h.call(t, dev, "POST", "/v2/contexts", map[string]any{"type": "tenant", "id": "acme", "data": map[string]any{"name": "Acme"}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		c := res.Object(t)
		require.Equal(t, "tenant", c["type"])
		require.Equal(t, "acme", c["id"])
		require.Equal(t, map[string]any{"name": "Acme"}, c["data"])
		res = h.call(t, dev, "POST", "/v2/contexts", map[string]any{"type": "tenant", "id": "acme"}, nil)
		requireError(t, res, 409, "POST", "/v2/contexts")
		require.Contains(t, string(res.Raw), "Context with type 'tenant' and id 'acme' already exists")
		requireError(t, h.call(t, dev, "POST", "/v2/contexts", map[string]any{"type": "Tenant", "id": "a b"}, nil), 422,
			"POST", "/v2/contexts", "type", "id")
		requireError(t, h.call(t, dev, "POST", "/v2/contexts", map[string]any{"type": "tenant", "id": "x", "data": []int{1}}, nil), 422,
			"POST", "/v2/contexts", "data")
		for _, cid := range []string{"beta", "gamma"} {
			res := h.call(t, dev, "POST", "/v2/contexts", map[string]any{"type": "project", "id": cid}, nil)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			require.Equal(t, map[string]any{}, res.Object(t)["data"], "data defaults to {}")
		}

		page := h.call(t, dev, "GET", "/v2/contexts?limit=2", nil, nil)
		require.Equal(t, 200, page.Status, "%s", page.Raw)
		p := page.Object(t)
		require.EqualValues(t, 3, p["totalCount"])
		require.Nil(t, p["previous"])
		data := objects(t, p["data"])
		require.Equal(t, []any{"gamma", "beta"}, []any{data[0]["id"], data[1]["id"]}, "newest first")
		next := h.call(t, dev, "GET", "/v2/contexts?limit=2&after="+p["next"].(string), nil, nil).Object(t)
		require.Equal(t, "acme", objects(t, next["data"])[0]["id"])
		require.Nil(t, next["next"])
		incl := h.call(t, dev, "GET", "/v2/contexts?limit=2&includeCursor=true&after="+p["next"].(string), nil, nil).Object(t)
		require.Equal(t, []any{"beta", "acme"}, []any{objects(t, incl["data"])[0]["id"], objects(t, incl["data"])[1]["id"]})
		requireError(t, h.call(t, dev, "GET", "/v2/contexts?after="+p["next"].(string)+"&before="+p["next"].(string), nil, nil), 422,
			"GET", "/v2/contexts", "before")
		for q, want := range map[string]int{"type=project": 2, "id=acme": 1, "search=T%3AAC": 1, "search=.%2A": 0, "search=ject%3Ag": 1} {
			got := h.call(t, dev, "GET", "/v2/contexts?"+q, nil, nil).Object(t)
			require.EqualValues(t, want, got["totalCount"], q)
		}

		path := "/v2/contexts/tenant/acme"
		got := h.call(t, dev, "GET", path, nil, nil)
		require.Equal(t, 200, got.Status)
		res = h.call(t, dev, "PATCH", path, map[string]any{"data": map[string]any{"plan": "pro"}}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		require.Equal(t, map[string]any{"plan": "pro"}, res.Object(t)["data"], "data is replaced, not merged")
		requireError(t, h.call(t, dev, "PATCH", path, map[string]any{}, nil), 422, "PATCH", path, "data")

		// Another environment sees none of it.
		for _, c := range []struct {
			method string
			body   any
		}{{"GET", nil}, {"PATCH", map[string]any{"data": map[string]any{}}}, {"DELETE", nil}} {
			requireError(t, h.call(t, prod, c.method, path, c.body, nil), 404, c.method, path)
		}
		require.EqualValues(t, 0, h.call(t, prod, "GET", "/v2/contexts", nil, nil).Object(t)["totalCount"])
		res = h.call(t, prod, "POST", "/v2/contexts", map[string]any{"type": "tenant", "id": "acme"}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "type:id is unique per environment: %s", res.Raw)

		res = h.call(t, dev, "DELETE", path, nil, nil)
		require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Raw)
		requireError(t, h.call(t, dev, "GET", path, nil, nil), 404, "GET", path)
		require.Equal(t, 200, h.call(t, prod, "GET", path, nil, nil).Status)
	})
}

// TestEnvironmentVariableOtherOrganization: variables are organization-wide;
// another organization's key can neither see nor change them.
func TestEnvironmentVariableOtherOrganization(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		res := h.call(t, h.authFor(asDev), "POST", envVarsPath, map[string]any{"key": "SHARED", "values": []any{
			map[string]any{"_environmentId": h.envID(t, "development"), "value": "v"}}}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		other := "ApiKey " + otherOrganizationKey(t, h)
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{"GET", envVarsPath + "/SHARED", nil},
			{"PATCH", envVarsPath + "/SHARED", map[string]any{"isSecret": true}},
			{"GET", envVarsPath + "/SHARED/usage", nil},
			{"DELETE", envVarsPath + "/SHARED", nil},
		} {
			requireError(t, h.call(t, other, c.method, c.path, c.body, nil), 404, c.method, c.path)
		}
		require.Empty(t, h.call(t, other, "GET", envVarsPath, nil, nil).Array(t))
		// Its own variable of the same key is its own.
		res = h.call(t, other, "POST", envVarsPath, map[string]any{"key": "SHARED"}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		// A value for the first organization's environment is a 404.
		res = h.call(t, other, "PATCH", envVarsPath+"/SHARED", map[string]any{"values": []any{
			map[string]any{"_environmentId": h.envID(t, "development"), "value": "x"}}}, nil)
		requireError(t, res, 404, "PATCH", envVarsPath+"/SHARED")
		require.Equal(t, 200, h.call(t, h.authFor(asDev), "GET", envVarsPath+"/SHARED", nil, nil).Status)
	})
}

// otherOrganizationKey makes a second organization with one environment
// and returns an API key of it (Bootstrap only ever makes the first).
func otherOrganizationKey(t *testing.T, h *harness) string {
	t.Helper()
	org, env := id.New(), id.New()
	now := time.Now().UnixMilli()
	_, err := h.DB.Writer().ExecContext(t.Context(), "INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)", org, "Other", now)
	require.NoError(t, err)
	_, err = h.DB.Writer().ExecContext(t.Context(), "INSERT INTO environments (id, organization_id, name, identifier, created_at)"+
		" VALUES ($1, $2, $3, $4, $5)", env, org, "development", secret.NewApplicationIdentifier(), now)
	require.NoError(t, err)
	key := secret.NewAPIKey()
	require.NoError(t, h.DB.APIKeyCreate(t.Context(), &store.APIKey{ID: id.New(), EnvironmentID: env, Hash: secret.HashAPIKey(key),
		Prefix: key[:8], Key: key, CreatedAt: time.Now()}))
	return key
}

// TestEnvAndContextRender: a trigger's message renders {{env.KEY}} with the
// value of the environment it runs in and {{context.tenant.data.name}}
// with the context as stored; the in-app message (at trigger time and by a
// worker) and the delivered e-mail alike.
func TestEnvAndContextRender(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		h.DB.SetTriggerPlanner(engine.InAppPlanner(sandbox.New(sandbox.DefaultLimits), h.DB))
		dev, prod, session := h.authFor(asDev), h.authFor(asProd), h.authFor(asSession)
		devEnv, prodEnv := h.envID(t, "development"), h.envID(t, "production")
		res := h.call(t, session, "POST", envVarsPath, map[string]any{"key": "BASE_URL", "values": []any{
			map[string]any{"_environmentId": devEnv, "value": "https://dev.example"},
			map[string]any{"_environmentId": prodEnv, "value": "https://example.com"}}}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		res = h.call(t, dev, "POST", envVarsPath, map[string]any{"key": "SIGNING", "isSecret": true, "values": []any{
			map[string]any{"_environmentId": devEnv, "value": "s3cr3t"}}}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		res = h.call(t, dev, "POST", "/v2/contexts", map[string]any{"type": "tenant", "id": "acme", "data": map[string]any{"name": "Acme"}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)

		body := "{{env.BASE_URL}}/t/{{context.tenant.id}} for {{context.tenant.data.name}} [{{env.SIGNING}}][{{env.NOPE}}]"
		f := sendgridfake.New()
		defer f.Close()
		h.sendgridIntegration(t, f, "mail-main")
		for _, auth := range []string{dev, prod} {
			h.createWorkflow(t, auth, map[string]any{"name": "Tenant news", "workflowId": "tenant-news", "steps": []any{
				map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": body}},
				map[string]any{"name": "Mail", "type": "email", "controlValues": map[string]any{"subject": "News for {{context.tenant.data.name}}",
					"body": `<p><a href="{{env.BASE_URL}}/news">{{context.tenant.data.name}}</a></p>`}},
			}})
			h.createSubscriber(t, auth, map[string]any{"subscriberId": "ada", "firstName": "Ada", "email": "ada@example.com"})
		}

		// The data sent with an existing context is ignored: it is used as stored.
		h.trigger(t, dev, map[string]any{"name": "tenant-news", "to": "ada", "transactionId": "tx-dev",
			"context": map[string]any{"tenant": map[string]any{"id": "acme", "data": map[string]any{"name": "Ignored"}}}})
		items := h.feedItems(t, "ada")
		require.Len(t, items, 1, "rendered with the trigger (no worker ran)")
		require.Equal(t, "https://dev.example/t/acme for Acme [s3cr3t][]", items[0]["content"])
		eng := h.deliveryEngine(&testClock{t: time.Now().Add(time.Minute)})
		drain(t, eng)
		got := f.Received()
		require.Len(t, got, 1)
		require.Equal(t, "News for Acme", got[0].Subject)
		require.Equal(t, `<p><a href="https://dev.example/news">Acme</a></p>`, got[0].HTML)

		// A missing context is created with the trigger's data; a recipient
		// created by the trigger is rendered by a worker, the same way.
		h.trigger(t, dev, map[string]any{"name": "tenant-news", "to": map[string]any{"subscriberId": "bob", "firstName": "Bob"},
			"transactionId": "tx-new", "context": map[string]any{"tenant": map[string]any{"id": "newco", "data": map[string]any{"name": "NewCo"}}}})
		drain(t, eng)
		bob := h.feedItems(t, "bob")
		require.Len(t, bob, 1)
		require.Equal(t, "https://dev.example/t/newco for NewCo [s3cr3t][]", bob[0]["content"])
		stored := h.call(t, dev, "GET", "/v2/contexts/tenant/newco", nil, nil)
		require.Equal(t, 200, stored.Status, "%s", stored.Raw)
		require.Equal(t, map[string]any{"name": "NewCo"}, stored.Object(t)["data"])

		// Production renders its own values; the context there is its own (created empty).
		h.trigger(t, prod, map[string]any{"name": "tenant-news", "to": "ada", "transactionId": "tx-prod", "context": map[string]any{"tenant": "acme"}})
		res = h.call(t, prod, "GET", feedPath("ada", nil), nil, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		prodItems := objects(t, res.Object(t)["data"])
		require.Len(t, prodItems, 1)
		require.Equal(t, "https://example.com/t/acme for  [][]", prodItems[0]["content"])

		// Without a context, context.* renders empty; bulk triggers carry theirs.
		res = h.call(t, dev, "POST", "/v1/events/trigger/bulk", map[string]any{"events": []any{
			map[string]any{"name": "tenant-news", "to": "ada", "transactionId": "tx-bulk", "context": map[string]any{"tenant": "acme"}},
			map[string]any{"name": "tenant-news", "to": "ada", "transactionId": "tx-none"},
		}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		byTx := map[string]string{}
		for _, it := range h.feedItems(t, "ada") {
			byTx[it["transactionId"].(string)] = it["content"].(string)
		}
		require.Equal(t, "https://dev.example/t/acme for Acme [s3cr3t][]", byTx["tx-bulk"])
		require.Equal(t, "https://dev.example/t/ for  [s3cr3t][]", byTx["tx-none"])

		// A secret is never logged nor shown; a changed value renders at once.
		res = h.call(t, dev, "PATCH", envVarsPath+"/BASE_URL", map[string]any{"values": []any{
			map[string]any{"_environmentId": devEnv, "value": "https://new.example"}}}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		h.trigger(t, dev, map[string]any{"name": "tenant-news", "to": "ada", "transactionId": "tx-after", "context": map[string]any{"tenant": "acme"}})
		require.Equal(t, "https://new.example/t/acme for Acme [s3cr3t][]", h.feedItems(t, "ada")[0]["content"])
	})
}

// TestTriggerContextValidation: a bad context is a 422 naming it, and
// nothing is created.
func TestTriggerContextValidation(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		h.createWorkflow(t, dev, map[string]any{"name": "W", "workflowId": "w", "steps": stepsOf("in_app")})
		six := map[string]any{}
		for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
			six[k] = "x"
		}
		for _, c := range []struct {
			ctx   any
			field string
		}{
			{"tenant:acme", "context"},
			{six, "context"},
			{map[string]any{"Tenant": "acme"}, "context.Tenant"},
			{map[string]any{"tenant": "ACME"}, "context.tenant"},
			{map[string]any{"tenant": 7}, "context.tenant"},
			{map[string]any{"tenant": map[string]any{"data": map[string]any{}}}, "context.tenant.id"},
			{map[string]any{"tenant": map[string]any{"id": "a", "data": "x"}}, "context.tenant.data"},
		} {
			res := h.call(t, dev, "POST", "/v1/events/trigger", map[string]any{"name": "w", "to": "ada", "context": c.ctx}, nil)
			requireError(t, res, 422, "POST", "/v1/events/trigger", c.field)
		}
		require.EqualValues(t, 0, h.call(t, dev, "GET", "/v2/contexts", nil, nil).Object(t)["totalCount"])
		require.Zero(t, h.count(t, "SELECT count(*) FROM notifications"))
	})
}

// envCtxSweepFixtures makes what the bad-input sweep's environment
// variable and context routes name.
func envCtxSweepFixtures(t *testing.T, h *harness, vars map[string]string) {
	t.Helper()
	dev := h.authFor(asDev)
	vars["devEnv"] = h.envID(t, "development")
	for _, key := range []string{"SW_VAR", "SW_DOOMED"} {
		res := h.call(t, dev, "POST", envVarsPath, map[string]any{"key": key, "values": []any{
			map[string]any{"_environmentId": vars["devEnv"], "value": "v"}}}, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
	}
	for _, cid := range []string{"sw", "sw-doomed", "sw-more"} {
		res := h.call(t, dev, "POST", "/v2/contexts", map[string]any{"type": "tenant", "id": cid}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	}
	next, _ := h.call(t, dev, "GET", "/v2/contexts?limit=1", nil, nil).Object(t)["next"].(string)
	require.NotEmpty(t, next)
	vars["contextCursor"] = next
}

// TestContextKeysFilter: lists with contextKeys keep the notifications
// whose trigger named exactly those contexts, in any order; a lone empty
// value keeps those triggered without context; without it nothing is
// filtered.
func TestContextKeysFilter(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		h.createWorkflow(t, dev, map[string]any{"name": "W", "workflowId": "w", "steps": stepsOf("in_app")})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "firstName": "Ada"})
		for tx, ctx := range map[string]any{
			"tx-acme": map[string]any{"tenant": "acme"},
			"tx-both": map[string]any{"tenant": "acme", "project": map[string]any{"id": "x"}},
			"tx-none": nil,
		} {
			body := map[string]any{"name": "w", "to": "ada", "transactionId": tx}
			if ctx != nil {
				body["context"] = ctx
			}
			h.trigger(t, dev, body)
		}
		drain(t, h.newEngine(engine.Options{}))

		txs := func(path string) []string {
			res := h.call(t, dev, "GET", path, nil, nil)
			require.Equal(t, 200, res.Status, "%s: %s", path, res.Raw)
			var out []string
			for _, n := range objects(t, res.Object(t)["data"]) {
				out = append(out, n["transactionId"].(string))
			}
			return out
		}
		list := "/v2/subscribers/ada/notifications"
		require.ElementsMatch(t, []string{"tx-acme", "tx-both", "tx-none"}, txs(list))
		require.Equal(t, []string{"tx-acme"}, txs(list+"?contextKeys=tenant:acme"))
		require.Equal(t, []string{"tx-both"}, txs(list+"?contextKeys=tenant:acme&contextKeys=project:x"))
		require.Equal(t, []string{"tx-both"}, txs(list+"?contextKeys=project:x&contextKeys=tenant:acme"))
		require.Equal(t, []string{"tx-none"}, txs(list+"?contextKeys="))
		require.Empty(t, txs(list+"?contextKeys=project:x"))
		requireError(t, h.call(t, dev, "GET", list+"?contextKeys=acme", nil, nil), 422, "GET", list, "contextKeys")

		require.Equal(t, []string{"tx-acme"}, txs("/v1/messages?contextKeys=tenant:acme"))
		require.Len(t, txs("/v1/messages?contextKeys="), 3, "a lone empty value filters nothing here, as before")

		filters := url.QueryEscape(`[{"contextKeys":["tenant:acme"]},{"contextKeys":[]},{}]`)
		res := h.call(t, dev, "GET", list+"/count?filters="+filters, nil, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		var counts []float64
		for _, c := range objects(t, res.JSON(t)) {
			counts = append(counts, c["count"].(float64))
		}
		require.Equal(t, []float64{1, 1, 3}, counts)

		// A bulk change takes them too: only the notification of that context is read.
		res = h.call(t, dev, "POST", list+"/read", map[string]any{"contextKeys": []string{"tenant:acme"}}, nil)
		require.Less(t, res.Status, 300, "%s", res.Raw)
		require.Equal(t, []string{"tx-acme"}, txs(list+"?read=true"))

		// The inbox clients' list.
		ident := h.identifierOf(t, dev)
		sess := h.openSession(t, ident, h.DevKey, map[string]any{"subscriberId": "ada"})
		res = h.call(t, "Bearer "+sess["token"].(string), "GET", "/v1/inbox/notifications?contextKeys=tenant:acme", nil, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		require.Len(t, objects(t, res.Object(t)["data"]), 1)
	})
}

// TestInboxSessionContext: an inbox session opened with a context (as
// @novu/js sends its `context` option) lists, counts and changes only the
// notifications triggered with exactly that context; one without context
// sees them all.
func TestInboxSessionContext(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		h.createWorkflow(t, dev, map[string]any{"name": "W", "workflowId": "w", "steps": stepsOf("in_app")})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "firstName": "Ada"})
		for tx, ctx := range map[string]any{"tx-acme": map[string]any{"tenant": "acme"}, "tx-globex": map[string]any{"tenant": "globex"},
			"tx-none": nil} {
			body := map[string]any{"name": "w", "to": "ada", "transactionId": tx}
			if ctx != nil {
				body["context"] = ctx
			}
			h.trigger(t, dev, body)
		}
		drain(t, h.newEngine(engine.Options{}))
		ident := h.identifierOf(t, dev)
		open := func(ctx any) (string, map[string]any) {
			body := sessionBody(ident, secret.SubscriberHash(h.DevKey, "ada"), map[string]any{"subscriberId": "ada"})
			body["context"] = ctx
			res := h.session(t, body)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			data := res.Object(t)["data"].(map[string]any)
			return "Bearer " + data["token"].(string), data
		}
		txs := func(auth, path string) []string {
			res := h.call(t, auth, "GET", path, nil, nil)
			require.Equal(t, 200, res.Status, "%s", res.Raw)
			var out []string
			for _, n := range objects(t, res.Object(t)["data"]) {
				out = append(out, n["transactionId"].(string))
			}
			return out
		}

		acme, data := open(map[string]any{"tenant": map[string]any{"id": "acme"}})
		require.EqualValues(t, 1, data["totalUnreadCount"])
		require.Equal(t, []string{"tx-acme"}, txs(acme, "/v1/inbox/notifications"))
		res := h.call(t, acme, "GET", "/v1/inbox/notifications/count?filters="+url.QueryEscape(`[{"read":false}]`), nil, nil)
		require.Equal(t, 200, res.Status, "%s", res.Raw)
		require.EqualValues(t, 1, objects(t, res.Object(t)["data"])[0]["count"])
		res = h.call(t, acme, "POST", "/v1/inbox/notifications/read", map[string]any{}, nil)
		require.Less(t, res.Status, 300, "%s", res.Raw)

		all, data := open(nil)
		require.EqualValues(t, 2, data["totalUnreadCount"], "the read-all of the acme session read only its notification")
		require.ElementsMatch(t, []string{"tx-acme", "tx-globex", "tx-none"}, txs(all, "/v1/inbox/notifications"))
		require.Equal(t, []string{"tx-globex"}, txs(all, "/v1/inbox/notifications?contextKeys=tenant:globex"))

		requireError(t, h.session(t, func() map[string]any {
			body := sessionBody(ident, secret.SubscriberHash(h.DevKey, "ada"), map[string]any{"subscriberId": "ada"})
			body["context"] = map[string]any{"Tenant": "x"}
			return body
		}()), 422, "POST", "/v1/inbox/session", "context.Tenant")
	})
}
