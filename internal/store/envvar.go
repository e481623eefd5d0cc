package store

import (
	"context"
	"time"
)

// EnvironmentVariable is an organization-wide key ({{env.KEY}} in
// templates) with a value per environment. The store seals a secret
// variable's values; they come back from it in the clear (the HTTP layer
// masks them).
type EnvironmentVariable struct {
	ID             string
	OrganizationID string
	Key            string
	Type           string
	IsSecret       bool
	Values         []EnvironmentVariableValue // by environment, in environment _id order
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// EnvironmentVariableValue is a variable's value in one environment.
type EnvironmentVariableValue struct {
	EnvironmentID string
	Value         string
}

// EnvironmentVariableCreateParams creates a variable of the scope's organization.
type EnvironmentVariableCreateParams struct {
	Scope
	Key      string
	Type     string
	IsSecret bool
	Values   []EnvironmentVariableValue
	Now      time.Time
}

// EnvironmentVariableUpdateParams changes a variable: nil fields are left
// as they are; Values are merged by environment (environments not named
// keep their value).
type EnvironmentVariableUpdateParams struct {
	Scope
	Key      string
	NewKey   *string
	Type     *string
	IsSecret *bool
	Values   []EnvironmentVariableValue
	Now      time.Time
}

// EnvironmentVariables keeps the organization's environment variables (the
// scope's organization; its environment is not a filter).
type EnvironmentVariables interface {
	// EnvironmentVariableCreate: an existing key is ErrConflict.
	EnvironmentVariableCreate(ctx context.Context, p *EnvironmentVariableCreateParams) (EnvironmentVariable, error)
	EnvironmentVariableGet(ctx context.Context, scope Scope, key string) (EnvironmentVariable, error)
	// EnvironmentVariableList returns the variables whose key contains
	// search, case-insensitively ("" for all), by key.
	EnvironmentVariableList(ctx context.Context, scope Scope, search string) ([]EnvironmentVariable, error)
	// EnvironmentVariableUpdate: an unknown key is ErrNotFound, a rename to
	// a key in use ErrConflict.
	EnvironmentVariableUpdate(ctx context.Context, p *EnvironmentVariableUpdateParams) (EnvironmentVariable, error)
	EnvironmentVariableDelete(ctx context.Context, scope Scope, key string) error
	// EnvironmentVariableValues returns, in the clear, the value of every
	// variable that has one in the environment, by key: what {{env.KEY}}
	// renders in a workflow run there.
	EnvironmentVariableValues(ctx context.Context, environmentID string) (map[string]string, error)
}
