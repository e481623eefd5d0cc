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
