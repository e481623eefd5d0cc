// Package dashboard serves Herald's dashboard at /dashboard/: the embedded
// front end (web/, no build step), the sign-in of the accounts that
// `herald user create` makes, server-side sessions in an HttpOnly cookie,
// and the dashboard's own JSON routes under /dashboard/api/. Those routes
// answer 401 without a session and refuse cross-origin state-changing
// requests; apart from the few of its own (session, preview, activity,
// analytics, API keys, …), they hand the request to the public API as the
// signed-in account, in the environment the path names, so the dashboard
// and the API never disagree.
package dashboard

import (
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"runtime"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/provider/registry"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
)

//go:embed web
var web embed.FS

// Path is where the dashboard is served.
const Path = "/dashboard"

// apiPrefix is the path of the dashboard's own JSON routes.
const apiPrefix = Path + "/api"

// DefaultSessionTTL is how long a sign-in lasts.
const DefaultSessionTTL = 12 * time.Hour

// DefaultSignInFailures is how many failed sign-ins a client address, or an
// e-mail address, may make per minute before it gets 429s.
const DefaultSignInFailures = 5

// Options configure the dashboard.
type Options struct {
	Store store.Store
	Keys  *secret.Keys
	// API is the public API (httpapi.Server): the dashboard's data routes
	// are its routes, called as the signed-in account.
	API     http.Handler
	Sandbox *sandbox.Sandbox
	Logger  *slog.Logger
	// Now is the clock of sessions and rate limits (tests); time.Now when nil.
	Now func() time.Time
	// SessionTTL is how long a sign-in lasts (default DefaultSessionTTL).
	SessionTTL time.Duration
	// SignInFailures is the failed sign-ins allowed per minute per client
	// address and per e-mail address (default DefaultSignInFailures).
	SignInFailures int
	// Delivery is how the workers reach providers (the network guard, the
	// timeout): an integration's Send test goes the same way.
	Delivery engine.DeliveryOptions
}

// Dashboard serves /dashboard/.
type Dashboard struct {
	store      store.Store
	keys       *secret.Keys
	api        http.Handler
	sandbox    *sandbox.Sandbox
	log        *slog.Logger
	now        func() time.Time
	sessionTTL time.Duration
	limit      *failureLimiter
	files      fs.FS
	mux        *http.ServeMux
	csrf       *http.CrossOriginProtection
	delivery   engine.DeliveryOptions
	// hashing bounds the password checks running at once: each takes
	// Argon2id's 19 MiB, and a burst of sign-ins must not take the memory.
	hashing chan struct{}
}

// New builds the dashboard.
func New(o Options) *Dashboard {
	d := &Dashboard{store: o.Store, keys: o.Keys, api: o.API, sandbox: o.Sandbox, log: o.Logger, now: o.Now, sessionTTL: o.SessionTTL,
		delivery: o.Delivery}
	if d.delivery.Registry == nil {
		d.delivery.Registry = registry.Default()
	}
	if d.now == nil {
		d.now = time.Now
	}
	if d.log == nil {
		d.log = slog.Default()
	}
	if d.sandbox == nil {
		d.sandbox = sandbox.New(sandbox.DefaultLimits)
	}
	if d.sessionTTL <= 0 {
		d.sessionTTL = DefaultSessionTTL
	}
	if o.SignInFailures <= 0 {
		o.SignInFailures = DefaultSignInFailures
	}
	d.limit = newFailureLimiter(o.SignInFailures, time.Minute, d.now)
	d.hashing = make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))
	files, err := fs.Sub(web, "web")
	if err != nil {
		panic(err) // embedded at build time
	}
	d.files = files
	// Go's cross-origin protection: Sec-Fetch-Site, else Origin against
	// Host. A request with neither header is not a browser's, so it is no
	// forgery.
	d.csrf = http.NewCrossOriginProtection()
	d.csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, errorf(http.StatusForbidden, "Cross-origin requests may not change anything through the dashboard"))
	}))
	d.routes()
	return d
}

func (d *Dashboard) routes() {
	d.mux = http.NewServeMux()
	d.mux.HandleFunc("GET "+Path, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Path+"/", http.StatusFound)
	})
	d.mux.HandleFunc("GET "+Path+"/{$}", d.page)
	d.mux.HandleFunc("GET "+Path+"/assets/{file}", d.asset)

	d.mux.Handle("POST "+apiPrefix+"/session", d.guard(d.signIn))
	d.mux.Handle("GET "+apiPrefix+"/session", d.guard(d.me))
	d.mux.Handle("DELETE "+apiPrefix+"/session", d.signedIn(d.signOut))
	d.mux.Handle("GET "+apiPrefix+"/providers", d.signedIn(d.providerCatalogue))
	d.mux.Handle("POST "+apiPrefix+"/env/{env}/preview", d.inEnvironment(d.preview))
	d.mux.Handle("GET "+apiPrefix+"/env/{env}/activity", d.inEnvironment(d.activity))
	d.mux.Handle("GET "+apiPrefix+"/env/{env}/analytics", d.inEnvironment(d.analytics))
	d.mux.Handle("GET "+apiPrefix+"/webhook-event-types", d.signedIn(d.webhookEventTypes))
	d.mux.Handle("POST "+apiPrefix+"/env/{env}/integrations/{id}/test", d.inEnvironment(d.integrationSendTest))
	d.mux.Handle("GET "+apiPrefix+"/env/{env}/api-keys", d.inEnvironment(d.apiKeyList))
	d.mux.Handle("POST "+apiPrefix+"/env/{env}/api-keys", d.inEnvironment(d.apiKeyCreate))
	d.mux.Handle("DELETE "+apiPrefix+"/env/{env}/api-keys/{id}", d.inEnvironment(d.apiKeyRevoke))
	d.mux.Handle(apiPrefix+"/env/{env}/{rest...}", d.inEnvironment(d.forward))
	d.mux.Handle(apiPrefix+"/", d.guard(d.unmatched))
}

// Wrap serves the dashboard's paths and hands every other request to next.
func (d *Dashboard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == Path || strings.HasPrefix(r.URL.Path, Path+"/") {
			d.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP implements http.Handler for the dashboard's paths.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self';"+
		" connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	if _, pattern := d.mux.Handler(r); pattern == "" {
		http.NotFound(w, r)
		return
	}
	d.mux.ServeHTTP(w, r)
}

// unmatched answers a path of the dashboard's API that no route serves:
// 405 when another method would be served, else 404.
func (d *Dashboard) unmatched(_ http.ResponseWriter, r *http.Request) error {
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := d.mux.Handler(probe); p != apiPrefix+"/" {
			return errorf(http.StatusMethodNotAllowed, "Cannot "+r.Method+" "+r.URL.Path)
		}
	}
	return errorf(http.StatusNotFound, "Cannot "+r.Method+" "+r.URL.Path)
}

// page is the dashboard's one HTML page; the front end draws the sign-in
// form or the signed-in views.
func (d *Dashboard) page(w http.ResponseWriter, _ *http.Request) {
	d.serveFile(w, "index.html")
}

func (d *Dashboard) asset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if name != path.Base(name) || name == "index.html" {
		http.NotFound(w, r)
		return
	}
	d.serveFile(w, name)
}

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

func (d *Dashboard) serveFile(w http.ResponseWriter, name string) {
	ct, ok := contentTypes[path.Ext(name)]
	b, err := fs.ReadFile(d.files, name)
	if !ok || err != nil {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(b) //nolint:errcheck // the client went away
}
