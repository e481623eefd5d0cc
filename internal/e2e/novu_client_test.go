// Package e2e runs clients that users point at Herald against a real server:
// listening on a port, on a real store, with its engine workers running.
package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/bridge"
	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/httpapi/openapitest"
	"github.com/herald-notify/herald/internal/netguard"
	"github.com/herald-notify/herald/internal/nodetest"
	"github.com/herald-notify/herald/internal/realtime"
	"github.com/herald-notify/herald/internal/testdb"
)

// clientDir is the Node project that drives the official @novu/api SDK.
var clientDir = filepath.Join("..", "..", "clients", "novu-api-test")

// TestNovuAPIClient runs clients/novu-api-test/run.mjs — the official
// TypeScript SDK of the established service, which validates every response
// with strict schemas — against Herald on each store, and requires every call
// to succeed. Every response the SDK receives is also validated against
// Herald's own OpenAPI document.
func TestNovuAPIClient(t *testing.T) {
	runClient(t, clientDir)
}

// runClient runs dir's run.mjs with Node against Herald on each store (npm
// ci first, from the committed lock file) and requires it to succeed; the
// responses it receives must also match Herald's OpenAPI document.
func runClient(t *testing.T, dir string) {
	node, npm := nodetest.RequireTool(t, "node"), nodetest.RequireTool(t, "npm")
	nodetest.NpmCI(t, npm, dir)

	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			base, key, problems := startHerald(t, kind)

			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "run.mjs")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "HERALD_URL="+base, "HERALD_API_KEY="+key, "NO_COLOR=1")
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("%s/run.mjs did not finish within 60 s; its output:\n%s", dir, out)
			}
			require.NoError(t, err, "%s/run.mjs failed against Herald (%s); its output:\n%s", dir, kind, out)
			t.Logf("%s/run.mjs (%s):\n%s", dir, kind, out)
			for _, p := range problems() {
				t.Error(p)
			}
		})
	}
}

// startHerald starts Herald as `herald serve` does — a bootstrapped store,
// the engine's workers, the API on a free port — and returns its base URL,
// the development environment's API key, and a function returning the
// responses that did not match the OpenAPI document.
func startHerald(t *testing.T, kind string) (base, key string, problems func() []string) {
	t.Helper()
	return startHeraldWith(t, kind, heraldOptions{})
}

// heraldOptions are startHeraldWith's settings beyond startHerald's.
type heraldOptions struct {
	// AllowPrivate lets the API (bridge sync, status) and the engine
	// (bridge execution, provider calls) reach 127.0.0.1, as
	// HERALD_ALLOW_PRIVATE_NETWORKS=true does: a bridge app and provider
	// fakes on loopback.
	AllowPrivate bool
}

// startHeraldWith is startHerald with opts.
func startHeraldWith(t *testing.T, kind string, opts heraldOptions) (base, key string, problems func() []string) {
	t.Helper()
	var bridgeClient *bridge.Client
	if opts.AllowPrivate {
		bridgeClient = bridge.New(bridge.Options{Dialer: &netguard.Dialer{AllowPrivate: true}})
	}
	db := testdb.Open(t, kind)
	a := &app.App{Store: db, Keys: testdb.Keys(t)}
	first, err := a.Bootstrap(context.Background())
	require.NoError(t, err)
	require.NotNil(t, first, "the store was not empty")

	var logs bytes.Buffer
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logMu}, &slog.HandlerOptions{Level: slog.LevelWarn}))

	ctx, cancel := context.WithCancel(context.Background())
	eng := engine.New(engine.Options{Store: db, Logger: log, Listen: db.ListenJobs, Poll: 200 * time.Millisecond,
		Bridge: bridgeClient, Delivery: engine.DeliveryOptions{AllowPrivateNetworks: opts.AllowPrivate}})
	workersDone := make(chan struct{})
	go func() {
		defer close(workersDone)
		eng.Run(ctx)
	}()

	_, err = openapitest.Router()
	require.NoError(t, err)
	v := &validator{}
	rt := realtime.NewDispatcher(realtime.NewHub(), db, log)
	db.OnInboxChange(rt.Changed)
	go rt.Run(ctx)
	api := httpapi.New(httpapi.Options{Store: db, Keys: a.Keys, Logger: log, OnTrigger: eng.Wake, Realtime: rt,
		Bridge: bridgeClient})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: v.wrap(api), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	t.Cleanup(func() {
		shutdownCtx, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		rt.Close()
		if err := srv.Shutdown(shutdownCtx); err != nil {
			t.Errorf("shutting the server down: %v", err)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serving: %v", err)
		}
		cancel()
		<-workersDone
		logMu.Lock()
		defer logMu.Unlock()
		if t.Failed() && logs.Len() > 0 {
			t.Logf("server log (warnings and errors):\n%s", logs.String())
		}
	})
	return "http://" + ln.Addr().String(), first.Keys["development"], v.problems
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// validator checks every response the server sends against the OpenAPI
// document, as the HTTP suite's harness does, and remembers mismatches.
type validator struct {
	mu    sync.Mutex
	found []string
}

func (v *validator) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/socket.io") || r.URL.Path == "/v1/inbox/events" {
			h.ServeHTTP(w, r) // a socket or a stream: nothing to buffer
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, vals := range rec.Header() {
			w.Header()[k] = vals
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		if err := v.check(r, rec); err != nil {
			v.mu.Lock()
			v.found = append(v.found, fmt.Sprintf("%s %s → %d: %v\nbody: %s", r.Method, r.URL.RequestURI(), rec.Code, err, rec.Body.Bytes()))
			v.mu.Unlock()
		}
	})
}

func (v *validator) check(r *http.Request, rec *httptest.ResponseRecorder) error {
	return openapitest.Check(r.Method, r.URL.RequestURI(), rec.Code, rec.Header(), rec.Body.Bytes())
}

func (v *validator) problems() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.found...)
}
