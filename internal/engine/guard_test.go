package engine

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store"
)

// TestRunGuardedFailsOnlyThatJob: a step that panics (here: no sandbox to
// render with) fails its own job with a detail and the job's id in the log;
// the engine goes on with the next.
func TestRunGuardedFailsOnlyThatJob(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	e := New(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	step := store.Step{ID: "s1", Type: "in_app", ControlValues: map[string]any{"body": "hi"}}
	c := store.Claimed{Job: store.Job{ID: "job-1", StepID: "s1", Attempts: 1}, Workflow: store.Workflow{Steps: []store.Step{step}}}

	sb := e.sb
	e.sb = nil
	o, join := e.runGuarded(context.Background(), c, &batchIntegrations{})
	require.Nil(t, join)
	require.Equal(t, store.JobFailed, o.Status)
	require.Equal(t, "Internal", o.Details[0].Source)
	require.Contains(t, o.Details[0].Detail, "failed unexpectedly")
	require.Contains(t, logs.String(), "jobId=job-1")

	e.sb = sb
	c.Job.ID = "job-2"
	o, _ = e.runGuarded(context.Background(), c, &batchIntegrations{})
	require.Equal(t, store.JobCompleted, o.Status)
	require.Equal(t, "hi", o.Messages[0].Content)
}

func TestProtectKeepsLoopsAlive(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	e := New(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.True(t, e.protect("testing", func() { panic("boom") }))
	require.False(t, e.protect("testing", func() {}))
	require.Contains(t, logs.String(), "boom")
}
