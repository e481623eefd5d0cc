package engine

import (
	"context"
	"fmt"

	"github.com/herald-notify/herald/internal/store"
)

// fanout runs a claimed fan-out job: a batch of recipients at a time, each
// batch written with its notifications and jobs in one transaction, until
// no recipient remains or the job has had FanoutBatches batches; then it
// queues itself again, so that the steps of the notifications it made run
// in between and a large topic never holds a worker for long.
func (e *Engine) fanout(ctx context.Context, c store.Claimed) store.JobOutcome {
	o := store.JobOutcome{Job: c.Job, Handled: true}
	// Every committed batch resets the attempts: only runs that wrote
	// nothing count.
	if c.Job.Attempts > e.o.MaxAttempts {
		e.log.ErrorContext(ctx, "a fan-out made no progress in its attempts; it stops", "attempts", c.Job.Attempts-1)
		return e.fanoutFailed(o, fmt.Sprintf("Gave up after %d attempts without progress", c.Job.Attempts-1))
	}
	for i := 1; ; i++ {
		res, err := e.o.Store.FanoutRun(ctx, &store.FanoutRunParams{Job: c.Job, Limit: e.o.FanoutBatch,
			Yield: i >= e.o.FanoutBatches, Lease: e.o.Lease, Now: e.now()})
		if err != nil {
			e.log.WarnContext(ctx, "fanning out a trigger", "err", err)
			o = e.retry(store.JobOutcome{Job: c.Job}, err)
			o.Details = nil // a fan-out job has no notification to show them on
			return o
		}
		if res.Created > 0 {
			e.Wake()
		}
		if res.Done {
			j := c.Job
			j.Status = store.JobCompleted
			e.done(j, e.now())
		}
		if !res.Applied || res.Done || i >= e.o.FanoutBatches {
			return o
		}
	}
}

// fanoutFailed fails a fan-out job; its error says why (it has no
// notification, so no execution detail).
func (e *Engine) fanoutFailed(o store.JobOutcome, text string) store.JobOutcome {
	o.Handled, o.Status, o.Error, o.Details = false, store.JobFailed, text, nil
	return o
}
