package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/jsonlogic"
	"github.com/herald-notify/herald/internal/liquid"
	"github.com/herald-notify/herald/internal/store"
)

// Step conditions (controlValues.skip): a JSONLogic rule evaluated when the
// step is reached, as Novu evaluates it (internal/jsonlogic). The step runs
// when the rule holds — the dashboard's "step conditions"; the name is
// Novu's. The rule reads payload, subscriber, workflow, context, env and
// steps.<stepId> (the results of the steps before, read now: an in-app
// message's seen and read as they are when this step is reached).

// conditionSkipped is the detail of a step whose conditions do not hold.
const conditionSkipped = "Step skipped: its conditions are not met"

// StepCondition is the parsed condition of a step, or nil when it has none
// (absent, null or {}: the step always runs).
func StepCondition(step store.Step) (*jsonlogic.Rule, error) {
	raw, ok := step.ControlValues["skip"]
	if !ok || raw == nil {
		return nil, nil
	}
	if m, isObj := raw.(map[string]any); isObj && len(m) == 0 {
		return nil, nil
	}
	return jsonlogic.Parse(raw)
}

// ruleReads says whether a rule's vars may read under root ("steps", "env").
func ruleReads(r *jsonlogic.Rule, root string) bool {
	for _, v := range r.Vars() {
		if v == "" || v == root || strings.HasPrefix(v, root+".") {
			return true
		}
	}
	return false
}

// StepResultReader reads the results of a notification's earlier steps.
type StepResultReader interface {
	StepResults(ctx context.Context, scope store.Scope, notificationID string, before int) ([]store.StepResult, error)
}

// conditionHolds evaluates a claimed job's step condition. ok false with a
// nil error: the step is skipped. An error that is not a *conditionError
// (a read failed) is transient: the job is retried.
func (e *Engine) conditionHolds(ctx context.Context, c store.Claimed, rule *jsonlogic.Rule, steps map[string]any) (bool, error) {
	data := map[string]any{}
	if ruleReads(rule, "payload") {
		data["payload"] = decodeJSON(c.Notification.Payload, map[string]any{})
	}
	if ruleReads(rule, "subscriber") {
		data["subscriber"] = subscriberData(c.Subscriber)
	}
	if ruleReads(rule, "workflow") {
		data["workflow"] = workflowData(c.Workflow)
	}
	if ruleReads(rule, "context") {
		data["context"] = decodeJSON(c.Notification.Contexts, map[string]any{})
	}
	if ruleReads(rule, "env") && e.envValues != nil {
		vals, err := e.envValues(ctx, c.Job.EnvironmentID)
		if err != nil {
			return false, err
		}
		env := make(map[string]any, len(vals))
		for k, v := range vals {
			env[k] = v
		}
		data["env"] = env
	}
	if steps != nil {
		data["steps"] = steps
	}
	runs, err := rule.Runs(data, e.now())
	if err != nil {
		return false, &conditionError{err}
	}
	return runs, nil
}

// conditionError is a condition that could not be evaluated: the job fails.
type conditionError struct{ err error }

func (e *conditionError) Error() string {
	return "The step's conditions could not be evaluated: " + e.err.Error()
}

// decodeJSON decodes a stored document, or returns def.
func decodeJSON(raw store.JSON, def any) any {
	if len(raw) == 0 {
		return def
	}
	var v any
	if json.Unmarshal(raw, &v) != nil || v == nil {
		return def
	}
	return v
}

