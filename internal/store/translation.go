package store

import (
	"context"
	"time"
)

// Translation resource types.
const (
	TranslationWorkflow = "workflow"
	TranslationLayout   = "layout"
)

// DefaultLocale is an organization's default locale until it sets another.
const DefaultLocale = "en_US"

// Translation is the content of one resource (a workflow or a layout, named
// by its client identifier) in one locale.
type Translation struct {
	ResourceType string
	ResourceID   string
	Locale       string
	// Content is a JSON object; nil in listings that leave it out.
	Content   JSON
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TranslationKey names one resource's translations in a scope; Locale ""
// names every locale of the resource.
type TranslationKey struct {
	Scope
	ResourceType string
	ResourceID   string
	Locale       string
}

// TranslationUpsertParams creates or replaces one locale of a resource.
type TranslationUpsertParams struct {
	TranslationKey
	Content JSON
	Now     time.Time
}

// TranslationSet is what {{t.key}} of one resource resolves against: the
// content in the wanted locale and in the organization's default locale
// (nil when there is none).
type TranslationSet struct {
	Locale        JSON
	DefaultLocale string
	Default       JSON
	// Any says the resource has a translation in some locale.
	Any bool
}

// Translations keeps the translations of workflows and layouts.
type Translations interface {
	// TranslationUpsert creates or replaces the content of one locale.
	TranslationUpsert(ctx context.Context, p *TranslationUpsertParams) (Translation, error)
	// TranslationGet returns one locale of a resource.
	TranslationGet(ctx context.Context, k *TranslationKey) (Translation, error)
	// TranslationDelete deletes one locale of a resource, or every locale
	// when k.Locale is ""; ErrNotFound when there was none.
	TranslationDelete(ctx context.Context, k *TranslationKey) error
	// TranslationMove gives a resource's translations to its new
	// identifier (k.ResourceID → to), replacing any the new one had.
	TranslationMove(ctx context.Context, k *TranslationKey, to string) error
	// TranslationLocales lists a resource's translations without their
	// content, by locale.
	TranslationLocales(ctx context.Context, k *TranslationKey) ([]Translation, error)
	// TranslationListLocale lists every translation of the scope in one
	// locale (k.Locale), by resource type and id; k.ResourceType and
	// k.ResourceID are ignored.
	TranslationListLocale(ctx context.Context, k *TranslationKey) ([]Translation, error)
	// TranslationDefaultLocale returns the organization's default locale.
	TranslationDefaultLocale(ctx context.Context, scope Scope) (string, error)
	// TranslationSetFor reads, in one statement, what {{t.key}} of the
	// resource resolves against for k.Locale ("" for none).
	TranslationSetFor(ctx context.Context, k *TranslationKey) (TranslationSet, error)
}
