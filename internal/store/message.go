package store

import (
	"context"
	"time"
)

// Message is what a step delivered: an inbox message for in_app steps, a
// delivery through a provider for e-mail, SMS, chat and push steps.
type Message struct {
	ID                 string
	OrganizationID     string
	EnvironmentID      string
	NotificationID     string
	JobID              string
	SubscriberID       string // the subscriber's _id
	WorkflowID         string
	TemplateIdentifier string
	TransactionID      string
	Channel            string
	ProviderID         string
	Content            string
	Subject            *string
	Avatar             *string
	CTA                JSON
	Actor              JSON
	Payload            JSON
	Data               JSON
	Tags               []string // nil: null
	Overrides          JSON
	Status             string
	Read               bool
	Seen               bool
	Archived           bool
	LastReadAt         *time.Time
	LastSeenAt         *time.Time
	Deleted            bool
	CreatedAt          time.Time
	UpdatedAt          time.Time
	// Target tells the messages of one job apart ("" for a job's only
	// message; the integration and webhook of a chat message, the
	// integration of a push message): a job delivers once per target.
	Target string
	// IntegrationID is the integration that delivered it.
	IntegrationID string
	// ProviderMessageID is the provider's id of the delivery.
	ProviderMessageID string
	// ErrorText says why a message with status "error" failed.
	ErrorText string
	// Delivery holds where it went: {"to":[…]} for e-mail, {"phone"} for
	// SMS, {"deviceTokens":[…]} for push, {"webhookHost"} for chat.
	Delivery JSON
	// FirstSeenAt is when an in-app message was first seen.
	FirstSeenAt *time.Time
	// ArchivedAt is when it was archived (nil unless Archived).
	ArchivedAt *time.Time
	// SnoozedUntil is when a snoozed in-app message comes back (nil: not
	// snoozed).
	SnoozedUntil *time.Time
	// Severity is its workflow's severity when it was created ("" is none).
	Severity string
	// DeliveredAt is the provider's time of a recorded `delivered` event
	// (nil: none; the message counts as delivered when created).
	DeliveredAt *time.Time
}

// Message statuses of provider deliveries.
const (
	MessageSent  = "sent"
	MessageError = "error"
)

// MessageListParams filters the messages listing (GET /v1/messages).
type MessageListParams struct {
	Scope
	Channel        string
	SubscriberID   string   // the subscriber's _id
	TransactionIDs []string // any of them
	// ContextKeys, when set, keeps the messages whose trigger had exactly
	// these context keys (InboxFilter.ContextKeys).
	ContextKeys *string
	Page, Limit int
}

// MessageDeleteByTransactionParams names the messages of one transaction.
type MessageDeleteByTransactionParams struct {
	Scope
	TransactionID string
	Channel       string // "" for every channel
	Now           time.Time
}

// PayloadCondition is an exact-equality condition on a payload path.
type PayloadCondition struct {
	Path  []string
	Value JSON // canonical (compact) JSON of the expected value
}

// FeedParams selects a page of a subscriber's inbox.
type FeedParams struct {
	Scope
	SubscriberID string // the subscriber's _id
	Read, Seen   *bool
	Payload      []PayloadCondition
	Page, Limit  int
	Now          time.Time // snoozes due by then are over first
}

// FeedPage is one page of an inbox.
type FeedPage struct {
	Messages   []Message
	TotalCount int
	HasMore    bool
}

// MarkAs values.
const (
	MarkRead   = "read"
	MarkUnread = "unread"
	MarkSeen   = "seen"
	MarkUnseen = "unseen"
)

// MessageMarkAsParams marks the listed in-app messages of a subscriber.
type MessageMarkAsParams struct {
	Scope
	SubscriberID string // the subscriber's _id
	IDs          []string
	MarkAs       string
	Now          time.Time
}

// MessageMarkAllParams marks every in-app message of a subscriber read or
// seen.
type MessageMarkAllParams struct {
	Scope
	SubscriberID string // the subscriber's _id
	MarkAs       string // MarkRead or MarkSeen
	Now          time.Time
}

// MessageUnseenCountParams names the subscriber whose unseen messages are
// counted.
type MessageUnseenCountParams struct {
	Scope
	SubscriberID string    // the subscriber's _id
	Now          time.Time // snoozes due by then are over first
}

// MessageSetActionParams sets cta.action of a subscriber's message.
type MessageSetActionParams struct {
	Scope
	SubscriberID string // the subscriber's _id
	MessageID    string
	Action       JSON
	Now          time.Time
}

// MessageDeleteParams names the message to delete.
type MessageDeleteParams struct {
	Scope
	MessageID string
	Now       time.Time
}

// NotificationDetail is a notification with its jobs and their execution details.
type NotificationDetail struct {
	Notification Notification
	Subscriber   Subscriber
	Workflow     Workflow
	Jobs         []Job
	Details      map[string][]ExecutionDetail // by job id
}

// NotificationListParams filters the events listing.
type NotificationListParams struct {
	Scope
	Channels      []string
	WorkflowIDs   []string // workflow _ids or keys
	Emails        []string
	SubscriberIDs []string // client subscriberIds
	TransactionID string
	// Status keeps the triggers of that status (TriggerStatus of their
	// jobs: TriggerFailed, …); "" for any.
	Status        string
	After, Before *time.Time
	Page, Limit   int
}

// Inbox keeps messages and reads notifications back.
type Inbox interface {
	MessageFeed(ctx context.Context, p *FeedParams) (FeedPage, error)
	// MessageMarkAs changes the listed in_app messages of a subscriber and
	// returns those that matched, after the change.
	MessageMarkAs(ctx context.Context, p *MessageMarkAsParams) ([]Message, error)
	// MessageMarkAll marks every in_app message of a subscriber read or seen.
	MessageMarkAll(ctx context.Context, p *MessageMarkAllParams) (int, error)
	MessageUnseenCount(ctx context.Context, p *MessageUnseenCountParams) (int, error)
	// MessageSetAction sets cta.action of a subscriber's message.
	MessageSetAction(ctx context.Context, p *MessageSetActionParams) (Message, error)
	MessageDelete(ctx context.Context, p *MessageDeleteParams) error
	NotificationGet(ctx context.Context, scope Scope, id string) (NotificationDetail, error)
	NotificationList(ctx context.Context, p *NotificationListParams) ([]NotificationDetail, bool, error)
	// MessageList pages the messages of every channel, newest first, with
	// their total (counted up to TotalCountCap).
	MessageList(ctx context.Context, p *MessageListParams) ([]Message, int, error)
	// MessageDeleteByTransaction deletes every message of a transaction (of
	// one channel, when given), as MessageDelete does, and returns how many;
	// none is ErrNotFound.
	MessageDeleteByTransaction(ctx context.Context, p *MessageDeleteByTransactionParams) (int, error)
}
