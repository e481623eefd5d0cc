package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
)

type previewJSON struct {
	WorkflowID    string          `json:"workflowId"`
	StepID        string          `json:"stepId"`
	ControlValues json.RawMessage `json:"controlValues"`
	Payload       json.RawMessage `json:"payload"`
	SubscriberID  string          `json:"subscriberId"`
	// Context binds context.<type>: {"tenant": {"id", "data"}}.
	Context json.RawMessage `json:"context"`
}

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
// payload (and a subscriber, or a sample one), with the controls the
// author is editing when given, through the same sandbox and bindings as a
// delivery: engine.PreviewSend, as the public API's step preview
// (translations, env variables, contexts, an e-mail's layout). A
// template's error is shown: a 200 with {"result": null, "error"}.
func (d *Dashboard) preview(w http.ResponseWriter, r *http.Request, _ account, env store.Environment) error {
	var in previewJSON
	if err := readJSON(w, r, &in); err != nil {
		return err
	}
	scope := store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}
	if in.WorkflowID == "" || in.StepID == "" {
		return errorf(http.StatusUnprocessableEntity, "Name the workflow (workflowId) and its step (stepId)")
	}
	wf, err := d.store.WorkflowGet(r.Context(), scope, in.WorkflowID)
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "Workflow "+quote(in.WorkflowID)+" was not found")
	} else if err != nil {
		return err
	}
	var step *store.Step
	for i := range wf.Steps {
		if wf.Steps[i].StepID == in.StepID || wf.Steps[i].ID == in.StepID {
			step = &wf.Steps[i]
		}
	}
	if step == nil {
		return errorf(http.StatusNotFound, "Step "+quote(in.StepID)+" is not a step of the workflow")
	}
	st := *step
	if len(in.ControlValues) > 0 && !bytes.Equal(in.ControlValues, []byte("null")) {
		st.ControlValues = nil // a new map: the step's may be the store's cached one
		if err := json.Unmarshal(in.ControlValues, &st.ControlValues); err != nil || st.ControlValues == nil {
			return errorf(http.StatusUnprocessableEntity, "controlValues must be an object")
		}
		st.ControlOrder = sandbox.KeyOrder(in.ControlValues)
	}
	payload := store.JSON(in.Payload)
	if len(payload) > 0 && (payload[0] != '{' && !bytes.Equal(payload, []byte("null"))) {
		return errorf(http.StatusUnprocessableEntity, "payload must be an object")
	}
	var contexts map[string]any
	if len(in.Context) > 0 && !bytes.Equal(in.Context, []byte("null")) {
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
