package engine

import (
	"context"
	"encoding/json"

	"github.com/herald-notify/herald/internal/liquid"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
)

// SecretMask is what a secret environment variable shows as: in every
// read of the API, and as env.<KEY> in a preview (never its value).
const SecretMask = "••••••••"

// EnvironmentVariableLister lists an environment's variables (their
// non-secret values in clear).
type EnvironmentVariableLister interface {
	EnvironmentVariableList(ctx context.Context, scope store.Scope, search string) ([]store.EnvironmentVariable, error)
}

// PreviewEnv is what env.<KEY> is in a preview of a step of the scope's
// environment: its variables' values there, a secret as SecretMask, with
// the values sent laid over them.
func PreviewEnv(ctx context.Context, r EnvironmentVariableLister, scope store.Scope, sent map[string]any) (map[string]any, error) {
	list, err := r.EnvironmentVariableList(ctx, scope, "")
	if err != nil {
		return nil, err
	}
	env := map[string]any{}
	for _, v := range list {
		for _, val := range v.Values {
			if val.EnvironmentID != scope.EnvironmentID {
				continue
			}
			env[v.Key] = val.Value
			if v.IsSecret {
				env[v.Key] = SecretMask
			}
		}
	}
	for k, v := range sent {
		env[k] = v
	}
	return env, nil
}

// PreviewParams is what PreviewSend needs.
type PreviewParams struct {
	Scope store.Scope
	// WorkflowKey is the workflowId whose translations {{t.key}} reads.
	WorkflowKey string
	// Step is the step to render, with the controls to render (the stored
	// ones, or the ones being edited) in their order.
	Step  store.Step
	Input StepInput
	// Env binds env.<KEY> (PreviewEnv); Contexts binds context.<type>
	// ({"tenant": {"id", "data"}}); nil for none.
	Env      map[string]any
	Contexts any
	// Steps binds steps.<stepId>: the earlier steps' outputs (an HTTP
	// request's response, a throttle's count), as the preview supposes them.
	Steps   any
	Sandbox *sandbox.Sandbox
	// Translations reads the workflow's and the layout's translations.
	Translations TranslationReader
	Layouts      store.Layouts
}

// PreviewSend renders a step as a worker would send it and returns its
// content (Preview): the subscriber's and payload's bindings, env and the
// contexts, the translations in the subscriber's locale (Translate), the
// controls in their order (RenderStep), then an e-mail's layout
// (WrapEmailInLayout, with the layout's translations). The public API's
// step preview and the dashboard's both use it; a template's error is
// returned (a *sandbox.Error, or ErrLayoutNotFound) for the API to give an
// empty preview and the dashboard to show it.
func PreviewSend(ctx context.Context, p *PreviewParams) (map[string]any, error) {
	vars := p.Input.Vars()
	for name, m := range map[string]any{"env": p.Env, "context": p.Contexts, "steps": p.Steps} {
		if m == nil {
			continue
		}
		if mm, ok := m.(map[string]any); ok && mm == nil {
			continue
		}
		raw, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		if v, err := liquid.ParseJSON(string(raw)); err == nil {
			vars[name] = v
		}
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
			Vars: vars, Layouts: p.Layouts, Sandbox: p.Sandbox, Translations: p.Translations, Locale: locale})
		if err != nil {
			return nil, err
		}
		ctl["body"] = body
	}
	return Preview(p.Step.Type, ctl), nil
}
