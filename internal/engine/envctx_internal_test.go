package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
)

// TestAddTriggerVars: env and context in a step's bindings; the
// environment's values are read only for a step that names env, and a read
// that fails is the step's error.
func TestAddTriggerVars(t *testing.T) {
	t.Parallel()
	reads := 0
	values := func(_ context.Context, env string) (map[string]string, error) {
		reads++
		require.Equal(t, "env-1", env)
		return map[string]string{"BASE_URL": "https://x.test"}, nil
	}
	c := store.Claimed{Job: store.Job{EnvironmentID: "env-1"},
		Notification: store.Notification{Contexts: store.JSON(`{"tenant":{"id":"acme","data":{"name":"Acme"}}}`)}}
	sb := sandbox.New(sandbox.DefaultLimits)

	step := &store.Step{ControlValues: map[string]any{"body": "{{env.BASE_URL}}/{{context.tenant.id}} {{context.tenant.data.name}} [{{env.NOPE}}]"}}
	b := bindings(store.Subscriber{SubscriberID: "ada"}, nil, nil)
	require.NoError(t, addTriggerVars(t.Context(), b, c, step, values))
	ctl, err := sb.Controls(sandbox.Ordered(step.ControlValues, nil), b)
	require.NoError(t, err)
	require.Equal(t, "https://x.test/acme Acme []", ctl["body"])
	require.Equal(t, 1, reads)

	plain := &store.Step{ControlValues: map[string]any{"body": "Hi", "nested": []any{map[string]any{"x": "{{payload.environment}}"}}}}
	require.NoError(t, addTriggerVars(t.Context(), bindings(store.Subscriber{}, nil, nil), c, plain, values))
	require.Equal(t, 1, reads, "no read for a step that does not name env")

	failing := func(context.Context, string) (map[string]string, error) { return nil, errors.New("down") }
	require.Error(t, addTriggerVars(t.Context(), bindings(store.Subscriber{}, nil, nil), c, step, failing))
}

// TestPlanTriggerDigestSeesContext: a digest planned with its trigger
// renders with the trigger's contexts, as a worker would.
func TestPlanTriggerDigestSeesContext(t *testing.T) {
	t.Parallel()
	sb := sandbox.New(sandbox.DefaultLimits)
	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	step := store.Step{Type: "digest", ControlValues: map[string]any{"amount": "{{context.tenant.data.minutes}}", "unit": "minutes"}}
	plan := planTriggerDigest(sb, step, store.Subscriber{SubscriberID: "ada"}, nil,
		store.JSON(`{"tenant":{"id":"acme","data":{"minutes":5}}}`), now)
	require.NotNil(t, plan)
	require.Equal(t, now.Add(5*time.Minute), plan.WindowEnd)
}
