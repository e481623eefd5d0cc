package store

import (
	"context"
	"errors"
	"time"
)

// BridgeSyncParams replaces an environment's synced workflows with the ones
// its Novu Framework app ("bridge") lists now.
type BridgeSyncParams struct {
	Scope
	// BridgeURL is kept as the environment's bridge.
	BridgeURL string
	// Workflows are as discovered, in discovery order: Key, Name,
	// Description, Tags, PayloadSchema and Steps (StepID, Name, Type,
	// ControlSchema). IDs, control values and the rest are the store's.
	Workflows []Workflow
	Now       time.Time
}

// ErrMadeElsewhere: a discovered workflowId is a workflow made through the
// API or the dashboard, which a sync never replaces; Key names it.
type ErrMadeElsewhere struct{ Key string }

func (e *ErrMadeElsewhere) Error() string {
	return "workflow " + e.Key + " was made through the API or the dashboard"
}

// IsMadeElsewhere reports whether err is an *ErrMadeElsewhere, and which.
func IsMadeElsewhere(err error) (*ErrMadeElsewhere, bool) {
	var e *ErrMadeElsewhere
	ok := errors.As(err, &e)
	return e, ok
}

// Bridges keeps what environments synced from their bridges.
type Bridges interface {
	// BridgeSync, atomically: refuses (*ErrMadeElsewhere, nothing written)
	// a discovered workflowId held by a workflow not synced from a bridge;
	// upserts each discovered workflow by workflowId, keeping its _id and,
	// for each step whose stepId stays, the step's _id and control values;
	// deletes the environment's synced workflows no longer listed; keeps
	// the bridge URL. It returns the synced workflows as stored.
	BridgeSync(ctx context.Context, p *BridgeSyncParams) ([]Workflow, error)
}
