package sqlstore

import (
	"context"
	"fmt"
)

// maintainedTables are the tables whose size and churn the pipeline drives.
var maintainedTables = []string{"jobs", "notifications", "execution_details", "messages", "subscribers", "transactions",
	"inbox_counts", "delivery_events"}

// maintainLock is the session advisory lock that lets one process at a time
// maintain a PostgreSQL database.
const maintainLock = 0x6865726c64 // "herld"

// Maintain implements store.Pipeline. On PostgreSQL, when the server's
// autovacuum is off (it is on by default, and then Maintain does nothing),
// it does autovacuum's job for Herald's tables with autovacuum's default
// thresholds: ANALYZE a table once more than 50 rows + 10% of it changed
// since its statistics were taken, VACUUM it once its dead rows pass 50 +
// 20%. Without statistics the planner took a 10,000-row jobs table for a
// one-row one and scanned it where an index finds 100 rows (70 ms instead
// of 1); without VACUUM the partial indexes of the queue fill with the dead
// entries of every status change. SQLite needs neither: it keeps no
// statistics unless asked and reuses free pages itself.
func (db *DB) Maintain(ctx context.Context) ([]string, error) {
	return db.d.maintain(db, ctx)
}

// maintainPostgres is PostgreSQL's dialect.maintain.
func (db *DB) maintainPostgres(ctx context.Context) ([]string, error) {
	ctx = withoutLimits(ctx) // VACUUM of a large table takes as long as it takes
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var autovacuum string
	if err := conn.QueryRowContext(ctx, "SELECT current_setting('autovacuum')").Scan(&autovacuum); err != nil {
		return nil, err
	}
	if autovacuum == "on" {
		return nil, nil
	}
	var locked bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", maintainLock).Scan(&locked); err != nil || !locked {
		return nil, err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", maintainLock) //nolint:errcheck
	var a args
	rows, err := conn.QueryContext(ctx, "SELECT relname, n_live_tup, n_dead_tup, n_mod_since_analyze FROM pg_stat_user_tables"+
		" WHERE schemaname = current_schema() AND relname IN ("+a.list(maintainedTables)+") ORDER BY relname", a...)
	var todo []string
	if err := eachRow(rows, err, func(r rowScanner) error {
		var name string
		var live, dead, changed int64
		if err := r.Scan(&name, &live, &dead, &changed); err != nil {
			return err
		}
		switch {
		case dead > 50+live/5:
			todo = append(todo, "VACUUM (ANALYZE) "+name)
		case changed > 50+live/10:
			todo = append(todo, "ANALYZE "+name)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for _, stmt := range todo {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return nil, fmt.Errorf("sqlstore: %s: %w", stmt, err)
		}
	}
	return todo, nil
}
