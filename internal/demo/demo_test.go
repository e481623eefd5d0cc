package demo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/demo"
	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

type answer struct {
	status int
	header http.Header
	body   []byte
}

func do(t *testing.T, method, url string, body any) answer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return answer{status: res.StatusCode, header: res.Header, body: b}
}

// serveDemo serves the API with the demo page (when Setup gives one).
func serveDemo(t *testing.T, db *sqlstore.DB) (*demo.Page, string) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	page, err := demo.Setup(context.Background(), db, log)
	require.NoError(t, err)
	api := httpapi.New(httpapi.Options{Store: db, Keys: testdb.Keys(t), Logger: log})
	srv := httptest.NewServer(page.Wrap(api))
	t.Cleanup(srv.Close)
	return page, srv.URL
}

func config(t *testing.T, base string) demo.Config {
	t.Helper()
	res := do(t, "GET", base+"/demo/config.json", nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	var out struct{ Data demo.Config }
	require.NoError(t, json.Unmarshal(res.body, &out))
	return out.Data
}

// TestDemoPage: the page, its bundle and its config are served; the config
// names the development environment and a subscriberHash that opens the
// demo subscriber's session (and no other subscriber's); Setup made the demo
// workflow in the development environment only, once.
func TestDemoPage(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		a := &app.App{Store: db, Keys: testdb.Keys(t)}
		first, err := a.Bootstrap(ctx)
		require.NoError(t, err)
		_, base := serveDemo(t, db)

		res := do(t, "GET", base+"/demo", nil)
		require.Equal(t, http.StatusFound, res.status)
		require.Equal(t, "/demo/", res.header.Get("Location"))

		res = do(t, "GET", base+"/demo/", nil)
		require.Equal(t, http.StatusOK, res.status)
		require.Equal(t, "text/html; charset=utf-8", res.header.Get("Content-Type"))
		require.Contains(t, string(res.body), `<script type="module" src="inbox.js"></script>`)

		res = do(t, "GET", base+"/demo/inbox.js", nil)
		require.Equal(t, http.StatusOK, res.status)
		require.Equal(t, "text/javascript; charset=utf-8", res.header.Get("Content-Type"))
		require.Greater(t, len(res.body), 100_000, "the bundled @novu/js UI")
		require.Contains(t, string(res.body), "config.json")

		require.Equal(t, http.StatusNotFound, do(t, "GET", base+"/demo/other.js", nil).status)
		require.Equal(t, http.StatusOK, do(t, "GET", base+"/health", nil).status, "the API answers beside the page")
		for _, tc := range []struct{ method, path string }{{"POST", "/demo/config.json"}, {"GET", "/v1/no-such-route"}} {
			res := do(t, tc.method, base+tc.path, nil)
			require.Equal(t, http.StatusNotFound, res.status, "%s %s", tc.method, tc.path)
			require.Contains(t, string(res.body), `"statusCode":404`, "the API's own answer, in the error shape")
		}

		dev, err := db.EnvironmentGetByName(ctx, "development")
		require.NoError(t, err)
		prod, err := db.EnvironmentGetByName(ctx, "production")
		require.NoError(t, err)
		cfg := config(t, base)
		require.Equal(t, dev.Identifier, cfg.ApplicationIdentifier)
		require.Equal(t, demo.SubscriberID, cfg.SubscriberID)
		require.Equal(t, secret.SubscriberHash(first.Keys["development"], demo.SubscriberID), cfg.SubscriberHash)
		require.Contains(t, cfg.Curl, base+"/v1/events/trigger")
		require.Contains(t, cfg.Curl, `"name":"herald-demo","to":"herald-demo-subscriber"`)
		require.NotContains(t, cfg.Curl, first.Keys["development"], "the page never shows a key")

		session := func(sid string) int {
			return do(t, "POST", base+"/v1/inbox/session", map[string]any{"applicationIdentifier": cfg.ApplicationIdentifier,
				"subscriberHash": cfg.SubscriberHash, "subscriber": map[string]any{"subscriberId": sid}}).status
		}
		require.Equal(t, http.StatusCreated, session(demo.SubscriberID), "the page's config opens the demo subscriber's session")
		require.Equal(t, http.StatusUnauthorized, session("someone-else"), "and no other subscriber's")

		devScope := store.Scope{OrganizationID: dev.OrganizationID, EnvironmentID: dev.ID}
		wf, err := db.WorkflowGet(ctx, devScope, demo.WorkflowID)
		require.NoError(t, err)
		require.Len(t, wf.Steps, 1)
		require.Equal(t, "in_app", wf.Steps[0].Type)
		_, err = db.WorkflowGet(ctx, store.Scope{OrganizationID: prod.OrganizationID, EnvironmentID: prod.ID}, demo.WorkflowID)
		require.ErrorIs(t, err, store.ErrNotFound, "production has no demo workflow")

		_, err = demo.Setup(ctx, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
		require.NoError(t, err, "a restart keeps the workflow")
		_, n, err := db.WorkflowList(ctx, &store.WorkflowListParams{Scope: devScope, Limit: 10, Query: demo.WorkflowID})
		require.NoError(t, err)
		require.Equal(t, 1, n)
	})
}

