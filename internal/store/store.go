// Package store defines Herald's persistence boundary: the records it keeps,
// the parameters of each operation, and the Store interface that the SQLite
// and PostgreSQL implementations (package sqlstore) both satisfy. Every
// operation on tenant data takes the environment it is scoped to: its
// parameters are an XxxParams struct, the Scope first and the caller's
// clock (Now) last when it writes or settles anything by time; only a read
// by one key, or a delete that needs no clock, takes (ctx, scope, key).
// Worker calls, which span environments, take their clock last. The store
// reads no clock of its own.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Sentinel errors. The HTTP layer maps them to status codes in one place.
var (
	// ErrNotFound: the record does not exist in the caller's scope.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a uniqueness rule would be broken.
	ErrConflict = errors.New("conflict")
	// ErrUnavailable: the database did not answer in time or the
	// connection to it failed; the operation may or may not have happened.
	ErrUnavailable = errors.New("the database is unreachable")
)

// Store is everything Herald persists.
type Store interface {
	Tenancy
	Subscribers
	Integrations
	Idempotency
	Workflows
	Pipeline
	Steps
	Bridges
	Inbox
	InboxState
	Topics
	Preferences
	Realtime
	Stats
	Layouts
	Translations
	Promotion
	EnvironmentVariables
	Contexts
	Users
	Webhooks
	Analytics
	DeliveryEvents
	// Ping reports whether the database answers.
	Ping(ctx context.Context) error
	// Close releases the connections.
	Close() error
}

// Organization owns environments.
type Organization struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

// Environment is the tenant boundary: subscribers, messages and
// notifications never cross it.
type Environment struct {
	ID             string
	OrganizationID string
	Name           string
	// Identifier is the public application identifier the inbox clients
	// open sessions with (made at creation when empty).
	Identifier string
	// InboxHMACDisabled lets inbox sessions open without a subscriberHash
	// (local development only; off by default).
	InboxHMACDisabled bool
	// ParentID is the environment this one was made from ("" for none):
	// production's is development.
	ParentID string
	// Color is the colour the dashboard shows it in ("" for none).
	Color string
	// BridgeURL is the Novu Framework app ("bridge") its code-first
	// workflows were last synced from ("" for none).
	BridgeURL string
	CreatedAt time.Time
}

// Type is the type the established service gives its two environments,
// "dev" and "prod"; any other environment has none ("").
func (e Environment) Type() string {
	switch e.Name {
	case "development":
		return "dev"
	case "production":
		return "prod"
	}
	return ""
}

// Member is a person of an organization (a dashboard user).
type Member struct {
	ID             string
	OrganizationID string
	Email          string
	Role           string
	CreatedAt      time.Time
}

// APIKey is a stored API key: its hash, and a copy of the key encrypted
// with the server secret that checks inbox subscriberHash values.
type APIKey struct {
	ID            string
	EnvironmentID string
	Hash          string
	Prefix        string // first characters, to recognise a key in listings
	// Key is the key in the clear, given at creation so that the store keeps
	// an encrypted copy; it is never read back.
	Key string
	// Sealed says the store keeps an encrypted copy (keys created before
	// migration 0013 have none until APIKeyKeepCopy).
	Sealed    bool
	CreatedAt time.Time
	RevokedAt *time.Time
}

// EnvironmentUpdateParams changes an environment's settings; nil fields
// are left as they are.
type EnvironmentUpdateParams struct {
	ID                string
	InboxHMACDisabled *bool
	Name              *string
	Identifier        *string
	ParentID          *string
	Color             *string
}

// APIKeyRevokeParams names the key to revoke in its environment.
type APIKeyRevokeParams struct {
	EnvironmentID string
	ID            string
	Now           time.Time
}

// BootstrapParams describes the first organization created on an empty store.
type BootstrapParams struct {
	Organization Organization
	Owner        Member
	Environments []Environment
	APIKeys      []APIKey
	Integrations []Integration
}

