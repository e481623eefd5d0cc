package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/seed"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// kinds are the stores every benchmark runs on.
var kinds = []string{"sqlite", "postgres"}

// server is a store of one kind behind a real HTTP server, with an engine
// wired as `herald serve` wires it (woken by triggers and, on PostgreSQL, by
// NOTIFY). The engine runs only between startEngine and stopEngine.
type server struct {
	kind   string
	db     *sqlstore.DB
	keys   *secret.Keys
	srv    *httptest.Server
	client *http.Client
	key    string // an API key of the development environment
	scope  store.Scope
	gen    *seed.Generator
	eng    *engine.Engine
	stop   func()
}

// envInt reads a positive integer from the environment.
func envInt(tb testing.TB, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		tb.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// openStore opens a store of kind: the database named by location (a SQLite
// path or a PostgreSQL URL) when it is not empty, else a fresh one removed
// when tb ends.
func openStore(tb testing.TB, kind, location string) *sqlstore.DB {
	tb.Helper()
	ctx := context.Background()
	keys := benchKeys(tb)
	var db *sqlstore.DB
	var err error
	switch kind {
	case "sqlite":
		if location == "" {
			location = filepath.Join(tb.TempDir(), "herald.db")
		}
		db, err = sqlstore.OpenSQLite(ctx, location, keys)
	case "postgres":
		if location == "" {
			location = testdb.NewPostgresSchema(tb)
		}
		db, err = sqlstore.OpenPostgres(ctx, location, keys)
	default:
		tb.Fatalf("unknown store %q", kind)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func benchKeys(tb testing.TB) *secret.Keys {
	k, err := secret.Derive("herald-bench-secret")
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// newServer bootstraps db, seeds subscribers 0..subscribers-1 unless
// sub-(subscribers-1) exists, and serves it over HTTP with an engine.
func newServer(tb testing.TB, kind string, db *sqlstore.DB, subscribers int) *server {
	tb.Helper()
	ctx := context.Background()
	s := &server{kind: kind, db: db, keys: benchKeys(tb)}
	a := &app.App{Store: db, Keys: s.keys}
	if _, err := a.Bootstrap(ctx); err != nil {
		tb.Fatal(err)
	}
	env, err := db.EnvironmentGetByName(ctx, "development")
	if err != nil {
		tb.Fatal(err)
	}
	s.scope = store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}
	s.key = secret.NewAPIKey()
	rec := app.NewKeyRecord(env.ID, s.key, time.Now())
	if err := db.APIKeyCreate(ctx, &rec); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		db.APIKeyRevoke(context.Background(), &store.APIKeyRevokeParams{EnvironmentID: env.ID, ID: rec.ID,
			Now: time.Now()})
	}) //nolint:errcheck
	s.gen = seed.New(s.scope, seed.DefaultSeed)
	if subscribers > 0 {
		if _, err := db.SubscriberGet(ctx, s.scope, seed.SubscriberID(subscribers-1)); err != nil {
			progress := func(int) {}
			if subscribers >= 100_000 {
				fmt.Fprintf(os.Stderr, "seeding %d subscribers into %s\n", subscribers, kind)
				bar := seed.NewProgress(os.Stderr, subscribers)
				defer bar.Finish()
				progress = bar.Add
			}
			if err := seed.Load(ctx, s.gen, db.SubscriberBulkLoad, seed.LoadOptions{Count: subscribers, Progress: progress}); err != nil {
				tb.Fatalf("seeding subscribers (a partly seeded database must be dropped first): %v", err)
			}
		}
	}

	log := slog.New(slog.DiscardHandler)
	s.eng = engine.New(engine.Options{Store: db, Logger: log, Listen: db.ListenJobs})
	s.srv = httptest.NewServer(httpapi.New(httpapi.Options{Store: db, Keys: s.keys, Logger: log, OnTrigger: s.eng.Wake}))
	tb.Cleanup(s.srv.Close)
	s.client = &http.Client{Transport: &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 128}, Timeout: time.Minute}
	tb.Cleanup(s.stopEngine)
	return s
}

// startEngine runs the workers until stopEngine.
func (s *server) startEngine() {
	if s.stop != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.eng.Run(ctx)
	}()
	s.stop = func() {
		cancel()
		<-done
	}
}

// stopEngine stops the workers, waiting for their batches in flight.
func (s *server) stopEngine() {
	if s.stop != nil {
		s.stop()
		s.stop = nil
	}
}

// do sends one request and returns the status and the whole body, so the
// time measured around it includes reading the response.
func (s *server) do(method, path string, body []byte) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, s.srv.URL+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "ApiKey "+s.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// mustDo is do expecting status want; it decodes the body into out when set.
func (s *server) mustDo(tb testing.TB, method, path string, body any, want int, out any) {
	tb.Helper()
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			tb.Fatal(err)
		}
	}
	status, resp, err := s.do(method, path, raw)
	if err != nil || status != want {
		tb.Fatalf("%s %s: %d %s %v", method, path, status, resp, err)
	}
	if out != nil {
		if err := json.Unmarshal(resp, out); err != nil {
			tb.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// createWorkflow creates (or finds) the workflow key with steps over HTTP
// and returns it as stored.
func (s *server) createWorkflow(tb testing.TB, key string, steps []map[string]any) store.Workflow {
	tb.Helper()
	if w, err := s.db.WorkflowGet(context.Background(), s.scope, key); err == nil {
		return w
	}
	s.mustDo(tb, http.MethodPost, "/v2/workflows", map[string]any{"name": key, "workflowId": key, "steps": steps}, http.StatusCreated, nil)
	w, err := s.db.WorkflowGet(context.Background(), s.scope, key)
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// inAppStep is the in_app step of the benchmark workflows.
func inAppStep(body string) map[string]any {
	return map[string]any{"name": "inbox", "type": "in_app", "controlValues": map[string]any{
		"subject": "Hello {{subscriber.firstName}}", "body": body,
		"primaryAction": map[string]any{"label": "Open", "redirect": map[string]any{"url": "/items/{{payload.seq}}"}},
	}}
}

func feedPath(subscriberID string, q url.Values) string {
	p := "/v1/subscribers/" + url.PathEscape(subscriberID) + "/notifications/feed"
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
}

func markPath(subscriberID string) string {
	return "/v1/subscribers/" + url.PathEscape(subscriberID) + "/messages/mark-as"
}

// count runs a count(*) query on the reader.
func (s *server) count(tb testing.TB, q string, args ...any) int {
	tb.Helper()
	var n int
	if err := s.db.Reader().QueryRowContext(context.Background(), q, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return n
}

// unfinished is how many jobs are due, running or waiting, each status
// counted on its partial index. Pending jobs are not counted: in the
// benchmark workflows a pending step is always behind one of these.
func (s *server) unfinished(tb testing.TB) int {
	return s.count(tb, "SELECT (SELECT count(*) FROM jobs WHERE status = 'queued') + (SELECT count(*) FROM jobs"+
		" WHERE status = 'running') + (SELECT count(*) FROM jobs WHERE status = 'delayed')")
}

// waitDrained polls until no job is left to run, or fails after limit.
func (s *server) waitDrained(tb testing.TB, limit time.Duration) time.Time {
	tb.Helper()
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if s.unfinished(tb) == 0 {
			return time.Now()
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d jobs still unfinished after %s", s.unfinished(tb), limit)
		}
		<-tick.C
	}
}
