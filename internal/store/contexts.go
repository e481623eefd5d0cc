package store

import (
	"context"
	"time"
)

// Context is a typed entity of an environment (a tenant, a workspace) that
// triggers name as {type: id} and templates read as context.<type>.
type Context struct {
	ID             string // internal _id (the listing's cursor)
	OrganizationID string
	EnvironmentID  string
	Type           string
	ContextID      string // the client's id, unique per type
	Data           JSON   // a JSON object
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Key is the context's "type:id".
func (c Context) Key() string { return c.Type + ":" + c.ContextID }

// ContextRef names a context, with the data to create it with when missing.
type ContextRef struct {
	Type, ContextID string
	Data            JSON // nil: {}
}

// ContextCreateParams creates a context; an existing type:id is ErrConflict.
type ContextCreateParams struct {
	Scope
	ContextRef
	Now time.Time
}

// ContextUpdateParams replaces a context's data.
type ContextUpdateParams struct {
	Scope
	ContextRef
	Now time.Time
}

// ContextListParams pages the contexts of an environment in _id (creation) order.
type ContextListParams struct {
	Scope
	TopicPage
	Type      string // exact; "" for all
	ContextID string // exact, in every type; "" for all
	Search    string // a substring of "type:id" (lowercase); "" for all
}

// ContextResolveParams names a trigger's contexts.
type ContextResolveParams struct {
	Scope
	Refs []ContextRef
	Now  time.Time
}

// Contexts keeps an environment's contexts.
type Contexts interface {
	ContextCreate(ctx context.Context, p *ContextCreateParams) (Context, error)
	ContextGet(ctx context.Context, scope Scope, typ, contextID string) (Context, error)
	// ContextList returns a page, whether more follow in its direction, and
	// the count of every match up to TotalCountCap.
	ContextList(ctx context.Context, p *ContextListParams) (contexts []Context, more bool, total int, err error)
	ContextUpdate(ctx context.Context, p *ContextUpdateParams) (Context, error)
	ContextDelete(ctx context.Context, scope Scope, typ, contextID string) error
	// ContextResolve returns the trigger's contexts in the order of p.Refs:
	// each existing one as stored (the ref's data ignored), each missing one
	// created with the ref's data.
	ContextResolve(ctx context.Context, p *ContextResolveParams) ([]Context, error)
}
