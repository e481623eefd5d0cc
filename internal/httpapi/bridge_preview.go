package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/herald-notify/herald/internal/bridge"
	"github.com/herald-notify/herald/internal/store"
)

// bridgeStepPreview is the step preview of a synced workflow: the bridge's
// own preview of the step (spec: Novu's preview-step usecase), with the
// controlValues sent (else the stored ones) raw, previewPayload.payload and
// .subscriber, and no earlier state. A bridge that fails is a 400 that says
// why.
func (s *Server) bridgeStepPreview(w http.ResponseWriter, r *http.Request, wf store.Workflow, step store.Step, o *object) error {
	controls, payload, subscriber := json.RawMessage(nil), json.RawMessage(nil), json.RawMessage(nil)
	if step.ControlValues != nil {
		controls, _ = json.Marshal(step.ControlValues)
	}
	example := map[string]any{}
	if o != nil {
		if v, set := o.jsonObject("controlValues", maxDataBytes); set && v != nil {
			controls = json.RawMessage(v)
		}
		if v, set := o.jsonObject("previewPayload", maxDataBytes); set && v != nil {
			var sent map[string]json.RawMessage
			_ = json.Unmarshal(v, &sent)
			for _, k := range []string{"payload", "subscriber"} {
				if x, ok := sent[k]; ok && !isNull(x) {
					var m map[string]any
					if json.Unmarshal(x, &m) != nil {
						o.errs.add("previewPayload."+k, "must be an object", nil)
						continue
					}
					example[k] = m
				}
			}
			payload, subscriber = sent["payload"], sent["subscriber"]
		}
		if err := o.errs.err(); err != nil {
			return err
		}
	}
	env, key, err := s.envBridge(r.Context())
	if err != nil {
		return err
	}
	res, err := s.bridge.Preview(r.Context(), env.BridgeURL, key, &bridge.ExecuteRequest{WorkflowID: wf.Key, StepID: step.StepID,
		Payload: nullIfAbsent(payload), Controls: controls, Subscriber: nullIfAbsent(subscriber),
		Env: bridge.Env{Name: env.Name, Type: env.Type()}})
	if err != nil {
		return bridgeError(err)
	}
	preview := json.RawMessage(res.RawOutputs)
	if len(preview) == 0 {
		preview = json.RawMessage("{}")
	}
	if _, ok := example["payload"]; !ok {
		example["payload"] = map[string]any{}
	}
	s.writeJSON(w, http.StatusCreated, map[string]any{"result": map[string]any{"type": step.Type, "preview": preview},
		"previewPayloadExample": example})
	return nil
}

// nullIfAbsent is nil for a JSON value that is absent or null.
func nullIfAbsent(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	return raw
}
