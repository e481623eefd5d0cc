package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/provider/registry"
)

// This file holds the scenario runner of the HTTP suite (pocketbase style:
// a table of name, method, URL, headers, body, expected status and body
// fragments) and the small request helpers the other suite files share.

// Authorization values a scenario can name instead of a literal header.
const (
	asDev     = ""        // the development environment's API key (the default)
	asProd    = "prod"    // the production environment's API key
	asSession = "session" // a Bearer token of the owner, development environment
	asNone    = "none"    // no Authorization header
)

// scenario is one request and what its response must be.
type scenario struct {
	name    string
	method  string
	url     string // {{var}} placeholders are filled from the table's variables
	auth    string // asDev, asProd, asSession, asNone, or a literal header value
	headers map[string]string
	body    any // string and []byte are sent as is, anything else as JSON; {{var}} is filled in strings and JSON
	status  int
	// contains are fragments the raw body must contain; absent, fragments it must not.
	contains []string
	absent   []string
	// errorFields, when set, is exactly the set of keys of a 422's `errors`.
	errorFields []string
	check       func(t *testing.T, res response)
	// catchAll marks a request no route of the server matches: the document
	// has no operation for it (its router would mistake "/v2/subscribers/"
	// for "/v2/subscribers", or "DELETE /v2/subscribers" for an empty
	// {subscriberId}), so the body is validated against the Error schema alone.
	catchAll bool
}

// runScenarios runs each scenario as a subtest, in order, against h.
func runScenarios(t *testing.T, h *harness, vars map[string]string, scenarios []scenario) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			var res response
			if sc.catchAll {
				res = h.serve(newRequest(t, h.authFor(sc.auth), sc.method, fill(sc.url, vars), fillBody(t, sc.body, vars), sc.headers))
				validateErrorBody(t, res)
			} else {
				res = h.call(t, h.authFor(sc.auth), sc.method, fill(sc.url, vars), fillBody(t, sc.body, vars), sc.headers)
			}
			require.Equal(t, sc.status, res.Status, "%s %s: %s", sc.method, sc.url, res.Raw)
			for _, frag := range sc.contains {
				require.Contains(t, string(res.Raw), fill(frag, vars))
			}
			for _, frag := range sc.absent {
				require.NotContains(t, string(res.Raw), fill(frag, vars))
			}
			if res.Status >= 400 {
				requireErrorShape(t, res, sc.method, fill(sc.url, vars))
			}
			if sc.errorFields != nil {
				require.ElementsMatch(t, sc.errorFields, errorFields(t, res), "%s", res.Raw)
			}
			if sc.check != nil {
				sc.check(t, res)
			}
		})
	}
}

func fill(s string, vars map[string]string) string {
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{{"+k+"}}", v)
	}
	return s
}

func fillBody(t testing.TB, body any, vars map[string]string) any {
	switch b := body.(type) {
	case nil, []byte:
		return b
	case string:
		return fill(b, vars)
	}
	enc, err := json.Marshal(body)
	require.NoError(t, err)
	return []byte(fill(string(enc), vars))
}

func (h *harness) authFor(who string) string {
	switch who {
	case asDev:
		return "ApiKey " + h.DevKey
	case asProd:
		return "ApiKey " + h.ProdKey
	case asSession:
		return "Bearer " + h.Session("development")
	case asNone:
		return ""
	}
	return who
}

// call is DoAs with the failures reported on t, so that it is safe in
// subtests and fuzz functions (DoAs reports on the harness's own t).
func (h *harness) call(t testing.TB, auth, method, target string, body any, headers map[string]string) response {
	t.Helper()
	req := newRequest(t, auth, method, target, body, headers)
	res := h.serve(req)
	validateResponse(t, docProbe(req), res)
	return res
}

// newRequest builds a request the way DoAs does.
func newRequest(t testing.TB, auth, method, target string, body any, headers map[string]string) *http.Request {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			t.Errorf("encoding a request body: %v", err)
		}
		rd = bytes.NewReader(enc)
	}
	req := httptest.NewRequest(method, target, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return req
}

// serve runs a request through the server without validating the response,
// so that goroutines can use it; validate afterwards with validateResponse.
func (h *harness) serve(req *http.Request) response {
	rec := httptest.NewRecorder()
	h.Handler.ServeHTTP(rec, req)
	return response{Status: rec.Code, Header: rec.Header(), Raw: rec.Body.Bytes()}
}

// docProbe is the request validateResponse looks up in the document: the
// same path, without the query, which response validation does not use and
// which (when fuzzed) need not survive being parsed again.
func docProbe(req *http.Request) *http.Request {
	return &http.Request{Method: req.Method, URL: &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath}}
}

var (
	errorSchemaOnce sync.Once
	errorSchema     *openapi3.Schema
	errorSchemaErr  error
)

