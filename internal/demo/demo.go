// Package demo serves Herald's demo inbox page at /demo: the official
// @novu/js Inbox UI (bundled by clients/demo-inbox/build.sh and embedded
// here), signed in as a demo subscriber of the development environment, so
// that a newcomer triggers a workflow with curl and watches it arrive.
//
// The page is for development only: it serves the environment named
// "development" and no other, and `herald serve --demo-page=false` turns it
// off. Its config carries the demo subscriber's subscriberHash, computed
// here with one of the environment's API keys, so the page works with the
// subscriberHash check left on; that hash opens the demo subscriber's inbox
// only.
package demo

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
)

//go:embed dist/index.html dist/inbox.js
var dist embed.FS

const (
	// Environment is the one environment the page serves.
	Environment = "development"
	// SubscriberID is the subscriber the page signs in as.
	SubscriberID = "herald-demo-subscriber"
	// WorkflowID is the demo workflow (one in-app step) Setup creates.
	WorkflowID = "herald-demo"
	// Path is where the page is served.
	Path = "/demo"
)

// Page serves the demo inbox page.
type Page struct {
	store store.Store
	log   *slog.Logger
	files fs.FS
}

// Setup makes sure the development environment has the demo workflow and
// returns the page. Without a development environment there is no page
// (nil, nil): it never serves another environment.
func Setup(ctx context.Context, st store.Store, log *slog.Logger) (*Page, error) {
	env, err := st.EnvironmentGetByName(ctx, Environment)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("demo page: %w", err)
	}
	if err := ensureWorkflow(ctx, st, env); err != nil {
		return nil, fmt.Errorf("demo page: the %s workflow: %w", WorkflowID, err)
	}
	files, err := fs.Sub(dist, "dist")
	if err != nil {
		return nil, fmt.Errorf("demo page: %w", err)
	}
	return &Page{store: st, log: log, files: files}, nil
}

// ensureWorkflow creates the demo workflow unless a workflow with its
// workflowId exists (one the user changed stays as it is).
func ensureWorkflow(ctx context.Context, st store.Store, env store.Environment) error {
	scope := store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}
	_, err := st.WorkflowGet(ctx, scope, WorkflowID)
	if err == nil || !errors.Is(err, store.ErrNotFound) {
		return err
	}
	now := time.Now().UTC()
	wf := store.Workflow{ID: id.New(), OrganizationID: env.OrganizationID, EnvironmentID: env.ID, Key: WorkflowID,
		Name: "Herald demo", Description: "The demo inbox page's workflow: one in-app step.", Active: true,
		Severity: "none", CreatedAt: now, UpdatedAt: now,
		Steps: []store.Step{{ID: id.New(), StepID: "in-app", Name: "In-app", Type: "in_app", ControlValues: map[string]any{
			"subject": "Hello from Herald",
			"body":    "{{payload.message}}",
		}}}}
	if err := st.WorkflowCreate(ctx, &wf); err != nil && !errors.Is(err, store.ErrConflict) {
		return err
	}
	return nil
}

// Curl is the command that triggers the demo workflow for the demo
// subscriber on the Herald at base, with apiKey (a placeholder when empty).
func Curl(base, apiKey string) string {
	if apiKey == "" {
		apiKey = "$HERALD_API_KEY"
	}
	return fmt.Sprintf("curl -s -X POST %s/v1/events/trigger -H \"Authorization: ApiKey %s\" -H 'Content-Type: application/json' \\\n"+
		"  -d '{\"name\":\"%s\",\"to\":\"%s\",\"payload\":{\"message\":\"It works: this came from curl.\"}}'",
		base, apiKey, WorkflowID, SubscriberID)
}

// Wrap serves the page at /demo and everything else with next, untouched
// (the API's own mux keeps its answers to every other path). A nil page
// (turned off, or no development environment) is next itself.
func (p *Page) Wrap(next http.Handler) http.Handler {
	if p == nil {
		return next
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Path, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Path+"/", http.StatusFound)
	})
	mux.HandleFunc("GET "+Path+"/{$}", func(w http.ResponseWriter, r *http.Request) { p.file(w, "index.html", "text/html; charset=utf-8") })
	mux.HandleFunc("GET "+Path+"/inbox.js", func(w http.ResponseWriter, r *http.Request) {
		p.file(w, "inbox.js", "text/javascript; charset=utf-8")
	})
	mux.HandleFunc("GET "+Path+"/config.json", p.config)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern == "" {
			next.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func (p *Page) file(w http.ResponseWriter, name, contentType string) {
	b, err := fs.ReadFile(p.files, name)
	if err != nil { // embedded at build time: cannot happen
		http.Error(w, "demo page missing from this build", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(b) //nolint:errcheck // the client went away
}

// Config is what the page signs in with.
type Config struct {
	ApplicationIdentifier string `json:"applicationIdentifier"`
	SubscriberID          string `json:"subscriberId"`
	// SubscriberHash is empty when the environment has no API key that
	// can sign and does not require it.
	SubscriberHash string `json:"subscriberHash"`
	WorkflowID     string `json:"workflowId"`
	Curl           string `json:"curl"`
}

// config answers the development environment's application identifier and
// the demo subscriber with its subscriberHash, read at each request (so
// `herald environment set --hmac` and new keys apply at once).
func (p *Page) config(w http.ResponseWriter, r *http.Request) {
	env, err := p.store.EnvironmentGetByName(r.Context(), Environment)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	keys, err := p.store.APIKeySigningKeys(r.Context(), env.ID)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	cfg := Config{ApplicationIdentifier: env.Identifier, SubscriberID: SubscriberID, WorkflowID: WorkflowID,
		Curl: Curl(baseURL(r), "")}
	if len(keys) > 0 {
		cfg.SubscriberHash = secret.SubscriberHash(keys[0], SubscriberID)
	} else if !env.InboxHMACDisabled {
		writeJSON(w, r, http.StatusConflict, errorBody(r, http.StatusConflict, "the development environment has no API key that can sign"+
			" the demo subscriber's subscriberHash: make one with `herald keys create --environment development`"+
			" (or use an existing key once for an API call)"))
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"data": cfg})
}

func (p *Page) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := http.StatusInternalServerError, "the demo page's config could not be read"
	if errors.Is(err, store.ErrNotFound) {
		status, msg = http.StatusNotFound, "there is no development environment"
	} else {
		p.log.ErrorContext(r.Context(), "demo page config", "err", err)
	}
	writeJSON(w, r, status, errorBody(r, status, msg))
}

// baseURL is the URL the page was opened at, for the curl line.
func baseURL(r *http.Request) string {
	host := r.Host
	ok := host != "" && len(host) <= 255
	for _, c := range host {
		ok = ok && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(".:-[]", c))
	}
	if !ok {
		host = "127.0.0.1:3000"
	}
	return "http://" + host
}

func errorBody(r *http.Request, status int, msg string) map[string]any {
	return map[string]any{"statusCode": status, "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "path": r.URL.Path,
		"message": msg, "error": http.StatusText(status)}
}

func writeJSON(w http.ResponseWriter, _ *http.Request, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // the client went away
}
