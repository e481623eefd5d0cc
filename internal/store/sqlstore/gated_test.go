package sqlstore

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
)

// TestSingleStatementWritesTakeTheGate: the API's writes made of one
// statement outside a transaction wait for the write gate like inTx: while
// another writer holds SQLite's one slot they do not run, and they run once
// it is released.
func TestSingleStatementWritesTakeTheGate(t *testing.T) {
	t.Parallel()
	keys, err := secret.Derive("test-secret-0123456789abcdef")
	require.NoError(t, err)
	db, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "h.db"), keys)
	require.NoError(t, err)
	defer db.Close()
	scope := store.Scope{EnvironmentID: "env"}
	for _, tc := range []struct {
		name  string
		write func(ctx context.Context) error
	}{
		{"exec", func(ctx context.Context) error {
			return db.IdempotencyFinish(ctx, &store.IdempotencyFinishParams{Scope: scope, Key: "key", Status: 200})
		}},
		{"exec with rows affected", func(ctx context.Context) error {
			_, err := db.IdempotencyPurge(ctx, time.Now())
			return err
		}},
		{"statement returning a row", func(ctx context.Context) error {
			_, _, err := db.IdempotencyBegin(ctx, &store.IdempotencyBeginParams{Scope: scope, Key: "key", RequestHash: "hash",
				Now: time.Now()})
			return err
		}},
		{"returning a subscriber", func(ctx context.Context) error {
			_, err := db.SubscriberSetOnline(ctx, &store.SubscriberOnlineParams{Scope: scope, SubscriberID: "nobody",
				Online: true, Now: time.Now()})
			if errors.Is(err, store.ErrNotFound) {
				return nil // ran: there is no such subscriber
			}
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, db.gate.acquire(context.Background(), false))
			held := true
			defer func() {
				if held {
					db.gate.release(false)
				}
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			require.ErrorIs(t, tc.write(ctx), context.DeadlineExceeded, "ran while another writer held the gate")
			db.gate.release(false)
			held = false
			require.NoError(t, tc.write(context.Background()))
		})
	}
}
