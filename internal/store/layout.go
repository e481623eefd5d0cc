package store

import (
	"context"
	"time"
)

// Layout is an e-mail layout: the HTML that wraps the body of the e-mail
// steps that name it (its Key) in their controls' layoutId.
type Layout struct {
	ID             string
	OrganizationID string
	EnvironmentID  string
	Key            string // the client's layoutId
	Name           string
	// IsDefault marks the environment's default layout (at most one).
	IsDefault            bool
	IsTranslationEnabled bool
	// ControlValues are the layout's controls, `{"email": {"body", "editorType"}}`
	// (nil: none set).
	ControlValues JSON
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// LayoutListParams pages layouts.
type LayoutListParams struct {
	Scope
	Offset, Limit int
	// OrderBy is createdAt, updatedAt or name; Desc orders descending.
	OrderBy string
	Desc    bool
	// Query is a case-insensitive substring of the name or the layoutId.
	Query string
}

// LayoutDeleteParams names the layout to delete.
type LayoutDeleteParams struct {
	Scope
	ID  string
	Now time.Time
}

// LayoutUse is a workflow with an e-mail step that names a layout.
type LayoutUse struct {
	WorkflowKey string
	Name        string
}

// Layouts keeps e-mail layouts.
type Layouts interface {
	// LayoutCreate inserts l; it becomes the environment's default (l.IsDefault
	// set) when the environment has none. A taken Key is ErrConflict.
	LayoutCreate(ctx context.Context, l *Layout) error
	// LayoutGet finds a layout by its _id or its Key.
	LayoutGet(ctx context.Context, scope Scope, idOrKey string) (Layout, error)
	LayoutList(ctx context.Context, p *LayoutListParams) ([]Layout, int, error)
	// LayoutUpdate writes l's Name, IsTranslationEnabled, ControlValues and
	// UpdatedAt (found by ID and scope).
	LayoutUpdate(ctx context.Context, l *Layout) error
	// LayoutDelete deletes a layout that is not the default (the default is
	// ErrConflict) and, in the same transaction, its translations, and
	// removes its Key from the layoutId of the environment's workflow steps
	// that name it.
	LayoutDelete(ctx context.Context, p *LayoutDeleteParams) error
	// LayoutUsage lists the environment's workflows with a step whose
	// controls' layoutId is key, by name.
	LayoutUsage(ctx context.Context, scope Scope, key string) ([]LayoutUse, error)
}
