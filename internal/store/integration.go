package store

import (
	"context"
	"time"
)

// Integration is a configured delivery provider of an environment.
type Integration struct {
	ID             string
	OrganizationID string
	EnvironmentID  string
	ProviderID     string
	Channel        string // empty for agent integrations
	Kind           string
	Name           string
	Identifier     string
	// Credentials is the provider's plaintext credentials JSON object; the
	// store encrypts it at rest and never keeps it in the clear.
	Credentials JSON
	// Configurations is the plaintext configurations JSON object; its
	// secret fields (IsSecretConfiguration) are encrypted at rest like
	// Credentials, its other fields kept as they are.
	Configurations JSON
	Conditions     JSON
	Active         bool
	Primary        bool
	Deleted        bool
	DeletedAt      *time.Time
	DeletedBy      string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// secretConfigurations are the configuration fields that hold secrets.
var secretConfigurations = []string{"inboundWebhookSigningKey"}

// IsSecretConfiguration reports whether the configuration field name holds
// a secret: encrypted at rest, shown only to session (dashboard) callers.
func IsSecretConfiguration(name string) bool {
	for _, s := range secretConfigurations {
		if name == s {
			return true
		}
	}
	return false
}

// IntegrationListParams selects integrations.
type IntegrationListParams struct {
	OrganizationID string
	EnvironmentID  string // empty: the whole organization
	ActiveOnly     bool
	ProviderID     string
}

// IntegrationDeleteParams deletes an integration on behalf of a member.
type IntegrationDeleteParams struct {
	Scope
	ID        string
	DeletedBy string
	Now       time.Time
}

// IntegrationSetPrimaryParams names the integration to make primary.
type IntegrationSetPrimaryParams struct {
	Scope
	ID  string
	Now time.Time
}

// IntegrationForCredentialsParams names the provider (and, when set, the
// identifier of the integration) that subscriber credentials are for.
type IntegrationForCredentialsParams struct {
	Scope
	ProviderID string
	Identifier string
}

// Integrations keeps integrations.
type Integrations interface {
	// IntegrationCreate inserts; a taken identifier is ErrConflict. An active
	// integration becomes primary when its channel has no primary yet (the
	// one it replaces is updated at in.UpdatedAt).
	IntegrationCreate(ctx context.Context, in *Integration) error
	IntegrationGet(ctx context.Context, scope Scope, id string) (Integration, error)
	IntegrationList(ctx context.Context, p *IntegrationListParams) ([]Integration, error)
	// IntegrationUpdate writes every field of in (found by ID and scope)
	// but CreatedAt and Primary, which it derives: kept as stored, dropped
	// when inactive, gained when active and the channel has no primary.
	// in.UpdatedAt is the time of the change: the caller sets it.
	IntegrationUpdate(ctx context.Context, in *Integration) error
	IntegrationDelete(ctx context.Context, p *IntegrationDeleteParams) error
	// IntegrationSetPrimary makes it the active primary of its channel.
	IntegrationSetPrimary(ctx context.Context, p *IntegrationSetPrimaryParams) (Integration, error)
	// IntegrationForCredentials picks the integration that subscriber
	// credentials of the provider attach to: the active one with the
	// identifier when given, else the primary, else the newest.
	IntegrationForCredentials(ctx context.Context, p *IntegrationForCredentialsParams) (Integration, error)
}

// IdempotencyRecord is the stored outcome of a request with an idempotency key.
type IdempotencyRecord struct {
	RequestHash string
	Done        bool
	Status      int
	Body        []byte
}

// IdempotencyBeginParams claims an idempotency key for a request.
type IdempotencyBeginParams struct {
	Scope
	Key         string
	RequestHash string
	Now         time.Time
}

// IdempotencyFinishParams stores the outcome of a request that claimed Key.
type IdempotencyFinishParams struct {
	Scope
	Key    string
	Status int
	Body   []byte
}

// Idempotency keeps idempotency keys, per environment.
type Idempotency interface {
	// IdempotencyBegin claims a key for a request. started is true when the
	// caller owns it and must Finish or Abandon it; otherwise rec is the
	// stored record (running or done).
	IdempotencyBegin(ctx context.Context, p *IdempotencyBeginParams) (rec IdempotencyRecord, started bool, err error)
	IdempotencyFinish(ctx context.Context, p *IdempotencyFinishParams) error
	// IdempotencyAbandon releases a key its request claimed, for a retry.
	IdempotencyAbandon(ctx context.Context, scope Scope, key string) error
}