// TestDemoPageSubscriberHash: with no API key that can sign, the config is
// a 409 that says what to do while the check is on, and has no hash once the
// environment turns the check off (the session then opens without one).
func TestDemoPageSubscriberHash(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		a := &app.App{Store: db, Keys: testdb.Keys(t)}
		_, err := a.Bootstrap(ctx)
		require.NoError(t, err)
		dev, err := db.EnvironmentGetByName(ctx, "development")
		require.NoError(t, err)
		keys, err := db.APIKeyList(ctx, dev.ID)
		require.NoError(t, err)
		for _, k := range keys {
			require.NoError(t, db.APIKeyRevoke(ctx, &store.APIKeyRevokeParams{EnvironmentID: dev.ID, ID: k.ID, Now: time.Now()}))
		}
		_, base := serveDemo(t, db)

		res := do(t, "GET", base+"/demo/config.json", nil)
		require.Equal(t, http.StatusConflict, res.status, "%s", res.body)
		var e map[string]any
		require.NoError(t, json.Unmarshal(res.body, &e))
		require.Equal(t, float64(http.StatusConflict), e["statusCode"])
		require.Contains(t, e["message"], "herald keys create --environment development")

		off := true
		_, err = db.EnvironmentUpdate(ctx, &store.EnvironmentUpdateParams{ID: dev.ID, InboxHMACDisabled: &off})
		require.NoError(t, err)
		cfg := config(t, base)
		require.Empty(t, cfg.SubscriberHash)
		res = do(t, "POST", base+"/v1/inbox/session", map[string]any{"applicationIdentifier": cfg.ApplicationIdentifier,
			"subscriber": map[string]any{"subscriberId": cfg.SubscriberID}})
		require.Equal(t, http.StatusCreated, res.status, "%s", res.body)
	})
}

// TestDemoPageDevelopmentOnly: a store without a development environment
// has no page (its other environments are never served) and no demo
// workflow.
func TestDemoPageDevelopmentOnly(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		org := store.Organization{ID: id.New(), Name: "Herald", CreatedAt: now}
		prod := store.Environment{ID: id.New(), OrganizationID: org.ID, Name: "production",
			Identifier: secret.NewApplicationIdentifier(), CreatedAt: now}
		_, err := db.Bootstrap(ctx, &store.BootstrapParams{Organization: org,
			Owner:        store.Member{ID: id.New(), OrganizationID: org.ID, Email: "owner@localhost", Role: "owner", CreatedAt: now},
			Environments: []store.Environment{prod},
			APIKeys:      []store.APIKey{app.NewKeyRecord(prod.ID, secret.NewAPIKey(), now)}})
		require.NoError(t, err)

		page, base := serveDemo(t, db)
		require.Nil(t, page)
		for _, path := range []string{"/demo", "/demo/", "/demo/config.json", "/demo/inbox.js"} {
			require.Equal(t, http.StatusNotFound, do(t, "GET", base+path, nil).status, path)
		}
		_, err = db.WorkflowGet(ctx, store.Scope{OrganizationID: org.ID, EnvironmentID: prod.ID}, demo.WorkflowID)
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}
