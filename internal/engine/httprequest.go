package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/herald-notify/herald/internal/httpstep"
	"github.com/herald-notify/herald/internal/store"
)

// The HTTP request step (internal/httpstep): the rendered request is sent
// through the private-network guard, signed with the environment's API key
// as Novu signs it; the response body is the step's output, which later
// steps read as steps.<stepId>. A failure stops the workflow (later steps
// canceled) unless continueOnFailure. No retry, as in Novu.

// SigningKeyReader reads the API keys an environment signs with, oldest
// first (store.Tenancy).
type SigningKeyReader interface {
	APIKeySigningKeys(ctx context.Context, environmentID string) ([]string, error)
}

// httpRequest runs an http_request step from its rendered controls.
func (e *Engine) httpRequest(ctx context.Context, o store.JobOutcome, c store.Claimed, ctl map[string]any,
	b *batchIntegrations) store.JobOutcome {
	key, err := b.signingKey(ctx, e, c.Job.EnvironmentID)
	if err != nil {
		return e.retry(o, err)
	}
	res := e.http.Do(ctx, httpstep.Request{Controls: ctl, SigningKey: key, Now: e.now()})
	var raw *string
	if res.Raw != "" {
		raw = &res.Raw
	}
	if res.Failure == "" {
		o.Status = store.JobCompleted
		o.Output, _ = json.Marshal(res.Output())
		o.Details = append(o.Details, e.detail(o, "Success", "Webhook", "HTTP request succeeded", raw))
		return o
	}
	o.Status, o.Error = store.JobFailed, res.Failure
	o.Output = store.JSON("{}")
	o.Details = append(o.Details, e.detail(o, "Failed", "Webhook", res.Failure, raw))
	if ctl["continueOnFailure"] != true {
		o.ContinueWorkflow, o.CancelRest = false, true
	}
	return o
}

// signingKey is the key an environment's requests are signed with — its
// oldest API key, "" when none can sign — read once per batch (b nil: read
// now).
func (b *batchIntegrations) signingKey(ctx context.Context, e *Engine, envID string) (string, error) {
	if b != nil {
		b.mu.Lock()
		defer b.mu.Unlock()
		if k, ok := b.keys[envID]; ok {
			return k, nil
		}
	}
	r, ok := e.o.Store.(SigningKeyReader)
	if !ok {
		return "", nil
	}
	keys, err := r.APIKeySigningKeys(ctx, envID)
	if err != nil {
		return "", fmt.Errorf("reading the environment's API keys: %w", err)
	}
	key := ""
	if len(keys) > 0 {
		key = keys[0]
	}
	if b != nil {
		if b.keys == nil {
			b.keys = map[string]string{}
		}
		b.keys[envID] = key
	}
	return key, nil
}

// runsBeside says whether a claimed job waits on the network — a
// delivery, an HTTP request, any step of a workflow its bridge executes:
// such jobs run concurrently within a batch, beside the worker, under the
// batch's deadline.
func runsBeside(c store.Claimed) bool {
	if c.Job.Type == store.JobFanout {
		return false
	}
	return isDelivery(c.Job.Type) || c.Job.Type == "http_request" || c.Workflow.Origin == store.OriginBridge
}
