package engine

import (
	"context"
	"maps"
	"slices"

	"github.com/herald-notify/herald/internal/liquid"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
)

// PreviewParams is what PreviewSend needs.
type PreviewParams struct {
	Scope store.Scope
	// WorkflowKey is the workflowId whose translations {{t.key}} reads.
	WorkflowKey string
	// Step is the step to render, with the controls to render (the stored
	// ones, or the ones being edited) in their order.
	Step  store.Step
	Input StepInput
	// Contexts bind context.<type> ({"tenant": {"id", "data"}}), as a
	// notification keeps them; nil for none.
	Contexts store.JSON
	// Env are values of env.<KEY> laid over the environment's own
	// (EnvValues); nil for none.
	Env          map[string]string
	Sandbox      *sandbox.Sandbox
	Translations TranslationReader
	Layouts      store.Layouts
	EnvValues    EnvironmentValues
}

// PreviewSend renders a step as a worker would send it and returns its
// content (Preview): the subscriber's and payload's bindings, the
// contexts, the environment's variables (read only when the controls name
// "env."), the translations in the subscriber's locale (Translate), the
// controls in their order (RenderStep), then an e-mail's layout
// (WrapEmailInLayout). The public API's step preview and the dashboard's
// both use it; a template's error is returned (a *sandbox.Error, or
// ErrLayoutNotFound), for the API to give an empty preview and the
// dashboard to show it.
func PreviewSend(ctx context.Context, p *PreviewParams) (map[string]any, error) {
	vars := p.Input.Vars()
	bindContexts(vars, p.Contexts)
	if namesEnv(p.Step.ControlValues) {
		vals := map[string]string{}
		if p.EnvValues != nil {
			got, err := p.EnvValues(ctx, p.Scope.EnvironmentID)
			if err != nil {
				return nil, err
			}
			maps.Copy(vals, got)
		}
		maps.Copy(vals, p.Env)
		env := liquid.NewMap(len(vals))
		for _, k := range slices.Sorted(maps.Keys(vals)) {
			env.Set(k, vals[k])
		}
		vars["env"] = env
	}
	locale := ""
	if p.Input.Subscriber.Locale != nil {
		locale = *p.Input.Subscriber.Locale
	}
	values, err := Translate(ctx, p.Sandbox, p.Translations, p.Scope, store.TranslationWorkflow, p.WorkflowKey, locale,
		StepValues(p.Step))
	if err != nil {
		return nil, err
	}
	ctl, err := RenderStep(p.Sandbox, values, vars)
	if err != nil {
		return nil, err
	}
	if p.Step.Type == "email" {
		body, err := WrapEmailInLayout(ctx, &WrapEmailParams{Scope: p.Scope, Step: &p.Step, Body: str(ctl["body"]),
			Vars: vars, Layouts: p.Layouts, Sandbox: p.Sandbox})
		if err != nil {
			return nil, err
		}
		ctl["body"] = body
	}
	return Preview(p.Step.Type, ctl), nil
}
