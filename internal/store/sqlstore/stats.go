package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// jobStatsQuery counts the live jobs, one branch per status so that each
// uses its partial index (jobs_due, jobs_leased, jobs_delayed); finished
// jobs are never scanned. Both dialects take the same text.
const jobStatsQuery = `
SELECT type, CASE WHEN run_at <= $1 THEN 'due' ELSE 'scheduled' END AS state, count(*), min(run_at)
  FROM jobs WHERE status = 'queued' GROUP BY 1, 2
UNION ALL
SELECT type, status, count(*), min(run_at) FROM jobs WHERE status = 'running' GROUP BY type, status
UNION ALL
SELECT type, status, count(*), min(run_at) FROM jobs WHERE status = 'delayed' GROUP BY type, status`

// JobStats implements store.Stats with one grouped query on the read pool.
func (db *DB) JobStats(ctx context.Context, now time.Time) (store.JobStats, error) {
	rows, err := db.r.QueryContext(ctx, jobStatsQuery, ms(now))
	if err != nil {
		return store.JobStats{}, fmt.Errorf("sqlstore: job stats: %w", err)
	}
	defer rows.Close()
	var st store.JobStats
	for rows.Next() {
		var c store.JobCount
		var first sql.NullInt64
		if err := rows.Scan(&c.Type, &c.Status, &c.Count, &first); err != nil {
			return store.JobStats{}, fmt.Errorf("sqlstore: job stats: %w", err)
		}
		st.Counts = append(st.Counts, c)
		if c.Status == store.JobStatDue && first.Valid && (st.OldestDue.IsZero() || fromMS(first.Int64).Before(st.OldestDue)) {
			st.OldestDue = fromMS(first.Int64)
		}
	}
	if err := rows.Err(); err != nil {
		return store.JobStats{}, fmt.Errorf("sqlstore: job stats: %w", err)
	}
	return st, nil
}
