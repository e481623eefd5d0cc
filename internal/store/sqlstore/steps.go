package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/herald-notify/herald/internal/store"
)

// StepResults implements store.Steps: one read of the notification's
// earlier jobs, each in-app job with its message as it is now.
func (db *DB) StepResults(ctx context.Context, scope store.Scope, notificationID string, before int) ([]store.StepResult, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT j.step_id, j.type, j.status, j.output, j.digest, j.created_at,"+
		" m.seen, m.read, m.last_seen_at, m.last_read_at"+
		" FROM jobs j LEFT JOIN messages m ON m.job_id = j.id AND j.type = 'in_app' AND m.channel = 'in_app'"+
		" WHERE j.notification_id = $1 AND j.environment_id = $2 AND j.step_index < $3 ORDER BY j.step_index",
		notificationID, scope.EnvironmentID, before)
	out, err := scanAll(rows, err, func(r rowScanner) (store.StepResult, error) {
		var s store.StepResult
		var output, digest sql.NullString
		var seen, read sql.NullBool
		var lastSeen, lastRead sql.NullInt64
		var created int64
		if err := r.Scan(&s.StepID, &s.Type, &s.Status, &output, &digest, &created, &seen, &read, &lastSeen, &lastRead); err != nil {
			return s, err
		}
		s.CreatedAt = fromMS(created)
		if output.Valid {
			s.Output = store.JSON(output.String)
		}
		if digest.Valid {
			s.Digest = store.JSON(digest.String)
		}
		if seen.Valid {
			s.Message = &store.MessageState{Seen: seen.Bool, Read: read.Bool, LastSeenAt: fromNullMS(lastSeen),
				LastReadAt: fromNullMS(lastRead)}
		}
		return s, nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlstore: step results of %s: %w", notificationID, err)
	}
	return out, nil
}

// ThrottleCount implements store.Steps: one upsert counts the execution in
// the open window or opens a new one where the last has closed.
func (db *DB) ThrottleCount(ctx context.Context, p *store.ThrottleCountParams) (store.ThrottleCount, error) {
	now := ms(p.Now)
	out, err := execRow(ctx, db, func(r rowScanner) (store.ThrottleCount, error) {
		var c store.ThrottleCount
		var start, end int64
		err := r.Scan(&c.Count, &start, &end)
		c.WindowStart, c.WindowEnd = fromMS(start), fromMS(end)
		return c, err
	}, "INSERT INTO throttle_windows (environment_id, subscriber_id, workflow_id, step_id, throttle_key,"+
		" window_start, window_end, execution_count) VALUES ($1, $2, $3, $4, $5, $6, $7, 1)"+
		" ON CONFLICT (environment_id, subscriber_id, workflow_id, step_id, throttle_key) DO UPDATE SET"+
		" execution_count = CASE WHEN throttle_windows.window_end > $6 THEN throttle_windows.execution_count + 1 ELSE 1 END,"+
		" window_start = CASE WHEN throttle_windows.window_end > $6 THEN throttle_windows.window_start ELSE $6 END,"+
		" window_end = CASE WHEN throttle_windows.window_end > $6 THEN throttle_windows.window_end ELSE $7 END"+
		" RETURNING execution_count, window_start, window_end",
		p.EnvironmentID, p.SubscriberID, p.WorkflowID, p.StepID, p.Key, now, ms(p.WindowEnd))
	if err != nil {
		return out, fmt.Errorf("sqlstore: throttle count: %w", err)
	}
	return out, nil
}
