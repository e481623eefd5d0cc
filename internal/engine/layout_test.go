package engine_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

func TestEmailLayoutKey(t *testing.T) {
	t.Parallel()
	step := &store.Step{StepID: "mail", Type: "email", ControlValues: map[string]any{"layoutId": "controls"}}
	bare := &store.Step{StepID: "mail", Type: "email", ControlValues: map[string]any{"subject": "s"}}
	for _, c := range []struct {
		name      string
		step      *store.Step
		overrides string
		want      string
	}{
		{"the step's controls", step, ``, "controls"},
		{"no layoutId: no layout (the default is not applied)", bare, `{}`, ""},
		{"per step", step, `{"steps":{"mail":{"layoutId":"s"}},"channels":{"email":{"layoutId":"c"}},"layoutIdentifier":"d"}`, "s"},
		{"another step's override", step, `{"steps":{"other":{"layoutId":"s"}}}`, "controls"},
		{"per channel", bare, `{"channels":{"email":{"layoutId":"c"}},"layoutIdentifier":"d"}`, "c"},
		{"deprecated layoutIdentifier", step, `{"layoutIdentifier":"d"}`, "d"},
		{"null per step means none", step, `{"steps":{"mail":{"layoutId":null}},"channels":{"email":{"layoutId":"c"}}}`, ""},
		{"null per channel means none", step, `{"channels":{"email":{"layoutId":null}}}`, ""},
		{"null layoutIdentifier means none", step, `{"layoutIdentifier":null}`, ""},
		{"a value of another type is absent", step, `{"channels":{"email":{"layoutId":5}},"layoutIdentifier":["x"]}`, "controls"},
		{"null in the controls", &store.Step{StepID: "mail", ControlValues: map[string]any{"layoutId": nil}}, ``, ""},
		{"overrides that are not an object", step, `[1]`, "controls"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, engine.EmailLayoutKey(c.step, store.JSON(c.overrides)))
		})
	}
}

// TestWrapEmailInLayout: the step's rendered body goes into the layout's
// `content` as is; the layout sees the step's variables; a missing layout
// and a layout over a budget are errors the worker fails the step with.
func TestWrapEmailInLayout(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		layout := func(key, body string) {
			l := store.Layout{ID: id.New(), OrganizationID: w.scope.OrganizationID, EnvironmentID: w.scope.EnvironmentID, Key: key,
				Name: key, CreatedAt: w.clock.Now(), UpdatedAt: w.clock.Now()}
			if body != "" {
				l.ControlValues = store.JSON(`{"email":{"body":` + jsonString(body) + `,"editorType":"html"}}`)
			}
			require.NoError(t, db.LayoutCreate(ctx, &l))
		}
		layout("plain", "")
		layout("brand", "<html><body><h1>{{subscriber.firstName | upcase}}</h1>{{content}}<footer>{{payload.org}}</footer></body></html>")
		layout("loop", "<html><body>{% for i in (1..1000) %}{% for j in (1..1000) %}{% endfor %}{% endfor %}{{content}}</body></html>")
		sb := sandbox.New(sandbox.DefaultLimits)
		vars := map[string]any{"subscriber": map[string]any{"firstName": "Ada"}, "payload": map[string]any{"org": `A&B "Co"`}}
		body := "<p class=\"x\">Hi\n\t\\ & <b>Ada</b></p>"
		wrap := func(key string, overrides string) (string, error) {
			step := &store.Step{StepID: "mail", Type: "email", ControlValues: map[string]any{"layoutId": key}}
			return engine.WrapEmailInLayout(ctx, &engine.WrapEmailParams{Scope: w.scope, Step: step, Overrides: store.JSON(overrides),
				Body: body, Vars: vars, Layouts: db, Sandbox: sb})
		}

		out, err := wrap("brand", "")
		require.NoError(t, err)
		require.Equal(t, `<html><body><h1>ADA</h1>`+body+`<footer>A&B "Co"</footer></body></html>`, out)
		out, err = wrap("plain", "")
		require.NoError(t, err)
		require.Equal(t, body, out, "a layout without an e-mail body wraps nothing")
		out, err = wrap("brand", `{"channels":{"email":{"layoutId":null}}}`)
		require.NoError(t, err)
		require.Equal(t, body, out, "the trigger chose no layout")
		_, err = wrap("nope", "")
		require.ErrorIs(t, err, engine.ErrLayoutNotFound)
		require.EqualError(t, err, `layout "nope" was not found`)
		_, err = wrap("brand", `{"steps":{"mail":{"layoutId":"gone"}}}`)
		require.ErrorIs(t, err, engine.ErrLayoutNotFound, "an override naming no layout")

		_, err = wrap("loop", "")
		var se *sandbox.Error
		require.ErrorAs(t, err, &se, "a layout is an untrusted template: it renders under the sandbox's budgets")
		require.Equal(t, sandbox.ReasonIterations, se.Reason)
		require.Equal(t, "layout", se.Field)
	})
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
