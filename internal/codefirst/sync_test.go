package codefirst

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/bridge"
	"github.com/herald-notify/herald/internal/store"
)

// TestWorkflowOf: a discovered workflow as the store keeps it — its name
// (the workflowId without one), steps in order with their control schemas
// (a null schema is none), and a null payload schema as none.
func TestWorkflowOf(t *testing.T) {
	t.Parallel()
	w := workflowOf(bridge.Workflow{WorkflowID: "welcome", Tags: []string{"code"}, PayloadSchema: json.RawMessage("null"),
		Steps: []bridge.Step{{StepID: "inbox", Type: "in_app", ControlsSchema: json.RawMessage(`{"type":"object"}`)},
			{StepID: "mail", Type: "email", ControlsSchema: json.RawMessage("null")}}})
	require.Equal(t, "welcome", w.Key)
	require.Equal(t, "welcome", w.Name, "no name: the workflowId")
	require.Nil(t, w.PayloadSchema)
	require.Equal(t, []store.Step{
		{StepID: "inbox", Name: "inbox", Type: "in_app", ControlSchema: store.JSON(`{"type":"object"}`)},
		{StepID: "mail", Name: "mail", Type: "email"},
	}, w.Steps)
	named := workflowOf(bridge.Workflow{WorkflowID: "x", Name: "Named"})
	require.Equal(t, "Named", named.Name)
}
