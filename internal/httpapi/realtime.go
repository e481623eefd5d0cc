package httpapi

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/realtime"
)

// Realtime routes: the socket.io endpoint of the inbox clients
// (GET /socket.io/) and a Server-Sent Events stream of the same events
// (GET /v1/inbox/events). Both take the inbox session token — in the
// query's `token` (how the clients send it) or as a Bearer token — and
// refuse a bad one with a 401 before any upgrade.

// Unwrap gives http.ResponseController the connection beneath.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Hijack hands the connection to a websocket, its deadlines cleared: the
// server's read and write timeouts are for requests, not for sockets.
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(r.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if r.status == 0 {
		r.status = http.StatusSwitchingProtocols
	}
	_ = c.SetDeadline(time.Time{})
	return c, brw, nil
}

// realtimeCaller authenticates a realtime request by its inbox session token.
func (s *Server) realtimeCaller(w http.ResponseWriter, r *http.Request) (caller, error) {
	if s.realtime == nil {
		return caller{}, errorf(http.StatusNotFound, "Realtime events are not served by this process")
	}
	token := r.URL.Query().Get("token")
	if token == "" {
		scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if strings.EqualFold(scheme, "Bearer") {
			token = strings.TrimSpace(cred)
		}
	}
	if token == "" {
		return caller{}, errorf(http.StatusUnauthorized, "Realtime events take the inbox session token in 'token' or as 'Authorization: Bearer <token>'")
	}
	var c caller
	err := s.limitAuth(w, r, func() error {
		var err error
		c, err = s.authenticateInbox(r.Context(), token)
		return err
	})
	return c, err
}

// socketIO serves the inbox clients' socket.io connection (websocket
// transport only).
func (s *Server) socketIO(w http.ResponseWriter, r *http.Request) error {
	c, err := s.realtimeCaller(w, r)
	if err != nil {
		return err
	}
	if q := r.URL.Query(); q.Get("transport") == "polling" || (q.Has("EIO") && q.Get("EIO") != "4") {
		return errorf(http.StatusBadRequest, "Only Engine.IO 4 over the websocket transport is served")
	}
	if !realtime.IsUpgrade(r) {
		return errorf(http.StatusBadRequest, "Connect with a websocket (transports: [\"websocket\"])")
	}
	return s.realtime.ServeSocket(w, r, c.EnvironmentID, c.Subscriber.ID)
}

// inboxEvents streams the session subscriber's events as Server-Sent Events.
func (s *Server) inboxEvents(w http.ResponseWriter, r *http.Request) error {
	c, err := s.realtimeCaller(w, r)
	if err != nil {
		return err
	}
	return s.realtime.ServeSSE(w, r, c.EnvironmentID, c.Subscriber.ID)
}
