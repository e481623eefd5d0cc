package engine

import (
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
	"maps"
)

// StepInput is what a step's templates render with: the subscriber, the
// trigger's payload, and the metadata of the notification's finished digest
// step (nil when none).
type StepInput struct {
	Subscriber store.Subscriber
	Payload    store.JSON
	Digest     store.JSON
}

// StepValues are a step's controls in the order they were written.
// The condition (skip) is not a template: it is left out.
func StepValues(step store.Step) any {
	values := step.ControlValues
	if _, ok := values["skip"]; ok {
		values = maps.Clone(values)
		delete(values, "skip")
	}
	return sandbox.Ordered(values, step.ControlOrder)
}

// Vars are the variables a step's templates see.
func (in StepInput) Vars() map[string]any {
	return bindings(in.Subscriber, in.Payload, digestStep(in.Digest))
}

// RenderStep renders a step's controls (StepValues, their translations
// put in: Translate) as a worker does before it acts on them: every control
// in the sandbox, under its budgets, in the order the controls were
// written, then the links checked. Previews
// (POST /v2/workflows/{id}/step/{stepId}/preview) render through it too, so
// a preview is what a send would be.
func RenderStep(sb *sandbox.Sandbox, values any, vars map[string]any) (map[string]any, error) {
	ctl, err := sb.Controls(values, vars)
	if err == nil {
		err = sandbox.CheckLinks(ctl)
	}
	if err != nil {
		return nil, err
	}
	return ctl, nil
}

// Preview is a step's content as it would be sent, from its rendered
// controls (RenderStep): in_app {subject?, body, avatar?, primaryAction?,
// secondaryAction?, redirect?, data?}, email {subject, body} (the HTML
// sent), sms and chat {body}, push {subject, body}; delay and digest steps
// show their rendered controls.
func Preview(stepType string, ctl map[string]any) map[string]any {
	switch stepType {
	case "in_app":
		out := map[string]any{"body": str(ctl["body"])}
		for _, k := range []string{"subject", "avatar"} {
			if s := optStr(ctl[k]); s != nil {
				out[k] = *s
			}
		}
		for _, k := range []string{"primaryAction", "secondaryAction", "redirect", "data"} {
			if m, ok := ctl[k].(map[string]any); ok {
				out[k] = m
			}
		}
		return out
	case "email":
		m := emailMessage(store.Claimed{}, ctl, nil)
		return map[string]any{"subject": m.Subject, "body": m.HTML}
	case "sms":
		return map[string]any{"body": smsMessage(store.Claimed{}, ctl, nil).Content}
	case "chat":
		return map[string]any{"body": str(ctl["body"])}
	case "push":
		return map[string]any{"subject": str(ctl["subject"]), "body": str(ctl["body"])}
	default:
		return ctl
	}
}
