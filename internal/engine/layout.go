package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
)

// ErrLayoutNotFound: the layoutId an e-mail step renders in names no layout
// of the environment. The step fails.
var ErrLayoutNotFound = errors.New("was not found")

// LayoutContentVariable is the variable a layout's body places the e-mail
// step's rendered body with.
const LayoutContentVariable = "content"

// WrapEmailParams is what WrapEmailInLayout needs.
type WrapEmailParams struct {
	Scope store.Scope
	// Step is the e-mail step; its controls' layoutId names its layout.
	Step *store.Step
	// Overrides are the trigger's overrides (nil for none: a preview).
	Overrides store.JSON
	// Body is the step's rendered body (HTML).
	Body string
	// Vars are the variables the step's templates saw (see bindings).
	Vars map[string]any
	// Layouts finds the layout; Sandbox renders it.
	Layouts store.Layouts
	Sandbox *sandbox.Sandbox
	// Translations reads the layout's translations and Locale is the
	// subscriber's: a layout whose isTranslationEnabled is on has its
	// {{t.key}} replaced (Translate) before it renders.
	Translations TranslationReader
	Locale       string
	// EnvValues, when set, binds env for a layout that names env. and
	// whose step's variables do not have it already.
	EnvValues EnvironmentValues
}

// WrapEmailInLayout renders an e-mail step's body inside the layout that
// the trigger's overrides or the step's controls choose (EmailLayoutKey):
// the layout's e-mail body rendered in the sandbox, under a budget of its
// own, with the step's variables plus `content` = Body, inserted as is. A
// layout with isTranslationEnabled has its {{t.key}} translated first, in
// p.Locale, from the layout's own translations (Translate with
// store.TranslationLayout and its layoutId). No layout chosen, or a layout
// without an e-mail body, leaves Body as it is.
// A layoutId naming no layout is ErrLayoutNotFound; a layout that does not
// render is a *sandbox.Error (its Field "layout"); other errors are the
// store's. The worker's e-mail steps and the step preview both use it.
func WrapEmailInLayout(ctx context.Context, p *WrapEmailParams) (string, error) {
	key := EmailLayoutKey(p.Step, p.Overrides)
	if key == "" {
		return p.Body, nil
	}
	l, err := p.Layouts.LayoutGet(ctx, p.Scope, key)
	if errors.Is(err, store.ErrNotFound) {
		return "", fmt.Errorf("layout %s %w", strconv.Quote(key), ErrLayoutNotFound)
	}
	if err != nil {
		return "", err
	}
	src, _ := LayoutEmailBody(l.ControlValues)
	if src == "" {
		return p.Body, nil
	}
	if l.IsTranslationEnabled {
		t, err := Translate(ctx, p.Sandbox, p.Translations, p.Scope, store.TranslationLayout, l.Key, p.Locale, src)
		if err != nil {
			return "", layoutError(err)
		}
		src, _ = t.(string)
	}
	vars := make(map[string]any, len(p.Vars)+1)
	for k, v := range p.Vars {
		vars[k] = v
	}
	vars[LayoutContentVariable] = p.Body
	if _, ok := vars["env"]; !ok && p.EnvValues != nil && namesEnv(src) {
		if err := bindEnv(ctx, vars, p.Scope.EnvironmentID, p.EnvValues); err != nil {
			return "", err
		}
	}
	out, err := p.Sandbox.Render(src, vars)
	if err != nil {
		return "", layoutError(err)
	}
	return out, nil
}

// layoutError names the layout as the field of a *sandbox.Error; other
// errors are returned as they are.
func layoutError(err error) error {
	var se *sandbox.Error
	if errors.As(err, &se) {
		c := *se
		c.Field = "layout"
		return &c
	}
	return err
}

// LayoutEmailBody reads a layout's e-mail body and editor type from its
// control values ("" when it has none).
func LayoutEmailBody(values store.JSON) (body, editorType string) {
	var v struct {
		Email *struct {
			Body       string `json:"body"`
			EditorType string `json:"editorType"`
		} `json:"email"`
	}
	if len(values) == 0 || json.Unmarshal(values, &v) != nil || v.Email == nil {
		return "", ""
	}
	return v.Email.Body, v.Email.EditorType
}

// EmailLayoutKey is the layout an e-mail step renders in ("" for none):
// overrides.steps.<stepId>.layoutId, else overrides.channels.email.layoutId,
// else the deprecated overrides.layoutIdentifier, else the step's controls'
// layoutId. The first of them that is present decides, and null means no
// layout; a value of another type counts as absent. A step without a
// layoutId renders without a layout: the environment's default layout is
// not applied to it.
func EmailLayoutKey(step *store.Step, overrides store.JSON) string {
	ov := readOverrides(overrides)
	steps, _ := ov["steps"].(map[string]any)
	st, _ := steps[step.StepID].(map[string]any)
	channels, _ := ov["channels"].(map[string]any)
	email, _ := channels["email"].(map[string]any)
	for _, m := range []struct {
		m   map[string]any
		key string
	}{{st, "layoutId"}, {email, "layoutId"}, {ov, "layoutIdentifier"}, {step.ControlValues, "layoutId"}} {
		v, ok := m.m[m.key]
		if !ok {
			continue
		}
		switch t := v.(type) {
		case nil:
			return ""
		case string:
			return t
		}
	}
	return ""
}

// inLayout wraps a rendered e-mail step's body in its layout (ctl["body"]
// changes); when it cannot, it returns the job's outcome and false: a
// missing layout or one that does not render fails the step, a store
// error retries it.
func (e *Engine) inLayout(ctx context.Context, o store.JobOutcome, c store.Claimed, step *store.Step,
	ctl map[string]any, vars map[string]any) (store.JobOutcome, bool) {
	body, err := WrapEmailInLayout(ctx, &WrapEmailParams{
		Scope: store.Scope{OrganizationID: c.Job.OrganizationID, EnvironmentID: c.Job.EnvironmentID},
		Step:  step, Overrides: c.Notification.Overrides, Body: str(ctl["body"]), Vars: vars,
		Layouts: e.o.Store, Sandbox: e.sb, Translations: e.tr, Locale: deref(c.Subscriber.Locale), EnvValues: e.envValues,
	})
	var se *sandbox.Error
	switch {
	case errors.Is(err, ErrLayoutNotFound):
		return e.fail(o, "Payload", "The e-mail's "+err.Error()+": nothing was sent"), false
	case errors.As(err, &se):
		return e.fail(o, "Payload", "Message content could not be generated: "+err.Error()), false
	case err != nil:
		return e.retry(o, err), false
	}
	ctl["body"] = body
	return o, true
}
