package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/metrics"
	"github.com/herald-notify/herald/internal/preference"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
)

// run runs one claimed job and says what to write. A digest step returns
// its join instead, which RunOnce makes for the whole batch at once.
func (e *Engine) run(ctx context.Context, c store.Claimed, b *batchIntegrations) (store.JobOutcome, *store.DigestJoinParams) {
	if c.Job.Type == store.JobFanout {
		return e.fanout(ctx, c), nil
	}
	o := store.JobOutcome{Job: c.Job, ContinueWorkflow: true}
	var step *store.Step
	for i := range c.Workflow.Steps {
		if c.Workflow.Steps[i].ID == c.Job.StepID {
			step = &c.Workflow.Steps[i]
		}
	}
	if step == nil {
		return e.fail(o, "Internal", "The workflow no longer has this step"), nil
	}
	if c.Job.Attempts > e.maxAttempts(c.Job, step.Type) {
		return e.fail(o, "Internal", fmt.Sprintf("Gave up after %d attempts", c.Job.Attempts-1)), nil
	}
	if c.Workflow.Origin == store.OriginBridge {
		return e.runBridge(ctx, o, c, step, b) // its app writes the content (bridgeexec.go)
	}
	// The templates' bindings; a condition reads the payload parsed here.
	in := StepInput{Subscriber: c.Subscriber, Payload: c.Notification.Payload, Digest: c.Digest}
	vars := in.Vars()
	cond := conditionOf(c.Workflow, step)
	if cond != nil && cond.err != nil {
		return e.fail(o, "Internal", "The step's conditions are invalid: "+cond.err.Error()), nil
	}
	var steps map[string]any
	if (cond != nil && cond.readsRoot("steps")) || namesSteps(step.ControlValues) {
		var err error
		if steps, err = e.stepResults(ctx, c); err != nil {
			return e.retry(o, err), nil
		}
	}
	if cond != nil {
		holds, err := e.conditionHolds(ctx, c, cond, vars, steps)
		var ce *conditionError
		switch {
		case errors.As(err, &ce):
			return e.fail(o, "Internal", ce.Error()), nil
		case err != nil:
			return e.retry(o, err), nil
		case !holds:
			raw, _ := json.Marshal(step.ControlValues["skip"])
			rs := string(raw)
			o.Status = store.JobSkipped
			o.Details = append(o.Details, e.detail(o, "Success", "Internal", conditionSkipped, &rs))
			return o, nil
		}
	}
	if off, why := turnedOff(c, step.Type); off {
		o.Status = store.JobSkipped
		o.Details = append(o.Details, e.detail(o, "Success", "Internal", why, nil))
		return o, nil
	}
	if err := addTriggerVars(ctx, vars, c, step, e.envValues); err != nil {
		return e.retry(o, err), nil
	}
	bindSteps(vars, steps)
	values, err := Translate(ctx, e.sb, e.tr, store.Scope{OrganizationID: c.Job.OrganizationID, EnvironmentID: c.Job.EnvironmentID},
		store.TranslationWorkflow, c.Workflow.Key, deref(c.Subscriber.Locale), StepValues(*step))
	var se *sandbox.Error
	if err != nil && !errors.As(err, &se) {
		e.log.ErrorContext(ctx, "reading a step's translations", "err", err)
		return e.fail(o, "Internal", translationsUnread), nil
	}
	var ctl map[string]any
	if err == nil {
		ctl, err = RenderStep(e.sb, values, vars)
	}
	if err != nil {
		return e.fail(o, "Payload", "Message content could not be generated: "+err.Error()), nil
	}
	if step.Type == "email" {
		if out, ok := e.inLayout(ctx, o, c, step, ctl, vars); !ok {
			return out, nil
		}
	}
	switch step.Type {
	case "in_app":
		return e.inApp(o, c, ctl), nil
	case "delay":
		return e.delay(o, c, ctl), nil
	case "digest":
		return e.digest(o, c, ctl)
	case "throttle":
		return e.throttle(ctx, o, c, step, ctl), nil
	case "http_request":
		return e.httpRequest(ctx, o, c, ctl, b), nil
	case "email", "sms", "chat", "push":
		return e.deliver(ctx, o, c, step, ctl, b), nil
	default:
		return e.fail(o, "Internal", fmt.Sprintf("Steps of type %s are not supported: the step did not run", step.Type)), nil
	}
}

// turnedOff says whether preferences turn the channel of a step off for the
// job's subscriber, and why; the step is then skipped and the workflow goes
// on. Delay and digest steps are never turned off.
func turnedOff(c store.Claimed, stepType string) (bool, string) {
	if !preference.IsChannel(stepType) {
		return false, ""
	}
	st := preference.Of(c.Workflow).Resolve(stepType, c.Preferences)
	switch {
	case st.Enabled:
		return false, ""
	case st.Source == preference.SourceSubscriber:
		return true, "Step skipped: the subscriber's preferences turn the " + stepType + " channel off"
	default:
		return true, "Step skipped: the workflow's preferences turn the " + stepType + " channel off"
	}
}

