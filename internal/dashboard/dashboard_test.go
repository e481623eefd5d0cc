package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/dashboard"
	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

const (
	origin   = "http://herald.test"
	email    = "ada@example.com"
	password = "correct horse battery"
)

// fixture is a bootstrapped store with one account, the public API and
// the dashboard in front of it.
type fixture struct {
	t       *testing.T
	db      *sqlstore.DB
	handler http.Handler
	devKey  string
	mu      sync.Mutex
	now     time.Time
}

func newFixture(t *testing.T, kind string) *fixture {
	db := testdb.Open(t, kind)
	a := &app.App{Store: db, Keys: testdb.Keys(t)}
	first, err := a.Bootstrap(t.Context())
	require.NoError(t, err)
	env, err := db.EnvironmentGetByName(t.Context(), "development")
	require.NoError(t, err)
	hash, err := secret.HashPassword(password)
	require.NoError(t, err)
	now := time.Now().UTC()
	require.NoError(t, db.UserCreate(t.Context(), &store.User{ID: id.New(), OrganizationID: env.OrganizationID, Email: email,
		PasswordHash: hash, CreatedAt: now, UpdatedAt: now}))
	f := &fixture{t: t, db: db, devKey: first.Keys["development"], now: now}
	api := httpapi.New(httpapi.Options{Store: db, Keys: a.Keys})
	d := dashboard.New(dashboard.Options{Store: db, Keys: a.Keys, API: api, Now: f.clock, SignInFailures: 3,
		Delivery: engine.DeliveryOptions{AllowPrivateNetworks: true, Timeout: 5 * time.Second}})
	f.handler = d.Wrap(api)
	return f
}

func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fixture) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

func forEachStore(t *testing.T, fn func(t *testing.T, f *fixture)) {
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			fn(t, newFixture(t, kind))
		})
	}
}

// req is one request to the dashboard: a same-origin browser request
// unless headers say otherwise.
type req struct {
	method, path, body string
	cookie             string
	headers            map[string]string
}

func (f *fixture) do(r req) *httptest.ResponseRecorder {
	f.t.Helper()
	hr := httptest.NewRequest(r.method, origin+r.path, strings.NewReader(r.body))
	hr.RemoteAddr = "192.0.2.1:1234"
	if r.body != "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	if r.method != http.MethodGet {
		hr.Header.Set("Origin", origin)
		hr.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	if r.cookie != "" {
		hr.AddCookie(&http.Cookie{Name: "herald_dashboard_session", Value: r.cookie})
	}
	for k, v := range r.headers {
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, hr)
	return rec
}

// signIn signs in and returns the session cookie.
func (f *fixture) signIn() string {
	f.t.Helper()
	rec := f.do(req{method: "POST", path: "/dashboard/api/session", body: `{"email":"` + email + `","password":"` + password + `"}`})
	require.Equal(f.t, http.StatusOK, rec.Code, rec.Body.String())
	c := sessionCookie(rec)
	require.NotNil(f.t, c)
	return c.Value
}

func sessionCookie(rec *httptest.ResponseRecorder) *http.Cookie {
	for _, c := range rec.Result().Cookies() {
		if c.Name == "herald_dashboard_session" {
			return c
		}
	}
	return nil
}

// requireError checks the API's error shape.
func requireError(t *testing.T, rec *httptest.ResponseRecorder, status int) {
	t.Helper()
	require.Equal(t, status, rec.Code, rec.Body.String())
	var body map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
	require.EqualValues(t, status, body["statusCode"])
	require.NotEmpty(t, body["message"])
	require.Equal(t, http.StatusText(status), body["error"])
}

