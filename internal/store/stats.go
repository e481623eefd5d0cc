package store

import (
	"context"
	"time"
)

// Live job states that JobStats counts. Due and scheduled split the
// queued jobs at now: due ones wait only for a worker to claim them.
const (
	JobStatDue       = "due"       // queued, run_at reached
	JobStatScheduled = "scheduled" // queued, run_at ahead (a retry's backoff)
	JobStatRunning   = JobRunning  // leased to a worker
	JobStatDelayed   = JobDelayed  // a delay or an open digest window
)

// JobCount is the number of live jobs of one type in one state.
type JobCount struct {
	Type, Status string
	Count        int64
}

// JobStats is the job queue at one moment, for the metrics endpoint.
type JobStats struct {
	// Counts are the live jobs (due, scheduled, running, delayed) by type;
	// combinations without jobs are left out.
	Counts []JobCount
	// OldestDue is the run time of the longest-waiting due job (zero: none).
	OldestDue time.Time
}

// Stats are read at metrics scrape time, never on a request's path.
type Stats interface {
	// JobStats counts the live jobs by type and state at now. Finished jobs
	// (completed, failed, skipped, …) are not counted: the table keeps every
	// one, and only the live ones have indexes to count them by.
	JobStats(ctx context.Context, now time.Time) (JobStats, error)
}