// validateErrorBody checks a response against the document's Error schema.
func validateErrorBody(t testing.TB, res response) {
	t.Helper()
	errorSchemaOnce.Do(func() {
		doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPIJSON())
		if err != nil {
			errorSchemaErr = err
			return
		}
		errorSchema = doc.Components.Schemas["Error"].Value
	})
	require.NoError(t, errorSchemaErr)
	require.Equal(t, "application/json; charset=utf-8", res.Header.Get("Content-Type"))
	require.NoError(t, errorSchema.VisitJSON(res.JSON(t)), "%s", res.Raw)
}

// errorFields returns the keys of a 422's `errors`.
func errorFields(t testing.TB, res response) []string {
	t.Helper()
	errs, _ := res.Object(t)["errors"].(map[string]any)
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// requireErrorShape checks the one error shape (docs/api-behaviour.md, "Wire format").
func requireErrorShape(t testing.TB, res response, method, target string) {
	t.Helper()
	body := res.Object(t)
	require.EqualValues(t, res.Status, body["statusCode"], "%s", res.Raw)
	require.Equal(t, http.StatusText(res.Status), body["error"], "%s", res.Raw)
	require.NotEmpty(t, body["message"], "%s", res.Raw)
	require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`, body["timestamp"])
	u, err := url.Parse(target)
	require.NoError(t, err)
	require.Equal(t, u.Path, body["path"], "%s %s", method, target)
	if res.Status == http.StatusUnprocessableEntity {
		require.NotEmpty(t, body["errors"], "a 422 names its fields: %s", res.Raw)
	}
	if res.Status < 500 {
		require.NotContains(t, body, "errorId")
	}
}

// requireError checks status, shape and (for a 422) the exact offending fields.
func requireError(t testing.TB, res response, status int, method, target string, fields ...string) {
	t.Helper()
	require.Equal(t, status, res.Status, "%s %s: %s", method, target, res.Raw)
	requireErrorShape(t, res, method, target)
	if len(fields) > 0 {
		require.ElementsMatch(t, fields, errorFields(t, res), "%s", res.Raw)
	}
}

// subPath is the path of a subscriber, its id escaped as a path segment.
func subPath(subscriberID string) string { return "/v2/subscribers/" + url.PathEscape(subscriberID) }

// credPath is the credentials path of a subscriber.
func credPath(subscriberID string) string {
	return "/v1/subscribers/" + url.PathEscape(subscriberID) + "/credentials"
}

// createSubscriber creates (or updates) a subscriber as the given caller.
func (h *harness) createSubscriber(t testing.TB, auth string, body map[string]any) map[string]any {
	t.Helper()
	res := h.call(t, auth, "POST", "/v2/subscribers", body, nil)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	return res.Object(t)
}

// createIntegration creates an integration as the given caller.
func (h *harness) createIntegration(t testing.TB, auth string, body map[string]any) map[string]any {
	t.Helper()
	res := h.call(t, auth, "POST", "/v1/integrations", withRequiredCredentials(body), nil)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	return res.Object(t)
}

// withRequiredCredentials fills the credentials an active integration of a
// provider Herald delivers through requires (placeholders), so that a
// fixture names only what its test is about. Given values are kept.
func withRequiredCredentials(body map[string]any) map[string]any {
	if body["active"] != true {
		return body
	}
	pid, _ := body["providerId"].(string)
	e, ok := registry.Default().Get(pid)
	if !ok {
		return body
	}
	out := maps.Clone(body)
	creds := map[string]any{}
	if given, ok := body["credentials"].(map[string]any); ok {
		maps.Copy(creds, given)
	}
	for _, k := range e.Required() {
		if _, ok := creds[k]; !ok {
			creds[k] = "placeholder-" + k
		}
	}
	out["credentials"] = creds
	return out
}

// getSubscriber returns the subscriber as the development key sees it.
func (h *harness) getSubscriber(t testing.TB, subscriberID string) map[string]any {
	t.Helper()
	res := h.call(t, h.authFor(asDev), "GET", subPath(subscriberID), nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
	return res.Object(t)
}

// deviceTokens returns the device tokens of the subscriber's channel of a provider.
func deviceTokens(t testing.TB, sub map[string]any, providerID string) []string {
	t.Helper()
	var out []string
	chs, _ := sub["channels"].([]any)
	for _, c := range chs {
		ch := c.(map[string]any)
		if ch["providerId"] != providerID {
			continue
		}
		creds, _ := ch["credentials"].(map[string]any)
		toks, _ := creds["deviceTokens"].([]any)
		for _, tok := range toks {
			out = append(out, tok.(string))
		}
	}
	return out
}

// integrationIDs returns the `_id` of every integration of a list response.
func integrationIDs(t testing.TB, res response) []string {
	t.Helper()
	var ids []string
	for _, it := range res.Array(t) {
		ids = append(ids, it.(map[string]any)["_id"].(string))
	}
	return ids
}

// findIntegration returns the integration with that `_id` from a list response.
func findIntegration(t testing.TB, res response, id string) map[string]any {
	t.Helper()
	for _, it := range res.Array(t) {
		if m := it.(map[string]any); m["_id"] == id {
			return m
		}
	}
	return nil
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func repeat(s string, n int) string { return strings.Repeat(s, n) }
