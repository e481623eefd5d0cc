package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/logctx"
	"github.com/herald-notify/herald/internal/metrics"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
)

type (
	bodyKey   struct{}
	callerKey struct{}
)

// caller is the authenticated client of a request.
type caller struct {
	store.Scope
	// Session is true for dashboard callers (Bearer tokens): only they see
	// decrypted integration credentials.
	Session bool
	// ActorID is the member (sessions), API key or subscriber (inbox
	// sessions) behind the request.
	ActorID string
	// Subscriber is the subscriber of an inbox session, as it is now; nil
	// for every other caller. Inbox routes act for it alone.
	Subscriber *store.Subscriber
	// ContextKeys are an inbox session's context keys (nil: no context).
	ContextKeys *string
}

func callerFrom(ctx context.Context) caller { c, _ := ctx.Value(callerKey{}).(caller); return c }

// recorder remembers the status and, when asked, the body of a response.
type recorder struct {
	http.ResponseWriter
	status  int
	capture bool
	body    bytes.Buffer
	// secret says the answer carries a secret (a new API key): an
	// idempotent replay of it is kept sealed at rest.
	secret bool
}

// secretAnswer marks the answer being written as one that carries a secret.
func secretAnswer(w http.ResponseWriter) {
	if rec, ok := w.(*recorder); ok {
		rec.secret = true
	}
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.capture {
		r.body.Write(b)
	}
	return r.ResponseWriter.Write(b)
}

// wrap runs a handler of no route (the catch-all) inside the request
// pipeline; see wrapRoute.
func (s *Server) wrap(a access, h handlerFunc) http.Handler {
	return s.wrapRoute(metrics.Unmatched, a, h)
}

// wrapRoute runs a handler inside Herald's request pipeline: request id,
// panic recovery, body limit, authentication, rate limit, idempotency,
// error writing, the access log (which never records headers or bodies)
// and the request's observation under its route pattern. The request's
// log fields (logctx) carry its id, and its environment once authenticated,
// into every line logged with its context.
func (s *Server) wrapRoute(route string, a access, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		began := time.Now() // the metrics' clock; s.now may be a test's
		start := s.now()
		reqID := r.Header.Get("X-Request-Id")
		if !validRequestID(reqID) {
			reqID = newErrorID()
		}
		w.Header().Set("X-Request-Id", reqID)
		fields := &logctx.Fields{RequestID: reqID}
		r = r.WithContext(logctx.With(r.Context(), fields))
		rec := &recorder{ResponseWriter: w}
		var c caller // set by serve once authenticated
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.writeError(rec, r, fmt.Errorf("panic: %v\n%s", p, debug.Stack()))
			}
			s.log.InfoContext(r.Context(), "request", "method", r.Method, "path", r.URL.Path, "status", rec.status,
				"durationMs", float64(s.now().Sub(start).Microseconds())/1000)
			s.metrics.ObserveRequest(route, r.Method, rec.status, time.Since(began))
		}()
		if err := s.serve(rec, r, a, h, &c); err != nil {
			s.writeError(rec, r, err)
		}
	})
}

func (s *Server) serve(w *recorder, r *http.Request, a access, h handlerFunc, authed *caller) error {
	if r.Body != nil && r.Method != http.MethodGet && r.Method != http.MethodHead {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return errorf(http.StatusRequestEntityTooLarge, fmt.Sprintf("The body is larger than %d bytes", maxBody))
			}
			return errorf(http.StatusBadRequest, "The body could not be read")
		}
		r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, body))
	}
	if err := checkEdge(r); err != nil {
		return err
	}
	if a == public {
		return h(w, r)
	}
	c, err := s.authenticateLimited(w, r, a)
	if err != nil {
		return err
	}
	*authed = c
	if f := logctx.From(r.Context()); f != nil {
		f.EnvironmentID = c.EnvironmentID
	}
	r = r.WithContext(context.WithValue(r.Context(), callerKey{}, c))
	if a == inboxSession {
		// No idempotency keys: they are kept per environment, and one
		// subscriber's stored answer must never be replayed to another.
		if s.limiter != nil {
			if err := s.limiter.allow(w, c.EnvironmentID); err != nil {
				return err
			}
		}
		return h(w, r)
	}
	// Only now is the idempotency key looked at: an unauthenticated answer
	// never echoes it.
	key, err := idempotencyKey(w, r)
	if err != nil {
		return err
	}
	if s.limiter != nil {
		if err := s.limiter.allow(w, c.EnvironmentID); err != nil {
			return err
		}
	}
	if key == "" || r.Method == http.MethodGet || r.Method == http.MethodHead {
		return h(w, r)
	}
	return s.idempotent(w, r, c, key, h)
}

