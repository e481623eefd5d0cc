package dashboard

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
)

// forwardTTL is how long the token of one forwarded request is valid.
const forwardTTL = time.Minute

// forward serves /dashboard/api/env/{env}/{v1|v2}/… with the public API's
// route of the same path, called as the signed-in account with a session
// token of that environment (a dashboard caller of the API: it sees
// integration credentials, as an organization member does). Only the
// API's /v1 and /v2 routes are reachable this way, not the inbox clients'.
func (d *Dashboard) forward(w http.ResponseWriter, r *http.Request, a account, env store.Environment) error {
	prefix := apiPrefix + "/env/" + url.PathEscape(env.Name)
	escaped, ok := strings.CutPrefix(r.URL.EscapedPath(), prefix)
	if !ok || !(strings.HasPrefix(escaped, "/v1/") || strings.HasPrefix(escaped, "/v2/")) || strings.HasPrefix(escaped, "/v1/inbox/") {
		return errorf(http.StatusNotFound, "Cannot "+r.Method+" "+r.URL.Path)
	}
	unescaped, err := url.PathUnescape(escaped)
	if err != nil {
		return errorf(http.StatusBadRequest, "The path is not well escaped")
	}
	token, err := d.keys.SignSession(secret.Session{MemberID: a.User.ID, OrganizationID: env.OrganizationID, EnvironmentID: env.ID,
		ExpiresAt: time.Now().Add(forwardTTL)})
	if err != nil {
		return err
	}
	fr := r.Clone(r.Context())
	fr.URL.Path, fr.URL.RawPath, fr.RequestURI = unescaped, escaped, ""
	fr.Header.Del("Cookie")
	fr.Header.Set("Authorization", "Bearer "+token)
	d.api.ServeHTTP(&sameOriginWriter{ResponseWriter: w}, fr)
	return nil
}

// sameOriginWriter drops the API's CORS headers from its answers: the
// dashboard's routes are for the dashboard's own page only.
type sameOriginWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *sameOriginWriter) WriteHeader(status int) {
	if !w.wrote {
		w.wrote = true
		for k := range w.Header() {
			if strings.HasPrefix(k, "Access-Control-") {
				w.Header().Del(k)
			}
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *sameOriginWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}
