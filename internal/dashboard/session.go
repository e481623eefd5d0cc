package dashboard

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
)

// cookieName is the session cookie. Its value is a random token of which
// the store keeps the hash; signing out deletes the session, so the cookie
// is worthless from then on.
const cookieName = "herald_dashboard_session"

type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// account is the signed-in caller of a dashboard route.
type account struct {
	User    store.User
	Session store.UserSession
}

type accountHandler func(w http.ResponseWriter, r *http.Request, a account) error

// envHandler serves a route in one environment of the account's organization.
type envHandler func(w http.ResponseWriter, r *http.Request, a account, env store.Environment) error

// guard runs a route of the dashboard's API: cross-origin state-changing
// requests are refused with a 403 before anything else, and errors are
// written in the API's shape.
func (d *Dashboard) guard(h handlerFunc) http.Handler {
	run := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		// Reads too are for the dashboard's own page: a browser says when
		// another site asks.
		if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
			writeError(w, r, errorf(http.StatusForbidden, "Cross-origin requests may not use the dashboard's routes"))
			return
		}
		if err := h(w, r); err != nil {
			writeErrorLogged(w, r, err, d.log)
		}
	})
	return d.csrf.Handler(run)
}

// signedIn runs h for the account of the request's session cookie, and
// answers 401 without one.
func (d *Dashboard) signedIn(h accountHandler) http.Handler {
	return d.guard(func(w http.ResponseWriter, r *http.Request) error {
		a, err := d.account(r)
		if err != nil {
			return err
		}
		return h(w, r, a)
	})
}

// inEnvironment is signedIn for the routes under /env/{env}/: {env} is
// the name of one of the account organization's environments.
func (d *Dashboard) inEnvironment(h envHandler) http.Handler {
	return d.signedIn(func(w http.ResponseWriter, r *http.Request, a account) error {
		envs, err := d.store.EnvironmentList(r.Context(), a.User.OrganizationID)
		if err != nil {
			return err
		}
		for _, env := range envs {
			if env.Name == r.PathValue("env") {
				return h(w, r, a, env)
			}
		}
		return errorf(http.StatusNotFound, "No environment is named "+quote(r.PathValue("env")))
	})
}

func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return "'" + strings.ToValidUTF8(s, "\uFFFD") + "'"
}

var errSignedOut = errorf(http.StatusUnauthorized, "Sign in to use the dashboard")

func (d *Dashboard) account(r *http.Request) (account, error) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" || len(c.Value) > 128 {
		return account{}, errSignedOut
	}
	s, u, err := d.store.UserSessionGet(r.Context(), secret.HashSessionToken(c.Value), d.now())
	if errors.Is(err, store.ErrNotFound) {
		return account{}, errSignedOut
	}
	if err != nil {
		return account{}, err
	}
	return account{User: u, Session: s}, nil
}

type signInJSON struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// sessionJSON is the signed-in account as the front end sees it; signed
// out, its email is null (a 200: the page asks before it draws anything,
// and a signed-out visitor is no error).
type sessionJSON struct {
	Email        *string           `json:"email"`
	Environments []environmentJSON `json:"environments"`
}

type environmentJSON struct {
	ID   string `json:"_id"`
	Name string `json:"name"`
}

// dummyHash is checked against when no account has the e-mail address, so
// that an unknown address takes as long to refuse as a wrong password. It
// is made at the first sign-in, not at every start of the binary.
var dummyHash = sync.OnceValue(func() string {
	h, err := secret.HashPassword("not a password of anyone")
	if err != nil {
		panic(err) // only a password of the wrong length fails
	}
	return h
})

// POST /dashboard/api/session signs in: a new session and its cookie, or
// a 401 that says no more than "wrong e-mail address or password".
func (d *Dashboard) signIn(w http.ResponseWriter, r *http.Request) error {
	var in signInJSON
	if err := readJSON(w, r, &in); err != nil {
		return err
	}
	email := strings.ToLower(strings.TrimSpace(in.Email))
	if email == "" || in.Password == "" {
		return errorf(http.StatusUnprocessableEntity, "Give an e-mail address and a password")
	}
	if len(email) > maxEmail || len(in.Password) > secret.MaxPasswordLength {
		return errorf(http.StatusUnauthorized, "Wrong e-mail address or password")
	}
	keys := []string{"addr:" + httpapi.ClientAddr(r), "email:" + email}
	if limited, wait := d.limit.blocked(keys...); limited {
		return httpapi.ClientError(http.StatusTooManyRequests, "Too many failed sign-ins: try again in "+wait+" s", wait)
	}
	u, err := d.store.UserGetByEmail(r.Context(), email)
	hash := u.PasswordHash
	if errors.Is(err, store.ErrNotFound) {
		hash = dummyHash()
	} else if err != nil {
		return err
	}
	select {
	case d.hashing <- struct{}{}:
	case <-r.Context().Done(): // the client went away
		return errorf(http.StatusServiceUnavailable, "The sign-in was abandoned")
	}
	err = secret.CheckPassword(hash, in.Password)
	<-d.hashing
	if err != nil || u.ID == "" {
		d.limit.fail(keys...)
		d.log.WarnContext(r.Context(), "dashboard sign-in refused", "addr", httpapi.ClientAddr(r))
		return errorf(http.StatusUnauthorized, "Wrong e-mail address or password")
	}
	token, tokenHash := secret.NewSessionToken()
	now := d.now()
	s := store.UserSession{TokenHash: tokenHash, UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(d.sessionTTL)}
	if err := d.store.UserSessionCreate(r.Context(), &s); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: token, Path: Path + "/", HttpOnly: true, Secure: secure(r),
		SameSite: http.SameSiteStrictMode, MaxAge: int(d.sessionTTL.Seconds())})
	d.log.InfoContext(r.Context(), "dashboard sign-in", "user", u.ID)
	return d.writeSession(w, r, http.StatusOK, u)
}

// GET /dashboard/api/session: the signed-in account and its environments,
// or {"email": null, "environments": []} signed out.
func (d *Dashboard) me(w http.ResponseWriter, r *http.Request) error {
	a, err := d.account(r)
	if errors.Is(err, errSignedOut) {
		writeJSON(w, http.StatusOK, sessionJSON{Environments: []environmentJSON{}})
		return nil
	}
	if err != nil {
		return err
	}
	return d.writeSession(w, r, http.StatusOK, a.User)
}

func (d *Dashboard) writeSession(w http.ResponseWriter, r *http.Request, status int, u store.User) error {
	envs, err := d.store.EnvironmentList(r.Context(), u.OrganizationID)
	if err != nil {
		return err
	}
	out := sessionJSON{Email: &u.Email, Environments: []environmentJSON{}}
	for _, e := range envs {
		out.Environments = append(out.Environments, environmentJSON{ID: e.ID, Name: e.Name})
	}
	writeJSON(w, status, out)
	return nil
}

// DELETE /dashboard/api/session signs out: the session ends on the server
// and the cookie is cleared.
func (d *Dashboard) signOut(w http.ResponseWriter, r *http.Request, a account) error {
	if err := d.store.UserSessionDelete(context.WithoutCancel(r.Context()), a.Session.TokenHash); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: Path + "/", HttpOnly: true, Secure: secure(r),
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// secure says the cookie should be Secure: the request came over TLS, to
// Herald or to the proxy in front of it.
func secure(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}
