package engine

import (
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
)

// PreviewStep renders a step's controls for a subscriber and payload as a
// delivery of the step would (the dashboard's preview): the same bindings,
// the same order, the same sandbox and budgets. A template's error is the
// returned *sandbox.Error, for the caller to show.
func PreviewStep(sb *sandbox.Sandbox, step store.Step, sub store.Subscriber, payload store.JSON) (map[string]any, error) {
	return sb.Controls(sandbox.Ordered(step.ControlValues, step.ControlOrder), bindings(sub, payload, nil))
}
