package store

import (
	"context"
	"errors"
	"time"
)

var (
	// ErrBadCursor: a list's cursor names no message of the subscriber.
	ErrBadCursor = errors.New("the cursor names no message of the subscriber")
	// ErrNoAction: the message has no button of the action's kind.
	ErrNoAction = errors.New("the message has no such action")
)

// Severity levels of a workflow, copied onto its in-app messages.
const (
	SeverityNone   = "none"
	SeverityLow    = "low"
	SeverityMedium = "medium"
	SeverityHigh   = "high"
)

// Severities are the severity levels, lowest first.
var Severities = []string{SeverityNone, SeverityLow, SeverityMedium, SeverityHigh}

// Inbox actions: the state changes of a subscriber's in-app messages.
const (
	InboxRead      = "read"      // read and seen
	InboxUnread    = "unread"    // not read, seen, not archived
	InboxSeen      = "seen"      // seen
	InboxArchive   = "archive"   // archived, read, seen, not snoozed
	InboxUnarchive = "unarchive" // not archived, read, seen
	InboxSnooze    = "snooze"    // snoozed until a time, seen, not archived
	InboxUnsnooze  = "unsnooze"  // not snoozed, seen, not archived
	InboxDelete    = "delete"    // gone from every listing
)

// InboxFilter selects a subscriber's in-app messages. Nil and empty fields
// do not filter; the fields combine with AND.
type InboxFilter struct {
	Read, Seen, Archived, Snoozed *bool
	// Severity: any of these levels.
	Severity []string
	// Tags: every group has a tag of the message (an AND of OR-groups).
	Tags [][]string
	// Data: exact-equality conditions on the message's data.
	Data []PayloadCondition
	// CreatedGTE and CreatedLTE bound the creation time (inclusive).
	CreatedGTE, CreatedLTE *time.Time
	// ContextKeys, when set, keeps the messages whose notification's
	// context keys are exactly these (Notification.ContextKeys form: sorted,
	// joined by ","; "" for none).
	ContextKeys *string
}

// UnreadFilters count a subscriber's unread in-app messages — not read, not
// archived, not snoozed — in all, then by severity (in Severities order):
// what the inbox clients' badge shows, at session start and in realtime.
func UnreadFilters() []InboxFilter {
	no := false
	fs := []InboxFilter{{Read: &no, Archived: &no, Snoozed: &no}}
	for _, sev := range Severities {
		fs = append(fs, InboxFilter{Read: &no, Archived: &no, Snoozed: &no, Severity: []string{sev}})
	}
	return fs
}

// Counted reports whether the inbox counts answer the filter without
// reading messages: it names only state — read, seen, archived, snoozed,
// severity — and tags.
func (f *InboxFilter) Counted() bool {
	return len(f.Data) == 0 && f.CreatedGTE == nil && f.CreatedLTE == nil && f.ContextKeys == nil
}

// InboxListParams selects a page of a subscriber's in-app messages, newest
// first.
type InboxListParams struct {
	Scope
	SubscriberID string // the subscriber's _id
	InboxFilter
	// After is the id of the subscriber's message the page starts after.
	After  string
	Offset int
	Limit  int
	Now    time.Time // snoozes due by then are over first
}

// InboxPage is one page of a subscriber's in-app messages.
type InboxPage struct {
	Messages []Message
	HasMore  bool
}

// InboxCountParams counts a subscriber's in-app messages matching each of
// Filters.
type InboxCountParams struct {
	Scope
	SubscriberID string // the subscriber's _id
	Filters      []InboxFilter
	Now          time.Time // snoozes due by then are over first
}

// InboxChangeParams is an inbox action on one message (ID) or on every
// message of the subscriber that Filter selects (IDs, when set, restricting
// it further).
type InboxChangeParams struct {
	Scope
	SubscriberID string // the subscriber's _id
	Action       string
	ID           string
	IDs          []string
	Filter       InboxFilter
	SnoozeUntil  time.Time // InboxSnooze
	Now          time.Time
}

// InboxActionParams marks the primary or secondary action (Button) of a
// subscriber's message completed (Done) or pending again.
type InboxActionParams struct {
	Scope
	SubscriberID string // the subscriber's _id
	MessageID    string
	Button       string
	Done         bool
	Now          time.Time
}

// InboxState keeps the state of in-app messages: seen, read, archived,
// snoozed, action completion, and the exact per-subscriber counts of each.
type InboxState interface {
	// InboxList pages a subscriber's in-app messages.
	InboxList(ctx context.Context, p *InboxListParams) (InboxPage, error)
	// InboxCount counts a subscriber's in-app messages matching each filter.
	InboxCount(ctx context.Context, p *InboxCountParams) ([]int, error)
	// InboxChangeOne applies an action to one of the subscriber's messages
	// and returns it after the change (after InboxDelete, only its ID);
	// ErrNotFound if it is not theirs.
	InboxChangeOne(ctx context.Context, p *InboxChangeParams) (Message, error)
	// InboxChangeMany applies an action to the subscriber's messages that
	// p selects and returns how many changed.
	InboxChangeMany(ctx context.Context, p *InboxChangeParams) (int, error)
	// InboxCompleteAction marks the primary or secondary action of a
	// message completed (done) or not, which also reads the message.
	InboxCompleteAction(ctx context.Context, p *InboxActionParams) (Message, error)
	// InboxUnsnoozeDue ends the snoozes due by now, at most limit of them,
	// and returns how many it ended.
	InboxUnsnoozeDue(ctx context.Context, limit int, now time.Time) (int, error)
}
