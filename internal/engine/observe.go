package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/herald-notify/herald/internal/logctx"
	"github.com/herald-notify/herald/internal/store"
)

// jobContext carries the job's ids into every line logged with it
// (logctx): jobId, transactionId and environmentId.
func jobContext(ctx context.Context, j store.Job) context.Context {
	return logctx.With(ctx, &logctx.Fields{JobID: j.ID, TransactionID: j.TransactionID, EnvironmentID: j.EnvironmentID})
}

// finished observes an outcome JobFinish wrote: a job done for good counts
// in the metrics, with the time since it became due; at debug level every
// outcome is logged.
func (e *Engine) finished(ctx context.Context, o store.JobOutcome, now time.Time) {
	if o.Handled {
		return // a fan-out batch or a digest placing: observed by its own call
	}
	if store.JobFinal(o.Status) {
		e.o.Metrics.JobFinished(o.Job.Type, o.Status, now.Sub(o.Job.RunAt))
	}
	if e.log.Enabled(ctx, slog.LevelDebug) {
		e.log.DebugContext(jobContext(ctx, o.Job), "job finished", "type", o.Job.Type, "status", o.Status,
			"attempt", o.Job.Attempts, "sinceDueMs", now.Sub(o.Job.RunAt).Milliseconds())
	}
}

// done observes a job that a store call other than JobFinish wrote with
// its Status — a delay or digest resumed, a digest event placed, a fan-out
// through — if that status is final.
func (e *Engine) done(j store.Job, now time.Time) {
	if store.JobFinal(j.Status) {
		e.o.Metrics.JobFinished(j.Type, j.Status, now.Sub(j.RunAt))
	}
}
