package bridge

import (
	"encoding/json"
	"fmt"

	"github.com/herald-notify/herald/internal/jsvalue"
)

// ExecuteRequest is what execute and preview send about one step: the
// body Novu's worker builds (execute-bridge-job.usecase.ts). The JSON
// fields are passed through in their own key order; nil stands for {}.
type ExecuteRequest struct {
	WorkflowID string
	StepID     string
	// Payload is the trigger payload (without Novu's __source), as received.
	Payload json.RawMessage
	// Controls are the step's stored control values, raw: the bridge fills
	// the schema's defaults and renders their Liquid itself.
	Controls json.RawMessage
	// State has one entry per earlier step of the run; the framework looks
	// them up by StepID and answers ExecutionStateCorruptError for a
	// missing one. Preview sends none.
	State []StepState
	// Subscriber is {subscriberId, firstName, lastName, email, …} with the
	// fields the subscriber has.
	Subscriber json.RawMessage
	Context    json.RawMessage
	Env        Env
}

// StepState is an earlier step as the framework reads it:
// {stepId, outputs, state:{status, error}}.
type StepState struct {
	StepID string
	// Outputs are the step type's result ({seen, read, lastSeenDate,
	// lastReadDate} for in_app, {events, eventCount} for digest, {duration}
	// for delay, {} for the others), computed when the later step runs.
	Outputs json.RawMessage
	Status  string // "completed", "failed", "skipped", …
	Error   string // "" is sent as null
}

// Env is the environment the run belongs to: {name, type}.
type Env struct {
	Name string // "Development", "Production", …
	Type string // "dev" or "prod"
}

// body is the JSON the bridge gets for r: {payload, controls, state,
// subscriber, context, env}, written as JSON.stringify would write it so
// that the framework's re-stringified body matches the bytes signed.
func (r *ExecuteRequest) body() ([]byte, error) {
	o := jsvalue.NewObject()
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"payload", r.Payload}, {"controls", r.Controls}} {
		v, err := rawObject(f.name, f.raw)
		if err != nil {
			return nil, err
		}
		o.Set(f.name, v)
	}

	state := make([]any, 0, len(r.State))
	for i, s := range r.State {
		outputs, err := rawObject(fmt.Sprintf("state[%d].outputs", i), s.Outputs)
		if err != nil {
			return nil, err
		}
		st := jsvalue.NewObject()
		st.Set("status", s.Status)
		if s.Error == "" {
			st.Set("error", nil)
		} else {
			st.Set("error", s.Error)
		}
		e := jsvalue.NewObject()
		e.Set("stepId", s.StepID)
		e.Set("outputs", outputs)
		e.Set("state", st)
		state = append(state, e)
	}
	o.Set("state", state)

	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"subscriber", r.Subscriber}, {"context", r.Context}} {
		v, err := rawObject(f.name, f.raw)
		if err != nil {
			return nil, err
		}
		o.Set(f.name, v)
	}
	env := jsvalue.NewObject()
	env.Set("name", r.Env.Name)
	env.Set("type", r.Env.Type)
	o.Set("env", env)
	return jsvalue.Stringify(o), nil
}

// rawObject parses a JSON object field of the request (nil or null: {}).
func rawObject(name string, raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return jsvalue.NewObject(), nil
	}
	v, err := jsvalue.ParseJSON(string(raw))
	if err != nil {
		return nil, fmt.Errorf("%s is not JSON: %w", name, err)
	}
	switch v.(type) {
	case nil:
		return jsvalue.NewObject(), nil
	case *jsvalue.Object:
		return v, nil
	}
	return nil, fmt.Errorf("%s is not a JSON object", name)
}
