package bridge

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/jsvalue"
	"github.com/herald-notify/herald/internal/netguard"
)

// Codes of the failures Herald names itself; a bridge's own error keeps the
// code it sent (the framework's, such as "ExecutionEventPayloadInvalidError"
// or "SignatureMismatchError"). Those shared with Novu carry Novu's names
// (BRIDGE_EXECUTION_ERROR in libs/application-generic/src/utils/bridge.ts).
const (
	CodeInvalidURL          = "INVALID_BRIDGE_URL"           // the bridge URL is not an absolute http(s) URL
	CodeTimeout             = "BRIDGE_REQUEST_TIMEOUT"       // no (complete) answer in time
	CodeUnavailable         = "BRIDGE_ENDPOINT_UNAVAILABLE"  // a network error, or 404
	CodeNotFound            = "BRIDGE_ENDPOINT_NOT_FOUND"    // 502 without a framework error
	CodeMethodNotConfigured = "BRIDGE_METHOD_NOT_CONFIGURED" // 405 without a framework error
	CodeParse               = "BRIDGE_PARSE_ERROR"           // a 2xx answer that is not JSON
	CodeTooManyRedirects    = "MAXIMUM_REDIRECTS_EXCEEDED"
	CodeRefused             = "BRIDGE_URL_REFUSED"         // the private-network guard refused the address
	CodeTooLarge            = "BRIDGE_RESPONSE_TOO_LARGE"  // an answer over the size bound
	CodeInvalidResponse     = "BRIDGE_INVALID_RESPONSE"    // JSON, but not of the action's shape
	CodeUnexpected          = "BRIDGE_UNEXPECTED_RESPONSE" // another error status without a framework error
	CodeCanceled            = "BRIDGE_REQUEST_CANCELED"    // the caller's context ended first
	CodeTLS                 = "BRIDGE_TLS_ERROR"           // the TLS handshake or certificate failed
	CodeRequest             = "BRIDGE_REQUEST_ERROR"       // the request could not be made
	CodeBadRequest          = "BRIDGE_REQUEST_INVALID"     // Herald's own input could not be encoded
)

const (
	maxErrorBody         = 4 << 10      // bytes of an error answer kept in Error.Body
	redactedMark         = "[redacted]" // stands for the secret key in texts
	minRedactedKeyLength = 8            // shorter keys are not searched for
)

// Error is a bridge call that failed: the bridge's own error answer (status
// and the framework's message, code and data as sent) or Herald's reason
// for having none. It never holds the secret key.
type Error struct {
	Action  string // discover, health-check, execute or preview
	URL     string // the URL called, without credentials
	Status  int    // the HTTP status answered; 0 when there was no answer
	Code    string // the framework's code, or one of the Code constants
	Message string // the framework's message, or Herald's description
	// Data is the framework's data as sent (e.g. [{path, message}] for an
	// invalid payload), nil when none.
	Data json.RawMessage
	// Body is the start (at most 4 KiB, valid UTF-8) of an error answer.
	Body string
	// Attempts is how many requests were made.
	Attempts int
	// Retryable reports a failure of the classes execute retries: a
	// timeout, a network error, or status 408, 429, 500, 503, 504, 521,
	// 522 or 524.
	Retryable bool
	// Err is the cause when there was no answer (netguard.ErrRefused,
	// context.Canceled, a network error); errors.Is and errors.As see it.
	Err error
}

