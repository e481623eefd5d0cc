// Package httpstep runs a workflow's HTTP request step the way Novu's worker
// does (execute-http-request-step.usecase.ts): it checks the step's stored
// controls, turns the rendered controls into one signed JSON request sent
// through Herald's private-network guard, and reports what happened as the
// step's execution detail and output. Rendering the controls with Liquid,
// skip conditions and what a failure does to the workflow
// (continueOnFailure) are the engine's.
package httpstep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/netguard"
)

// Request is a step's rendered controls and how to send them.
type Request struct {
	Controls   map[string]any // rendered controls (same keys as CheckControls reads)
	SigningKey string         // the environment's API key: HMAC key of the novu-signature header ("" → no header)
	Now        time.Time      // the signature's timestamp (zero: the time of sending)
}

// Result is what happened.
type Result struct {
	StatusCode int    // 0 when no response
	Body       any    // the parsed JSON response body (nil when empty or not JSON; then BodyText holds it)
	BodyText   string // the raw response body (invalid UTF-8 replaced), at most 10 KiB kept
	// Failure is "" on success; else the cause as the Failed execution
	// detail shows it, e.g. "POST https://x/y answered 500".
	Failure string
	// Raw is the detail's raw JSON: {"statusCode":..,"body":..} when there
	// was a response (body: the JSON answered, else its text; over 10 KiB
	// it is cut into a string ending "... [truncated]"; a schema rejection
	// adds "errors": [{path, message}]), {"error": Failure} when there was
	// none.
	Raw string
}

// Output is the step's output for later steps (steps.<stepId>.*): the
// parsed response body when the step succeeded and the body is a JSON
// object, else an empty object, which is also what a skipped step reads.
// Novu stores any parsed body as the output and records a warning when it
// is not an object, because later steps reading fields of it fail; Herald
// gives those steps {} (every field null) instead.
func (r Result) Output() map[string]any {
	if m, ok := r.Body.(map[string]any); ok && r.Failure == "" {
		return m
	}
	return map[string]any{}
}

// Sizes from Novu's worker (MAX_RAW_SIZE) and the spec.
const (
	maxResponse  = 1 << 20 // bytes of an answer read
	maxRaw       = 10 << 10
	maxRedirects = 5
)

// Client sends requests; it is safe for concurrent use.
type Client struct {
	hc *http.Client
}

// New makes a client whose connections go through d (nil: a guard that
// refuses private networks). The dialer checks every connection, those of
// redirects included.
func New(d *netguard.Dialer) *Client {
	if d == nil {
		d = &netguard.Dialer{}
	}
	return &Client{hc: &http.Client{
		Transport: d.Transport(),
		// send follows redirects itself, as Novu's safe outbound client.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// errTimedOut is the cause of the step's own deadline.
var errTimedOut = errors.New("timed out")

// Do sends the request and never panics; ctx bounds it too. It reads at
// most 1 MiB of response. There is no retry.
func (c *Client) Do(ctx context.Context, r Request) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			res = failed(fmt.Sprintf("The HTTP request step failed unexpectedly: %v", p), r.SigningKey)
		}
	}()
	req, body, fail := build(r)
	if fail != "" {
		return failed(fail, r.SigningKey)
	}
	timeout, fail := timeoutOf(r.Controls["timeout"])
	if fail != "" {
		return failed(fail, r.SigningKey)
	}
	what := req.Method + " " + shown(req.URL)

	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimedOut)
	defer cancel()
	resp, err := c.send(ctx, req, body)
	if err != nil {
		return failed(cause(ctx, what, timeout, err), r.SigningKey)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		res := failed(cause(ctx, what, timeout, err), r.SigningKey)
		res.StatusCode = resp.StatusCode
		return res
	}

	return answered(what, resp.StatusCode, data, r.Controls)
}

