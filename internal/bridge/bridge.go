// Package bridge is the client Herald calls a Novu Framework app's bridge
// with (code-first workflows served by @novu/framework's serve() at, say,
// /api/novu): discover its workflows, check its health, and execute or
// preview one step of a workflow, as Novu's ExecuteBridgeRequest does.
//
// Every call is {bridgeURL}?action=…&workflowId=…&stepId=…, GET for
// discover and health-check and POST of JSON for execute and preview,
// signed with the environment's secret key in the novu-signature header:
// t=<unix ms>,v1=<hex HMAC-SHA256(key, "<t>.<body>")> over the exact bytes
// sent ({} for a GET). The framework checks the HMAC over
// JSON.stringify(JSON.parse(body)), so bodies are written with
// internal/jsvalue, whose output is a fixed point of that round trip.
//
// Each attempt has 5 s; execute makes up to 3 on timeouts, network errors
// and 408/429/500/503/504 with a backoff between them, the other actions
// one; a whole call is bounded (30 s) so that a step whose bridge never
// answers fails in time. Answers are bounded in size, connections go
// through internal/netguard (redirects included), and every failure is an
// *Error that keeps the bridge's own message, code and data and never the
// secret key. What the answers mean for a workflow (sync, messages, job
// status) is the callers'.
package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/netguard"
	"github.com/herald-notify/herald/internal/secret"
)

// Actions, the values of the action query parameter.
const (
	ActionDiscover    = "discover"
	ActionHealthCheck = "health-check"
	ActionExecute     = "execute"
	ActionPreview     = "preview"
)

// Defaults of Options, from Novu's ExecuteBridgeRequest and the spec.
const (
	DefaultTimeout      = 5 * time.Second
	DefaultAttempts     = 3
	DefaultDeadline     = 30 * time.Second
	DefaultMaxResponse  = 1 << 20
	DefaultMaxDiscovery = 16 << 20
	maxRedirects        = 5
	maxHeaderBytes      = 64 << 10
)

// Headers sent with every call.
const (
	SignatureHeader           = "novu-signature"
	deprecatedSignatureHeader = "x-novu-signature" // what frameworks before 2.0 read; Novu sends both
	userAgent                 = "Herald-Bridge/1.0"
)

// Options configure a Client; the zero value of each field takes its
// default.
type Options struct {
	// Dialer makes every connection, those of redirects included (nil: a
	// guard that refuses private networks; set AllowPrivate for bridges on
	// 127.0.0.1, as HERALD_ALLOW_PRIVATE_NETWORKS=true does).
	Dialer *netguard.Dialer
	// Timeout bounds one attempt, the answer's body read included (5 s).
	Timeout time.Duration
	// Attempts is how many requests execute makes at most (3); the other
	// actions make one.
	Attempts int
	// Backoff is the wait after failed attempt n (1, 2, …) before the next
	// (Novu's 2ⁿ s: 2 s, then 4 s).
	Backoff func(attempt int) time.Duration
	// Deadline bounds a whole call, retries and waits included (30 s).
	Deadline time.Duration
	// MaxResponse bounds an answer's body in bytes (1 MiB); a larger one
	// fails the call. MaxDiscovery is discover's bound (16 MiB): its answer
	// repeats every step's JSON schemas, about 10 KiB for an in_app step.
	MaxResponse  int64
	MaxDiscovery int64
	// Now is the clock of the signatures' timestamps (time.Now).
	Now func() time.Time
}

var _ error = (*Error)(nil)

// Client calls bridges; it is safe for concurrent use.
type Client struct {
	hc  *http.Client
	opt Options
}