// detail is an execution detail of the outcome's job.
func (e *Engine) detail(o store.JobOutcome, status, source, text string, raw *string) store.ExecutionDetail {
	return store.ExecutionDetail{
		ID: id.NewAt(e.now()), JobID: o.Job.ID, NotificationID: o.Job.NotificationID, EnvironmentID: o.Job.EnvironmentID,
		Status: status, Source: source, Detail: text, IsRetry: o.Job.Attempts > 1, ProviderID: o.Job.ProviderID,
		Raw: raw, CreatedAt: e.now(),
	}
}

func (e *Engine) fail(o store.JobOutcome, source, text string) store.JobOutcome {
	o.Status, o.Error = store.JobFailed, text
	o.Details = append(o.Details, e.detail(o, "Failed", source, text, nil))
	return o
}

// inApp creates the inbox message from the rendered controls.
func (e *Engine) inApp(o store.JobOutcome, c store.Claimed, ctl map[string]any) store.JobOutcome {
	now := e.now()
	m := &store.Message{
		ID: id.NewAt(now), OrganizationID: c.Job.OrganizationID, EnvironmentID: c.Job.EnvironmentID,
		NotificationID: c.Job.NotificationID, JobID: c.Job.ID, SubscriberID: c.Job.SubscriberID,
		WorkflowID: c.Job.WorkflowID, TemplateIdentifier: c.Workflow.Key, TransactionID: c.Job.TransactionID,
		Channel: "in_app", ProviderID: c.Job.ProviderID, Content: str(ctl["body"]), Subject: optStr(ctl["subject"]),
		Avatar: optStr(ctl["avatar"]), CTA: cta(ctl), Actor: c.Notification.Actor, Payload: c.Notification.Payload,
		Overrides: c.Notification.Overrides, Tags: c.Workflow.Tags, Status: "sent", CreatedAt: now, UpdatedAt: now,
		Severity: c.Workflow.Severity,
	}
	if m.Tags == nil {
		m.Tags = []string{}
	}
	if d, ok := ctl["data"].(map[string]any); ok {
		m.Data, _ = json.Marshal(d)
	}
	o.Messages, o.Status = []*store.Message{m}, store.JobCompleted
	e.o.Metrics.MessageOutcome(m.Channel, m.ProviderID, metrics.OutcomeSent)
	raw, _ := json.Marshal(map[string]string{"messageId": m.ID})
	rs := string(raw)
	o.Details = append(o.Details, e.detail(o, "Success", "Internal", "In-app message created", &rs))
	return o
}

func str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

func optStr(v any) *string {
	if s, ok := v.(string); ok && s != "" {
		return &s
	}
	return nil
}

// cta builds the message's call to action from the in_app controls
// primaryAction, secondaryAction and redirect: each button keeps its own
// redirect (url, target), and the message's own redirect (cta.data, where
// a click on the notification goes) is the step's redirect alone: a
// button's redirect is followed only when the button is clicked.
func cta(ctl map[string]any) store.JSON {
	out := map[string]any{}
	url, target := redirectOf(ctl["redirect"])
	var buttons []map[string]any
	for _, a := range []struct{ key, typ string }{{"primaryAction", "primary"}, {"secondaryAction", "secondary"}} {
		act, ok := ctl[a.key].(map[string]any)
		if !ok || str(act["label"]) == "" {
			continue
		}
		button := map[string]any{"type": a.typ, "content": str(act["label"])}
		if u, t := redirectOf(act["redirect"]); u != "" {
			button["url"] = u
			if t != "" {
				button["target"] = t
			}
		}
		buttons = append(buttons, button)
	}
	if url != "" || len(buttons) > 0 {
		out["type"] = "redirect"
		data := map[string]any{}
		if url != "" {
			data["url"] = url
			if target != "" {
				data["target"] = target
			}
		}
		out["data"] = data
	}
	if len(buttons) > 0 {
		out["action"] = map[string]any{"status": "pending", "buttons": buttons}
	}
	b, _ := json.Marshal(out)
	return b
}

// linkTargets are the targets a redirect may name; any other is dropped.
var linkTargets = map[string]bool{"_self": true, "_blank": true, "_parent": true, "_top": true, "_unfencedTop": true}

// redirectOf reads a rendered redirect control: its url and target.
func redirectOf(v any) (url, target string) {
	r, ok := v.(map[string]any)
	if !ok {
		return "", ""
	}
	if t := str(r["target"]); linkTargets[t] {
		target = t
	}
	return str(r["url"]), target
}
