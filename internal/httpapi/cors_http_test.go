package httpapi_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/httpapi"
)

// forEachStoreWith is forEachStore with a server built with other options.
func forEachStoreWith(t *testing.T, opts func(o *httpapi.Options), fn func(t *testing.T, h *harness)) {
	forEachStore(t, func(t *testing.T, h *harness) {
		o := httpapi.Options{Store: h.DB, Keys: h.Keys, Logger: testLogger(t)}
		opts(&o)
		h.Handler = httpapi.New(o)
		fn(t, h)
	})
}

// corsRequestHeaders are the headers the inbox clients send on every call
// (so a browser preflights each), as a preflight names them.
var corsRequestHeaders = []string{"authorization", "content-type", "novu-api-version", "novu-client-version",
	"novu-application-identifier", "idempotency-key"}

// requirePreflight checks a preflight's answer.
func requirePreflight(t *testing.T, res response, method, origin string) {
	t.Helper()
	require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Raw)
	require.Empty(t, res.Raw)
	require.Equal(t, origin, res.Header.Get("Access-Control-Allow-Origin"))
	methods := strings.Split(res.Header.Get("Access-Control-Allow-Methods"), ", ")
	for _, m := range []string{method, "GET", "POST", "PATCH", "DELETE"} {
		require.Contains(t, methods, m)
	}
	allowed := strings.Split(res.Header.Get("Access-Control-Allow-Headers"), ", ")
	for _, name := range corsRequestHeaders {
		require.Contains(t, allowed, name, "named explicitly: '*' would not cover authorization")
	}
	require.NotEmpty(t, res.Header.Get("Access-Control-Max-Age"))
}

// requireCORS checks the CORS headers of an actual answer.
func requireCORS(t *testing.T, res response, origin, what string) {
	t.Helper()
	require.Equal(t, origin, res.Header.Get("Access-Control-Allow-Origin"), "%s: %d %s", what, res.Status, res.Raw)
	require.Contains(t, res.Header.Get("Access-Control-Expose-Headers"), "X-Request-Id", what)
}

// TestCORSEveryRoute: on every registered route, a preflight (with a query
// string, without credentials) is a 204 naming the methods and the inbox
// clients' headers, and the answers themselves — without credentials, with
// them, with bad input — carry Access-Control-Allow-Origin, whatever their
// status; so do the answers the middleware writes itself (unknown path,
// wrong method, body too large, text refused at the edge, failed and
// throttled authentication, rate limit) and a handler's 204, error and panic.
func TestCORSEveryRoute(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		const origin = "https://app.example.com"
		wildcard := regexp.MustCompile(`\{[^}]+\}`)
		statuses := map[int]bool{}
		for _, pattern := range httpapi.RoutePatterns(h.Handler.(*httpapi.Server)) {
			method, path, _ := strings.Cut(pattern, " ")
			path = wildcard.ReplaceAllString(path, "x")

			pre := h.serve(newRequest(t, "", http.MethodOptions, path+"?after=x&limit=10", nil, map[string]string{
				"Origin": origin, "Access-Control-Request-Method": method,
				"Access-Control-Request-Headers": strings.Join(corsRequestHeaders, ","),
			}))
			requirePreflight(t, pre, method, "*")

			for _, auth := range []string{"", h.authFor(asDev), "Bearer not-a-token"} {
				res := h.serve(newRequest(t, auth, method, path, nil, map[string]string{"Origin": origin}))
				statuses[res.Status] = true
				requireCORS(t, res, "*", pattern)
			}
			res := h.serve(newRequest(t, h.authFor(asDev), method, path+"?limit=%FF", "{\"a\":\"\xff\"}", map[string]string{"Origin": origin}))
			statuses[res.Status] = true
			requireCORS(t, res, "*", pattern+" with bad input")
		}
		for _, status := range []int{200, 401, 404, 422} {
			require.True(t, statuses[status], "the sweep saw a %d", status)
		}

		server := h.Handler.(*httpapi.Server)
		server.HandleForTest("DELETE /test/no-content", func(w http.ResponseWriter, _ *http.Request) error {
			w.WriteHeader(http.StatusNoContent)
			return nil
		})
		server.HandleForTest("GET /test/fails", func(http.ResponseWriter, *http.Request) error { return errors.New("boom") })
		server.HandleForTest("GET /test/panics", func(http.ResponseWriter, *http.Request) error { panic("boom") })
		for _, tc := range []struct {
			name, method, path string
			body               any
			status             int
		}{
			{"204", "DELETE", "/test/no-content", nil, 204},
			{"500", "GET", "/test/fails", nil, 500},
			{"panic", "GET", "/test/panics", nil, 500},
			{"unknown path", "GET", "/v9/nothing?x=1", nil, 404},
			{"wrong method", "PUT", "/v2/subscribers", nil, 405},
			{"body too large", "POST", "/v2/subscribers", `{"subscriberId":"` + strings.Repeat("x", 1<<20) + `"}`, 413},
			{"edge", "GET", "/v2/subscribers?name=%00", nil, 422},
		} {
			res := h.serve(newRequest(t, h.authFor(asDev), tc.method, tc.path, tc.body, map[string]string{"Origin": origin}))
			require.Equal(t, tc.status, res.Status, "%s: %s", tc.name, res.Raw)
			requireCORS(t, res, "*", tc.name)
		}
	})
}

