package httpapi

import (
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
)

// PATCH /v2/workflows/{workflowId}, GET /v2/workflows/{workflowId}/steps/{stepId}
// and POST /v2/workflows/{workflowId}/step/{stepId}/preview.

// workflowPatch serves PATCH /v2/workflows/{workflowId}: only the fields
// sent change; steps stay as they are. validatePayload and
// isTranslationEnabled are accepted (booleans) and not kept.
func (s *Server) workflowPatch(w http.ResponseWriter, r *http.Request) error {
	wf, err := s.pathWorkflow(r)
	if err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	before := s.workflowBefore(r, wf)
	if b := o.boolean("active"); b != nil {
		wf.Active = *b
	}
	if f := o.str("name", maxString); f.Set {
		if f.Value == nil || strings.TrimSpace(*f.Value) == "" {
			o.fail("name", "must be a non-empty string", o.raw["name"])
		} else {
			wf.Name = *f.Value
		}
	}
	if f := o.str("description", 4*maxString); f.Set {
		wf.Description = orEmpty(f.Value)
	}
	if o.has("tags") {
		if tags, ok := o.strings("tags", 16, 64); ok {
			wf.Tags = tags
		} else if isNull(o.raw["tags"]) {
			wf.Tags = []string{}
		}
	}
	if v, set := o.jsonObject("payloadSchema", maxDataBytes); set {
		wf.PayloadSchema = v
	}
	o.boolean("validatePayload")
	o.boolean("isTranslationEnabled")
	if err := o.errs.err(); err != nil {
		return err
	}
	wf.UpdatedAt = s.now()
	if err := s.store.WorkflowUpdate(s.watchWorkflowUpdated(r, &wf, before).Context(), &wf); err != nil {
		return workflowConflict(err, wf.Key)
	}
	s.writeJSON(w, http.StatusOK, workflowOut(wf))
	return nil
}

// pathStep is the workflow of the path and its step named by stepId (its
// stepId or _id).
func (s *Server) pathStep(r *http.Request) (store.Workflow, int, error) {
	wf, err := s.pathWorkflow(r)
	if err != nil {
		return wf, -1, err
	}
	ref := r.PathValue("stepId")
	for i, st := range wf.Steps {
		if st.StepID == ref || st.ID == ref {
			return wf, i, nil
		}
	}
	return wf, -1, errorf(http.StatusNotFound, "Step "+strconv.Quote(ref)+" was not found in workflow "+strconv.Quote(wf.Key))
}

// stepControlFields are the controls each step type takes (its dataSchema).
var stepControlFields = map[string]map[string]any{
	"in_app": {"subject": jsType("string"), "body": jsType("string"), "avatar": jsType("string"), "primaryAction": jsType("object"), "secondaryAction": jsType("object"),
		"redirect": jsType("object"), "data": jsType("object"), "disableOutputSanitization": jsType("boolean")},
	"email": {"subject": jsType("string"), "body": jsType("string"), "editorType": map[string]any{"type": "string", "enum": []string{"block", "html"}},
		"layoutId": map[string]any{"type": []string{"string", "null"}}, "disableOutputSanitization": jsType("boolean")},
	"sms":  {"body": jsType("string")},
	"chat": {"body": jsType("string")},
	"push": {"subject": jsType("string"), "body": jsType("string")},
	"delay": {"type": map[string]any{"type": "string", "enum": []string{"regular", "timed"}}, "amount": jsType("number"),
		"unit": jsType("string"), "cron": jsType("string")},
	"digest": {"amount": jsType("number"), "unit": jsType("string"), "digestKey": jsType("string"), "lookBackWindow": jsType("object"), "cron": jsType("string")},
	"throttle": {"type": map[string]any{"type": "string", "enum": []string{"fixed", "dynamic"}}, "amount": jsType("number"),
		"unit": map[string]any{"type": "string", "enum": []string{"minutes", "hours", "days"}}, "dynamicKey": jsType("string"),
		"threshold": map[string]any{"type": "number", "minimum": 1}, "throttleKey": jsType("string")},
	"http_request": {"method": map[string]any{"type": "string", "enum": []string{"GET", "POST", "PUT", "DELETE", "PATCH"}},
		"url": jsType("string"), "headers": jsType("array"), "body": map[string]any{"type": []string{"string", "array"}},
		"responseBodySchema": jsType("object"), "enforceSchemaValidation": jsType("boolean"), "continueOnFailure": jsType("boolean"),
		"timeout": jsType("number")},
}