// subscriberData is the subscriber as conditions read it: the stored
// fields, data, isOnline (false when unknown) and lastOnlineAt.
func subscriberData(s store.Subscriber) map[string]any {
	out := map[string]any{"subscriberId": s.SubscriberID, "isOnline": s.IsOnline != nil && *s.IsOnline}
	for _, f := range []struct {
		key string
		v   *string
	}{
		{"firstName", s.FirstName}, {"lastName", s.LastName}, {"email", s.Email}, {"phone", s.Phone},
		{"avatar", s.Avatar}, {"locale", s.Locale}, {"timezone", s.Timezone},
	} {
		if f.v != nil {
			out[f.key] = *f.v
		}
	}
	if s.LastOnlineAt != nil {
		out["lastOnlineAt"] = s.LastOnlineAt.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	if d := decodeJSON(s.Data, nil); d != nil {
		out["data"] = d
	}
	return out
}

// workflowData is the workflow as conditions read it.
func workflowData(w store.Workflow) map[string]any {
	tags := make([]any, len(w.Tags))
	for i, t := range w.Tags {
		tags[i] = t
	}
	return map[string]any{"workflowId": w.Key, "name": w.Name, "description": w.Description, "tags": tags,
		"severity": w.Severity}
}

// stepResults reads the results of the steps before the claimed job's as
// steps.<stepId>: what its conditions and templates read of them.
func (e *Engine) stepResults(ctx context.Context, c store.Claimed) (map[string]any, error) {
	out := map[string]any{}
	if c.Job.StepIndex == 0 {
		return out, nil
	}
	r, ok := e.o.Store.(StepResultReader)
	if !ok {
		return out, nil
	}
	results, err := r.StepResults(ctx, store.Scope{OrganizationID: c.Job.OrganizationID, EnvironmentID: c.Job.EnvironmentID},
		c.Job.NotificationID, c.Job.StepIndex)
	if err != nil {
		return nil, fmt.Errorf("reading the earlier steps' results: %w", err)
	}
	keys := map[string]string{}
	for _, st := range c.Workflow.Steps {
		keys[st.ID] = st.StepID
	}
	for _, res := range results {
		if key, ok := keys[res.StepID]; ok {
			out[key] = stepOutput(res)
		}
	}
	return out, nil
}

// stepOutput is one earlier step's result as later steps read it; a step
// that did not run reads as its empty output.
func stepOutput(r store.StepResult) map[string]any {
	switch r.Type {
	case "in_app":
		out := map[string]any{"seen": false, "read": false, "lastSeenDate": nil, "lastReadDate": nil}
		if m := r.Message; m != nil {
			out["seen"], out["read"] = m.Seen, m.Read
			if m.LastSeenAt != nil {
				out["lastSeenDate"] = m.LastSeenAt.UTC().Format("2006-01-02T15:04:05.000Z")
			}
			if m.LastReadAt != nil {
				out["lastReadDate"] = m.LastReadAt.UTC().Format("2006-01-02T15:04:05.000Z")
			}
		}
		return out
	case "digest":
		var d struct {
			Events []any `json:"events"`
		}
		_ = json.Unmarshal(r.Digest, &d)
		events := make([]any, len(d.Events))
		for i, ev := range d.Events {
			events[i] = map[string]any{"payload": ev}
		}
		return map[string]any{"events": events, "eventCount": len(events)}
	}
	if m, ok := decodeJSON(r.Output, nil).(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// bindSteps binds steps.<stepId> for a step's templates.
func bindSteps(vars map[string]any, steps map[string]any) {
	if len(steps) == 0 {
		return
	}
	b, err := json.Marshal(steps)
	if err != nil {
		return
	}
	if v, err := liquid.ParseJSON(string(b)); err == nil {
		vars["steps"] = v
	}
}

// namesSteps says whether a text of the controls (the condition aside)
// holds "steps.".
func namesSteps(values map[string]any) bool {
	for k, v := range values {
		if k != "skip" && namesText(v, "steps.") {
			return true
		}
	}
	return false
}

// namesText says whether a string in v holds s.
func namesText(v any, s string) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, s)
	case map[string]any:
		for _, e := range x {
			if namesText(e, s) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if namesText(e, s) {
				return true
			}
		}
	}
	return false
}

// timeRFC is how step outputs write instants.
func timeRFC(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