// authenticate resolves the Authorization header to a caller of a route
// of access a: an API key or a dashboard session, or for inbox routes an
// inbox session (and nothing else).
func (s *Server) authenticate(r *http.Request, a access) (caller, error) {
	header := r.Header.Get("Authorization")
	if header == "" {
		return caller{}, errorf(http.StatusUnauthorized, "The Authorization header is missing")
	}
	scheme, cred, _ := strings.Cut(header, " ")
	cred = strings.TrimSpace(cred)
	if a == inboxSession {
		if !strings.EqualFold(scheme, "Bearer") || cred == "" {
			return caller{}, errorf(http.StatusUnauthorized, "The inbox routes take 'Authorization: Bearer <token>' with the token of POST /v1/inbox/session")
		}
		return s.authenticateInbox(r.Context(), cred)
	}
	switch {
	case strings.EqualFold(scheme, "ApiKey") && cred != "":
		k, env, err := s.store.APIKeyGetByHash(r.Context(), secret.HashAPIKey(cred))
		if errors.Is(err, store.ErrNotFound) {
			return caller{}, errorf(http.StatusUnauthorized, "The API key is not valid")
		}
		if err != nil {
			return caller{}, err
		}
		if !k.Sealed {
			s.keepKeyCopy(r.Context(), k.ID, cred)
		}
		return caller{Scope: store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}, ActorID: k.ID}, nil
	case strings.EqualFold(scheme, "Bearer") && cred != "":
		sess, err := s.keys.VerifySession(cred)
		if err != nil {
			return caller{}, errorf(http.StatusUnauthorized, "The session token is not valid or has expired")
		}
		env, err := s.store.EnvironmentGetByID(r.Context(), sess.EnvironmentID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && env.OrganizationID != sess.OrganizationID) {
			return caller{}, errorf(http.StatusUnauthorized, "The session token is not valid or has expired")
		}
		if err != nil {
			return caller{}, err
		}
		return caller{Scope: store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}, Session: true, ActorID: sess.MemberID}, nil
	}
	return caller{}, errorf(http.StatusUnauthorized, "The Authorization header must be 'ApiKey <key>' or 'Bearer <token>'")
}

// authenticateInbox resolves an inbox session token to its subscriber. The
// token is refused once its subscriber is deleted (a subscriber created
// again under the same subscriberId is another subscriber) or its
// environment is gone.
func (s *Server) authenticateInbox(ctx context.Context, token string) (caller, error) {
	refused := errorf(http.StatusUnauthorized, "The session token is not valid or has expired")
	sess, err := s.keys.VerifyInboxSession(token)
	if err != nil {
		return caller{}, refused
	}
	env, err := s.store.EnvironmentGetByID(ctx, sess.EnvironmentID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && env.OrganizationID != sess.OrganizationID) {
		return caller{}, refused
	}
	if err != nil {
		return caller{}, err
	}
	scope := store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}
	sub, err := s.store.SubscriberGet(ctx, scope, sess.ExternalID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && sub.ID != sess.SubscriberID) {
		return caller{}, refused
	}
	if err != nil {
		return caller{}, err
	}
	return caller{Scope: scope, ActorID: sub.ID, Subscriber: &sub, ContextKeys: sess.ContextKeys}, nil
}

// keepKeyCopy keeps an encrypted copy of an API key created before the
// store kept them (migration 0013), now that a request presents it: from
// then on it signs inbox subscriberHash values. Once per key and process;
// a failure is logged and tried again on the key's next request.
func (s *Server) keepKeyCopy(ctx context.Context, keyID, key string) {
	if _, done := s.keyCopies.Load(keyID); done {
		return
	}
	if err := s.store.APIKeyKeepCopy(ctx, keyID, key); err != nil {
		s.log.WarnContext(ctx, "keeping an encrypted copy of an API key", "keyId", keyID, "err", err)
		return
	}
	s.keyCopies.Store(keyID, true)
}
