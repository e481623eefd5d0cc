package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// apiError is an error meant for the client: its status and message are shown.
type apiError struct {
	status     int
	message    string
	fields     fieldErrors
	retryAfter string
	// authFailure counts the error against the failed-authentication
	// limit, as every 401 of an authentication is.
	authFailure bool
}

func (e *apiError) Error() string { return e.message }

func errorf(status int, message string) *apiError { return &apiError{status: status, message: message} }

// fieldErrors names every offending field of a 422.
type fieldErrors map[string]fieldError

type fieldError struct {
	Messages []string `json:"messages"`
	Value    any      `json:"value"`
}

// maxErrorFields bounds the fields one 422 names: a body of thousands of
// bad keys gets an answer of bounded size.
const maxErrorFields = 100

func (f fieldErrors) add(field, message string, value any) {
	e, ok := f[field]
	if !ok && len(f) >= maxErrorFields {
		return
	}
	e.Messages = append(e.Messages, message)
	e.Value = value
	f[field] = e
}

// err returns the 422 for the collected fields, or nil when there are none.
func (f fieldErrors) err() error {
	if len(f) == 0 {
		return nil
	}
	return &apiError{status: http.StatusUnprocessableEntity, message: "Validation failed", fields: f}
}

func invalid(field, message string, value any) error {
	f := fieldErrors{}
	f.add(field, message, value)
	return f.err()
}

type errorBody struct {
	StatusCode int         `json:"statusCode"`
	Timestamp  string      `json:"timestamp"`
	Path       string      `json:"path"`
	Message    string      `json:"message"`
	Error      string      `json:"error"`
	Errors     fieldErrors `json:"errors,omitempty"`
	ErrorID    string      `json:"errorId,omitempty"`
}

// writeError is the one place where errors become responses (the
// dashboard's own routes answer through WriteError, the same code).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := errorAnswer(w, r, err, s.log, s.now())
	s.writeJSON(w, status, body)
}

// errorAnswer is err's answer: sentinel store errors map to their status
// here, and anything unknown is a logged 500 whose body carries only an
// error id. A Retry-After it carries is set on w.
func errorAnswer(w http.ResponseWriter, r *http.Request, err error, log *slog.Logger, now time.Time) (int, errorBody) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
	case errors.Is(err, store.ErrNotFound):
		ae = errorf(http.StatusNotFound, "Not found")
	case errors.Is(err, store.ErrConflict):
		ae = errorf(http.StatusConflict, "Conflict")
	case unavailable(r, err):
		// The database did not answer in time (or the connection to it
		// failed): the client may retry; a trigger retried with its
		// transactionId is written at most once.
		log.WarnContext(r.Context(), "request failed: the database did not answer", "method", r.Method,
			"path", r.URL.Path, "err", err)
		ae = errorf(http.StatusServiceUnavailable, "The database did not answer in time; try again")
		ae.retryAfter = "1"
	default:
		errorID := newErrorID()
		// The request's context adds its requestId (logctx).
		log.ErrorContext(r.Context(), "request failed", "errorId", errorID, "method", r.Method,
			"path", r.URL.Path, "err", err)
		return http.StatusInternalServerError, errorBody{
			StatusCode: 500, Timestamp: formatTime(now), Path: r.URL.Path,
			Message: "Internal server error", Error: http.StatusText(500), ErrorID: errorID,
		}
	}
	if ae.retryAfter != "" {
		w.Header().Set("Retry-After", ae.retryAfter)
	}
	return ae.status, errorBody{
		StatusCode: ae.status, Timestamp: formatTime(now), Path: r.URL.Path,
		Message: ae.message, Error: http.StatusText(ae.status), Errors: ae.fields,
	}
}

// unavailable reports whether err says the database did not answer: the
// store's own limit cut a statement or the connection failed, or the
// request's deadline (WithDeadlines) passed while it waited.
func unavailable(r *http.Request, err error) bool {
	if errors.Is(err, store.ErrUnavailable) {
		return true
	}
	return errors.Is(err, context.DeadlineExceeded) && errors.Is(r.Context().Err(), context.DeadlineExceeded)
}

// ClientError is an error meant for the client, for handlers outside this
// package (the dashboard's own routes); retryAfter, when not empty, is sent
// as Retry-After. WriteError answers it.
func ClientError(status int, message, retryAfter string) error {
	return &apiError{status: status, message: message, retryAfter: retryAfter}
}

// WriteError answers err in the API's error shape, as the API's own
// handlers do: a ClientError as it says, a store sentinel as its status,
// anything else as a logged 500 without its text.
func WriteError(w http.ResponseWriter, r *http.Request, err error, log *slog.Logger) {
	status, body := errorAnswer(w, r, err, log, time.Now())
	writeJSONWith(w, status, body, log)
}

func newErrorID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
