package provider

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Sender delivers messages through one configured integration of a provider.
// Implementations are safe for concurrent use; they keep what is worth
// reusing between sends (pooled SMTP connections, OAuth and JWT tokens).
type Sender interface {
	// Send makes one delivery. A failure is an *Error (use AsError), which
	// says whether the call may be retried.
	Send(ctx context.Context, m *Message) (*Result, error)
}

// Closer is implemented by senders that hold connections.
type Closer interface{ Close() error }

// Message is one delivery, already rendered. Which fields a provider reads
// depends on its channel.
type Message struct {
	// ID is Herald's message id (a Message-ID, custom arguments).
	ID string
	// IdempotencyKey is stable across retries of the same delivery; providers
	// that accept one send it so that a re-run is not a second message.
	IdempotencyKey string

	// Email: addresses; SMS: To[0] is the phone number.
	To, Cc, Bcc []string
	// From and SenderName override the integration's when not empty.
	From, SenderName, ReplyTo string
	// Subject of an e-mail; title of a push notification.
	Subject string
	// HTML and Text are an e-mail's parts (Text derived from HTML when not given).
	HTML, Text string
	// Headers are extra e-mail headers.
	Headers map[string]string

	// Content is the body of an SMS, a chat message or a push notification.
	Content string
	// WebhookURL is where a chat message goes (the subscriber's, else the integration's).
	WebhookURL string
	// ChatChannel is the subscriber's chat channel (credentials.channel), which
	// Mattermost and the generic webhook send along.
	ChatChannel string
	// Tokens are a push notification's device tokens.
	Tokens []string
	// Data is a push notification's custom data.
	Data map[string]any

	// Payload and Subscriber describe the trigger for webhook providers.
	Payload    map[string]any
	Subscriber map[string]any
	// Step names the workflow step for webhook providers ({stepId, ...}).
	Step map[string]any
	// Overrides is overrides.providers.<providerId> of the trigger, merged
	// into the provider's request body by providers with a JSON body.
	Overrides map[string]any
	// Passthrough is the headers and query parameters of the overrides'
	// _passthrough (SplitPassthrough), added to the provider's HTTP
	// request by Do when the call's context carries it (WithPassthrough).
	Passthrough Passthrough
}

// Result is a successful delivery.
type Result struct {
	// ProviderMessageID is the provider's id of the message, from its answer.
	ProviderMessageID string
	// Raw is the provider's answer, with credentials redacted.
	Raw string
	// InvalidTokens are device tokens the provider refused as no longer
	// valid while it delivered to others; Herald removes them.
	InvalidTokens []string
}

// Class says what a failure means for the delivery.
type Class int

const (
	// Permanent failures fail the step at once: another try would fail the same way.
	Permanent Class = iota
	// Transient failures are retried with backoff, then failed over.
	Transient
	// TokenInvalid: every device token was refused as invalid; they are removed.
	TokenInvalid
)

func (c Class) String() string {
	switch c {
	case Transient:
		return "transient"
	case TokenInvalid:
		return "token invalid"
	default:
		return "permanent"
	}
}

// Error is a failed delivery.
type Error struct {
	Class Class
	// Status is the provider's HTTP status, or SMTP reply code (0 when none).
	Status int
	// Reason is a short human description (the provider's message).
	Reason string
	// RetryAfter is how long the provider asked to wait (0 when it did not).
	RetryAfter time.Duration
	// Raw is the provider's answer, with credentials redacted.
	Raw string
	// InvalidTokens are the refused device tokens (TokenInvalid).
	InvalidTokens []string
	// Err is the underlying error, if any.
	Err error
}

func (e *Error) Error() string {
	s := e.Reason
	if e.Status != 0 {
		s = fmt.Sprintf("%d %s", e.Status, s)
	}
	if e.Err != nil && e.Reason == "" {
		s = e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// AsError returns err as an *Error. Errors that are not one are transient
// when they are the context's deadline or a network failure, permanent
// otherwise.
func AsError(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	c := Permanent
	if errors.Is(err, context.DeadlineExceeded) || isNetError(err) {
		c = Transient
	}
	return &Error{Class: c, Reason: err.Error(), Err: err}
}

// Permanentf is a permanent failure with a reason.
func Permanentf(format string, args ...any) *Error {
	return &Error{Class: Permanent, Reason: fmt.Sprintf(format, args...)}
}
