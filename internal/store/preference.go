package store

import (
	"context"
	"time"
)

// SubscriberPreference is a subscriber's own choice of channels: global
// (WorkflowID "") or for one workflow. Channels holds only the channels the
// subscriber set (channel → on); the others follow the defaults.
type SubscriberPreference struct {
	ID            string
	EnvironmentID string
	SubscriberID  string // the subscriber's _id
	WorkflowID    string // the workflow's _id; "" for the global preference
	Channels      map[string]bool
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// SubscriberPreferences are everything a subscriber chose.
type SubscriberPreferences struct {
	Subscriber Subscriber
	// Global is nil while the subscriber never set a global preference.
	Global *SubscriberPreference
	// Workflows are the workflow-level preferences, by workflow _id.
	Workflows map[string]SubscriberPreference
}

// ChannelChoices are what running a step needs of a subscriber's
// preferences: the global channels set and those set for the step's
// workflow (nil when none).
type ChannelChoices struct {
	Global, Workflow map[string]bool
}

// SubscriberPreferenceGetParams names a subscriber by its client subscriberId.
type SubscriberPreferenceGetParams struct {
	Scope
	SubscriberID string
}

// PreferenceChange sets channels of one preference; the channels it does
// not name keep their state.
type PreferenceChange struct {
	WorkflowID string // the workflow's _id; "" for the global preference
	Channels   map[string]bool
}

// SubscriberPreferenceUpdateParams applies changes, in order, to a
// subscriber's preferences.
type SubscriberPreferenceUpdateParams struct {
	Scope
	SubscriberID string // the client's subscriberId
	Changes      []PreferenceChange
	Now          time.Time
}

// ChannelChoicesParams names the subscribers (by _id) and the workflow
// (its _id) whose channel choices are read.
type ChannelChoicesParams struct {
	Scope
	SubscriberIDs []string
	WorkflowID    string
}

// Preferences keeps subscribers' channel preferences.
type Preferences interface {
	// SubscriberPreferenceGet returns a subscriber's preferences
	// (ErrNotFound for an unknown subscriber).
	SubscriberPreferenceGet(ctx context.Context, p *SubscriberPreferenceGetParams) (SubscriberPreferences, error)
	// SubscriberPreferenceUpdate applies the changes in one transaction and
	// returns the preferences after them. Setting a global channel clears
	// that channel from the subscriber's workflow-level preferences, so the
	// latest global choice holds everywhere until a workflow is set again.
	SubscriberPreferenceUpdate(ctx context.Context, p *SubscriberPreferenceUpdateParams) (SubscriberPreferences, error)
	// ChannelChoices returns, by subscriber _id, the channel choices that
	// apply to a workflow's steps (global and workflow-level), as a worker
	// reads them for a claimed job; subscribers without any are left out.
	ChannelChoices(ctx context.Context, p *ChannelChoicesParams) (map[string]ChannelChoices, error)
}
