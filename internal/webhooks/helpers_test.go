package webhooks_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
	"github.com/herald-notify/herald/internal/webhooks"
)

// world is a store with a first-start environment and a webhooks service
// whose sender runs until the test ends.
type world struct {
	t     *testing.T
	db    *sqlstore.DB
	env   store.Environment
	scope store.Scope
	svc   *webhooks.Service
}

// forEachStore runs fn on each store, in parallel.
func forEachStore(t *testing.T, fn func(t *testing.T, db *sqlstore.DB)) {
	t.Parallel()
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			fn(t, testdb.Open(t, kind))
		})
	}
}

// newWorld bootstraps db and starts a service with o (Store set; a short
// schedule and private networks allowed unless o says otherwise), its
// sender running until the test ends.
func newWorld(t *testing.T, db *sqlstore.DB, o webhooks.Options) *world {
	t.Helper()
	w := newQuietWorld(t, db, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.svc.Send(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return w
}

// newQuietWorld is newWorld without a sender.
func newQuietWorld(t *testing.T, db *sqlstore.DB, o webhooks.Options) *world {
	t.Helper()
	a := &app.App{Store: db, Keys: testdb.Keys(t)}
	_, err := a.Bootstrap(context.Background())
	require.NoError(t, err)
	env, err := db.EnvironmentGetByName(context.Background(), "development")
	require.NoError(t, err)
	w := &world{t: t, db: db, env: env, scope: store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}}
	if o.Store == nil {
		o.Store = db
	}
	if o.Schedule == nil {
		o.Schedule = []time.Duration{0, 100 * time.Millisecond, 100 * time.Millisecond}
	}
	if o.Dialer == nil && o.Transport == nil {
		o.AllowPrivateNetworks = true
	}
	if o.Poll == 0 {
		o.Poll = 50 * time.Millisecond
	}
	w.svc = webhooks.New(o)
	return w
}

// endpoint creates an endpoint of the world's environment.
func (w *world) endpoint(url string, types ...string) store.WebhookEndpoint {
	w.t.Helper()
	e, err := w.db.WebhookEndpointCreate(context.Background(), &store.WebhookEndpointCreateParams{Scope: w.scope, URL: url,
		EventTypes: types, Secret: webhooks.NewSecret(), Now: time.Now()})
	require.NoError(w.t, err)
	w.svc.Changed(w.env.ID)
	return e
}

// update changes an endpoint.
func (w *world) update(p store.WebhookEndpointUpdateParams) store.WebhookEndpoint {
	w.t.Helper()
	p.Scope, p.Now = w.scope, time.Now()
	e, err := w.db.WebhookEndpointUpdate(context.Background(), &p)
	require.NoError(w.t, err)
	w.svc.Changed(w.env.ID)
	return e
}

// emit emits a workflow event named key.
func (w *world) emit(typ, key string) {
	w.svc.Emit(context.Background(), w.scope, webhooks.WorkflowEvent(typ, map[string]any{"workflowId": key}, nil))
}

// attempts are an endpoint's attempts made, newest first.
func (w *world) attempts(endpointID string) []store.WebhookAttempt {
	w.t.Helper()
	as, err := w.db.WebhookAttemptList(context.Background(), w.scope, endpointID, 100)
	require.NoError(w.t, err)
	return as
}

// waitAttempts waits until an endpoint has n attempts made, and returns
// them oldest first.
func (w *world) waitAttempts(endpointID string, n int) []store.WebhookAttempt {
	w.t.Helper()
	require.Eventually(w.t, func() bool { return len(w.attempts(endpointID)) >= n }, 10*time.Second, 5*time.Millisecond,
		"endpoint %s: fewer than %d attempts", endpointID, n)
	as := w.attempts(endpointID)
	require.Len(w.t, as, n)
	for i, j := 0, len(as)-1; i < j; i, j = i+1, j-1 {
		as[i], as[j] = as[j], as[i]
	}
	return as
}

// idle reports that nothing is left to attempt.
func (w *world) idle() bool {
	next, err := w.db.WebhookNextDue(context.Background())
	require.NoError(w.t, err)
	return next.IsZero()
}

// hit is one request a receiver got.
type hit struct {
	at     time.Time
	header http.Header
	body   []byte
	path   string
}

// receiver is a local endpoint answering with answer (200 when nil).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	hits   []hit
	answer func(n int, w http.ResponseWriter, r *http.Request)
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.hits = append(rc.hits, hit{at: time.Now(), header: r.Header.Clone(), body: body, path: r.URL.Path})
		n := len(rc.hits)
		rc.mu.Unlock()
		if rc.answer != nil {
			rc.answer(n, w, r)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) got() []hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hit(nil), rc.hits...)
}

// status answers every request with code.
func status(code int) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

// verify checks a request's Standard Webhooks signature as the contract
// defines it and returns how many of its entries secret signs.
func verify(t *testing.T, h hit, secret string) int {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	require.NoError(t, err)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(h.header.Get("webhook-id") + "." + h.header.Get("webhook-timestamp") + "."))
	mac.Write(h.body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	n := 0
	for _, entry := range strings.Split(h.header.Get("webhook-signature"), " ") {
		if hmac.Equal([]byte(entry), []byte(want)) {
			n++
		}
	}
	return n
}

// envelope decodes a request's body.
func envelope(t *testing.T, h hit) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(h.body, &m), string(h.body))
	return m
}
