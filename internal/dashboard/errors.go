package dashboard

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/mail"
	"strings"

	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/textcheck"
)

// errorf is an error meant for the client, answered in the API's error
// shape by the API's own error writer (httpapi.WriteError).
func errorf(status int, message string) error { return httpapi.ClientError(status, message, "") }

// writeError answers err as the API does (httpapi.WriteError); the
// dashboard's answers are never cached.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	writeErrorLogged(w, r, err, slog.Default())
}

func writeErrorLogged(w http.ResponseWriter, r *http.Request, err error, log *slog.Logger) {
	w.Header().Set("Cache-Control", "no-store")
	httpapi.WriteError(w, r, err, log)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"statusCode":500,"message":"Internal server error","error":"Internal Server Error"}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// maxBody bounds the body of the dashboard's own routes.
const maxBody = 1 << 20

// readJSON decodes a request body that must be one JSON object of valid
// text (no NUL, valid UTF-8) into v.
func readJSON(w http.ResponseWriter, r *http.Request, v any) error {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return errorf(http.StatusRequestEntityTooLarge, fmt.Sprintf("The body is larger than %d bytes", maxBody))
	}
	problems, err := textcheck.JSON(b, 64)
	if err != nil || strings.TrimSpace(string(b))[0] != '{' { // a JSON value is never blank
		return errorf(http.StatusBadRequest, "The body must be a JSON object")
	}
	if len(problems) > 0 {
		return errorf(http.StatusUnprocessableEntity, "The body holds text that is not valid UTF-8 or holds NUL characters")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errorf(http.StatusUnprocessableEntity, "The body does not have the expected fields and types: "+err.Error())
	}
	return nil
}

// maxEmail is the longest e-mail address an account may have (RFC 5321's
// path limit).
const maxEmail = 254

// CheckEmail returns the account name of an e-mail address, lower-cased,
// or why it is not one.
func CheckEmail(email string) (string, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if email == "" || len(email) > maxEmail || textcheck.Text(email) != nil {
		return "", fmt.Errorf("%q is not an e-mail address", email)
	}
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || a.Name != "" {
		return "", fmt.Errorf("%q is not an e-mail address", email)
	}
	return email, nil
}
