package sqlstore

import (
	"context"
	"database/sql"
)

// gated runs fn's statements on the writer pool, outside a transaction,
// under the write gate as inTx does (see writeGate): a single statement of
// the API crowds the workers out like a transaction would. A change whose
// context asks for webhook outbox entries runs in a transaction, which
// writes them (outbox.go).
func (db *DB) gated(ctx context.Context, fn func(q querier) error) error {
	if outboxPending(ctx) {
		return db.inTxFn(ctx, fn)
	}
	if err := db.gate.acquire(ctx, false); err != nil {
		return err
	}
	defer db.gate.release(false)
	return fn(db.w)
}

// exec runs one write statement of the API outside a transaction (gated).
func (db *DB) exec(ctx context.Context, query string, args ...any) (res sql.Result, err error) {
	err = db.gated(ctx, func(q querier) error {
		res, err = q.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

// execRow is exec for a write statement that returns a row (RETURNING),
// scanned with scan before the gate is released.
func execRow[T any](ctx context.Context, db *DB, scan func(rowScanner) (T, error), query string, args ...any) (out T, err error) {
	err = db.gated(ctx, func(q querier) error {
		out, err = scan(q.QueryRowContext(ctx, query, args...))
		return err
	})
	return out, err
}

// withWriter runs fn on a connection of the writer pool under the write gate
// (the bulk loads of seeding, which need the connection itself).
func (db *DB) withWriter(ctx context.Context, fn func(conn *sql.Conn) error) error {
	if err := db.gate.acquire(ctx, false); err != nil {
		return err
	}
	defer db.gate.release(false)
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return fn(conn)
}