// answered is the Result of a response: its status and (up to one byte
// more than maxResponse of) its body.
func answered(what string, status int, data []byte, controls map[string]any) Result {
	res := Result{StatusCode: status}
	if len(data) > maxResponse {
		data = data[:maxResponse]
		res.Failure = fmt.Sprintf("%s answered %d with a body of more than 1 MiB", what, status)
	}
	text := string(data)
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	res.BodyText = cut(text, maxRaw)
	var parsed any
	isJSON := res.Failure == "" && strings.TrimSpace(text) != "" && json.Unmarshal([]byte(text), &parsed) == nil
	if isJSON {
		res.Body = parsed
	}

	var schemaErrs []schemaError
	switch {
	case res.Failure != "":
	case status >= 400:
		res.Failure = fmt.Sprintf("%s answered %d", what, status)
	case enforced(controls):
		schemaErrs = checkSchema(controls["responseBodySchema"].(map[string]any), parsed, isJSON)
		if len(schemaErrs) > 0 {
			res.Failure = "Response schema validation failed: " + describe(schemaErrs)
		}
	}
	res.Raw = rawResponse(status, text, isJSON, schemaErrs)
	return res
}

// enforced reports whether the response must match responseBodySchema.
func enforced(c map[string]any) bool {
	on, _ := c["enforceSchemaValidation"].(bool)
	_, ok := c["responseBodySchema"].(map[string]any)
	return on && ok
}

// checkSchema validates the response. A body that is not JSON fails:
// the spec wants a JSON answer (Novu would validate its text as a JSON
// string). A schema that does not compile fails the step, as with Novu.
func checkSchema(schema map[string]any, body any, isJSON bool) []schemaError {
	if !isJSON {
		return []schemaError{{Message: "the response body is not JSON"}}
	}
	sch, err := compileSchema(schema)
	if err != nil {
		return []schemaError{{Message: "responseBodySchema does not compile: " + err.Error()}}
	}
	return validateBody(sch, body)
}

// send sends req and follows up to maxRedirects redirects the way Novu's
// safeOutboundRequest does: 303, and 301/302 after a POST, continue as a
// GET without a body; a redirect to another host drops the body and the
// credentials and signature headers, and one that must keep the method and
// body (307/308) to another host is refused. Each connection is made
// through the guard.
func (c *Client) send(ctx context.Context, req *http.Request, body []byte) (*http.Response, error) {
	origin := strings.ToLower(req.URL.Host)
	req = req.WithContext(ctx)
	for hops := 0; ; hops++ {
		resp, err := c.hc.Do(req)
		if err != nil {
			return nil, err
		}
		loc := resp.Header.Get("Location")
		code := resp.StatusCode
		if loc == "" || (code != 301 && code != 302 && code != 303 && code != 307 && code != 308) {
			return resp, nil
		}
		discard(resp)
		if hops == maxRedirects {
			return nil, redirectError(fmt.Sprintf("was redirected more than %d times", maxRedirects))
		}
		next, err := req.URL.Parse(loc)
		if err != nil || (next.Scheme != "http" && next.Scheme != "https") || next.Host == "" || next.User != nil {
			return nil, redirectError(fmt.Sprintf("was redirected to %s, which is not an http or https URL", quoteShort(truncate(loc, 200))))
		}
		method := req.Method
		if code == 303 || ((code == 301 || code == 302) && method == "POST") {
			method, body = "GET", nil
		}
		h := req.Header.Clone()
		host := req.Host
		if cross := strings.ToLower(next.Host) != origin; cross {
			if code == 307 || code == 308 {
				return nil, redirectError(fmt.Sprintf("answered %d to %s: a redirect that keeps the method and body to another host is not followed", code, shown(next)))
			}
			stripSensitive(h)
			body, host = nil, ""
		}
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		} else {
			h.Del("Content-Type")
		}
		nr, err := http.NewRequestWithContext(ctx, method, next.String(), rd)
		if err != nil {
			return nil, redirectError(fmt.Sprintf("was redirected to %s, which cannot be requested", shown(next)))
		}
		nr.Header = h
		if host != "" && host != req.URL.Host {
			nr.Host = host
		}
		req = nr
	}
}

// redirectError is a redirect that is not followed.
type redirectError string

func (e redirectError) Error() string { return string(e) }

