package sqlstore

import (
	"context"

	"github.com/herald-notify/herald/internal/store"
)

// InsertMessageForTest inserts a message the way JobFinish does.
func (db *DB) InsertMessageForTest(ctx context.Context, m *store.Message) error {
	return db.inTxFn(ctx, func(q querier) error {
		var counts pendingCounts
		if err := insertMessage(ctx, q, m, &counts); err != nil {
			return err
		}
		return db.applyCounts(ctx, q, &counts)
	})
}

// RebuildInboxCounts recomputes every subscriber's counts from the messages:
// tests compare the result with the counts the write paths maintained.
func (db *DB) RebuildInboxCounts(ctx context.Context) error {
	return db.inTxFn(ctx, func(q querier) error {
		if _, err := q.ExecContext(ctx, "DELETE FROM inbox_counts"); err != nil {
			return err
		}
		_, err := q.ExecContext(ctx, "INSERT INTO inbox_counts (subscriber_id, state, tags, environment_id, unread_unseen,"+
			" unread_seen, read_unseen, read_seen) SELECT subscriber_id, "+codeSQL+" / 4 AS st, coalesce(tags, '[]') AS t,"+
			" min(environment_id),"+
			" sum(CASE WHEN NOT read AND NOT seen THEN 1 ELSE 0 END), sum(CASE WHEN NOT read AND seen THEN 1 ELSE 0 END),"+
			" sum(CASE WHEN read AND NOT seen THEN 1 ELSE 0 END), sum(CASE WHEN read AND seen THEN 1 ELSE 0 END)"+
			" FROM messages WHERE channel = 'in_app' AND deleted = false GROUP BY subscriber_id, st, t")
		return err
	})
}

// RememberedRecipients counts the recipients planned from memory and the
// triggers planned again because one had changed (recipient_cache.go).
func (db *DB) RememberedRecipients() (hits, afresh int64) {
	return db.recipients.hits.Load(), db.recipients.afresh.Load()
}
