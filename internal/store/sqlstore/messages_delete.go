package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// MessageDeleteByTransaction implements store.Inbox. In one transaction it
// soft-deletes the transaction's in-app messages as every inbox change does
// (changeState: on PostgreSQL one statement locks the rows in id order,
// deletes them and returns their states from before, so each leaves its
// subscriber's counts from where it was), then its other channels' messages,
// which no count holds. It names no ids, so no statement grows with the
// transaction.
func (db *DB) MessageDeleteByTransaction(ctx context.Context, p *store.MessageDeleteByTransactionParams) (int, error) {
	deleted, now := 0, p.Now
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		deleted = 0
		if p.Channel == "" || p.Channel == "in_app" {
			var a args
			sel := selection{where: "environment_id = " + a.add(p.EnvironmentID) + " AND transaction_id = " + a.add(p.TransactionID) +
				" AND channel = 'in_app' AND deleted = false", args: a}
			counts := &pendingCounts{perStatement: db.d.countsPerStatement}
			n, err := db.changeState(ctx, tx, store.InboxDelete, sel, time.Time{}, now, counts)
			if err != nil {
				return err
			}
			if err := db.applyCounts(ctx, tx, counts); err != nil {
				return err
			}
			deleted += n
		}
		if p.Channel != "in_app" {
			a := args{ms(now), p.EnvironmentID, p.TransactionID}
			q := "UPDATE messages SET deleted = true, updated_at = $1 WHERE environment_id = $2 AND transaction_id = $3" +
				" AND channel <> 'in_app' AND deleted = false"
			if p.Channel != "" {
				q += " AND channel = " + a.add(p.Channel)
			}
			res, err := tx.ExecContext(ctx, q, a...)
			if err != nil {
				return fmt.Errorf("sqlstore: delete messages: %w", err)
			}
			n, _ := res.RowsAffected()
			deleted += int(n)
		}
		if deleted == 0 {
			return store.ErrNotFound
		}
		return nil
	})
	return deleted, err
}
