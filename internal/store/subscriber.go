package store

import (
	"context"
	"time"
)

// Subscriber is a notification recipient.
type Subscriber struct {
	ID             string
	OrganizationID string
	EnvironmentID  string
	SubscriberID   string
	FirstName      *string
	LastName       *string
	Email          *string
	Phone          *string
	Avatar         *string
	Locale         *string
	Timezone       *string
	Data           JSON // nil when null
	Channels       []ChannelSettings
	IsOnline       *bool
	LastOnlineAt   *time.Time
	Version        int64
	Deleted        bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// ChannelSettings are a subscriber's credentials for one integration.
type ChannelSettings struct {
	ProviderID            string             `json:"providerId"`
	IntegrationIdentifier string             `json:"integrationIdentifier,omitempty"`
	IntegrationID         string             `json:"_integrationId"`
	Credentials           ChannelCredentials `json:"credentials"`
}

// ChannelCredentials are the provider credentials of one subscriber channel.
type ChannelCredentials struct {
	WebhookURL   string   `json:"webhookUrl,omitempty"`
	Channel      string   `json:"channel,omitempty"`
	DeviceTokens []string `json:"deviceTokens,omitempty"`
	AlertUID     string   `json:"alertUid,omitempty"`
	Title        string   `json:"title,omitempty"`
	ImageURL     string   `json:"imageUrl,omitempty"`
	State        string   `json:"state,omitempty"`
	ExternalURL  string   `json:"externalUrl,omitempty"`
}

// Field is a subscriber attribute in an upsert: Set says it was sent; a nil
// Value with Set clears it.
type Field struct {
	Set   bool
	Value *string
}

// SubscriberUpsertParams creates a subscriber, or updates the sent fields of
// an existing one.
type SubscriberUpsertParams struct {
	Scope
	SubscriberID string
	FirstName    Field
	LastName     Field
	Email        Field
	Phone        Field
	Avatar       Field
	Locale       Field
	Timezone     Field
	DataSet      bool
	Data         JSON // nil with DataSet clears
	// FailIfExists makes the upsert return ErrConflict instead of updating.
	FailIfExists bool
	// UpdateOnly makes it return ErrNotFound instead of creating.
	UpdateOnly bool
	Now        time.Time
}

// Apply returns s with the fields the upsert sets: what the subscriber will
// be once the upsert is written.
func (p *SubscriberUpsertParams) Apply(s Subscriber) Subscriber {
	s.SubscriberID = p.SubscriberID
	for _, f := range []struct {
		in  Field
		out **string
	}{{p.FirstName, &s.FirstName}, {p.LastName, &s.LastName}, {p.Email, &s.Email}, {p.Phone, &s.Phone},
		{p.Avatar, &s.Avatar}, {p.Locale, &s.Locale}, {p.Timezone, &s.Timezone}} {
		if f.in.Set {
			*f.out = f.in.Value
		}
	}
	if p.DataSet {
		s.Data = p.Data
	}
	return s
}

// SubscriberOrder is a sort key of subscriber search.
type SubscriberOrder string

// The sort keys.
const (
	OrderByID        SubscriberOrder = "_id"
	OrderByCreatedAt SubscriberOrder = "createdAt"
	OrderByUpdatedAt SubscriberOrder = "updatedAt"
)

// Cursor is a position in a sorted subscriber listing.
type Cursor struct {
	Order SubscriberOrder
	Key   int64 // the time in milliseconds for time orders
	ID    string
}

// SubscriberSearchParams filters and pages subscribers.
type SubscriberSearchParams struct {
	Scope
	SubscriberID  *string // exact
	Email         *string // substring
	Phone         *string // substring
	Name          *string // substring of firstName + " " + lastName
	OrderBy       SubscriberOrder
	Descending    bool
	After         *Cursor
	Before        *Cursor
	IncludeCursor bool
	Limit         int
}

// SubscriberSearchResult is one page of a search.
type SubscriberSearchResult struct {
	Subscribers      []Subscriber
	Next, Previous   *Cursor
	TotalCount       int
	TotalCountCapped bool
}

// TotalCountCap is where search stops counting.
const TotalCountCap = 50000

// ChannelUpdate changes the credentials a subscriber holds for one integration.
type ChannelUpdate struct {
	Scope
	SubscriberID string
	Channel      ChannelSettings
	// Replace replaces the entry's credentials (device tokens included)
	// instead of merging sent fields and appending device tokens.
	Replace bool
	// MaxDeviceTokens bounds the tokens of one channel; more is ErrTooManyTokens.
	MaxDeviceTokens int
	Now             time.Time
}

// SubscriberChannelDeleteParams removes every channel entry of a provider
// from a subscriber.
type SubscriberChannelDeleteParams struct {
	Scope
	SubscriberID string
	ProviderID   string
	Now          time.Time
}

// SubscriberTokensRemoveParams removes device tokens from the channel entry
// of one integration of a subscriber.
type SubscriberTokensRemoveParams struct {
	Scope
	SubscriberID  string
	IntegrationID string
	Tokens        []string
	Now           time.Time
}

// ErrTooManyTokens: a channel would hold more device tokens than allowed.
var ErrTooManyTokens = errorString("too many device tokens")

type errorString string

func (e errorString) Error() string { return string(e) }

// SubscriberBulkUpsertParams creates or updates many subscribers at once.
type SubscriberBulkUpsertParams struct {
	Scope
	// Items are upserts by subscriberId, in request order; their Scope,
	// FailIfExists, UpdateOnly and Now are ignored. A subscriberId may come
	// more than once: a later item changes what the earlier ones wrote.
	Items []SubscriberUpsertParams
	Now   time.Time
}

// SubscriberOnlineParams sets whether a subscriber is online.
type SubscriberOnlineParams struct {
	Scope
	SubscriberID string
	Online       bool
	Now          time.Time
}

// SubscriberDeleteParams names the subscriber to delete.
type SubscriberDeleteParams struct {
	Scope
	SubscriberID string
	Now          time.Time
}

// Subscribers keeps subscribers.
type Subscribers interface {
	// SubscriberUpsert creates or updates; created says which happened.
	SubscriberUpsert(ctx context.Context, p *SubscriberUpsertParams) (s Subscriber, created bool, err error)
	SubscriberGet(ctx context.Context, scope Scope, subscriberID string) (Subscriber, error)
	// SubscriberGetMany returns the existing subscribers among the ids, by subscriberId.
	SubscriberGetMany(ctx context.Context, scope Scope, subscriberIDs []string) (map[string]Subscriber, error)
	// SubscriberDelete soft-deletes; the subscriberId can then be created again.
	SubscriberDelete(ctx context.Context, p *SubscriberDeleteParams) error
	SubscriberSearch(ctx context.Context, p *SubscriberSearchParams) (SubscriberSearchResult, error)
	// SubscriberChannelUpdate merges or replaces one channel entry atomically.
	SubscriberChannelUpdate(ctx context.Context, p *ChannelUpdate) (Subscriber, error)
	// SubscriberChannelDelete removes every entry of a provider.
	SubscriberChannelDelete(ctx context.Context, p *SubscriberChannelDeleteParams) (Subscriber, error)
	// SubscriberTokensRemove removes device tokens from the channel entry of
	// one integration of a subscriber; it reports how many went.
	SubscriberTokensRemove(ctx context.Context, p *SubscriberTokensRemoveParams) (int, error)
	// SubscriberBulkUpsert applies every item, all or none; created[i] says
	// whether Items[i] created its subscriber (only the first item of a
	// subscriberId that did not exist does).
	SubscriberBulkUpsert(ctx context.Context, p *SubscriberBulkUpsertParams) (created []bool, err error)
	// SubscriberSetOnline sets isOnline; going offline also sets lastOnlineAt.
	SubscriberSetOnline(ctx context.Context, p *SubscriberOnlineParams) (Subscriber, error)
}
