package httpapi

import (
	"net/http"
	"slices"
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
