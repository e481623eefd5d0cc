// Package providertest holds what every provider's wire fake shares and the
// one suite every provider passes against its fake: a local server that
// speaks the provider's protocol (HTTP, HTTP/2 over TLS, SMTP), checks what
// a real provider checks (credentials, required fields), answers with the
// provider's own success and error bodies, and records what it received.
//
// Each provider's fake is a package of its own beside it
// (internal/provider/<channel>/<id>/<id>fake; registryfake starts any of them
// by provider id), ordinary code rather than test files so that end-to-end
// tests of other packages and the delivery benchmark can run them too, and
// never imported by the herald binary (cmd/herald's TestBinaryHasNoTestCode).
package providertest

import (
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"time"

	"github.com/herald-notify/herald/internal/provider"
)

// Delivery is what a fake received, in provider-neutral terms.
type Delivery struct {
	// E-mail addresses, or the phone number of an SMS (To[0]).
	To, Cc, Bcc []string
	From        string // the sender address (SMS: the sender id)
	SenderName  string
	ReplyTo     string
	Subject     string // e-mail subject, push title
	HTML, Text  string
	Content     string // SMS, chat and push body
	Tokens      []string
	Data        map[string]any
	// IdempotencyKey is the key the request carried ("" when none).
	IdempotencyKey string
	Header         http.Header
	// Query is the request's query parameters (HTTP fakes that record it).
	Query url.Values
	// Body is the raw request body (an SMTP message's DATA).
	Body []byte
	// MessageID is the id the fake answered with.
	MessageID string
}

// Failure is an answer a fake can be told to give, in the provider's shape.
type Failure int

// The failures.
const (
	None Failure = iota
	// Rejected is a permanent refusal of the message (invalid recipient, bad request).
	Rejected
	// Unavailable is a transient server failure (5xx; SMTP 421).
	Unavailable
	// RateLimited is the provider's rate limit answer, with Retry-After: 7 where it sends one.
	RateLimited
	// InvalidToken refuses a push token as no longer registered.
	InvalidToken
	// Hang gives no answer until the client gives up.
	Hang
)

// Traits say which parts of the suite apply to a provider.
type Traits struct {
	// RetryAfter: the rate-limit answer carries Retry-After: 7.
	RetryAfter bool
	// Overrides: the request body is JSON into which overrides are merged.
	Overrides bool
	// Idempotency: the request carries the message's idempotency key.
	Idempotency bool
	// Origin: calls go to an origin that credentials.baseUrl replaces; the
	// fake's credentials set baseUrl with a path prefix the fake requires.
	Origin bool
}

// Fake is a provider's local wire fake.
type Fake interface {
	// Credentials are valid credentials that point the provider at the fake.
	Credentials() provider.Credentials
	// BadCredentials are credentials the fake refuses as the provider does
	// (nil when the provider has none, e.g. chat webhooks).
	BadCredentials() provider.Credentials
	// Address completes a message with where it goes (chat: a webhook URL
	// at the fake; push: device tokens the fake knows; e-mail and SMS: kept).
	Address(m *provider.Message)
	// Fail makes the next n answers fail as f.
	Fail(f Failure, n int)
	// Received lists what the fake accepted, in order.
	Received() []Delivery
	// Requests counts every request (or SMTP transaction) it saw, accepted or not.
	Requests() int
	// Roots are the CAs a client needs to trust the fake (nil: plain text).
	Roots() *x509.CertPool
	Traits() Traits
	Close()
}

// Base keeps a fake's records and scripted failures; fakes embed it.
type Base struct {
	mu         sync.Mutex
	deliveries []Delivery
	failures   []Failure
	requests   int
	delay      time.Duration
	waiting    int // answers being delayed now
	peak       int // the most delayed at once
}

// PeakConcurrency is the most requests the fake was answering at once
// (counted while they wait out the delay set by SetDelay).
func (b *Base) PeakConcurrency() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}

// Waiting is how many requests the fake is answering now (waiting out the
// delay set by SetDelay).
func (b *Base) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiting
}

// SetDelay makes every answer wait d, as a real provider takes 100–400 ms
// to answer (benchmarks of slow providers).
func (b *Base) SetDelay(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.delay = d
}

// Fail scripts the next n answers.
func (b *Base) Fail(f Failure, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for range n {
		b.failures = append(b.failures, f)
	}
}

// Next counts a request and pops the failure it must answer with (None when unscripted).
// After the delay set by SetDelay, if any.
func (b *Base) Next() Failure {
	b.mu.Lock()
	b.requests++
	delay := b.delay
	f := None
	if len(b.failures) > 0 {
		f = b.failures[0]
		b.failures = b.failures[1:]
	}
	if delay > 0 {
		b.waiting++
		b.peak = max(b.peak, b.waiting)
	}
	b.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
		b.mu.Lock()
		b.waiting--
		b.mu.Unlock()
	}
	return f
}

// Record keeps an accepted delivery.
func (b *Base) Record(d Delivery) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.deliveries = append(b.deliveries, d)
}

// Received lists the accepted deliveries.
func (b *Base) Received() []Delivery {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Delivery(nil), b.deliveries...)
}

// Requests counts the requests seen.
func (b *Base) Requests() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.requests
}

// Reset forgets what was received (benchmarks reuse a fake).
func (b *Base) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.deliveries, b.failures, b.requests = nil, nil, 0
}

// HangUntilGone blocks until the client gives up on the request (or a
// minute passes). The body is read first: the server notices a client gone
// only once it has read the request.
func HangUntilGone(r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(time.Minute):
	}
}

// Server is the plain-HTTP server of a wire fake; fakes embed it for
// Roots and Close.
type Server struct{ Srv *httptest.Server }

// Serve starts the server on loopback.
func (s *Server) Serve(h http.HandlerFunc) { s.Srv = httptest.NewServer(h) }

// Roots are nil: plain HTTP.
func (s *Server) Roots() *x509.CertPool { return nil }

// Close stops the server.
func (s *Server) Close() { s.Srv.Close() }

// Answers are a provider's own answers to the scripted failures.
type Answers map[Failure]func(w http.ResponseWriter)

// Answered gives the scripted failure's answer (Hang: none until the
// client goes) and reports whether it did; None and failures the provider
// has no answer for fall through to the fake's normal path.
func Answered(w http.ResponseWriter, r *http.Request, f Failure, answers Answers) bool {
	if f == Hang {
		HangUntilGone(r)
		return true
	}
	if a := answers[f]; a != nil {
		a(w)
		return true
	}
	return false
}