// TestCORSThrottled: the 429s of the rate limit and of the failed-
// authentication limit carry CORS headers too.
func TestCORSThrottled(t *testing.T) {
	t.Parallel()
	forEachStoreWith(t, func(o *httpapi.Options) { o.RateLimit, o.AuthFailureLimit = 1, 1 }, func(t *testing.T, limited *harness) {
		res := limited.serve(newRequest(t, "ApiKey nope", "GET", "/v2/subscribers", nil, nil))
		require.Equal(t, 401, res.Status)
		requireCORS(t, res, "*", "401")
		res = limited.serve(newRequest(t, "ApiKey nope", "GET", "/v2/subscribers", nil, nil))
		require.Equal(t, 429, res.Status, "%s", res.Raw)
		requireCORS(t, res, "*", "auth limit")

		var last response
		for range 5 {
			req := httptest.NewRequest("GET", "/v2/subscribers", nil)
			req.RemoteAddr = "192.0.2.7:1234" // not the address the failures came from
			req.Header.Set("Authorization", limited.authFor(asDev))
			if last = limited.serve(req); last.Status == 429 {
				break
			}
		}
		require.Equal(t, 429, last.Status, "%s", last.Raw)
		requireCORS(t, last, "*", "rate limit")
	})
}

// TestCORSOriginList: with a list of origins, an allowed Origin is echoed
// (case aside) with Vary: Origin; any other gets no Allow-Origin, on
// preflights, answers and errors alike.
func TestCORSOriginList(t *testing.T) {
	t.Parallel()
	origins := func(o *httpapi.Options) {
		o.CORSOrigins = []string{"https://app.example.com", " http://localhost:5173/ "}
	}
	forEachStoreWith(t, origins, func(t *testing.T, h *harness) {
		for _, tc := range []struct {
			origin, want string
		}{
			{"https://app.example.com", "https://app.example.com"},
			{"http://localhost:5173", "http://localhost:5173"},
			{"HTTPS://APP.EXAMPLE.COM", "HTTPS://APP.EXAMPLE.COM"},
			{"https://evil.example.com", ""},
			{"https://app.example.com.evil.test", ""},
			{"http://app.example.com", ""},
			{"null", ""},
			{"", ""},
		} {
			headers := map[string]string{"Access-Control-Request-Method": "POST"}
			if tc.origin != "" {
				headers["Origin"] = tc.origin
			}
			pre := h.serve(newRequest(t, "", http.MethodOptions, "/v1/inbox/session?x=1", nil, headers))
			require.Equal(t, http.StatusNoContent, pre.Status)
			require.Equal(t, tc.want, pre.Header.Get("Access-Control-Allow-Origin"), tc.origin)
			require.Contains(t, pre.Header.Values("Vary"), "Origin")
			for _, auth := range []string{h.authFor(asDev), ""} {
				res := h.serve(newRequest(t, auth, "GET", "/v1/environments/me", nil, map[string]string{"Origin": tc.origin}))
				require.Equal(t, tc.want, res.Header.Get("Access-Control-Allow-Origin"), "%s %d", tc.origin, res.Status)
				require.Contains(t, res.Header.Values("Vary"), "Origin")
			}
		}
		res := h.serve(newRequest(t, "", "GET", "/nowhere", nil, map[string]string{"Origin": "https://app.example.com"}))
		require.Equal(t, 404, res.Status)
		requireCORS(t, res, "https://app.example.com", "404 with a list")
	})
}
