package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
)

// previewJSON is a preview's body: the workflow, and either a saved step
// (stepId, with the controls being edited when given) or the step itself
// as the page holds it (step: one added since the last Save).
type previewJSON struct {
	WorkflowID    string           `json:"workflowId"`
	StepID        string           `json:"stepId"`
	ControlValues json.RawMessage  `json:"controlValues"`
	Step          *previewStepJSON `json:"step"`
	Payload       json.RawMessage  `json:"payload"`
	SubscriberID  string           `json:"subscriberId"`
	// Context binds context.<type>: {"tenant": {"id", "data"}}.
	Context json.RawMessage `json:"context"`
}

// previewStepJSON is a step not saved yet, in the shape of a step of the
// public API's workflow body.
type previewStepJSON struct {
	StepID        string          `json:"stepId"`
	Name          string          `json:"name"`
	Type          string          `json:"type"`
	ControlValues json.RawMessage `json:"controlValues"`
}

// stepTypes are the step types the public API takes (its WorkflowStepType
// in /openapi.json; TestPreviewStepTypes holds them to it).
var stepTypes = []string{"in_app", "email", "sms", "chat", "push", "delay", "digest", "throttle", "http_request"}

// previewResultJSON is a preview: the rendered controls, or the template's
// error (a 200 either way: an error in a template is what the author
// needs to see, not a failure of the request).
type previewResultJSON struct {
	Result map[string]any    `json:"result"`
	Error  *previewErrorJSON `json:"error"`
}

type previewErrorJSON struct {
	Field   string `json:"field,omitempty"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// previewSubscriber stands in when the preview names no subscriber.
var previewSubscriber = func() store.Subscriber {
	first, last, email := "Ada", "Lovelace", "ada@example.com"
	return store.Subscriber{ID: "000000000000000000000000", SubscriberID: "preview-subscriber", FirstName: &first, LastName: &last, Email: &email}
}()

// POST /dashboard/api/env/{env}/preview renders a step of a workflow for a
// payload (and a subscriber, or a sample one) through the same sandbox and
// bindings as a delivery: engine.PreviewSend, as the public API's step
// preview (translations, env variables, contexts, an e-mail's layout). The
// step is a saved one, with the controls the author is editing when given,
// or one not saved yet (step), rendered with the workflow's translations.
// Controls sent are checked as a save checks them (engine.CheckControls): a
// step the API would refuse is a 422, never rendered. A template's error is
// shown: a 200 with {"result": null, "error"}.
func (d *Dashboard) preview(w http.ResponseWriter, r *http.Request, _ account, env store.Environment) error {
	var in previewJSON
	if err := readJSON(w, r, &in); err != nil {
		return err
	}
	scope := store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}
	if in.WorkflowID == "" || (in.StepID == "" && in.Step == nil) {
		return errorf(http.StatusUnprocessableEntity, "Name the workflow (workflowId) and its step (stepId), or send the step (step)")
	}
	if in.Step != nil && (in.StepID != "" || given(in.ControlValues)) {
		return errorf(http.StatusUnprocessableEntity, "Send a saved step's stepId (and controlValues) or the step itself (step), not both")
	}
	wf, err := d.store.WorkflowGet(r.Context(), scope, in.WorkflowID)
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "Workflow "+quote(in.WorkflowID)+" was not found")
	} else if err != nil {
		return err
	}
	st, err := previewStep(wf, &in)
	if err != nil {
		return err
	}
	payload := store.JSON(in.Payload)
	if len(payload) > 0 && (payload[0] != '{' && !bytes.Equal(payload, []byte("null"))) {
		return errorf(http.StatusUnprocessableEntity, "payload must be an object")
	}
	var contexts map[string]any
	if given(in.Context) {
		if err := json.Unmarshal(in.Context, &contexts); err != nil || contexts == nil {
			return errorf(http.StatusUnprocessableEntity, "context must be an object")
		}
	}
	sub := previewSubscriber
	if in.SubscriberID != "" {
		if sub, err = d.store.SubscriberGet(r.Context(), scope, in.SubscriberID); errors.Is(err, store.ErrNotFound) {
			return errorf(http.StatusNotFound, "Subscriber "+quote(in.SubscriberID)+" was not found")
		} else if err != nil {
			return err
		}
	}
	envVars, err := engine.PreviewEnv(r.Context(), d.store, scope, nil)
	if err != nil {
		return err
	}
	out, err := engine.PreviewSend(r.Context(), &engine.PreviewParams{Scope: scope, WorkflowKey: wf.Key, Step: st,
		Input: engine.StepInput{Subscriber: sub, Payload: payload}, Env: envVars, Contexts: contexts, Sandbox: d.sandbox,
		Translations: d.store, Layouts: d.store})
	var se *sandbox.Error
	switch {
	case errors.As(err, &se):
		writeJSON(w, http.StatusOK, previewResultJSON{Error: &previewErrorJSON{Field: se.Field, Reason: se.Reason, Message: se.Msg}})
	case errors.Is(err, engine.ErrLayoutNotFound):
		writeJSON(w, http.StatusOK, previewResultJSON{Error: &previewErrorJSON{Field: "layoutId", Reason: "layout", Message: "The e-mail's " + err.Error()}})
	case err != nil:
		return err
	default:
		writeJSON(w, http.StatusOK, previewResultJSON{Result: out})
	}
	return nil
}

// previewStep is the step a preview renders: the body's own (step), or the
// saved step it names with the controls sent laid over it. The controls
// sent must be an object the API would save (engine.CheckControls).
func previewStep(wf store.Workflow, in *previewJSON) (store.Step, error) {
	var st store.Step
	controls := in.ControlValues
	if in.Step != nil {
		if !slices.Contains(stepTypes, in.Step.Type) {
			return st, errorf(http.StatusUnprocessableEntity, "step.type must be one of "+strings.Join(stepTypes, ", "))
		}
		st = store.Step{StepID: in.Step.StepID, Name: in.Step.Name, Type: in.Step.Type, ControlValues: map[string]any{}}
		controls = in.Step.ControlValues
	} else {
		i := slices.IndexFunc(wf.Steps, func(s store.Step) bool { return s.StepID == in.StepID || s.ID == in.StepID })
		if i < 0 {
			return st, errorf(http.StatusNotFound, "Step "+quote(in.StepID)+" is not a step of the workflow")
		}
		st = wf.Steps[i]
	}
	if !given(controls) {
		return st, nil
	}
	field := "controlValues"
	if in.Step != nil {
		field = "step.controlValues"
	}
	st.ControlValues = nil // a new map: the step's may be the store's cached one
	if err := json.Unmarshal(controls, &st.ControlValues); err != nil || st.ControlValues == nil {
		return st, errorf(http.StatusUnprocessableEntity, field+" must be an object")
	}
	st.ControlOrder = sandbox.KeyOrder(controls)
	if errs := engine.CheckControls(st.Type, st.ControlValues); len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = field + "." + e.Field + " " + e.Msg
		}
		return st, errorf(http.StatusUnprocessableEntity, "The step's controls would not be saved: "+strings.Join(msgs, "; "))
	}
	return st, nil
}

// given says whether a JSON value was sent: null counts as absent.
func given(raw json.RawMessage) bool { return len(raw) > 0 && !bytes.Equal(raw, []byte("null")) }
