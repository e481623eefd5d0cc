package sqlstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// jobsChannel is the PostgreSQL NOTIFY channel of new due jobs.
const jobsChannel = "herald_jobs"

// ListenJobs calls wake whenever another process queues jobs, until ctx ends
// or the connection fails. On SQLite, where one process owns the database and
// wakes its workers in process, it just waits for ctx.
func (db *DB) ListenJobs(ctx context.Context, wake func()) error {
	if db.d.name != "postgres" {
		<-ctx.Done()
		return nil
	}
	conn, err := pgx.Connect(ctx, db.url)
	if err != nil {
		return fmt.Errorf("sqlstore: listen: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+jobsChannel); err != nil {
		return fmt.Errorf("sqlstore: listen: %w", err)
	}
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("sqlstore: listen: %w", err)
		}
		wake()
	}
}