// TestPageAndAssets: /dashboard/ is one page with the sign-in form, its
// script and style from Herald itself, under a strict content policy.
func TestPageAndAssets(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite")
	rec := f.do(req{method: "GET", path: "/dashboard"})
	require.Equal(t, http.StatusFound, rec.Code)
	require.Equal(t, "/dashboard/", rec.Header().Get("Location"))

	rec = f.do(req{method: "GET", path: "/dashboard/"})
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"))
	page := rec.Body.String()
	for _, s := range []string{`<label for="email">Email</label>`, `<label for="password">Password</label>`, `type="password"`,
		`>Sign in</button>`, `>Workflows<`, `>Activity<`, `>Subscribers<`, `>Topics<`, `>Integrations<`, `>API keys<`, `>Sign out<`} {
		require.Contains(t, page, s)
	}
	require.NotContains(t, page, "http://", "no outside resources")
	require.NotContains(t, page, "https://", "no outside resources")
	require.Contains(t, rec.Header().Get("Content-Security-Policy"), "default-src 'self'")
	require.Equal(t, "DENY", rec.Header().Get("X-Frame-Options"))

	// The first load is the page and what it loads: the assets it names and
	// the modules they import, followed from the page itself.
	total := rec.Body.Len()
	ref := regexp.MustCompile(`/dashboard/assets/([\w.-]+)|from "\./([\w.-]+)"`)
	seen := map[string]bool{}
	queue := []string{page}
	for len(queue) > 0 {
		body := queue[0]
		queue = queue[1:]
		for _, m := range ref.FindAllStringSubmatch(body, -1) {
			name := m[1] + m[2]
			if seen[name] {
				continue
			}
			seen[name] = true
			path := "/dashboard/assets/" + name
			rec = f.do(req{method: "GET", path: path})
			require.Equal(t, http.StatusOK, rec.Code, path)
			ct := "text/css"
			if strings.HasSuffix(name, ".js") {
				ct = "text/javascript"
			}
			require.Contains(t, rec.Header().Get("Content-Type"), ct, path)
			require.False(t, strings.Contains(rec.Body.String(), "https://") || strings.Contains(rec.Body.String(), "http://"),
				"%s loads nothing from outside Herald (no CDN)", path)
			total += rec.Body.Len()
			if strings.HasSuffix(name, ".js") {
				queue = append(queue, rec.Body.String())
			}
		}
	}
	for _, name := range []string{"app.js", "app.css", "lib.js", "workflows.js", "steps.js"} {
		require.True(t, seen[name], "the page loads %s", name)
	}
	require.Less(t, total, 500_000, "the first load is at most 500 KB even uncompressed")
	for _, p := range []string{"/dashboard/assets/index.html", "/dashboard/assets/nope.js", "/dashboard/assets/..%2fdashboard.go", "/dashboard/nope"} {
		require.Equal(t, http.StatusNotFound, f.do(req{method: "GET", path: p}).Code, p)
	}
	// Everything else is the API's.
	require.Equal(t, http.StatusOK, f.do(req{method: "GET", path: "/health"}).Code)
}

