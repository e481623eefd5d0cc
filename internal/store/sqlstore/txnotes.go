package sqlstore

import (
	"context"
	"database/sql"
	"sync"

	"github.com/herald-notify/herald/internal/store"
)

// What a write transaction notes, as it goes, for after its commit: its
// inbox changes, for the realtime hook (realtime.go), and what its webhook
// outbox entries are made of (outbox.go). The store's write paths note on
// the transaction they were given (noteInboxChanges, noteOutbox,
// noteResult); inTxAs writes the entries before the commit and tells the
// hooks after it.

// txs maps a transaction in flight to its notes, while it is tracked.
var txs sync.Map // *sql.Tx → *txNotes

// txNotes are one transaction's notes.
type txNotes struct {
	inbox  txInboxChanges
	outbox txOutbox
}

// track starts taking tx's notes when a hook wants them (the realtime
// hook, the webhook outbox) or ctx asks for outbox entries; nil when
// nothing does. Forget them with untrack.
func (db *DB) track(ctx context.Context, tx *sql.Tx) *txNotes {
	if db.realtime.fn.Load() == nil && !db.outboxOn() && len(store.OutboxFrom(ctx)) == 0 {
		return nil
	}
	n := &txNotes{}
	txs.Store(tx, n)
	return n
}

func untrack(tx *sql.Tx) { txs.Delete(tx) }

// tracked is the notes of q (nil: not a tracked transaction).
func tracked(q querier) *txNotes {
	tx, ok := q.(*sql.Tx)
	if !ok {
		return nil
	}
	v, ok := txs.Load(tx)
	if !ok {
		return nil
	}
	return v.(*txNotes)
}
