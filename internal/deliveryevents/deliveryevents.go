// Package deliveryevents turns what e-mail and SMS providers post about
// their deliveries into delivery events (issue 29, part A;
// docs/delivery.md, "Provider delivery events"): each provider's file
// authenticates a post as that provider signs it, parses its events and maps
// their statuses; the Recorder records the queued events on their messages.
// Amazon SES's events come through Amazon SNS, whose posts are verified
// with certificates an SNS fetches from SNS's own host (sns.go, ses.go).
// It never trusts a post: every value it keeps is bounded and valid text,
// and a post holds at most MaxEvents events.
package deliveryevents

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// MaxEvents bounds the events of one post: a longer SendGrid batch is
// refused whole (SendGrid posts at most a few thousand).
const MaxEvents = 10_000

// Errors of Authenticate and Parse. ErrMalformed and ErrTooMany are
// wrapped with what is wrong; ErrUnavailable (sns.go) is Authenticate's
// when SNS's certificate cannot be had now.
var (
	// ErrUnsupported: the provider posts no events Herald reads.
	ErrUnsupported = errors.New("the provider's delivery events are not supported")
	// ErrUnauthorized: the post is not signed as the provider signs it.
	ErrUnauthorized = errors.New("the request is not signed by the provider")
	// ErrMalformed: the body is not what the provider posts.
	ErrMalformed = errors.New("the body is not the provider's event payload")
	// ErrTooMany: the post holds more than MaxEvents events.
	ErrTooMany = errors.New("the body holds too many events")
)

// Request is a provider's post, as received.
type Request struct {
	Header http.Header
	Body   []byte
	// URL is the URL the provider posted to as it signs it (Twilio): the
	// scheme, the Host header, and the path and query as received.
	URL string
	// Now is when it was received.
	Now time.Time
	// Context bounds what authenticating it fetches (SES: SNS's signing
	// certificate); nil is context.Background().
	Context context.Context
	// SNS fetches the certificates SNS signs with (SES); without it every
	// SES post is refused.
	SNS *SNS
}

// Secrets are what authenticates an integration's posts.
type Secrets struct {
	// Key is configurations.inboundWebhookSigningKey ("" for none: the
	// providers that allow it accept posts unauthenticated).
	Key string
	// Token is credentials.token, Twilio's auth token.
	Token string
}

// Batch is a post's events.
type Batch struct {
	// Events are the events of statuses Herald records, their
	// IntegrationID and ProviderID left to the caller.
	Events []store.DeliveryEvent
	// Ignored counts the events of other types (and items that are no
	// event at all).
	Ignored int
	// Confirm is the SubscribeURL of an SNS subscription confirmation
	// (SES), checked to be SNS's: the caller confirms it (SNS.Confirm)
	// before answering.
	Confirm string
}

// provider reads one provider's posts.
type provider struct {
	// authenticate checks a post against the integration's secrets.
	authenticate func(req *Request, s Secrets) error
	parse        func(req *Request) (Batch, error)
}

// providers are the providers whose events Herald reads, by provider id.
var providers = map[string]provider{
	"sendgrid": {authenticate: sendgridAuthenticate, parse: sendgridParse},
	"mailgun":  {authenticate: mailgunAuthenticate, parse: mailgunParse},
	"resend":   {authenticate: resendAuthenticate, parse: resendParse},
	"postmark": {authenticate: postmarkAuthenticate, parse: postmarkParse},
	"twilio":   {authenticate: twilioAuthenticate, parse: twilioParse},
	"ses":      {authenticate: sesAuthenticate, parse: sesParse},
}

// Supported reports whether Herald reads the delivery events of providerID.
func Supported(providerID string) bool {
	_, ok := providers[providerID]
	return ok
}

// Authenticate checks a post of providerID with the integration's secrets:
// nil, ErrUnsupported, ErrUnauthorized, or (SES) ErrUnavailable when SNS's
// signing certificate cannot be fetched now. Signatures are compared in
// constant time.
func Authenticate(providerID string, req *Request, s Secrets) error {
	p, ok := providers[providerID]
	if !ok {
		return ErrUnsupported
	}
	return p.authenticate(req, s)
}

// Parse reads the events of an authenticated post of providerID: the
// events of the statuses Herald records, or ErrUnsupported, or ErrMalformed
// or ErrTooMany wrapped with what is wrong.
func Parse(providerID string, req *Request) (Batch, error) {
	p, ok := providers[providerID]
	if !ok {
		return Batch{}, ErrUnsupported
	}
	return p.parse(req)
}