// TestSignInAndOut: a wrong password or an unknown address is a 401
// without a session; the right one a session cookie (HttpOnly,
// SameSite=Strict, Secure behind TLS) that the data routes take; signing
// out ends it on the server, so the old cookie gets 401s.
func TestSignInAndOut(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f *fixture) {
		signedOut := func(cookie string) {
			t.Helper()
			rec := f.do(req{method: "GET", path: "/dashboard/api/session", cookie: cookie})
			require.Equal(t, http.StatusOK, rec.Code)
			require.JSONEq(t, `{"email":null,"environments":[]}`, rec.Body.String())
		}
		signedOut("")
		signedOut("made-up")
		requireError(t, f.do(req{method: "GET", path: "/dashboard/api/env/development/v2/workflows"}), http.StatusUnauthorized)
		requireError(t, f.do(req{method: "GET", path: "/dashboard/api/env/development/v2/workflows", cookie: "made-up"}), http.StatusUnauthorized)
		requireError(t, f.do(req{method: "POST", path: "/dashboard/api/env/development/preview", body: "{}"}), http.StatusUnauthorized)
		requireError(t, f.do(req{method: "GET", path: "/dashboard/api/env/development/api-keys"}), http.StatusUnauthorized)

		for _, body := range []string{`{"email":"ada@example.com","password":"wrong password"}`,
			`{"email":"nobody@example.com","password":"correct horse battery"}`} {
			rec := f.do(req{method: "POST", path: "/dashboard/api/session", body: body})
			requireError(t, rec, http.StatusUnauthorized)
			require.Nil(t, sessionCookie(rec), "no session")
		}
		require.Zero(t, countSessions(t, f))

		rec := f.do(req{method: "POST", path: "/dashboard/api/session", body: `{"email":"ADA@example.com ","password":"` + password + `"}`})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		c := sessionCookie(rec)
		require.NotNil(t, c)
		require.True(t, c.HttpOnly)
		require.Equal(t, http.SameSiteStrictMode, c.SameSite)
		require.False(t, c.Secure, "plain HTTP")
		require.Equal(t, "/dashboard/", c.Path)
		require.Len(t, c.Value, 43)
		var me struct {
			Email        *string `json:"email"`
			Environments []struct {
				Name string `json:"name"`
			} `json:"environments"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &me))
		require.Equal(t, email, *me.Email)
		require.Len(t, me.Environments, 2)
		require.NotContains(t, rawSessions(t, f), c.Value, "the store keeps only a hash of the token")

		rec = f.do(req{method: "POST", path: "/dashboard/api/session", body: `{"email":"` + email + `","password":"` + password + `"}`,
			headers: map[string]string{"X-Forwarded-Proto": "https"}})
		require.True(t, sessionCookie(rec).Secure, "Secure behind TLS")

		rec = f.do(req{method: "GET", path: "/dashboard/api/session", cookie: c.Value})
		require.Equal(t, http.StatusOK, rec.Code)
		require.Contains(t, rec.Body.String(), email)
		rec = f.do(req{method: "GET", path: "/dashboard/api/env/development/v2/workflows", cookie: c.Value})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Contains(t, rec.Body.String(), `"workflows"`)
		require.Empty(t, rec.Header().Get("Access-Control-Allow-Origin"), "the dashboard's routes are same-origin only")

		rec = f.do(req{method: "DELETE", path: "/dashboard/api/session", cookie: c.Value})
		require.Equal(t, http.StatusNoContent, rec.Code)
		require.Equal(t, -1, sessionCookie(rec).MaxAge, "the cookie is cleared")
		signedOut(c.Value)
		requireError(t, f.do(req{method: "GET", path: "/dashboard/api/env/development/v2/workflows", cookie: c.Value}), http.StatusUnauthorized)
		requireError(t, f.do(req{method: "DELETE", path: "/dashboard/api/session", cookie: c.Value}), http.StatusUnauthorized)

		// A session ends when it expires, too.
		tok := f.signIn()
		f.advance(dashboard.DefaultSessionTTL)
		signedOut(tok)
		requireError(t, f.do(req{method: "GET", path: "/dashboard/api/env/development/v2/workflows", cookie: tok}), http.StatusUnauthorized)
	})
}

func countSessions(t *testing.T, f *fixture) int {
	var n int
	require.NoError(t, f.db.Reader().QueryRowContext(context.Background(), "SELECT count(*) FROM user_sessions").Scan(&n))
	return n
}

func rawSessions(t *testing.T, f *fixture) string {
	rows, err := f.db.Reader().QueryContext(context.Background(), "SELECT token_hash FROM user_sessions")
	require.NoError(t, err)
	defer rows.Close()
	var all []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		all = append(all, s)
	}
	return strings.Join(all, " ")
}

// TestSignInRateLimited: past the allowed failures, sign-ins from the
// address get 429s with Retry-After, even with the right password, until
// the window passes.
func TestSignInRateLimited(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite")
	wrong := `{"email":"` + email + `","password":"wrong password"}`
	for range 3 {
		requireError(t, f.do(req{method: "POST", path: "/dashboard/api/session", body: wrong}), http.StatusUnauthorized)
	}
	rec := f.do(req{method: "POST", path: "/dashboard/api/session", body: `{"email":"` + email + `","password":"` + password + `"}`})
	requireError(t, rec, http.StatusTooManyRequests)
	require.NotEmpty(t, rec.Header().Get("Retry-After"))
	require.Nil(t, sessionCookie(rec))
	f.advance(time.Minute)
	f.signIn()
}

// TestCrossOrigin: with a valid cookie, a state-changing request from
// another origin is a 403 (Sec-Fetch-Site or Origin), and so is any
// request a browser marks as another site's; the page's own requests pass.
func TestCrossOrigin(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f *fixture) {
		tok := f.signIn()
		preview := `{"workflowId":"nope","stepId":"x"}`
		for _, tc := range []struct {
			name    string
			method  string
			path    string
			headers map[string]string
		}{
			{"cross-site fetch metadata", "POST", "/dashboard/api/env/development/preview", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}},
			{"another origin, no fetch metadata", "POST", "/dashboard/api/env/development/preview", map[string]string{"Sec-Fetch-Site": "", "Origin": "https://evil.example"}},
			{"sign-out from another site", "DELETE", "/dashboard/api/session", map[string]string{"Sec-Fetch-Site": "cross-site"}},
			{"a write of the API", "POST", "/dashboard/api/env/development/v2/subscribers", map[string]string{"Sec-Fetch-Site": "cross-site"}},
			{"a read from another site", "GET", "/dashboard/api/env/development/v2/subscribers", map[string]string{"Sec-Fetch-Site": "cross-site"}},
			{"sign-in from another site", "POST", "/dashboard/api/session", map[string]string{"Sec-Fetch-Site": "cross-site"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				requireError(t, f.do(req{method: tc.method, path: tc.path, body: preview, cookie: tok, headers: tc.headers}), http.StatusForbidden)
			})
		}
		require.Equal(t, http.StatusOK, f.do(req{method: "GET", path: "/dashboard/api/session", cookie: tok}).Code, "still signed in")
		rec := f.do(req{method: "POST", path: "/dashboard/api/env/development/v2/subscribers", body: `{"subscriberId":"ada"}`, cookie: tok})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	})
}

// TestForwardedRoutes: the data routes are the public API's, as the
// signed-in account, in the environment the path names; the inbox
// clients' routes and unknown environments are not reachable.
func TestForwardedRoutes(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f *fixture) {
		tok := f.signIn()
		rec := f.do(req{method: "POST", path: "/dashboard/api/env/production/v2/subscribers", body: `{"subscriberId":"a/b c"}`, cookie: tok})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		rec = f.do(req{method: "GET", path: "/dashboard/api/env/production/v2/subscribers/a%2Fb%20c", cookie: tok})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		requireError(t, f.do(req{method: "GET", path: "/dashboard/api/env/development/v2/subscribers/a%2Fb%20c", cookie: tok}), http.StatusNotFound)
		requireError(t, f.do(req{method: "GET", path: "/dashboard/api/env/staging/v2/subscribers", cookie: tok}), http.StatusNotFound)
		requireError(t, f.do(req{method: "GET", path: "/dashboard/api/env/development/v1/inbox/notifications", cookie: tok}), http.StatusNotFound)
		requireError(t, f.do(req{method: "GET", path: "/dashboard/api/env/development/health", cookie: tok}), http.StatusNotFound)
		requireError(t, f.do(req{method: "GET", path: "/dashboard/api/nope", cookie: tok}), http.StatusNotFound)
		requireError(t, f.do(req{method: "PUT", path: "/dashboard/api/session", cookie: tok}), http.StatusMethodNotAllowed)

		// The API's validation answers as it does to API-key callers.
		requireError(t, f.do(req{method: "POST", path: "/dashboard/api/env/development/v2/subscribers", body: `{"subscriberId":""}`, cookie: tok}),
			http.StatusUnprocessableEntity)
	})
}

// TestPreview: a step renders with the payload and the controls being
// edited; a template error is shown in a 200, not thrown; bad input is a
// 4xx in the error shape.
func TestPreview(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f *fixture) {
		tok := f.signIn()
		rec := f.do(req{method: "POST", path: "/dashboard/api/env/development/v2/workflows", cookie: tok,
			body: `{"name":"Welcome","workflowId":"welcome","steps":[{"name":"Mail","type":"email","controlValues":{"subject":"Hi {{subscriber.firstName}}","body":"{{payload.greeting}}"}}]}`})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())

		preview := func(body string) map[string]any {
			t.Helper()
			rec := f.do(req{method: "POST", path: "/dashboard/api/env/development/preview", body: body, cookie: tok})
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			var out map[string]any
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
			return out
		}
		out := preview(`{"workflowId":"welcome","stepId":"mail","payload":{"greeting":"Welcome aboard"}}`)
		require.Equal(t, map[string]any{"subject": "Hi Ada", "body": "Welcome aboard"}, out["result"])
		require.Nil(t, out["error"])

		out = preview(`{"workflowId":"welcome","stepId":"mail","controlValues":{"subject":"{% assign n = 'Bob' %}","body":"Hello {{n}}"}}`)
		require.Equal(t, "Hello Bob", out["result"].(map[string]any)["body"], "the edited controls, in the order sent")
		out = preview(`{"workflowId":"welcome","stepId":"mail"}`)
		require.Equal(t, "Hi Ada", out["result"].(map[string]any)["subject"], "previewing edits changes nothing stored")

		rec = f.do(req{method: "POST", path: "/dashboard/api/env/development/v2/subscribers", cookie: tok,
			body: `{"subscriberId":"grace","firstName":"Grace"}`})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		out = preview(`{"workflowId":"welcome","stepId":"mail","subscriberId":"grace"}`)
		require.Equal(t, "Hi Grace", out["result"].(map[string]any)["subject"])

		out = preview(`{"workflowId":"welcome","stepId":"mail","controlValues":{"subject":"{{ payload.x ","body":"b"}}`)
		require.Nil(t, out["result"])
		perr := out["error"].(map[string]any)
		require.Equal(t, "subject", perr["field"])
		require.NotEmpty(t, perr["message"])

		for _, bad := range []struct {
			body   string
			status int
		}{
			{`not json`, http.StatusBadRequest},
			{`[]`, http.StatusBadRequest},
			{`{"workflowId":"welcome"}`, http.StatusUnprocessableEntity},
			{`{"workflowId":"nope","stepId":"mail"}`, http.StatusNotFound},
			{`{"workflowId":"welcome","stepId":"nope"}`, http.StatusNotFound},
			{`{"workflowId":"welcome","stepId":"mail","subscriberId":"nobody"}`, http.StatusNotFound},
			{`{"workflowId":"welcome","stepId":"mail","controlValues":[1]}`, http.StatusUnprocessableEntity},
			{`{"workflowId":"welcome","stepId":"mail","payload":"text"}`, http.StatusUnprocessableEntity},
			{`{"workflowId":"welcome\u0000","stepId":"mail"}`, http.StatusUnprocessableEntity},
			{`{"workflowId":1,"stepId":"mail"}`, http.StatusUnprocessableEntity},
		} {
			requireError(t, f.do(req{method: "POST", path: "/dashboard/api/env/development/preview", body: bad.body, cookie: tok}), bad.status)
		}
		// Another environment's workflow is not found.
		requireError(t, f.do(req{method: "POST", path: "/dashboard/api/env/production/preview", cookie: tok,
			body: `{"workflowId":"welcome","stepId":"mail"}`}), http.StatusNotFound)
	})
}

// TestAPIKeys: keys are listed masked; a new key is shown once, works, and
// is revoked; another environment's key is a 404.
func TestAPIKeys(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f *fixture) {
		tok := f.signIn()
		rec := f.do(req{method: "GET", path: "/dashboard/api/env/development/api-keys", cookie: tok})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.NotContains(t, rec.Body.String(), f.devKey)
		require.Contains(t, rec.Body.String(), f.devKey[:7])

		rec = f.do(req{method: "POST", path: "/dashboard/api/env/development/api-keys", cookie: tok})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		var created struct {
			Data struct {
				ID  string `json:"_id"`
				Key string `json:"key"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &created))
		require.Regexp(t, `^hk_[0-9a-f]{64}$`, created.Data.Key)
		rec = f.do(req{method: "GET", path: "/v2/subscribers", headers: map[string]string{"Authorization": "ApiKey " + created.Data.Key}})
		require.Equal(t, http.StatusOK, rec.Code, "the new key works")
		rec = f.do(req{method: "GET", path: "/dashboard/api/env/development/api-keys", cookie: tok})
		require.NotContains(t, rec.Body.String(), created.Data.Key, "listed masked")

		requireError(t, f.do(req{method: "DELETE", path: "/dashboard/api/env/production/api-keys/" + created.Data.ID, cookie: tok}), http.StatusNotFound)
		requireError(t, f.do(req{method: "DELETE", path: "/dashboard/api/env/development/api-keys/nope%00", cookie: tok}), http.StatusUnprocessableEntity)
		rec = f.do(req{method: "DELETE", path: "/dashboard/api/env/development/api-keys/" + created.Data.ID, cookie: tok})
		require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
		rec = f.do(req{method: "GET", path: "/v2/subscribers", headers: map[string]string{"Authorization": "ApiKey " + created.Data.Key}})
		require.Equal(t, http.StatusUnauthorized, rec.Code, "revoked")
	})
}

// TestSignInBadInput: no body makes a 5xx.
func TestSignInBadInput(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite")
	for _, tc := range []struct {
		body   string
		status int
	}{
		{``, http.StatusBadRequest},
		{`null`, http.StatusBadRequest},
		{`{"email":1}`, http.StatusUnprocessableEntity},
		{`{"email":"","password":""}`, http.StatusUnprocessableEntity},
		{`{"email":"a\u0000@b.c","password":"xxxxxxxxx"}`, http.StatusUnprocessableEntity},
		{`{"email":"` + strings.Repeat("a", 300) + `","password":"xxxxxxxxx"}`, http.StatusUnauthorized},
		{`{"email":"a@b.c","password":"` + strings.Repeat("x", 2000) + `"}`, http.StatusUnauthorized},
		{"{\"email\":\"\xff\",\"password\":\"x\"}", http.StatusUnprocessableEntity},
		{`{"email":"a@b.c","password":"x"}` + strings.Repeat(" ", 2<<20), http.StatusRequestEntityTooLarge},
	} {
		requireError(t, f.do(req{method: "POST", path: "/dashboard/api/session", body: tc.body}), tc.status)
	}
}
