package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/herald-notify/herald/internal/store"
)

// deleteChunk bounds the ids one statement of a transaction's deletion
// names: far below PostgreSQL's 65,535 parameters (on PostgreSQL a chunk is
// one array parameter anyway) and SQLite's 32,766.
const deleteChunk = 500

// MessageDeleteByTransaction implements store.Inbox. In one transaction it
// finds the transaction's messages, locks the inbox counts of their
// subscribers in subscriber order (as every change to a subscriber's
// messages does first, so that it cannot deadlock with a mark-as), soft
// deletes them a chunk at a time, and takes each in-app message out of its
// bucket as it was when deleted. A message the transaction gets after the
// look-up stays.
func (db *DB) MessageDeleteByTransaction(ctx context.Context, p *store.MessageDeleteByTransactionParams) (int, error) {
	deleted := 0
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		a := args{p.EnvironmentID, p.TransactionID}
		q := "SELECT id, subscriber_id, channel FROM messages WHERE environment_id = $1 AND transaction_id = $2 AND deleted = false"
		if p.Channel != "" {
			q += " AND channel = " + a.add(p.Channel)
		}
		rows, err := tx.QueryContext(ctx, q+" ORDER BY id", a...)
		if err != nil {
			return fmt.Errorf("sqlstore: messages of a transaction: %w", err)
		}
		var ids, inApp []string
		for rows.Next() {
			var msgID, subscriberID, channel string
			if err := rows.Scan(&msgID, &subscriberID, &channel); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, msgID)
			if channel == "in_app" {
				inApp = append(inApp, subscriberID)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ids) == 0 {
			return store.ErrNotFound
		}
		inApp = slices.Compact(slices.Sorted(slices.Values(inApp)))
		if err := db.lockCountsMany(ctx, tx, inApp); err != nil {
			return err
		}
		var counts pendingCounts
		now := ms(db.now())
		for start := 0; start < len(ids); start += deleteChunk {
			a := args{now}
			rows, err := tx.QueryContext(ctx, "UPDATE messages SET deleted = true, updated_at = $1 WHERE "+
				db.inList(&a, "id", ids[start:min(start+deleteChunk, len(ids))])+" AND deleted = false"+
				" RETURNING environment_id, subscriber_id, channel, read, seen", a...)
			if err != nil {
				return fmt.Errorf("sqlstore: delete messages: %w", err)
			}
			for rows.Next() {
				var m store.Message
				if err := rows.Scan(&m.EnvironmentID, &m.SubscriberID, &m.Channel, &m.Read, &m.Seen); err != nil {
					rows.Close()
					return err
				}
				deleted++
				if m.Channel == "in_app" {
					counts.remove(&m)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return addCounts(ctx, tx, &counts, db.d.name == "postgres")
	})
	return deleted, err
}

// remove takes a deleted message out of its subscriber's counts.
func (p *pendingCounts) remove(m *store.Message) {
	if p.deltas == nil {
		p.env, p.deltas = map[string]string{}, map[string]bucketDelta{}
	}
	d, ok := p.deltas[m.SubscriberID]
	if !ok {
		d = bucketDelta{}
		p.deltas[m.SubscriberID], p.env[m.SubscriberID] = d, m.EnvironmentID
	}
	d[bucketColumn(m.Read, m.Seen)]--
}

// lockCountsMany is lockCounts for many subscribers, sorted: their count
// rows are locked in that order, a chunk at a time.
func (db *DB) lockCountsMany(ctx context.Context, tx *sql.Tx, subscriberIDs []string) error {
	if db.d.name != "postgres" {
		return nil
	}
	for start := 0; start < len(subscriberIDs); start += deleteChunk {
		var a args
		if _, err := tx.ExecContext(ctx, "SELECT 1 FROM inbox_counts WHERE "+
			db.inList(&a, "subscriber_id", subscriberIDs[start:min(start+deleteChunk, len(subscriberIDs))])+
			" ORDER BY subscriber_id FOR UPDATE", a...); err != nil {
			return fmt.Errorf("sqlstore: lock inbox counts: %w", err)
		}
	}
	return nil
}