// Error describes the failure; like every field, it never holds the
// secret key.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("bridge ")
	b.WriteString(e.Action)
	b.WriteString(": ")
	b.WriteString(e.Message)
	switch {
	case e.Status != 0 && e.Code != "":
		fmt.Fprintf(&b, " (%s, HTTP %d)", e.Code, e.Status)
	case e.Status != 0:
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	case e.Code != "":
		fmt.Fprintf(&b, " (%s)", e.Code)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Raw is JSON.stringify({message, code, data}) of the error, the raw of
// Novu's "Bridge execution failed" execution detail; data is left out when
// there is none, as JSON.stringify leaves out undefined.
func (e *Error) Raw() string {
	o := jsvalue.NewObject()
	o.Set("message", e.Message)
	o.Set("code", e.Code)
	if len(e.Data) > 0 {
		if v, err := jsvalue.ParseJSON(string(e.Data)); err == nil {
			o.Set("data", v)
		}
	}
	return string(jsvalue.Stringify(o))
}

// retryableStatus are the statuses Novu's bridge client retries
// (RETRYABLE_HTTP_CODES).
func retryableStatus(s int) bool {
	switch s {
	case 408, 429, 500, 503, 504, 521, 522, 524:
		return true
	}
	return false
}

// answerError is the Error of an answer with an error status: the
// framework's {message, code, data} when the body is one, else Novu's
// description of the status.
func answerError(action, u string, status int, body []byte) *Error {
	e := &Error{Action: action, URL: u, Status: status, Body: clip(string(body), maxErrorBody),
		Retryable: retryableStatus(status)}
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) == nil {
		var msg, code string
		if json.Unmarshal(fields["message"], &msg) == nil && msg != "" {
			e.Message = msg
		}
		if json.Unmarshal(fields["code"], &code) == nil && code != "" {
			e.Code = code
		}
		if d := bytes.TrimSpace(fields["data"]); len(d) > 0 && !bytes.Equal(d, []byte("null")) {
			e.Data = d
		}
	}
	if e.Code == "" {
		switch status {
		case http.StatusNotFound:
			e.Code = CodeUnavailable
		case http.StatusMethodNotAllowed:
			e.Code = CodeMethodNotConfigured
		case http.StatusBadGateway:
			e.Code = CodeNotFound
		default:
			e.Code = CodeUnexpected
		}
	}
	if e.Message == "" {
		text := http.StatusText(status)
		if text == "" {
			text = "an unknown status"
		}
		e.Message = fmt.Sprintf("The bridge at `%s` answered %d %s", u, status, text)
	}
	return e
}

// redact removes the secret key from every text of e, should a bridge echo
// it: Data that would no longer be JSON is dropped.
func (e *Error) redact(key string) *Error {
	if len(key) < minRedactedKeyLength {
		return e
	}
	e.Message = strings.ReplaceAll(e.Message, key, redactedMark)
	e.Body = strings.ReplaceAll(e.Body, key, redactedMark)
	e.URL = strings.ReplaceAll(e.URL, key, redactedMark)
	if bytes.Contains(e.Data, []byte(key)) {
		e.Data = bytes.ReplaceAll(e.Data, []byte(key), []byte(redactedMark))
		if !json.Valid(e.Data) {
			e.Data = nil
		}
	}
	if e.Err != nil && strings.Contains(e.Err.Error(), key) {
		// Only a URL or host name holding the key gets here; the cause's
		// chain is given up for a text without it.
		e.Err = errors.New(strings.ReplaceAll(e.Err.Error(), key, redactedMark))
	}
	return e
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// noAnswer is the Error of a request that got no (complete) answer.
func noAnswer(ctx context.Context, action, u string, err error) *Error {
	e := &Error{Action: action, URL: u, Err: err}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its text repeats the method and URL
	}
	var certErr *tls.CertificateVerificationError
	var netErr net.Error
	switch {
	case errors.Is(err, netguard.ErrRefused):
		e.Code = CodeRefused
		e.Message = fmt.Sprintf("The bridge URL `%s` was refused by the private-network guard: %s", u, guardDetail(err))
	case errors.Is(err, errTooManyRedirects):
		e.Code = CodeTooManyRedirects
		e.Message = fmt.Sprintf("Maximum redirects exceeded for `%s`", u)
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), errAttemptTimeout),
		ctx.Err() != nil && errors.Is(context.Cause(ctx), errDeadline):
		e.Code, e.Retryable, e.Err = CodeTimeout, true, context.DeadlineExceeded
		e.Message = fmt.Sprintf("Bridge request timeout for `%s`", u)
	case ctx.Err() != nil:
		e.Code, e.Err = CodeCanceled, context.Cause(ctx)
		e.Message = fmt.Sprintf("The bridge request to `%s` was canceled: %v", u, context.Cause(ctx))
	case errors.As(err, &certErr), errors.As(err, new(tls.RecordHeaderError)):
		e.Code = CodeTLS
		e.Message = fmt.Sprintf("The TLS connection to `%s` failed: %v", u, err)
	case errors.As(err, &netErr), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		e.Code, e.Retryable = CodeUnavailable, true
		e.Message = fmt.Sprintf("Unable to reach the bridge at `%s`: %v", u, err)
	default:
		e.Code = CodeRequest
		e.Message = fmt.Sprintf("The request to `%s` failed: %v", u, err)
	}
	return e
}

// guardDetail is the guard's reason without its sentinel's text.
func guardDetail(err error) string {
	s := err.Error()
	if i := strings.Index(s, netguard.ErrRefused.Error()); i >= 0 {
		s = strings.TrimPrefix(s[i+len(netguard.ErrRefused.Error()):], ": ")
	}
	return s
}
