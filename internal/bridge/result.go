package bridge

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Result is an execute or preview answer:
// {outputs, providers, options:{skip}, metadata}.
type Result struct {
	// Outputs are what the step's resolver returned, controls rendered and
	// schema defaults filled by the bridge: {subject, body, …} for in_app
	// and email, {amount, unit} (or cron, …) for digest and delay. Empty,
	// not nil, when the bridge sent none (a skipped step).
	Outputs map[string]any
	// RawOutputs are the outputs as sent, key order kept ({} when none).
	RawOutputs json.RawMessage
	// Providers are the provider overrides by provider id
	// (providers.sendgrid = {ipPoolName, _passthrough, …}), as sent.
	Providers map[string]json.RawMessage
	// Skip is options.skip === true: the step's skip function asked for no
	// message.
	Skip     bool
	Metadata Metadata
	Raw      json.RawMessage // the whole answer as received
}

// Metadata is the framework's report of the execution.
type Metadata struct {
	Status   string  // "success"
	Error    bool    // false on an answered execution
	Duration float64 // milliseconds
}

// Decode unmarshals the outputs into v (a struct of the step type's
// fields, say).
func (r *Result) Decode(v any) error { return json.Unmarshal(r.RawOutputs, v) }

// ProviderIDs returns the ids of the provider overrides, sorted.
func (r *Result) ProviderIDs() []string {
	ids := make([]string, 0, len(r.Providers))
	for id := range r.Providers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// parseResult reads an execute or preview answer. outputs, providers (and
// each provider's entry) and options must be JSON objects when present;
// metadata is read as far as it has the framework's shape.
func parseResult(data []byte) (*Result, error) {
	top, err := object(data, "the answer")
	if err != nil {
		return nil, err
	}
	res := &Result{Raw: data, RawOutputs: json.RawMessage("{}"), Outputs: map[string]any{},
		Providers: map[string]json.RawMessage{}}
	if raw := present(top["outputs"]); raw != nil {
		if _, err := object(raw, "outputs"); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &res.Outputs); err != nil {
			return nil, fmt.Errorf("outputs: %w", err)
		}
		res.RawOutputs = raw
	}
	if raw := present(top["providers"]); raw != nil {
		ps, err := object(raw, "providers")
		if err != nil {
			return nil, err
		}
		for id, p := range ps {
			p = present(p)
			if p == nil {
				continue
			}
			if _, err := object(p, "providers."+id); err != nil {
				return nil, err
			}
			res.Providers[id] = p
		}
	}
	if raw := present(top["options"]); raw != nil {
		opts, err := object(raw, "options")
		if err != nil {
			return nil, err
		}
		var skip bool
		res.Skip = json.Unmarshal(opts["skip"], &skip) == nil && skip
	}
	if raw := present(top["metadata"]); raw != nil {
		var md struct {
			Status   string  `json:"status"`
			Error    bool    `json:"error"`
			Duration float64 `json:"duration"`
		}
		if json.Unmarshal(raw, &md) == nil {
			res.Metadata = Metadata(md)
		}
	}
	return res, nil
}
