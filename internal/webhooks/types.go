// Package webhooks sends an environment's events to the customer's app as
// signed outbound webhooks (Standard Webhooks): the endpoints' validation and
// secrets, the event types and their envelope, the signature, the emission
// of events (stored, with their attempts, before any is made) and the
// sender that claims due attempts from the store and makes them.
package webhooks

import (
	"slices"

	"github.com/herald-notify/herald/internal/store"
)

// Event types.
const (
	MessageSent       = store.WebhookMessageSent
	MessageDelivered  = store.WebhookMessageDelivered
	MessageFailed     = store.WebhookMessageFailed
	MessageSeen       = "message.seen"
	MessageRead       = "message.read"
	MessageUnread     = "message.unread"
	MessageArchived   = "message.archived"
	MessageUnarchived = "message.unarchived"
	MessageSnoozed    = "message.snoozed"
	MessageUnsnoozed  = "message.unsnoozed"
	MessageDeleted    = "message.deleted"
	WorkflowCreated   = "workflow.created"
	WorkflowUpdated   = "workflow.updated"
	WorkflowDeleted   = "workflow.deleted"
	WorkflowPublished = "workflow.published"
	PreferenceUpdated = "preference.updated"
)

// Types are every event type, in the order of the contract.
var Types = []string{
	MessageSent, MessageDelivered, MessageFailed, MessageSeen, MessageRead, MessageUnread, MessageArchived, MessageUnarchived,
	MessageSnoozed, MessageUnsnoozed, MessageDeleted, WorkflowCreated, WorkflowUpdated, WorkflowDeleted, WorkflowPublished,
	PreferenceUpdated,
}

// ValidType reports whether t is an event type.
func ValidType(t string) bool { return slices.Contains(Types, t) }

// Objects: what an event's data.object is.
const (
	ObjectMessage    = "message"
	ObjectWorkflow   = "workflow"
	ObjectPreference = "preference"
)

// objectOf is the object kind of an event type.
func objectOf(typ string) string {
	switch typ {
	case WorkflowCreated, WorkflowUpdated, WorkflowDeleted, WorkflowPublished:
		return ObjectWorkflow
	case PreferenceUpdated:
		return ObjectPreference
	}
	return ObjectMessage
}
