package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/herald-notify/herald/internal/jsonlogic"
	"github.com/herald-notify/herald/internal/liquid"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/wire"
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

// stepCondition is a step's parsed condition with the roots of the data it
// reads (payload, subscriber, steps, …).
type stepCondition struct {
	rule  *jsonlogic.Rule
	err   error
	reads map[string]bool // a root read; "" when the rule may read anything
}

func (c *stepCondition) readsRoot(root string) bool { return c.reads[""] || c.reads[root] }

// conditions keeps the parsed conditions of the steps run lately: a
// trigger parses its step's rule once, not once per recipient. An entry is
// used only while the step's rule is the one it was parsed from (an edit
// keeps the step's _id). Bounded: it starts over past maxConditions.
var conditions struct {
	sync.Mutex
	m map[conditionKey]cachedCondition
}

type conditionKey struct{ workflowID, stepID string }

type cachedCondition struct {
	raw  any // the rule as parsed
	cond *stepCondition
}

const maxConditions = 4096

// conditionOf is the step's condition (nil: it has none).
func conditionOf(wf store.Workflow, step *store.Step) *stepCondition {
	raw, ok := step.ControlValues["skip"]
	if !ok {
		return nil
	}
	k := conditionKey{wf.ID, step.ID}
	conditions.Lock()
	got, ok := conditions.m[k]
	conditions.Unlock()
	if ok && sameRef(got.raw, raw) {
		return got.cond
	}
	if ok && sameJSON(got.raw, raw) {
		// Another read of the same workflow: remember this one, which the
		// calls that follow hand over.
		conditions.Lock()
		conditions.m[k] = cachedCondition{raw: raw, cond: got.cond}
		conditions.Unlock()
		return got.cond
	}
	var c *stepCondition
	rule, err := StepCondition(*step)
	if rule != nil || err != nil {
		c = &stepCondition{rule: rule, err: err, reads: map[string]bool{}}
		for _, v := range rule.Vars() {
			root, _, _ := strings.Cut(v, ".")
			c.reads[root] = true
		}
	}
	conditions.Lock()
	if conditions.m == nil || len(conditions.m) >= maxConditions {
		conditions.m = map[conditionKey]cachedCondition{}
	}
	conditions.m[k] = cachedCondition{raw: raw, cond: c}
	conditions.Unlock()
	return c
}

// sameRef says whether a and b are the same map: the workflow read once and
// run for many recipients hands the same controls to each. The cache holds
// the map it parsed, so its address cannot be reused by another.
func sameRef(a, b any) bool {
	x, ok := a.(map[string]any)
	y, ok2 := b.(map[string]any)
	return ok && ok2 && reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
}

// sameJSON says whether two decoded JSON values are equal.
func sameJSON(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !sameJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case string, float64, bool, nil, json.Number:
		return a == b
	}
	return false
}

// EnvironmentReader reads an environment (store.Tenancy).
type EnvironmentReader interface {
	EnvironmentGetByID(ctx context.Context, id string) (store.Environment, error)
}

// StepResultReader reads the results of a notification's earlier steps.
type StepResultReader interface {
	StepResults(ctx context.Context, scope store.Scope, notificationID string, before int) ([]store.StepResult, error)
}

// conditionHolds evaluates a claimed job's step condition (vars are the
// step's template bindings). ok false with a nil error: the step is
// skipped. An error that is not a *conditionError (a read failed) is
// transient: the job is retried.
func (e *Engine) conditionHolds(ctx context.Context, c store.Claimed, cond *stepCondition, vars, steps map[string]any) (bool, error) {
	data := map[string]any{}
	if cond.readsRoot("payload") {
		data["payload"] = liquid.ToGo(vars["payload"]) // the payload as parsed for the templates
	}
	if cond.readsRoot("subscriber") {
		data["subscriber"] = subscriberData(c.Subscriber)
	}
	if cond.readsRoot("workflow") {
		data["workflow"] = workflowData(c.Workflow)
	}
	if cond.readsRoot("context") {
		data["context"] = decodeJSON(c.Notification.Contexts, map[string]any{})
	}
	if cond.readsRoot("env") && e.envValues != nil {
		vals, err := e.envValues(ctx, c.Job.EnvironmentID)
		if err != nil {
			return false, err
		}
		env := make(map[string]any, len(vals)+2)
		if r := e.envs; r != nil {
			// The environment's name and type, under its variables (Novu's
			// env binding; a variable of that name wins).
			got, err := r.EnvironmentGetByID(ctx, c.Job.EnvironmentID)
			if err != nil {
				return false, err
			}
			env["name"] = got.Name
			if t := got.Type(); t != "" {
				env["type"] = t
			}
		}
		for k, v := range vals {
			env[k] = v
		}
		data["env"] = env
	}
	if steps != nil {
		data["steps"] = steps
	}
	runs, err := cond.rule.Runs(data, e.now())
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
	eachSubscriberField(s, func(key, v string) { out[key] = v })
	if s.LastOnlineAt != nil {
		out["lastOnlineAt"] = wire.Time(*s.LastOnlineAt)
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
	err := e.earlierSteps(ctx, c, false, func(key string, res store.StepResult) { out[key] = stepOutput(res) })
	return out, err
}

// earlierSteps reads the results of the steps before the claimed job's
// (one read: the notification's earlier jobs and in-app messages, as they
// are now) and hands each to fn with its stepId, in step order or, with
// newestFirst, the other way round.
func (e *Engine) earlierSteps(ctx context.Context, c store.Claimed, newestFirst bool, fn func(key string, res store.StepResult)) error {
	if c.Job.StepIndex == 0 {
		return nil
	}
	r, ok := e.o.Store.(StepResultReader)
	if !ok {
		return nil
	}
	results, err := r.StepResults(ctx, store.Scope{OrganizationID: c.Job.OrganizationID, EnvironmentID: c.Job.EnvironmentID},
		c.Job.NotificationID, c.Job.StepIndex)
	if err != nil {
		return fmt.Errorf("reading the earlier steps' results: %w", err)
	}
	keys := map[string]string{}
	for _, st := range c.Workflow.Steps {
		keys[st.ID] = st.StepID
	}
	if newestFirst {
		slices.Reverse(results)
	}
	for _, res := range results {
		if key, ok := keys[res.StepID]; ok {
			fn(key, res)
		}
	}
	return nil
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
				out["lastSeenDate"] = wire.Time(*m.LastSeenAt)
			}
			if m.LastReadAt != nil {
				out["lastReadDate"] = wire.Time(*m.LastReadAt)
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