func init() {
	// Every step takes conditions: a JSONLogic object (the dashboard's
	// step conditions; the step runs when it holds).
	for _, fields := range stepControlFields {
		fields["skip"] = jsType("object")
	}
}

func jsType(t string) map[string]any { return map[string]any{"type": t} }

// variablePath finds the payload.*, subscriber.* and steps.* paths that
// templates use.
var variablePath = regexp.MustCompile(`\b(payload|subscriber|steps)((?:\.[A-Za-z_$][\w$-]*)+)`)

// usedVariables lists, sorted, the variable paths a step's controls use.
func usedVariables(values map[string]any) []string {
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			for _, block := range templateBlocks.FindAllString(x, -1) {
				for _, m := range variablePath.FindAllString(block, -1) {
					seen[m] = true
				}
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(values)
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var templateBlocks = regexp.MustCompile(`\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}`)

// pathsSchema is the JSON schema of nested objects holding each path,
// whose leaves are strings.
func pathsSchema(paths [][]string) map[string]any {
	tree := map[string]any{}
	for _, p := range paths {
		m := tree
		for _, k := range p {
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
	}
	var schema func(t map[string]any) map[string]any
	schema = func(t map[string]any) map[string]any {
		props := map[string]any{}
		for k, v := range t {
			if sub, _ := v.(map[string]any); len(sub) > 0 {
				props[k] = schema(sub)
			} else {
				props[k] = jsType("string")
			}
		}
		return map[string]any{"type": "object", "properties": props, "additionalProperties": true}
	}
	return schema(tree)
}

var subscriberFields = []string{"subscriberId", "firstName", "lastName", "email", "phone", "avatar", "locale", "timezone"}

// stepVariables is the JSON schema of what a step's templates can use: the
// subscriber, the payload (the workflow's payloadSchema, else the payload
// variables its steps use), and the earlier steps.
func stepVariables(wf store.Workflow, index int) map[string]any {
	sub := map[string]any{}
	for _, f := range subscriberFields {
		sub[f] = jsType("string")
	}
	sub["data"] = map[string]any{"type": "object", "additionalProperties": true}
	payload := map[string]any{"type": "object", "additionalProperties": true}
	var schema map[string]any
	if json.Unmarshal(wf.PayloadSchema, &schema) == nil && schema != nil {
		payload = schema
	} else {
		var paths [][]string
		for _, st := range wf.Steps {
			for _, v := range usedVariables(st.ControlValues) {
				if rest, ok := strings.CutPrefix(v, "payload."); ok {
					paths = append(paths, strings.Split(rest, "."))
				}
			}
		}
		payload = pathsSchema(paths)
	}
	steps := map[string]any{}
	for _, st := range wf.Steps[:index] {
		steps[st.StepID] = map[string]any{"type": "object", "additionalProperties": true}
	}
	return map[string]any{"type": "object", "properties": map[string]any{
		"subscriber": map[string]any{"type": "object", "properties": sub, "additionalProperties": true},
		"payload":    payload,
		"steps":      map[string]any{"type": "object", "properties": steps, "additionalProperties": true},
	}, "additionalProperties": true}
}

// workflowStepGet serves GET /v2/workflows/{workflowId}/steps/{stepId}.
func (s *Server) workflowStepGet(w http.ResponseWriter, r *http.Request) error {
	wf, i, err := s.pathStep(r)
	if err != nil {
		return err
	}
	out := workflowOut(wf).Steps[i]
	if _, synced := out.Controls["dataSchema"]; !synced {
		out.Controls["dataSchema"] = map[string]any{"type": "object", "properties": stepControlFields[wf.Steps[i].Type],
			"additionalProperties": true}
	}
	out.Variables = stepVariables(wf, i)
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// previewExample is the example payload of a step: a placeholder
// ("{{payload.name}}") for each variable its controls use, under what was sent.
func previewExample(values map[string]any, sent map[string]any) map[string]any {
	out := map[string]any{}
	for _, v := range usedVariables(values) {
		parts := strings.Split(v, ".")
		m := out
		for i, p := range parts {
			if i == len(parts)-1 {
				if _, ok := m[p]; !ok {
					m[p] = "{{" + v + "}}"
				}
				break
			}
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
	}
	for _, k := range []string{"payload", "subscriber", "steps"} {
		if _, ok := out[k]; !ok && k != "steps" {
			out[k] = map[string]any{}
		}
	}
	for k, v := range sent {
		out[k] = mergeJSON(out[k], v)
	}
	return out
}

// mergeJSON lays b over a, object by object.
func mergeJSON(a, b any) any {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		return b
	}
	out := map[string]any{}
	for k, v := range am {
		out[k] = v
	}
	for k, v := range bm {
		out[k] = mergeJSON(out[k], v)
	}
	return out
}

// previewSubscriber is the subscriber a preview renders for.
func previewSubscriber(m map[string]any) store.Subscriber {
	sub := store.Subscriber{SubscriberID: "preview-subscriber"}
	if v, ok := m["subscriberId"].(string); ok {
		sub.SubscriberID = v
	}
	for _, f := range []struct {
		key string
		dst **string
	}{{"firstName", &sub.FirstName}, {"lastName", &sub.LastName}, {"email", &sub.Email}, {"phone", &sub.Phone},
		{"avatar", &sub.Avatar}, {"locale", &sub.Locale}, {"timezone", &sub.Timezone}} {
		if v, ok := m[f.key].(string); ok {
			*f.dst = &v
		}
	}
	if d, ok := m["data"].(map[string]any); ok {
		sub.Data, _ = json.Marshal(d)
	}
	return sub
}

// workflowStepPreview serves POST /v2/workflows/{workflowId}/step/{stepId}/preview:
// the step rendered by the engine (engine.RenderStep, engine.Preview) with
// the example payload under previewPayload — or with controlValues sent in
// place of the stored ones; nothing is saved. A template that does not
// render gives an empty preview.
func (s *Server) workflowStepPreview(w http.ResponseWriter, r *http.Request) error {
	wf, i, err := s.pathStep(r)
	if err != nil {
		return err
	}
	o, err := readOptionalObject(r)
	if err != nil {
		return err
	}
	step := wf.Steps[i]
	if wf.Origin == store.OriginBridge {
		return s.bridgeStepPreview(w, r, wf, step, o)
	}
	var sent map[string]any
	if o != nil {
		if v, set := o.jsonObject("controlValues", maxDataBytes); set && v != nil {
			step.ControlValues = nil
			_ = json.Unmarshal(v, &step.ControlValues)
			step.ControlOrder = sandbox.KeyOrder(v)
			checkControls(s.sandbox, o, step.ControlValues)
			checkStepControls(o, step.Type, step.ControlValues)
		}
		if v, set := o.jsonObject("previewPayload", maxDataBytes); set && v != nil {
			_ = json.Unmarshal(v, &sent)
			for _, k := range []string{"subscriber", "payload", "actor", "steps", "context", "env"} {
				if x, ok := sent[k]; ok && x != nil {
					if _, isObj := x.(map[string]any); !isObj {
						o.errs.add("previewPayload."+k, "must be an object", x)
					}
				}
			}
		}
		if err := o.errs.err(); err != nil {
			return err
		}
	}
	example := previewExample(step.ControlValues, sent)
	subscriber, _ := example["subscriber"].(map[string]any)
	payload, _ := json.Marshal(example["payload"])
	var digest store.JSON
	if steps, ok := example["steps"].(map[string]any); ok && i > 0 {
		if d, ok := steps[wf.Steps[i-1].StepID].(map[string]any); ok {
			digest, _ = json.Marshal(d)
		}
	}
	result := map[string]any{"type": step.Type}
	// As a worker renders it (engine.PreviewSend): env (the environment's
	// variables, a secret as its mask, previewPayload.env laid over them)
	// and previewPayload.context, translations in the preview subscriber's
	// locale, the controls, then an e-mail's layout.
	scope := store.Scope{OrganizationID: wf.OrganizationID, EnvironmentID: wf.EnvironmentID}
	given, _ := sent["env"].(map[string]any)
	env, err := engine.PreviewEnv(r.Context(), s.store, scope, given)
	if err != nil {
		return err
	}
	p := &engine.PreviewParams{
		Scope: scope, WorkflowKey: wf.Key, Step: step,
		Input:    engine.StepInput{Subscriber: previewSubscriber(subscriber), Payload: payload, Digest: digest},
		Env:      env,
		Contexts: sent["context"],
		Steps:    example["steps"],
		Sandbox:  s.sandbox, Translations: s.store, Layouts: s.store,
	}
	if preview, err := engine.PreviewSend(r.Context(), p); err != nil {
		result["preview"] = map[string]any{}
	} else {
		result["preview"] = preview
	}
	s.writeJSON(w, http.StatusCreated, map[string]any{"result": result, "previewPayloadExample": example})
	return nil
}
