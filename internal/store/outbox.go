package store

import (
	"context"
	"encoding/json"
	"time"
)

// The webhook outbox: a change that causes webhook events writes, in its
// own transaction, an outbox entry that says which — so that a crash right
// after the commit loses none. The webhooks service turns entries into
// events and deletes them, in one transaction each: an entry becomes its
// events exactly once.
//
// Entries of message events are written by the store itself (the in-app
// messages a transaction creates, the messages a job's outcome sends or
// fails, the deliveries provider events record) or asked for by the caller
// through its context (WithOutbox): a change of messages, whose events the
// store reads in the transaction, or events the caller renders in the
// transaction, before its commit, from what the change wrote.

// Outbox entry kinds.
const (
	// OutboxMessages is an entry of message events: Ref is a list of
	// OutboxMessage.
	OutboxMessages = "messages"
	// OutboxEvents is an entry of rendered events: Ref is a list of
	// OutboxEvent.
	OutboxEvents = "events"
)

// The message event types the store notes itself (the webhooks package
// names every type).
const (
	WebhookMessageSent      = "message.sent"
	WebhookMessageDelivered = "message.delivered"
	WebhookMessageFailed    = "message.failed"
)

// OutboxHold is how long a new entry is its writer's: the process that
// wrote it makes its events at once (it was told of it after the commit),
// and another drain takes it only once this has passed — when the writer
// died or failed.
const OutboxHold = 5 * time.Second

// OutboxEntry is a durable note of the events a committed change causes.
type OutboxEntry struct {
	ID string
	Scope
	Kind string
	Ref  json.RawMessage
	// Claims counts the times a drain claimed it.
	Claims    int
	CreatedAt time.Time
}

// OutboxMessage is one message event of an OutboxMessages entry: the
// message as the change left it (Message), or its id to read when the
// entry is rendered (a new in-app message).
type OutboxMessage struct {
	Type      string   `json:"t"`
	MessageID string   `json:"id,omitempty"`
	Message   *Message `json:"m,omitempty"`
}

// OutboxEvent is one event of an OutboxEvents entry.
type OutboxEvent struct {
	Type string          `json:"t"`
	Data json.RawMessage `json:"d"`
}

// OutboxTx is what a Render of an intent reads, in the change's
// transaction.
type OutboxTx interface {
	// Result is what the store call noted of its change: the
	// SubscriberPreferences of SubscriberPreferenceUpdate, the
	// []Published of EnvironmentPublish; nil for the others.
	Result() any
	// WorkflowGet reads a workflow as the transaction sees it.
	WorkflowGet(ctx context.Context, scope Scope, idOrKey string) (Workflow, error)
}

// OutboxIntent is what a caller asks the store to note in the transaction
// of its change (WithOutbox).
type OutboxIntent struct {
	// Scope is the environment of the events.
	Scope
	// Type and Changed ask for an event of type Type for each message the
	// change wrote that Changed selects (its At is the change's time).
	Type    string
	Changed *WebhookMessagesChangedParams
	// Render makes the events of the change in its transaction, after the
	// store call's writes and before the commit (no events: no entry). It
	// must not block: the transaction holds the write lock.
	Render func(ctx context.Context, tx OutboxTx) ([]OutboxEvent, error)

	// written is set once the entry is committed: a later transaction of
	// the same context does not write it again.
	written bool
}

// Written reports whether the intent was committed.
func (i *OutboxIntent) Written() bool { return i != nil && i.written }

// MarkWritten records that the intent was committed (the store).
func (i *OutboxIntent) MarkWritten() { i.written = true }

type outboxKey struct{}

// WithOutbox returns ctx with intents added: the next write transaction run
// with it notes them.
func WithOutbox(ctx context.Context, intents ...*OutboxIntent) context.Context {
	var live []*OutboxIntent
	for _, in := range intents {
		if in != nil {
			live = append(live, in)
		}
	}
	if len(live) == 0 {
		return ctx
	}
	return context.WithValue(ctx, outboxKey{}, append(OutboxFrom(ctx), live...))
}

// OutboxFrom returns the intents of ctx.
func OutboxFrom(ctx context.Context) []*OutboxIntent {
	v, _ := ctx.Value(outboxKey{}).([]*OutboxIntent)
	return v
}

// OutboxFilter tells the store whether an endpoint of the environment takes
// events of type typ: entries nobody takes are not written. It must be
// fast (a cached answer) and say yes when unsure.
type OutboxFilter func(ctx context.Context, environmentID, typ string) bool

// WebhookOutbox is the store's side of the outbox.
type WebhookOutbox interface {
	// SetWebhookOutbox makes the store write the entries of its own
	// changes that wants takes, and call written with the entries of each
	// commit that wrote some (it must not block). They are due to other
	// drains OutboxHold after they were written.
	SetWebhookOutbox(wants OutboxFilter, written func([]OutboxEntry))
	// WebhookOutboxClaim leases up to limit entries of kinds that are due
	// (any environment) for lease.
	WebhookOutboxClaim(ctx context.Context, kinds []string, limit int, lease time.Duration, now time.Time) ([]OutboxEntry, error)
}
