package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/herald-notify/herald/internal/bridge"
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/store"
)

// Steps of workflows synced from a Novu Framework app (store.OriginBridge,
// internal/codefirst) run in their app, as Novu's execute-bridge-job does:
// each job POSTs ?action=execute to the environment's bridge with the
// trigger payload, the step's raw control values, the subscriber, the
// contexts, the environment and the state of every earlier job of the run,
// signed with the environment's oldest API key; the answer's outputs are
// the step's content (nothing is rendered here) and go through the same
// message, delivery, digest and delay paths as a local step's rendered
// controls. A bridge that fails (after the client's retries) fails the job
// alone: later steps still run and see it failed.

// Texts of the bridge steps' execution details.
const (
	bridgeFailed  = "Bridge execution failed"
	bridgeSkipped = "Step skipped: the bridge's step asked to skip it (options.skip)"
	bridgeNoURL   = "The environment has no bridge URL: sync the Novu Framework app again"
)

// bridgeTarget is where and how an environment's bridge is called.
type bridgeTarget struct {
	url, key string
	env      bridge.Env
}

// bridgeTarget reads the environment's bridge URL, name and signing key
// once per batch.
func (b *batchIntegrations) bridgeTarget(ctx context.Context, e *Engine, envID string) (bridgeTarget, error) {
	key, err := b.signingKey(ctx, e, envID)
	if err != nil {
		return bridgeTarget{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if t, ok := b.bridges[envID]; ok {
		return t, nil
	}
	if e.envs == nil {
		return bridgeTarget{}, errors.New("the engine cannot read environments")
	}
	env, err := e.envs.EnvironmentGetByID(ctx, envID)
	if err != nil {
		return bridgeTarget{}, fmt.Errorf("reading the environment's bridge: %w", err)
	}
	t := bridgeTarget{url: env.BridgeURL, env: bridge.Env{Name: env.Name, Type: env.Type()}, key: key}
	if b.bridges == nil {
		b.bridges = map[string]bridgeTarget{}
	}
	b.bridges[envID] = t
	return t, nil
}

// runBridge runs one job of a synced workflow: the bridge executes the
// step, and its outputs take the place of the rendered controls.
func (e *Engine) runBridge(ctx context.Context, o store.JobOutcome, c store.Claimed, step *store.Step,
	b *batchIntegrations) (store.JobOutcome, *store.DigestJoinParams) {
	if off, why := turnedOff(c, step.Type); off {
		o.Status = store.JobSkipped
		o.Details = append(o.Details, e.detail(o, "Success", "Internal", why, nil))
		return o, nil
	}
	t, err := b.bridgeTarget(ctx, e, c.Job.EnvironmentID)
	if err != nil {
		return e.retry(o, err), nil
	}
	if t.url == "" {
		return e.fail(o, "Internal", bridgeNoURL), nil
	}
	req, err := e.bridgeRequest(ctx, c, step, t.env)
	if err != nil {
		return e.retry(o, err), nil
	}
	res, err := e.o.Bridge.Execute(ctx, t.url, t.key, req)
	if err != nil {
		raw := err.Error()
		var be *bridge.Error
		if errors.As(err, &be) {
			raw = be.Raw()
		}
		o.Status, o.Error = store.JobFailed, bridgeFailed+": "+err.Error()
		o.Details = append(o.Details, e.detail(o, "Failed", "Internal", bridgeFailed, &raw))
		return o, nil
	}
	if res.Skip {
		raw := `{"skip":true}`
		o.Status = store.JobSkipped
		o.Details = append(o.Details, e.detail(o, "Success", "Internal", bridgeSkipped, &raw))
		return o, nil
	}
	ctl := res.Outputs
	switch step.Type {
	case "in_app":
		return e.inApp(o, c, ctl), nil
	case "email":
		// The body is the e-mail's HTML as the app wrote it: no layout.
		c.Notification.Overrides = withBridgeProviders(c.Notification.Overrides, step.StepID, res.Providers, e.o.Delivery.Registry)
		return e.deliver(ctx, o, c, step, map[string]any{"subject": ctl["subject"], "body": ctl["body"]}, b), nil
	case "sms", "chat", "push":
		c.Notification.Overrides = withBridgeProviders(c.Notification.Overrides, step.StepID, res.Providers, e.o.Delivery.Registry)
		return e.deliver(ctx, o, c, step, ctl, b), nil
	case "digest":
		return e.digest(o, c, ctl)
	case "delay":
		return e.delay(o, c, ctl), nil
	case "custom":
		o.Status, o.Output = store.JobCompleted, store.JSON(res.RawOutputs)
		o.Details = append(o.Details, e.detail(o, "Success", "Internal", "Bridge execution succeeded", nil))
		return o, nil
	default:
		return e.fail(o, "Internal", fmt.Sprintf("Steps of type %s are not supported in bridges: the step did not run", step.Type)), nil
	}
}

// bridgeRequest is the execute request of a claimed job.
func (e *Engine) bridgeRequest(ctx context.Context, c store.Claimed, step *store.Step, env bridge.Env) (*bridge.ExecuteRequest, error) {
	state, err := e.bridgeState(ctx, c)
	if err != nil {
		return nil, err
	}
	controls := json.RawMessage("{}")
	if len(step.ControlValues) > 0 {
		if controls, err = json.Marshal(step.ControlValues); err != nil {
			return nil, fmt.Errorf("encoding the step's control values: %w", err)
		}
	}
	return &bridge.ExecuteRequest{
		WorkflowID: c.Workflow.Key, StepID: step.StepID,
		Payload: json.RawMessage(c.Notification.Payload), Controls: controls, State: state,
		Subscriber: bridgeSubscriber(c.Subscriber), Context: json.RawMessage(c.Notification.Contexts), Env: env,
	}, nil
}

// bridgeSubscriber is the subscriber as the framework reads it: the fields
// it has.
func bridgeSubscriber(s store.Subscriber) json.RawMessage {
	out := map[string]any{"subscriberId": s.SubscriberID}
	eachSubscriberField(s, func(key, v string) { out[key] = v })
	if len(s.Data) > 0 && string(s.Data) != "null" {
		out["data"] = json.RawMessage(s.Data)
	}
	b, _ := json.Marshal(out)
	return b
}

// bridgeState is the state of every earlier job of the run, newest first
// (Novu's order; the framework looks entries up by stepId), computed now:
// an in-app message's seen and read as they are when this step runs.
func (e *Engine) bridgeState(ctx context.Context, c store.Claimed) ([]bridge.StepState, error) {
	var state []bridge.StepState
	err := e.earlierSteps(ctx, c, true, func(key string, res store.StepResult) {
		outputs, _ := json.Marshal(bridgeOutputs(res, c.Notification, e.now()))
		state = append(state, bridge.StepState{StepID: key, Outputs: outputs, Status: res.Status})
	})
	return state, err
}

// bridgeOutputs is an earlier step's result as the framework's result
// schema of its type has it, now: a delay's duration is the milliseconds
// since its job was created, as Novu computes it. A digest's events carry
// no id or time of their own in Herald's digest metadata: each gets the
// digest's notification id with its index, and that notification's time.
func bridgeOutputs(r store.StepResult, n store.Notification, now time.Time) map[string]any {
	switch r.Type {
	case "in_app":
		return stepOutput(r)
	case "digest":
		var d struct {
			Events []json.RawMessage `json:"events"`
		}
		_ = json.Unmarshal(r.Digest, &d)
		events := make([]any, len(d.Events))
		at := n.CreatedAt.UTC().Format(time.RFC3339Nano)
		for i, ev := range d.Events {
			events[i] = map[string]any{"id": fmt.Sprintf("%s-%d", n.ID, i), "time": at, "payload": ev}
		}
		return map[string]any{"events": events, "eventCount": len(events)}
	case "delay":
		if r.CreatedAt.IsZero() {
			return map[string]any{"duration": 0}
		}
		return map[string]any{"duration": max(0, now.Sub(r.CreatedAt).Milliseconds())}
	case "email", "sms", "chat", "push":
		return map[string]any{}
	}
	if m, ok := decodeJSON(r.Output, nil).(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// withBridgeProviders puts the bridge's provider overrides into the
// trigger's overrides as overrides.steps.<stepId>.providers.<providerId>,
// over what the trigger set there: the delivery merges the selected
// integration's entry into its provider's request.
func withBridgeProviders(raw store.JSON, stepID string, providers map[string]json.RawMessage, reg *provider.Registry) store.JSON {
	if len(providers) == 0 {
		return raw
	}
	ov := readOverrides(raw)
	if ov == nil {
		ov = overrides{}
	}
	steps, _ := ov["steps"].(map[string]any)
	if steps == nil {
		steps = map[string]any{}
	}
	st, _ := steps[stepID].(map[string]any)
	if st == nil {
		st = map[string]any{}
	}
	ps, _ := st["providers"].(map[string]any)
	if ps == nil {
		ps = map[string]any{}
	}
	for id, p := range providers {
		var m map[string]any
		if json.Unmarshal(p, &m) != nil {
			continue
		}
		m = bridgeProviderBody(m, id, reg)
		if old, ok := ps[id].(map[string]any); ok {
			ps[id] = provider.Merge(old, m)
		} else {
			ps[id] = m
		}
	}
	st["providers"], steps[stepID], ov["steps"] = ps, st, steps
	out, err := json.Marshal(ov)
	if err != nil {
		return raw
	}
	return out
}

// bridgeProviderBody is a bridge's override of one provider's request, as
// Novu's BaseProvider.transform makes it: the known keys (camelCase in the
// app) turned into the casing of the provider's API (provider.Entry.Casing:
// ipPoolName → ip_pool_name for SendGrid), then _passthrough.body laid over
// them as written; _passthrough.headers and .query stay as written, for
// the delivery to add to the provider's request (provider.SplitPassthrough).
func bridgeProviderBody(m map[string]any, providerID string, reg *provider.Registry) map[string]any {
	pass, _ := m["_passthrough"].(map[string]any)
	delete(m, "_passthrough")
	if reg != nil {
		if entry, ok := reg.Get(providerID); ok {
			m = entry.Casing.Recase(m)
		}
	}
	if body, ok := pass["body"].(map[string]any); ok {
		m = provider.Merge(m, body)
	}
	rest := map[string]any{}
	for _, k := range []string{"headers", "query"} {
		if v, ok := pass[k].(map[string]any); ok {
			rest[k] = v
		}
	}
	if len(rest) > 0 {
		m["_passthrough"] = rest
	}
	return m
}
