package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/bridge"
)

// RequestTimeout bounds the work of a request: whatever it waits for (a
// connection of the store's pool, a statement, a trigger group's commit)
// ends by then, and the request is answered — 503 where the database did
// not answer (errorAnswer). With a database host gone from the network,
// every request is answered within about this long instead of hanging
// (docs/operations.md, "A database that vanishes").
const RequestTimeout = 7 * time.Second

// slowRequestTimeout bounds the requests that wait on a remote party of
// the customer's with deadlines of its own: a Novu Framework bridge (sync,
// status, the preview of its steps), a provider's test send.
const slowRequestTimeout = bridge.DefaultDeadline + RequestTimeout

// WithDeadlines gives every request's context its deadline (requestTimeout)
// before h serves it: the API's routes, the dashboard's and the demo page's
// alike.
func WithDeadlines(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := requestTimeout(r); d > 0 {
			ctx, cancel := context.WithTimeout(r.Context(), d)
			defer cancel()
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(w, r)
	})
}

// requestTimeout is r's time limit; 0 for the inbox's long-lived streams
// (a socket, an event stream), whose store calls are bounded one by one.
func requestTimeout(r *http.Request) time.Duration {
	p := r.URL.Path
	switch {
	case p == "/socket.io" || strings.HasPrefix(p, "/socket.io/") || p == "/v1/inbox/events":
		return 0
	case strings.HasPrefix(p, "/v1/bridge/") || strings.HasSuffix(p, "/preview") ||
		strings.Contains(p, "/integrations/") && strings.HasSuffix(p, "/test"):
		return slowRequestTimeout
	}
	return RequestTimeout
}
