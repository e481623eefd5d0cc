package store

import (
	"context"
	"time"
)

// WebhookEndpoint is a URL of the customer's app that an environment's
// events are sent to, signed with its secret (outbound webhooks). The store
// seals the secrets; they come back from it in the clear.
type WebhookEndpoint struct {
	ID             string
	OrganizationID string
	EnvironmentID  string
	URL            string
	// EventTypes are the types sent to it; empty: every type.
	EventTypes  []string
	Description string
	Disabled    bool
	// Secret signs its attempts (whsec_…). PreviousSecret, the secret the
	// last rotation replaced, signs beside it until PreviousUntil ("": none).
	Secret         string
	PreviousSecret string
	PreviousUntil  *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Wants reports whether events of type typ are sent to the endpoint (were
// it enabled).
func (e *WebhookEndpoint) Wants(typ string) bool { return WebhookTypesWant(e.EventTypes, typ) }

// WebhookTypesWant reports whether an endpoint with eventTypes wants typ.
func WebhookTypesWant(eventTypes []string, typ string) bool {
	if len(eventTypes) == 0 {
		return true
	}
	for _, t := range eventTypes {
		if t == typ {
			return true
		}
	}
	return false
}

// WebhookEndpointCreateParams creates an endpoint in the scope's environment.
type WebhookEndpointCreateParams struct {
	Scope
	URL         string
	EventTypes  []string
	Description string
	Secret      string
	Now         time.Time
}

// WebhookEndpointUpdateParams changes an endpoint: nil fields are left as
// they are. Disabling it cancels its attempts not yet made.
type WebhookEndpointUpdateParams struct {
	Scope
	ID          string
	URL         *string
	EventTypes  *[]string
	Description *string
	Disabled    *bool
	Now         time.Time
}

// WebhookSecretRotateParams gives an endpoint a new secret; the current one
// becomes its previous secret, signing beside the new one until
// PreviousUntil.
type WebhookSecretRotateParams struct {
	Scope
	ID            string
	Secret        string
	PreviousUntil time.Time
	Now           time.Time
}

// WebhookEvent is an event as sent: Body is the signed JSON, the same on
// every attempt at every endpoint.
type WebhookEvent struct {
	ID            string
	EnvironmentID string
	Type          string
	Body          []byte
	CreatedAt     time.Time
	// OutboxID is the outbox entry it is made of ("" for none).
	OutboxID string
}

// WebhookEventCreateParams stores events of the scope's environment.
type WebhookEventCreateParams struct {
	Scope
	Events []WebhookEvent
	// Outbox are the ids of the outbox entries the events are made of:
	// they are deleted in the same transaction, and the events of an entry
	// that is gone (another drain made its events) are not stored.
	Outbox []string
	// FirstAttemptAt is when the first attempt of each is due.
	FirstAttemptAt time.Time
	Now            time.Time
}

// WebhookAttempt is one attempt to deliver an event to an endpoint.
type WebhookAttempt struct {
	ID         string
	EndpointID string
	EventID    string
	EventType  string
	// Attempt counts from 1.
	Attempt int
	// Claims counts the senders that claimed it: an answer is written only
	// under the claim it was made under.
	Claims int
	// StatusCode is the endpoint's HTTP status (nil: no answer).
	StatusCode    *int
	Success       bool
	Error         string
	AttemptedAt   *time.Time
	NextAttemptAt *time.Time
}

// WebhookClaimed is an attempt claimed by a sender, with what sending it
// needs.
type WebhookClaimed struct {
	Attempt  WebhookAttempt
	Endpoint WebhookEndpoint
	Event    WebhookEvent
}

// WebhookAttemptResult is what became of a claimed attempt.
type WebhookAttemptResult struct {
	// Attempt is as claimed (ID and Claims guard against a stale sender).
	Attempt WebhookAttempt
	// Canceled ends the attempt unmade and unrecorded (its endpoint was
	// disabled).
	Canceled    bool
	StatusCode  *int
	Success     bool
	Error       string
	AttemptedAt time.Time
	// NextAttemptAt, when set, is when the event's next attempt at the
	// endpoint is due.
	NextAttemptAt *time.Time
	// Disable disables the endpoint (it answered 410 Gone).
	Disable bool
}

// WebhookQueue is the attempts queue at one moment, for the metrics.
type WebhookQueue struct {
	// Due counts the attempts due and not claimed.
	Due int64
	// OldestDue is when the longest-waiting of them became due (zero: none).
	OldestDue time.Time
	// Outbox counts the outbox entries not yet made into events, and
	// OutboxOldest is when the oldest was written (zero: none).
	Outbox       int64
	OutboxOldest time.Time
}

// WebhookMessagesChangedParams selects the messages one change wrote at
// At (every change writes its time as their updated_at): those of IDs (of
// SubscriberID when set; deleted ones included), or the in-app messages of
// a subscriber (its _id), or the messages of a transaction. A zero At
// selects the undeleted ones as they are, before a change or after their
// creation.
type WebhookMessagesChangedParams struct {
	Scope
	IDs           []string
	SubscriberID  string
	TransactionID string
	At            time.Time
}

// Webhooks keeps outbound webhook endpoints, events and attempts.
type Webhooks interface {
	WebhookOutbox
	WebhookEndpointCreate(ctx context.Context, p *WebhookEndpointCreateParams) (WebhookEndpoint, error)
	// WebhookEndpointList returns the environment's endpoints, oldest first.
	WebhookEndpointList(ctx context.Context, scope Scope) ([]WebhookEndpoint, error)
	WebhookEndpointGet(ctx context.Context, scope Scope, id string) (WebhookEndpoint, error)
	WebhookEndpointUpdate(ctx context.Context, p *WebhookEndpointUpdateParams) (WebhookEndpoint, error)
	WebhookSecretRotate(ctx context.Context, p *WebhookSecretRotateParams) (WebhookEndpoint, error)
	// WebhookEndpointDelete deletes an endpoint with its attempts.
	WebhookEndpointDelete(ctx context.Context, scope Scope, id string) error
	// WebhookEndpointTypes returns the event types of each enabled endpoint
	// of the environment (an empty list: every type).
	WebhookEndpointTypes(ctx context.Context, environmentID string) ([][]string, error)
	// WebhookEventCreate stores, in one transaction, each event that an
	// enabled endpoint of the environment wants, with its first attempt at
	// each such endpoint; it returns how many attempts it stored.
	WebhookEventCreate(ctx context.Context, p *WebhookEventCreateParams) (int, error)
	// WebhookAttemptList returns an endpoint's attempts made, newest
	// first, at most limit.
	WebhookAttemptList(ctx context.Context, scope Scope, endpointID string, limit int) ([]WebhookAttempt, error)
	// WebhookAttemptClaim leases up to limit due attempts (any environment)
	// to a sender for lease.
	WebhookAttemptClaim(ctx context.Context, limit int, lease time.Duration, now time.Time) ([]WebhookClaimed, error)
	// WebhookAttemptFinish writes the results of claimed attempts in one
	// transaction; a result whose claim was lost is dropped.
	WebhookAttemptFinish(ctx context.Context, results []WebhookAttemptResult, now time.Time) error
	// WebhookNextDue is when the earliest attempt is due or its lease ends
	// (zero: none).
	WebhookNextDue(ctx context.Context) (time.Time, error)
	// WebhookQueueStats reads the attempts queue at now.
	WebhookQueueStats(ctx context.Context, now time.Time) (WebhookQueue, error)
	// WebhookMessagesChanged returns the messages p selects, oldest first:
	// what a change's events carry.
	WebhookMessagesChanged(ctx context.Context, p *WebhookMessagesChangedParams) ([]Message, error)
	// WebhookPrune deletes what is no longer needed: answered attempts of
	// an endpoint beyond its newest keep, canceled attempts, and events
	// older than before that no attempt refers to. It returns how many rows
	// it deleted.
	WebhookPrune(ctx context.Context, keep int, before time.Time) (int, error)
}
