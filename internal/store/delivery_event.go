package store

import (
	"context"
	"time"
)

// DeliveryEvent is an event a provider posted about a delivery (a message
// delivered, bounced, opened…), authenticated and parsed: internal/
// deliveryevents makes them, the store queues them and records each on its
// message (docs/delivery.md, "Provider delivery events").
type DeliveryEvent struct {
	ID            string
	IntegrationID string
	ProviderID    string
	// Key is the event's identity at its provider: an event is recorded once
	// per (integration, Key) however often it is posted.
	Key string
	// Status is the webhookStatus: delivered, opened, bounced, …
	Status string
	// MessageID is the message's _id the event carries (Herald's
	// heraldMessageId; "" when none); else ProviderMessageID finds it.
	MessageID         string
	ProviderMessageID string
	// OccurredAt is the provider's time of the event (when received when it
	// gives none).
	OccurredAt time.Time
	// Raw is the provider's event as JSON; Detail the execution detail's text.
	Raw    string
	Detail string
}

// DeliveryEventsAddParams queues the events of one post to an integration.
type DeliveryEventsAddParams struct {
	Scope
	Events []DeliveryEvent
	Now    time.Time
}

// DeliveryEventsRecordParams bound one pass of the recorder.
type DeliveryEventsRecordParams struct {
	// Limit bounds the events recorded in one transaction.
	Limit int
	// MatchFor is how long after its receipt an event that matches no
	// message is tried again (its message may not be written yet: the
	// provider can call before the delivery's outcome is); after it the
	// event is dropped.
	MatchFor time.Duration
	Now      time.Time
}

// DeliveryEventsRecorded is what one pass recorded.
type DeliveryEventsRecorded struct {
	// Taken counts the events the pass looked at: Limit means more may be due.
	Taken int
	// Recorded and Unmatched count, by provider, the events recorded on
	// their messages and those dropped for matching none.
	Recorded, Unmatched map[string]int
	// Delivered are the messages a `delivered` event was recorded on, after
	// the change (message.delivered).
	Delivered []Message
}

// DeliveryEventQueue is the queue of events not recorded yet, for the metrics.
type DeliveryEventQueue struct {
	Queued int64
	// Oldest is when the longest-waiting of them was received (zero: none).
	Oldest time.Time
}

// DeliveryEvents keeps the delivery events providers post.
type DeliveryEvents interface {
	// DeliveryEventsAdd queues events in one statement, each unless an event
	// of the same identity was queued before (or earlier in p.Events); it
	// returns how many it queued.
	DeliveryEventsAdd(ctx context.Context, p *DeliveryEventsAddParams) (int, error)
	// DeliveryEventsRecord records, in one transaction, up to Limit queued
	// events on their messages (matched within their environment): one
	// execution detail each (source Webhook) and, for `delivered`, the
	// message's delivered time. Concurrent callers record distinct events.
	DeliveryEventsRecord(ctx context.Context, p *DeliveryEventsRecordParams) (DeliveryEventsRecorded, error)
	// DeliveryEventsQueued reads the queue's size and age.
	DeliveryEventsQueued(ctx context.Context) (DeliveryEventQueue, error)
}

// Execution detail statuses of delivery events.
const (
	detailSuccess = "Success"
	detailPending = "Pending"
	detailFailed  = "Failed"
)

// DetailStatus is the status of the execution detail an event of
// webhookStatus status records: Success for sent, delivered, opened and
// clicked; Pending for deferred; Failed for the others.
func DetailStatus(status string) string {
	switch status {
	case "sent", "delivered", "opened", "clicked":
		return detailSuccess
	case "deferred":
		return detailPending
	}
	return detailFailed
}
