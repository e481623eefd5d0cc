package httpapi

import (
	"net/http"
	"slices"

	"github.com/herald-notify/herald/internal/store"
)

// HandleForTest registers h as an authenticated route behind the whole
// request pipeline (body limit, authentication, idempotency, recovery), so
// that tests can drive the pipeline with handlers no real route has.
func (s *Server) HandleForTest(pattern string, h func(http.ResponseWriter, *http.Request) error) {
	s.handle(pattern, authenticated, h)
}

// RoutePatterns lists the pattern of every route a Server registers, so that
// the bad-input sweep can prove it drives them all.
func RoutePatterns(s *Server) []string { return slices.Clone(s.patterns) }

// HandleInboxForTest registers h as an inbox route: behind the whole request
// pipeline, callable with an inbox session token only.
func (s *Server) HandleInboxForTest(pattern string, h func(http.ResponseWriter, *http.Request) error) {
	s.handle(pattern, inboxSession, h)
}

// InboxCallerForTest returns the scope and subscriber an inbox route's
// request runs for.
func InboxCallerForTest(r *http.Request) (store.Scope, *store.Subscriber) {
	c := callerFrom(r.Context())
	return c.Scope, c.Subscriber
}
