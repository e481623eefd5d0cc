package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/bridge"
	"github.com/herald-notify/herald/internal/deliveryevents/snsfake"
	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/httpapi/openapitest"
	"github.com/herald-notify/herald/internal/metrics"
	"github.com/herald-notify/herald/internal/netguard"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// harness is a Herald server on a real store, with the two environments of
// a first start and their API keys.
type harness struct {
	t       testing.TB
	DB      *sqlstore.DB
	Keys    *secret.Keys
	Handler http.Handler
	DevKey  string
	ProdKey string
	App     *app.App
	// Metrics are the server's (GET /metrics) and its engines'.
	Metrics *metrics.Metrics
	// Wakes counts the server's calls of OnTrigger (wake the workers).
	Wakes atomic.Int64
	// SNS serves SNS's signing certificate and takes the subscriptions'
	// confirmations of the server's SES delivery events, from memory.
	SNS *snsfake.Fake
}

func newHarness(t testing.TB, kind string) *harness {
	db := testdb.Open(t, kind)
	a := &app.App{Store: db, Keys: testdb.Keys(t)}
	first, err := a.Bootstrap(context.Background())
	require.NoError(t, err)
	require.NotNil(t, first)
	h := &harness{t: t, DB: db, Keys: a.Keys, App: a, DevKey: first.Keys["development"], ProdKey: first.Keys["production"],
		SNS: snsfake.New()}
	log := testLogger(t)
	h.Metrics = metrics.New(metrics.Options{Stats: db, Pools: metrics.Pools(db.Writer(), db.Reader()), Logger: log})
	h.Handler = httpapi.New(httpapi.Options{Store: db, Keys: a.Keys, Logger: log, Metrics: h.Metrics,
		// Bridges in the tests listen on loopback.
		Bridge:    bridge.New(bridge.Options{Dialer: &netguard.Dialer{AllowPrivate: true}}),
		OnTrigger: func() { h.Wakes.Add(1) }, SNS: h.SNS.SNS()})
	return h
}

// forEachStore runs fn against a harness on each store.
func forEachStore(t *testing.T, fn func(t *testing.T, h *harness)) {
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			fn(t, newHarness(t, kind))
		})
	}
}

// Session returns a Bearer token of the owner for the named environment.
func (h *harness) Session(envName string) string {
	env, err := h.DB.EnvironmentGetByName(context.Background(), envName)
	require.NoError(h.t, err)
	owner, err := h.DB.MemberGetOwner(context.Background(), env.OrganizationID)
	require.NoError(h.t, err)
	tok, err := h.Keys.SignSession(secret.Session{MemberID: owner.ID, OrganizationID: env.OrganizationID,
		EnvironmentID: env.ID, ExpiresAt: time.Now().Add(time.Hour)})
	require.NoError(h.t, err)
	return tok
}

// response is a recorded, validated response.
type response struct {
	Status int
	Header http.Header
	Raw    []byte
}

// JSON decodes the body into a generic value.
func (r response) JSON(t testing.TB) any {
	var v any
	require.NoError(t, json.Unmarshal(r.Raw, &v), string(r.Raw))
	return v
}

// Object decodes a JSON object body.
func (r response) Object(t testing.TB) map[string]any {
	m, ok := r.JSON(t).(map[string]any)
	require.True(t, ok, "not an object: %s", r.Raw)
	return m
}

// Array decodes a JSON array body.
func (r response) Array(t testing.TB) []any {
	a, ok := r.JSON(t).([]any)
	require.True(t, ok, "not an array: %s", r.Raw)
	return a
}

// Do sends a request as the development environment's API key.
func (h *harness) Do(method, path string, body any) response {
	return h.DoAs("ApiKey "+h.DevKey, method, path, body, nil)
}

// DoAs sends a request with the given Authorization ("" for none) and extra
// headers, then validates the response against the OpenAPI document.
func (h *harness) DoAs(auth, method, path string, body any, headers map[string]string) response {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		require.NoError(h.t, err)
		rd = bytes.NewReader(enc)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.Handler.ServeHTTP(rec, req)
	res := response{Status: rec.Code, Header: rec.Header(), Raw: rec.Body.Bytes()}
	validateResponse(h.t, req, res)
	return res
}

// validateResponse checks a response against the OpenAPI document: its
// status must be documented and its body must match (no unexpected fields).
func validateResponse(t testing.TB, req *http.Request, res response) {
	t.Helper()
	require.NoError(t, openapitest.Check(req.Method, req.URL.RequestURI(), res.Status, res.Header, res.Raw),
		"response of %s %s: %d %s", req.Method, req.URL, res.Status, res.Raw)
}
