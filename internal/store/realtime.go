package store

import "context"

// InboxChange is what one committed transaction changed in the inboxes of
// an environment's subscribers: whose counts moved and which in-app
// messages it created. The realtime hub turns it into events.
type InboxChange struct {
	EnvironmentID string
	// SubscriberIDs are the subscribers' _ids, each once.
	SubscriberIDs []string
	// MessageIDs are the in-app messages the transaction created, in
	// insertion order.
	MessageIDs []string
}

// Realtime reads what the realtime events carry.
type Realtime interface {
	// InboxMessagesByID returns the environment's undeleted in-app messages
	// among ids, in no particular order.
	InboxMessagesByID(ctx context.Context, environmentID string, ids []string) ([]Message, error)
	// SubscribersByID returns the environment's undeleted subscribers among
	// the _ids, by _id.
	SubscribersByID(ctx context.Context, environmentID string, ids []string) (map[string]Subscriber, error)
}