// New makes a Client.
func New(o Options) *Client {
	if o.Dialer == nil {
		o.Dialer = &netguard.Dialer{}
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Attempts <= 0 {
		o.Attempts = DefaultAttempts
	}
	if o.Backoff == nil {
		o.Backoff = func(n int) time.Duration { return time.Second << min(n, 5) }
	}
	if o.Deadline <= 0 {
		o.Deadline = DefaultDeadline
	}
	if o.MaxResponse <= 0 {
		o.MaxResponse = DefaultMaxResponse
	}
	if o.MaxDiscovery <= 0 {
		o.MaxDiscovery = DefaultMaxDiscovery
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	tr := o.Dialer.Transport()
	tr.MaxResponseHeaderBytes = maxHeaderBytes
	return &Client{opt: o, hc: &http.Client{
		Transport: tr,
		// Redirects are followed as Go does (307/308 resend the body, the
		// others become a GET), each connection through the guard. The
		// signature goes along: it is the bridge's own answer that chose
		// the new address, and the HMAC does not reveal the key.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return errTooManyRedirects
			}
			return nil
		},
	}}
}

// Discover asks the bridge for its workflows (GET ?action=discover).
func (c *Client) Discover(ctx context.Context, bridgeURL, secretKey string) (*Discovery, error) {
	a, err := c.call(ctx, request{action: ActionDiscover, bridgeURL: bridgeURL, key: secretKey,
		attempts: 1, limit: c.opt.MaxDiscovery})
	if err != nil {
		return nil, err
	}
	d, perr := parseDiscovery(a.data)
	if perr != nil {
		return nil, a.invalid(ActionDiscover, secretKey, perr)
	}
	return d, nil
}

// HealthCheck asks the bridge how it is (GET ?action=health-check) and
// returns its JSON answer as received, e.g. {"status":"ok","sdkVersion":…,
// "frameworkVersion":…,"discovered":{"workflows":N,"steps":M}}.
func (c *Client) HealthCheck(ctx context.Context, bridgeURL, secretKey string) (json.RawMessage, error) {
	a, err := c.call(ctx, request{action: ActionHealthCheck, bridgeURL: bridgeURL, key: secretKey,
		attempts: 1, limit: c.opt.MaxResponse})
	if err != nil {
		return nil, err
	}
	return a.data, nil
}

// Execute runs one step (POST ?action=execute&workflowId=…&stepId=…),
// retrying as Options say.
func (c *Client) Execute(ctx context.Context, bridgeURL, secretKey string, r *ExecuteRequest) (*Result, error) {
	return c.step(ctx, ActionExecute, c.opt.Attempts, bridgeURL, secretKey, r)
}

// Preview renders one step without running it (POST ?action=preview): the
// framework fills a missing payload from the payload schema's mock values
// and ignores skip.
func (c *Client) Preview(ctx context.Context, bridgeURL, secretKey string, r *ExecuteRequest) (*Result, error) {
	return c.step(ctx, ActionPreview, 1, bridgeURL, secretKey, r)
}

func (c *Client) step(ctx context.Context, action string, attempts int, bridgeURL, key string, r *ExecuteRequest) (*Result, error) {
	if r == nil {
		return nil, badRequest(action, bridgeURL, key, errors.New("there is no request"))
	}
	body, err := r.body()
	if err != nil {
		return nil, badRequest(action, bridgeURL, key, err)
	}
	a, err := c.call(ctx, request{action: action, bridgeURL: bridgeURL, key: key, workflowID: r.WorkflowID,
		stepID: r.StepID, body: body, attempts: attempts, limit: c.opt.MaxResponse})
	if err != nil {
		return nil, err
	}
	res, perr := parseResult(a.data)
	if perr != nil {
		return nil, a.invalid(action, key, perr)
	}
	return res, nil
}

// badRequest is the Error of a request that could not be encoded.
func badRequest(action, bridgeURL, key string, err error) *Error {
	e := &Error{Action: action, URL: redactedURL(bridgeURL), Code: CodeBadRequest,
		Message: "The request could not be encoded: " + err.Error()}
	return e.redact(key)
}

// request is one call to make.
type request struct {
	action, bridgeURL, key string
	workflowID, stepID     string
	body                   []byte // nil: GET
	attempts               int
	limit                  int64
}

// Causes of the contexts' ends, to tell them from the caller's.
var (
	errAttemptTimeout   = errors.New("the attempt timed out")
	errDeadline         = errors.New("the call's deadline passed")
	errTooManyRedirects = errors.New("too many redirects")
)

// answer is a 2xx answer: its body (JSON, valid UTF-8), status, the URL
// that was called (without credentials) and the attempt that got it.
type answer struct {
	data     []byte
	status   int
	url      string
	attempts int
}