// Tenancy holds organizations, environments, members and API keys.
type Tenancy interface {
	// Bootstrap creates the first organization and everything in p, atomically,
	// unless an organization exists already; it reports whether it did.
	Bootstrap(ctx context.Context, p *BootstrapParams) (bool, error)
	// EnvironmentGetByName returns the environment of the first organization with that name.
	EnvironmentGetByName(ctx context.Context, name string) (Environment, error)
	EnvironmentGetByID(ctx context.Context, id string) (Environment, error)
	// EnvironmentGetByIdentifier returns the environment of a public
	// application identifier.
	EnvironmentGetByIdentifier(ctx context.Context, identifier string) (Environment, error)
	// EnvironmentList returns an organization's environments, oldest first.
	EnvironmentList(ctx context.Context, organizationID string) ([]Environment, error)
	EnvironmentUpdate(ctx context.Context, p *EnvironmentUpdateParams) (Environment, error)
	// MemberGetOwner returns the owner of an organization.
	MemberGetOwner(ctx context.Context, organizationID string) (Member, error)
	APIKeyCreate(ctx context.Context, k *APIKey) error
	// APIKeyGetByHash returns the unrevoked key with that hash and its environment.
	APIKeyGetByHash(ctx context.Context, hash string) (APIKey, Environment, error)
	APIKeyList(ctx context.Context, environmentID string) ([]APIKey, error)
	APIKeyRevoke(ctx context.Context, p *APIKeyRevokeParams) error
	// APIKeyKeepCopy keeps an encrypted copy of a key that has none (one
	// created before migration 0013, presented in the clear since).
	APIKeyKeepCopy(ctx context.Context, id, key string) error
	// APIKeySigningKeys returns, in the clear, the environment's unrevoked
	// keys of which the store keeps a copy: the keys a subscriberHash may be
	// signed with.
	APIKeySigningKeys(ctx context.Context, environmentID string) ([]string, error)
}

// Scope names the environment (and its organization) an operation runs in.
type Scope struct {
	OrganizationID string
	EnvironmentID  string
}

// JSON is a raw JSON value as stored (nil means absent/null).
type JSON = json.RawMessage

// Retention deletes what has outlived its retention, a bounded batch per
// call, each batch in its own transaction (internal/retention runs the
// batches; docs/operations.md, "Retention").
type Retention interface {
	// RetentionActivityPurge deletes, among the triggers (notifications)
	// created before Before and after the cursor, the first Limit or so
	// (all those created in the same millisecond as the last go together)
	// whose jobs are all final, with their jobs, execution details and
	// non-in-app messages; their in-app messages stay.
	RetentionActivityPurge(ctx context.Context, p *RetentionPurgeParams) (RetentionPurged, error)
	// RetentionTransactionPurge deletes, among the transactionId
	// reservations created before Before and after the cursor, the first
	// Limit or so that no trigger and no unfinished job holds, with the
	// finished jobs left of them (a fan-out's).
	RetentionTransactionPurge(ctx context.Context, p *RetentionPurgeParams) (RetentionPurged, error)
	// RetentionInboxPurge deletes up to Limit in-app messages created before
	// Before, in any state, and their inbox counts with them.
	RetentionInboxPurge(ctx context.Context, p *RetentionPurgeParams) (RetentionPurged, error)
	// RetentionLock lets one process purge at a time: ok is false while
	// another holds it; release ends the hold.
	RetentionLock(ctx context.Context) (release func(), ok bool, err error)
	// StoreSize is the database's size in bytes.
	StoreSize(ctx context.Context) (int64, error)
}

// RetentionPurgeParams bound one batch of a purge.
type RetentionPurgeParams struct {
	// Before: only rows created before it are deleted.
	Before time.Time
	// Limit bounds the rows a batch looks at.
	Limit int
	// After is the previous batch's Next ("" for the first batch of a run).
	After string
}

// RetentionPurged is what one batch deleted, by kind, and where the next
// batch starts.
type RetentionPurged struct {
	Notifications, Jobs, ExecutionDetails, Messages, Transactions, InboxMessages int64
	// Next is the cursor of the next batch; Done says nothing is left
	// to look at before Before.
	Next string
	Done bool
	// Took is how long the batch's statements took (not its wait for the
	// writer).
	Took time.Duration
}
