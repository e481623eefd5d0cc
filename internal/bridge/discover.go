package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Discovery is a bridge's discover answer: its workflows in the order it
// lists them.
type Discovery struct {
	Workflows []Workflow
	Raw       json.RawMessage // the answer as received
}

// Workflow is one discovered workflow. The fields are read as Novu's sync
// reads them (sync.usecase.ts); schemas and options are the JSON sent, key
// order kept, nil when absent.
type Workflow struct {
	WorkflowID  string
	Name        string // "" when the workflow has none (Novu then shows WorkflowID)
	Description string
	Tags        []string
	Severity    string
	// PayloadSchema is payload.schema, else options.payloadSchema: the
	// JSON schema the bridge validates every execute's payload against.
	PayloadSchema json.RawMessage
	// ControlsSchema is the workflow's controls.schema (else inputs.schema).
	ControlsSchema json.RawMessage
	Preferences    json.RawMessage
	Options        json.RawMessage
	Steps          []Step
	Raw            json.RawMessage // this workflow as received
}

// Step is one step of a discovered workflow, in the workflow's order.
type Step struct {
	StepID string
	Type   string // in_app, email, sms, push, chat, digest, delay, custom, throttle, …
	// ControlsSchema is controls.schema (else inputs.schema): the JSON
	// schema of the control values stored for the step.
	ControlsSchema json.RawMessage
	OutputsSchema  json.RawMessage // outputs.schema: what the step's resolver returns
	ResultsSchema  json.RawMessage // results.schema: the state later steps read
	Options        json.RawMessage // the step's options (controlSchema, …) as serialized
	Code           string          // the resolver's source, when the framework sends it
}

// parseDiscovery reads a discover answer: {workflows:[…]} with a unique,
// non-empty workflowId per workflow and a unique, non-empty stepId and a
// type per step.
func parseDiscovery(data []byte) (*Discovery, error) {
	top, err := object(data, "the answer")
	if err != nil {
		return nil, err
	}
	var list []json.RawMessage
	if err := field(top, "workflows", "", &list, true); err != nil {
		return nil, err
	}
	d := &Discovery{Raw: data, Workflows: make([]Workflow, 0, len(list))}
	seen := map[string]bool{}
	for i, raw := range list {
		path := fmt.Sprintf("workflows[%d]", i)
		w, err := parseWorkflow(raw, path)
		if err != nil {
			return nil, err
		}
		if seen[w.WorkflowID] {
			return nil, fmt.Errorf("%s: workflowId %q is listed twice", path, w.WorkflowID)
		}
		seen[w.WorkflowID] = true
		d.Workflows = append(d.Workflows, *w)
	}
	return d, nil
}

func parseWorkflow(raw json.RawMessage, path string) (*Workflow, error) {
	m, err := object(raw, path)
	if err != nil {
		return nil, err
	}
	w := &Workflow{Raw: raw}
	if err := field(m, "workflowId", path, &w.WorkflowID, true); err != nil {
		return nil, err
	}
	if w.WorkflowID == "" {
		return nil, fmt.Errorf("%s.workflowId is empty", path)
	}
	path = fmt.Sprintf("%s (%q)", path, w.WorkflowID)
	for _, f := range []struct {
		key string
		dst any
	}{{"name", &w.Name}, {"description", &w.Description}, {"tags", &w.Tags}, {"severity", &w.Severity}} {
		if err := field(m, f.key, path, f.dst, false); err != nil {
			return nil, err
		}
	}
	if w.PayloadSchema, err = schema(m, path, "payload", "schema"); err != nil {
		return nil, err
	}
	w.Options = present(m["options"])
	if w.PayloadSchema == nil && w.Options != nil {
		if w.PayloadSchema, err = schema(m, path, "options", "payloadSchema"); err != nil {
			return nil, err
		}
	}
	if w.ControlsSchema, err = controlsSchema(m, path); err != nil {
		return nil, err
	}
	w.Preferences = present(m["preferences"])

	var steps []json.RawMessage
	if err := field(m, "steps", path, &steps, false); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, raw := range steps {
		sp := fmt.Sprintf("%s.steps[%d]", path, i)
		s, err := parseStep(raw, sp)
		if err != nil {
			return nil, err
		}
		if seen[s.StepID] {
			return nil, fmt.Errorf("%s: stepId %q is listed twice", sp, s.StepID)
		}
		seen[s.StepID] = true
		w.Steps = append(w.Steps, *s)
	}
	return w, nil
}

func parseStep(raw json.RawMessage, path string) (*Step, error) {
	m, err := object(raw, path)
	if err != nil {
		return nil, err
	}
	s := &Step{}
	if err := field(m, "stepId", path, &s.StepID, true); err != nil {
		return nil, err
	}
	if err := field(m, "type", path, &s.Type, true); err != nil {
		return nil, err
	}
	if s.StepID == "" || s.Type == "" {
		return nil, fmt.Errorf("%s has an empty stepId or type", path)
	}
	if err := field(m, "code", path, &s.Code, false); err != nil {
		return nil, err
	}
	if s.ControlsSchema, err = controlsSchema(m, path); err != nil {
		return nil, err
	}
	if s.OutputsSchema, err = schema(m, path, "outputs", "schema"); err != nil {
		return nil, err
	}
	if s.ResultsSchema, err = schema(m, path, "results", "schema"); err != nil {
		return nil, err
	}
	s.Options = present(m["options"])
	return s, nil
}

// controlsSchema is controls.schema, else the older inputs.schema.
func controlsSchema(m map[string]json.RawMessage, path string) (json.RawMessage, error) {
	s, err := schema(m, path, "controls", "schema")
	if s != nil || err != nil {
		return s, err
	}
	return schema(m, path, "inputs", "schema")
}

// schema is m[outer][inner] when it is a JSON object, nil when either is
// absent or null.
func schema(m map[string]json.RawMessage, path, outer, inner string) (json.RawMessage, error) {
	o := present(m[outer])
	if o == nil {
		return nil, nil
	}
	om, err := object(o, path+"."+outer)
	if err != nil {
		return nil, err
	}
	s := present(om[inner])
	if s == nil {
		return nil, nil
	}
	if s[0] != '{' {
		return nil, fmt.Errorf("%s.%s.%s is not a JSON object", path, outer, inner)
	}
	return s, nil
}

// object reads a JSON object into its members, keys matched exactly.
func object(raw []byte, path string) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	var m map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, fmt.Errorf("%s is not a JSON object", path)
	}
	return m, nil
}

// field decodes member key of the object at path ("": the answer) into
// dst; absent or null leaves dst as it is, which is an error when required.
func field(m map[string]json.RawMessage, key, path string, dst any, required bool) error {
	raw := present(m[key])
	if raw == nil {
		if required {
			if path == "" {
				path = "the answer"
			}
			return fmt.Errorf("%s has no %s", path, key)
		}
		return nil
	}
	if path != "" {
		key = path + "." + key
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s is not of the expected type (%s)", key, te.Value)
		}
		return fmt.Errorf("%s: %v", key, err)
	}
	return nil
}

// present is raw without white space, nil when absent or null.
func present(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	return raw
}
