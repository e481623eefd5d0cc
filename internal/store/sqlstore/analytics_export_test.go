package sqlstore

import (
	"context"
	"database/sql"
	"strings"
)

// ExplainMessageDailyCountsForTest (a function: the store's methods are
// its interface, checked by TestEveryWriteTakesTheGate) returns the plan of MessageDailyCounts'
// statement for an environment's last 30 days: SQLite's query plan, or
// PostgreSQL's with sequential and bitmap scans off (on a test's few rows
// the planner would rather read the table: this shows that the index serves
// the statement alone).
func ExplainMessageDailyCountsForTest(ctx context.Context, db *DB, environmentID string, nowMS int64) (string, error) {
	last := nowMS / msPerDay
	first := last - 29
	args := []any{environmentID, first * msPerDay, (last + 1) * msPerDay, first, last + 1}
	var lines []string
	if db.d.name == "sqlite" {
		rows, err := db.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+messageDailyCountsQuery, args...)
		err = eachRow(rows, err, func(r rowScanner) error {
			var id, parent, unused int
			var detail string
			err := r.Scan(&id, &parent, &unused, &detail)
			lines = append(lines, detail)
			return err
		})
		return strings.Join(lines, "\n"), err
	}
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return "", err
	}
	defer tx.Rollback() //nolint:errcheck // read only
	if _, err := tx.ExecContext(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, "SET LOCAL enable_bitmapscan = off"); err != nil {
		return "", err
	}
	rows, err := tx.QueryContext(ctx, "EXPLAIN "+messageDailyCountsQuery, args...)
	err = eachRow(rows, err, func(r rowScanner) error {
		var line string
		err := r.Scan(&line)
		lines = append(lines, line)
		return err
	})
	return strings.Join(lines, "\n"), err
}
