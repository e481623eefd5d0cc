package httpapi

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// preflightRoute is the route label of CORS preflights (any path).
const preflightRoute = "OPTIONS (preflight)"

// serveMetrics serves the process's metrics (GET /metrics). With a
// metrics token configured, only 'Authorization: Bearer <token>' reads
// them; the comparison takes the same time whatever the token sent, and
// failures count against the client address's failed-authentication limit.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	if s.metrics == nil {
		return errorf(http.StatusNotFound, "Metrics are not served by this server")
	}
	if s.metricsToken != nil {
		// A wrong token counts against the client's failed-authentication limit.
		if err := s.limitAuth(w, r, func() error {
			scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			cred = strings.TrimSpace(cred)
			if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(cred), s.metricsToken) != 1 {
				return errorf(http.StatusUnauthorized, "GET /metrics takes 'Authorization: Bearer <metrics token>' (--metrics-token)")
			}
			return nil
		}); err != nil {
			return err
		}
	}
	s.metrics.Handler().ServeHTTP(w, r)
	return nil
}
