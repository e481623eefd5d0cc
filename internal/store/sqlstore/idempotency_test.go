package sqlstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

func TestIdempotencyLifecycle(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		type step struct {
			op          string // begin, finish, abandon
			hash        string
			at          time.Duration // the begin's now, relative to base
			wantStarted bool
			wantRec     store.IdempotencyRecord
		}
		done := store.IdempotencyRecord{RequestHash: "h1", Done: true, Status: 201, Body: []byte(`{"ok":true}`)}
		running := store.IdempotencyRecord{RequestHash: "h1"}
		for _, tc := range []struct {
			name  string
			steps []step
		}{
			{name: "begin claims once; a second begin sees it running", steps: []step{
				{op: "begin", hash: "h1", wantStarted: true, wantRec: running},
				{op: "begin", hash: "h2", at: time.Second, wantRec: running},
			}},
			{name: "finish then begin replays", steps: []step{
				{op: "begin", hash: "h1", wantStarted: true, wantRec: running},
				{op: "finish"},
				{op: "begin", hash: "h1", at: time.Hour, wantRec: done},
				{op: "begin", hash: "other", at: 23 * time.Hour, wantRec: done},
			}},
			{name: "abandon frees the key", steps: []step{
				{op: "begin", hash: "h1", wantStarted: true, wantRec: running},
				{op: "abandon"},
				{op: "begin", hash: "h2", at: time.Second, wantStarted: true, wantRec: store.IdempotencyRecord{RequestHash: "h2"}},
			}},
			{name: "a done record expires after 24 hours", steps: []step{
				{op: "begin", hash: "h1", wantStarted: true, wantRec: running},
				{op: "finish"},
				{op: "begin", hash: "h2", at: 24*time.Hour + time.Second, wantStarted: true, wantRec: store.IdempotencyRecord{RequestHash: "h2"}},
				{op: "begin", hash: "h3", at: 24*time.Hour + 2*time.Second, wantRec: store.IdempotencyRecord{RequestHash: "h2"}},
			}},
			{name: "a running record is not reclaimed before 2 minutes", steps: []step{
				{op: "begin", hash: "h1", wantStarted: true, wantRec: running},
				{op: "begin", hash: "h2", at: time.Minute + 59*time.Second, wantRec: running},
			}},
			{name: "a stale running record is reclaimed", steps: []step{
				{op: "begin", hash: "h1", wantStarted: true, wantRec: running},
				{op: "begin", hash: "h2", at: 2*time.Minute + time.Second, wantStarted: true, wantRec: store.IdempotencyRecord{RequestHash: "h2"}},
				{op: "begin", hash: "h3", at: 2*time.Minute + 2*time.Second, wantRec: store.IdempotencyRecord{RequestHash: "h2"}},
			}},
			{name: "a done record is not stale after 2 minutes", steps: []step{
				{op: "begin", hash: "h1", wantStarted: true, wantRec: running},
				{op: "finish"},
				{op: "begin", hash: "h2", at: 10 * time.Minute, wantRec: done},
			}},
			{name: "finish and abandon of an unknown key do nothing", steps: []step{
				{op: "finish"},
				{op: "abandon"},
				{op: "begin", hash: "h1", wantStarted: true, wantRec: running},
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				key := "key-" + tc.name
				for i, st := range tc.steps {
					switch st.op {
					case "begin":
						rec, started, err := db.IdempotencyBegin(ctx, &store.IdempotencyBeginParams{Scope: tn.A, Key: key,
							RequestHash: st.hash, Now: base.Add(st.at)})
						require.NoError(t, err, "step %d", i)
						require.Equal(t, st.wantStarted, started, "step %d", i)
						require.Equal(t, st.wantRec, rec, "step %d", i)
					case "finish":
						require.NoError(t, db.IdempotencyFinish(ctx, &store.IdempotencyFinishParams{Scope: tn.A, Key: key,
							Status: done.Status, Body: done.Body}), "step %d", i)
					case "abandon":
						require.NoError(t, db.IdempotencyAbandon(ctx, tn.A, key), "step %d", i)
					}
				}
			})
		}
	})
}

func TestIdempotencyPerEnvironment(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		_, started, err := db.IdempotencyBegin(ctx, &store.IdempotencyBeginParams{Scope: tn.A, Key: "k", RequestHash: "h", Now: base})
		require.NoError(t, err)
		require.True(t, started)
		_, started, err = db.IdempotencyBegin(ctx, &store.IdempotencyBeginParams{Scope: tn.B, Key: "k", RequestHash: "h", Now: base})
		require.NoError(t, err)
		require.True(t, started, "keys are per environment")

		require.NoError(t, db.IdempotencyFinish(ctx, &store.IdempotencyFinishParams{Scope: tn.B, Key: "k", Status: 200, Body: []byte("b")}))
		rec, started, err := db.IdempotencyBegin(ctx, &store.IdempotencyBeginParams{Scope: tn.A, Key: "k", RequestHash: "h", Now: base})
		require.NoError(t, err)
		require.False(t, started)
		require.False(t, rec.Done, "finishing B's key leaves A's running")
		require.NoError(t, db.IdempotencyAbandon(ctx, tn.B, "k"))
		_, started, err = db.IdempotencyBegin(ctx, &store.IdempotencyBeginParams{Scope: tn.A, Key: "k", RequestHash: "h", Now: base})
		require.NoError(t, err)
		require.False(t, started, "abandoning B's key leaves A's")
	})
}

func TestIdempotencyConcurrentBegin(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		const n = 20
		started := make([]bool, n)
		errs := parallel(n, func(i int) error {
			var err error
			_, started[i], err = db.IdempotencyBegin(t.Context(), &store.IdempotencyBeginParams{Scope: tn.A, Key: "same-key",
				RequestHash: "h", Now: base})
			return err
		})
		owners := 0
		for i := range n {
			require.NoError(t, errs[i])
			if started[i] {
				owners++
			}
		}
		require.Equal(t, 1, owners)
		require.Equal(t, 1, count(t, db, "SELECT count(*) FROM idempotency_keys"))
	})
}

func TestIdempotencyPurge(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		for _, k := range []struct {
			key string
			age time.Duration
		}{{"old", 25 * time.Hour}, {"older", 72 * time.Hour}, {"fresh", 23 * time.Hour}, {"new", 0}} {
			_, started, err := db.IdempotencyBegin(ctx, &store.IdempotencyBeginParams{Scope: tn.A, Key: k.key, RequestHash: "h",
				Now: base.Add(-k.age)})
			require.NoError(t, err)
			require.True(t, started)
			require.NoError(t, db.IdempotencyFinish(ctx, &store.IdempotencyFinishParams{Scope: tn.A, Key: k.key, Status: 200, Body: nil}))
		}
		n, err := db.IdempotencyPurge(ctx, base)
		require.NoError(t, err)
		require.Equal(t, int64(2), n)
		require.Equal(t, 2, count(t, db, "SELECT count(*) FROM idempotency_keys"))
		rec, started, err := db.IdempotencyBegin(ctx, &store.IdempotencyBeginParams{Scope: tn.A, Key: "fresh",
			RequestHash: "other", Now: base})
		require.NoError(t, err)
		require.False(t, started, "unexpired records stay")
		require.Equal(t, store.IdempotencyRecord{RequestHash: "h", Done: true, Status: 200}, rec)
		n, err = db.IdempotencyPurge(ctx, base)
		require.NoError(t, err)
		require.Zero(t, n)
	})
}
