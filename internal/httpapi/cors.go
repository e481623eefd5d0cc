package httpapi

import (
	"net/http"
	"strings"
)

// CORS: browsers call Herald from other origins (the inbox clients, a
// dashboard), and every such call carries headers that are not CORS-safe,
// so each is preflighted. ServeHTTP answers every preflight and puts the
// CORS headers on every answer before any route, middleware or error writer
// runs: a 204, a 401 of the authentication step or a 404 of an unknown path
// carries them as a 200 does, and no route can miss them.

// corsAllowHeaders are the request headers a browser may send: the inbox
// clients' and the API's. Named one by one: "*" would not cover Authorization.
const corsAllowHeaders = "authorization, content-type, novu-api-version, novu-client-version, " +
	"novu-application-identifier, idempotency-key, x-request-id"

// corsExposeHeaders are the response headers a page's script may read.
const corsExposeHeaders = "X-Request-Id, Idempotency-Key, Idempotency-Replay, Retry-After, " +
	"RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset"

const (
	corsAllowMethods = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
	corsMaxAge       = "7200" // seconds; browsers cap it about there
)

// corsPolicy says which origins may read Herald's answers.
type corsPolicy struct {
	any     bool            // "*": every origin
	origins map[string]bool // otherwise these, lower-cased
}

// newCORSPolicy builds the policy of a list of origins; an empty list, or
// one holding "*", allows every origin.
func newCORSPolicy(origins []string) corsPolicy {
	p := corsPolicy{origins: map[string]bool{}}
	for _, o := range origins {
		o = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(o), "/"))
		switch o {
		case "":
		case "*":
			p.any = true
		default:
			p.origins[o] = true
		}
	}
	if len(p.origins) == 0 {
		p.any = true
	}
	return p
}

// apply sets the CORS headers of an answer to r: "*" for every origin, or
// the request's Origin when it is one of the allowed (with Vary: Origin on
// every answer, since it then depends on the Origin).
func (p corsPolicy) apply(h http.Header, r *http.Request) {
	if p.any {
		h.Set("Access-Control-Allow-Origin", "*")
	} else {
		h.Add("Vary", "Origin")
		origin := r.Header.Get("Origin")
		if origin == "" || !p.origins[strings.ToLower(origin)] {
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
	}
	h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
}

// preflight answers an OPTIONS request, on any path and without
// authentication: 204 with the methods and headers a browser may use.
func (p corsPolicy) preflight(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", corsAllowMethods)
	h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
	h.Set("Access-Control-Max-Age", corsMaxAge)
	h.Set("Allow", corsAllowMethods)
	w.WriteHeader(http.StatusNoContent)
}