// invalid is the Error of an answer whose JSON is not of the action's shape.
func (a *answer) invalid(action, key string, err error) *Error {
	e := &Error{Action: action, URL: a.url, Status: a.status, Code: CodeInvalidResponse, Attempts: a.attempts,
		Message: fmt.Sprintf("The bridge's %s answer from `%s` is not what @novu/framework sends: %v", action, a.url, err)}
	return e.redact(key)
}

// call makes the request's attempts and returns the first 2xx answer.
func (c *Client) call(ctx context.Context, r request) (*answer, error) {
	u, err := actionURL(r)
	if err != nil {
		e := &Error{Action: r.action, URL: redactedURL(r.bridgeURL), Code: CodeInvalidURL,
			Message: fmt.Sprintf("Invalid bridge URL: %s (%v)", redactedURL(r.bridgeURL), err)}
		return nil, e.redact(r.key)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, c.opt.Deadline, errDeadline)
	defer cancel()
	for n := 1; ; n++ {
		a, e := c.attempt(ctx, u, r)
		if e == nil {
			a.attempts = n
			return a, nil
		}
		e.Attempts = n
		e.redact(r.key)
		if !e.Retryable || n >= r.attempts || ctx.Err() != nil {
			return nil, e
		}
		wait := c.opt.Backoff(n)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return nil, e // no time left for another attempt
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, e
		}
	}
}

// attempt makes one request.
func (c *Client) attempt(ctx context.Context, u *url.URL, r request) (*answer, *Error) {
	shown := u.Redacted()
	ctx, cancel := context.WithTimeoutCause(ctx, c.opt.Timeout, errAttemptTimeout)
	defer cancel()

	method, signed := http.MethodGet, []byte("{}")
	var body io.Reader
	if r.body != nil {
		method, signed, body = http.MethodPost, r.body, bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, &Error{Action: r.action, URL: shown, Code: CodeRequest, Err: err,
			Message: fmt.Sprintf("The request to `%s` could not be made: %v", shown, err)}
	}
	sig := secret.NovuSignature(r.key, c.opt.Now(), signed)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Bypass-Tunnel-Reminder", "true")
	req.Header.Set(SignatureHeader, sig)
	req.Header.Set(deprecatedSignatureHeader, sig)

	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, noAnswer(ctx, r.action, shown, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, r.limit+1))
	if err != nil {
		return nil, noAnswer(ctx, r.action, shown, err)
	}
	if int64(len(data)) > r.limit {
		return nil, &Error{Action: r.action, URL: shown, Status: resp.StatusCode, Code: CodeTooLarge,
			Message: fmt.Sprintf("The bridge at `%s` answered more than %d bytes", shown, r.limit)}
	}
	if !utf8.Valid(data) {
		data = bytes.ToValidUTF8(data, []byte("\uFFFD"))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, answerError(r.action, shown, resp.StatusCode, data)
	}
	data = bytes.TrimSpace(data)
	if !json.Valid(data) {
		return nil, &Error{Action: r.action, URL: shown, Status: resp.StatusCode, Code: CodeParse,
			Body:    clip(string(data), maxErrorBody),
			Message: fmt.Sprintf("Bridge response for `%s` is not valid JSON", shown)}
	}
	return &answer{data: data, status: resp.StatusCode, url: shown}, nil
}

// actionURL is the bridge URL with the action's query parameters set
// (Novu's searchParams.set: an existing one is replaced, others kept).
func actionURL(r request) (*url.URL, error) {
	u, err := url.Parse(r.bridgeURL)
	if err != nil {
		return nil, errors.New("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("not http or https")
	}
	if u.Hostname() == "" {
		return nil, errors.New("no host")
	}
	q := u.Query()
	q.Set("action", r.action)
	if r.workflowID != "" {
		q.Set("workflowId", r.workflowID)
	}
	if r.stepID != "" {
		q.Set("stepId", r.stepID)
	}
	u.RawQuery = q.Encode()
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// redactedURL is a bridge URL as messages show it: without credentials.
func redactedURL(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	return clip(s, 200)
}
