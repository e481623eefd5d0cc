package sqlstore

import (
	"context"
	"sync"
	"time"
)

// jobsChannel is the PostgreSQL NOTIFY channel of new due jobs.
const jobsChannel = "herald_jobs"

// ListenJobs calls wake whenever another process queues jobs, until ctx ends
// or the connection fails. On SQLite, where one process owns the database and
// wakes its workers in process, it just waits for ctx.
func (db *DB) ListenJobs(ctx context.Context, wake func()) error {
	return db.d.listen(ctx, db.url, jobsChannel, func(string) { wake() })
}

// notifyEvery is the shortest gap between two NOTIFYs of one process.
const notifyEvery = 5 * time.Millisecond

// notifier coalesces the wake-ups a process sends to the workers of every
// process. A NOTIFY inside each trigger's transaction made PostgreSQL commit
// those transactions one at a time; one NOTIFY after commit per few
// milliseconds wakes the workers as well, and polling covers a lost one.
type notifier struct {
	mu      sync.Mutex
	pending bool
	last    time.Time
}

// notifyJobs wakes the workers of every process, soon, after the caller's commit.
func (db *DB) notifyJobs() {
	if !db.d.notifies {
		return
	}
	n := &db.notify
	n.mu.Lock()
	if n.pending {
		n.mu.Unlock()
		return
	}
	n.pending = true
	wait := max(0, time.Until(n.last.Add(notifyEvery)))
	n.mu.Unlock()
	time.AfterFunc(wait, func() {
		n.mu.Lock()
		n.pending, n.last = false, time.Now()
		n.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		db.w.ExecContext(ctx, "SELECT pg_notify('"+jobsChannel+"', '')") //nolint:errcheck // polling covers a lost wake-up
	})
}