// stripSensitive removes what must not reach another host (Novu's
// SENSITIVE_HEADER_PATTERNS).
func stripSensitive(h http.Header) {
	for k := range h {
		l := strings.ToLower(k)
		if l == "authorization" || l == "cookie" || l == "proxy-authorization" ||
			strings.HasSuffix(l, "-signature") || strings.Contains(l, "-hmac") {
			delete(h, k)
		}
	}
}

// discard reads a little of a body so the connection can be reused, and
// closes it.
func discard(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
	_ = resp.Body.Close()
}

// cause names why a request got no (complete) answer.
func cause(ctx context.Context, what string, timeout time.Duration, err error) string {
	if errors.Is(err, netguard.ErrRefused) {
		detail := err.Error()
		if i := strings.Index(detail, netguard.ErrRefused.Error()); i >= 0 {
			detail = strings.TrimPrefix(detail[i+len(netguard.ErrRefused.Error()):], ": ")
		}
		return "The request was refused by the private-network guard: " + what + ": " + detail
	}
	var re redirectError
	if errors.As(err, &re) {
		return what + " " + string(re)
	}
	if ctx.Err() != nil {
		if errors.Is(context.Cause(ctx), errTimedOut) {
			ms := strconv.FormatFloat(float64(timeout)/float64(time.Millisecond), 'f', -1, 64)
			return what + " timed out after " + ms + " ms"
		}
		return what + " was canceled: " + context.Cause(ctx).Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its message repeats the method and URL
	}
	return what + " failed: " + brief(err.Error())
}

// timeoutOf reads the timeout control (ms; absent: 5000).
func timeoutOf(v any) (time.Duration, string) {
	if v == nil {
		return defaultTimeout * time.Millisecond, ""
	}
	ms, ok := number(v)
	if s, isString := v.(string); isString {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		ms, ok = f, err == nil
	}
	if !ok || ms <= 0 || ms > float64(time.Hour/time.Millisecond) {
		return 0, fmt.Sprintf("The timeout %s is not a number of milliseconds", quoteShort(v))
	}
	return time.Duration(ms * float64(time.Millisecond)), ""
}

// failed is a Result without a response.
func failed(msg, key string) Result {
	msg = redact(msg, key)
	return Result{Failure: msg, Raw: encodeRaw(map[string]any{"error": msg})}
}

// redact removes the signing key from a message, should any cause quote it.
func redact(s, key string) string {
	if len(key) < 8 {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

// rawResponse is the detail's raw JSON for a response.
func rawResponse(status int, text string, isJSON bool, errs []schemaError) string {
	var body json.RawMessage
	if isJSON {
		var b bytes.Buffer
		if json.Compact(&b, []byte(text)) == nil && b.Len() <= maxRaw {
			body = b.Bytes()
		} else if b.Len() > maxRaw {
			text = b.String()
		}
	}
	if body == nil {
		body = json.RawMessage(quoteBounded(text, maxRaw))
	}
	if len(errs) > maxSchemaErrors {
		errs = errs[:maxSchemaErrors]
	}
	return encodeRaw(struct {
		StatusCode int             `json:"statusCode"`
		Body       json.RawMessage `json:"body"`
		Errors     []schemaError   `json:"errors,omitempty"`
	}{status, body, errs})
}

// truncMark ends a body cut to fit the raw detail (Novu's truncateRaw).
const truncMark = "... [truncated]"

// quoteBounded is s as a JSON string of at most n bytes: cut, and marked
// so, when it is longer.
func quoteBounded(s string, n int) string {
	q := encodeRaw(s)
	for len(q) > n && s != "" {
		// Escapes make the quoted form longer than s: cut in proportion.
		keep := len(s)*(n-len(truncMark)-2)/len(q) - 1
		s = cut(s, max(keep, 0))
		q = encodeRaw(s + truncMark)
	}
	return q
}

// encodeRaw writes v as JSON without HTML escaping.
func encodeRaw(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return `{"error":"the detail could not be encoded"}`
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// cut keeps at most n bytes of s, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
