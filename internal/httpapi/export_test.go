package httpapi

import "net/http"

// HandleForTest registers h as an authenticated route behind the whole
// request pipeline (body limit, authentication, idempotency, recovery), so
// that tests can drive the pipeline with handlers no real route has.
func (s *Server) HandleForTest(pattern string, h func(http.ResponseWriter, *http.Request) error) {
	s.handle(pattern, authenticated, h)
}
