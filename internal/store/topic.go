package store

import (
	"context"
	"time"
)

// Topic is a named group of subscribers of an environment.
type Topic struct {
	ID             string
	OrganizationID string
	EnvironmentID  string
	Key            string
	Name           *string
	Data           JSON
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// TopicUpsertParams creates a topic or updates the sent fields of an existing one.
type TopicUpsertParams struct {
	Scope
	Key     string
	Name    Field
	DataSet bool
	Data    JSON
	// FailIfExists makes an existing key ErrConflict, nothing changed.
	FailIfExists bool
	// UpdateOnly makes a missing key ErrNotFound instead of creating it.
	UpdateOnly bool
	Now        time.Time
}

// TopicMember names a subscriber (its client subscriberId) in a topic change.
type TopicMember struct {
	SubscriberID string
	Identifier   string
}

// TopicSubscribeParams adds members to a topic, creating it when it is
// missing.
type TopicSubscribeParams struct {
	Scope
	Key     string
	Members []TopicMember
	Now     time.Time
}

// TopicUnsubscribeParams removes members from a topic.
type TopicUnsubscribeParams struct {
	Scope
	Key     string
	Members []TopicMember
}

// TopicMembershipParams names a subscriber (its client subscriberId) and a
// topic.
type TopicMembershipParams struct {
	Scope
	Key          string
	SubscriberID string
}

// TopicSubscription is one subscriber's membership of a topic.
type TopicSubscription struct {
	ID         string
	Topic      Topic
	Subscriber Subscriber
	Identifier string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	// Name and Preferences are read by TopicSubscriptionGet and
	// TopicSubscriptionUpdate only.
	Name        *string
	Preferences []TopicPreference
}

// TopicPreference is a subscription's preference for one workflow.
type TopicPreference struct {
	Workflow  Workflow
	Enabled   bool
	Condition JSON // a JSON Logic rule over the trigger; nil when none
}

// TopicPreferenceRule is a preference as a client sends it: the workflows
// it names by _id or workflowId, and those carrying one of its tags, get
// Enabled (true when nil) and Condition; the first rule naming a workflow wins.
type TopicPreferenceRule struct {
	WorkflowIDs []string
	Tags        []string
	Enabled     *bool
	Condition   JSON
}

// TopicSubscriptionRef names one subscription of a topic: the one whose
// identifier is Identifier, or, when there is none and SubscriberID is
// set, that subscriber's plain subscription (the one without identifier).
type TopicSubscriptionRef struct {
	Scope
	Key          string
	Identifier   string
	SubscriberID string
}

// TopicSubscriptionUpdateParams changes a subscription's name and replaces
// its preferences.
type TopicSubscriptionUpdateParams struct {
	TopicSubscriptionRef
	Name           Field
	PreferencesSet bool
	Preferences    []TopicPreferenceRule
	Now            time.Time
}

// TopicChange is the outcome of adding or removing members: the
// subscriptions affected and the subscriberIds that are not subscribers.
type TopicChange struct {
	Topic         Topic
	Subscriptions []TopicSubscription
	Unknown       []string
	// NotMembers are the subscribers a removal found no subscription of.
	NotMembers []string
}

// Topics keeps topics and their subscriptions.
type Topics interface {
	// TopicUpsert creates or updates a topic; created says which happened.
	TopicUpsert(ctx context.Context, p *TopicUpsertParams) (t Topic, created bool, err error)
	TopicGet(ctx context.Context, scope Scope, key string) (Topic, error)
	// TopicDelete removes a topic and its subscriptions.
	TopicDelete(ctx context.Context, scope Scope, key string) error
	// TopicSubscribe adds members, creating the topic when it is missing;
	// a member already subscribed is returned again, never duplicated.
	TopicSubscribe(ctx context.Context, p *TopicSubscribeParams) (TopicChange, error)
	// TopicUnsubscribe removes members (a member without identifier: all
	// its subscriptions to the topic); an unknown topic is ErrNotFound.
	TopicUnsubscribe(ctx context.Context, p *TopicUnsubscribeParams) (TopicChange, error)
	// TopicMembership returns a subscriber's subscription to a topic (ErrNotFound when none).
	TopicMembership(ctx context.Context, p *TopicMembershipParams) (TopicSubscription, error)
	// TopicSubscriptionGet returns a subscription with its name and
	// preferences: ErrNotFound when the topic or the subscription is
	// missing, ErrConflict when the identifier names several subscriptions.
	TopicSubscriptionGet(ctx context.Context, ref *TopicSubscriptionRef) (TopicSubscription, error)
	// TopicSubscriptionUpdate changes a subscription (errors as TopicSubscriptionGet).
	TopicSubscriptionUpdate(ctx context.Context, p *TopicSubscriptionUpdateParams) (TopicSubscription, error)
	TopicLister
}

// TopicPage selects a page of an id-ordered listing: after or before an
// _id, newest or oldest first.
type TopicPage struct {
	After, Before string
	Limit         int
	Descending    bool
}

// TopicListParams filters the topics of an environment.
type TopicListParams struct {
	Scope
	TopicPage
	// Key and Name, when set, are substrings the topic's must contain.
	Key, Name string
}

// TopicSubscriptionListParams filters a topic's subscriptions.
type TopicSubscriptionListParams struct {
	Scope
	TopicPage
	Key          string
	SubscriberID string // the client's subscriberId; "" for all
}

// SubscriberTopicListParams filters a subscriber's subscriptions.
type SubscriberTopicListParams struct {
	Scope
	TopicPage
	SubscriberID string // the client's subscriberId
	Key          string // a substring of the topic key; "" for all
}

// TopicLister pages topics and subscriptions; more says whether another
// item lies beyond the page in its direction; total counts every match up
// to TotalCountCap.
type TopicLister interface {
	TopicList(ctx context.Context, p *TopicListParams) (topics []Topic, more bool, total int, err error)
	TopicSubscriptionList(ctx context.Context, p *TopicSubscriptionListParams) (subs []TopicSubscription, more bool, total int, err error)
	// SubscriberTopicList pages a subscriber's subscriptions (ErrNotFound for an unknown subscriber).
	SubscriberTopicList(ctx context.Context, p *SubscriberTopicListParams) (subs []TopicSubscription, more bool, total int, err error)
}
