package engine

import (
	"context"
	"maps"
	"slices"

	"github.com/herald-notify/herald/internal/liquid"
	"github.com/herald-notify/herald/internal/store"
)

// EnvironmentValues reads the values of an environment's variables, in the
// clear, by key (store.EnvironmentVariables).
type EnvironmentValues func(ctx context.Context, environmentID string) (map[string]string, error)

// addTriggerVars adds to a step's bindings what its templates see of the
// run's environment and trigger besides the subscriber and payload:
//   - env.<KEY>: the environment's variables, read only for a step whose
//     controls name "env." (other steps cost no read); a key with no value
//     there renders empty, as every missing variable;
//   - context.<type>: {id, data}, the trigger's contexts as they were
//     resolved when it was triggered (kept on the notification).
func addTriggerVars(ctx context.Context, b map[string]any, c store.Claimed, step *store.Step, values EnvironmentValues) error {
	bindContexts(b, c.Notification.Contexts)
	if values == nil || !namesEnv(step.ControlValues) {
		return nil
	}
	return bindEnv(ctx, b, c.Job.EnvironmentID, values)
}

// bindEnv binds env to an environment's variables.
func bindEnv(ctx context.Context, b map[string]any, environmentID string, values EnvironmentValues) error {
	vals, err := values(ctx, environmentID)
	if err != nil {
		return err
	}
	env := liquid.NewMap(len(vals))
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		env.Set(k, vals[k])
	}
	b["env"] = env
	return nil
}

// bindContexts binds context.<type> to the contexts a notification keeps.
func bindContexts(b map[string]any, contexts store.JSON) {
	if len(contexts) > 0 {
		if v, err := liquid.ParseJSON(string(contexts)); err == nil {
			b["context"] = v
		}
	}
}

// namesEnv says whether a text of the controls holds "env.".
func namesEnv(v any) bool { return namesText(v, "env.") }

// memoValues reads an environment's values once for every call with it
// (the in-app steps planned for the recipients of one trigger).
func memoValues(read EnvironmentValues) EnvironmentValues {
	got := map[string]map[string]string{}
	return func(ctx context.Context, environmentID string) (map[string]string, error) {
		if v, ok := got[environmentID]; ok {
			return v, nil
		}
		v, err := read(ctx, environmentID)
		if err == nil {
			got[environmentID] = v
		}
		return v, err
	}
}
