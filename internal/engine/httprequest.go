package engine

import (
	"context"
	"encoding/json"

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
func (e *Engine) httpRequest(ctx context.Context, o store.JobOutcome, c store.Claimed, ctl map[string]any) store.JobOutcome {
	key := ""
	if r, ok := e.o.Store.(SigningKeyReader); ok {
		keys, err := r.APIKeySigningKeys(ctx, c.Job.EnvironmentID)
		if err != nil {
			return e.retry(o, err)
		}
		if len(keys) > 0 {
			key = keys[0]
		}
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
