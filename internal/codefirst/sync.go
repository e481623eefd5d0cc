// Package codefirst runs code-first workflows — the ones a Novu Framework
// app (its "bridge", internal/bridge) declares in code: it syncs an
// environment's workflows from the bridge's discover answer into the store
// (`npx novu sync`, POST /v1/bridge/sync), as Novu's sync usecase does.
package codefirst

import (
	"context"
	"encoding/json"
	"time"

	"github.com/herald-notify/herald/internal/bridge"
	"github.com/herald-notify/herald/internal/store"
)

// Discoverer asks a bridge for its workflows (*bridge.Client).
type Discoverer interface {
	Discover(ctx context.Context, bridgeURL, secretKey string) (*bridge.Discovery, error)
}

// SyncParams names the environment to sync and its bridge.
type SyncParams struct {
	store.Scope
	BridgeURL string
	// SecretKey signs the calls: the environment's API key, the app's
	// NOVU_SECRET_KEY.
	SecretKey string
	Now       time.Time
}

// Sync discovers the bridge's workflows and replaces the environment's
// synced workflows with them (store.Bridges.BridgeSync). A bridge that
// cannot be discovered (unreachable, another secret, a wrong answer) is a
// *bridge.Error and nothing changes; a workflowId made through the API is a
// *store.ErrMadeElsewhere and nothing changes.
func Sync(ctx context.Context, d Discoverer, st store.Bridges, p *SyncParams) ([]store.Workflow, error) {
	found, err := d.Discover(ctx, p.BridgeURL, p.SecretKey)
	if err != nil {
		return nil, err
	}
	wfs := make([]store.Workflow, 0, len(found.Workflows))
	for _, w := range found.Workflows {
		wfs = append(wfs, workflowOf(w))
	}
	return st.BridgeSync(ctx, &store.BridgeSyncParams{Scope: p.Scope, BridgeURL: p.BridgeURL, Workflows: wfs, Now: p.Now})
}

// workflowOf is a discovered workflow as the store keeps it: its name (the
// workflowId when it has none), description, tags, payload schema, and its
// steps in discovery order with their control schemas.
func workflowOf(w bridge.Workflow) store.Workflow {
	out := store.Workflow{Key: w.WorkflowID, Name: w.Name, Description: w.Description, Tags: w.Tags,
		PayloadSchema: jsonOrNil(w.PayloadSchema)}
	if out.Name == "" {
		out.Name = w.WorkflowID
	}
	for _, s := range w.Steps {
		out.Steps = append(out.Steps, store.Step{StepID: s.StepID, Name: s.StepID, Type: s.Type,
			ControlSchema: jsonOrNil(s.ControlsSchema)})
	}
	return out
}

// jsonOrNil keeps a schema, nil when absent or null.
func jsonOrNil(raw json.RawMessage) store.JSON {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return store.JSON(raw)
}
