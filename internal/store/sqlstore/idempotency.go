package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

const (
	// idempotencyRetention is how long a finished request is replayed.
	idempotencyRetention = 24 * time.Hour
	// idempotencyStale is when a request still "running" is taken to have died
	// with its process, so that the key can be used again.
	idempotencyStale = 2 * time.Minute
)

// IdempotencyBegin implements store.Idempotency. One statement claims the key,
// or reclaims it when expired or stale, so concurrent requests with one key
// run the operation once.
func (db *DB) IdempotencyBegin(ctx context.Context, p *store.IdempotencyBeginParams) (store.IdempotencyRecord, bool, error) {
	environmentID, key, requestHash, now := p.EnvironmentID, p.Key, p.RequestHash, p.Now
	claim := func(r rowScanner) (env string, err error) {
		err = r.Scan(&env)
		return env, err
	}
	for range 3 {
		_, err := execRow(ctx, db, claim, "INSERT INTO idempotency_keys (environment_id, idem_key, request_hash, done, status, body, created_at)"+
			" VALUES ($1, $2, $3, false, 0, NULL, $4) ON CONFLICT (environment_id, idem_key) DO UPDATE SET"+
			" request_hash = excluded.request_hash, done = false, status = 0, body = NULL, created_at = excluded.created_at"+
			" WHERE idempotency_keys.created_at < $5 OR (idempotency_keys.done = false AND idempotency_keys.created_at < $6)"+
			" RETURNING environment_id",
			environmentID, key, requestHash, ms(now), ms(now.Add(-idempotencyRetention)), ms(now.Add(-idempotencyStale)))
		if err == nil {
			return store.IdempotencyRecord{RequestHash: requestHash}, true, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return store.IdempotencyRecord{}, false, err
		}
		var rec store.IdempotencyRecord
		err = db.w.QueryRowContext(ctx, "SELECT request_hash, done, status, body FROM idempotency_keys"+
			" WHERE environment_id = $1 AND idem_key = $2", environmentID, key).Scan(&rec.RequestHash, &rec.Done, &rec.Status, &rec.Body)
		if err == nil {
			return rec, false, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return rec, false, err
		}
		// Abandoned between the two statements: claim again.
	}
	return store.IdempotencyRecord{}, false, errors.New("sqlstore: idempotency key keeps changing")
}

// IdempotencyFinish implements store.Idempotency.
func (db *DB) IdempotencyFinish(ctx context.Context, p *store.IdempotencyFinishParams) error {
	_, err := db.exec(ctx, "UPDATE idempotency_keys SET done = true, status = $1, body = $2"+
		" WHERE environment_id = $3 AND idem_key = $4", p.Status, p.Body, p.EnvironmentID, p.Key)
	return err
}

// IdempotencyAbandon implements store.Idempotency.
func (db *DB) IdempotencyAbandon(ctx context.Context, scope store.Scope, key string) error {
	_, err := db.exec(ctx, "DELETE FROM idempotency_keys WHERE environment_id = $1 AND idem_key = $2", scope.EnvironmentID, key)
	return err
}

// IdempotencyPurge deletes records past their retention.
func (db *DB) IdempotencyPurge(ctx context.Context, now time.Time) (int64, error) {
	res, err := db.exec(ctx, "DELETE FROM idempotency_keys WHERE created_at < $1", ms(now.Add(-idempotencyRetention)))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
