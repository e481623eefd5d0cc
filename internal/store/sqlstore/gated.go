package sqlstore

import (
	"context"
	"database/sql"
)

// exec runs one write statement of the API outside a transaction, under the
// write gate as inTx does (see writeGate): a single statement crowds the
// workers out like a transaction would.
func (db *DB) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := db.gate.acquire(ctx, false); err != nil {
		return nil, err
	}
	defer db.gate.release(false)
	return db.w.ExecContext(ctx, query, args...)
}

// execRow is exec for a write statement that returns a row (RETURNING),
// scanned with scan before the gate is released.
func execRow[T any](ctx context.Context, db *DB, scan func(rowScanner) (T, error), query string, args ...any) (T, error) {
	if err := db.gate.acquire(ctx, false); err != nil {
		var zero T
		return zero, err
	}
	defer db.gate.release(false)
	return scan(db.w.QueryRowContext(ctx, query, args...))
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
