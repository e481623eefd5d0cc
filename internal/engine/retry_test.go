package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// flakyStore fails the first JobFinish calls, like a database that drops a
// connection mid-commit.
type flakyStore struct {
	*sqlstore.DB
	failures int
}

func (f *flakyStore) JobFinish(ctx context.Context, outcomes []store.JobOutcome, now time.Time) ([]bool, error) {
	if f.failures > 0 {
		f.failures--
		return nil, errors.New("connection reset by peer")
	}
	return f.DB.JobFinish(ctx, outcomes, now)
}

func TestTransientFailureRetriesWithBackoff(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		w := newWorld(t, db)
		flaky := &flakyStore{DB: db, failures: 1}
		w.eng = engine.New(engine.Options{Store: flaky, Now: w.clock.Now, Lease: time.Minute, MaxAttempts: 3})
		wf := w.workflow("flaky", inApp("Hello"))
		n := w.trigger(wf, "ada", nil)

		moved, err := w.eng.RunOnce(context.Background())
		require.NoError(t, err)
		require.Equal(t, 1, moved)
		require.Equal(t, []string{"in_app:queued"}, w.jobs(n), "requeued, not lost")
		require.Empty(t, w.feed("ada"))
		d := w.details(n, "in_app")
		require.Contains(t, d[len(d)-1], "Warning Internal: Temporary failure, retrying in")

		next, err := db.JobNextRunAt(context.Background())
		require.NoError(t, err)
		wait := next.Sub(w.clock.Now())
		require.True(t, wait >= 500*time.Millisecond && wait <= time.Second, "first backoff ~1 s with jitter, got %s", wait)

		w.drain()
		require.Empty(t, w.feed("ada"), "not before the backoff")
		w.clock.Advance(time.Second)
		w.drain()
		require.Equal(t, []string{"Hello"}, w.feed("ada"))
		got, err := db.NotificationGet(context.Background(), w.scope, n.ID)
		require.NoError(t, err)
		last := got.Details[got.Jobs[0].ID]
		require.True(t, last[len(last)-1].IsRetry, "the successful run is a retry")
		require.Equal(t, 2, got.Jobs[0].Attempts)
	})
}

func TestTransientFailureGivesUp(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		w := newWorld(t, db)
		flaky := &flakyStore{DB: db, failures: 1}
		w.eng = engine.New(engine.Options{Store: flaky, Now: w.clock.Now, Lease: time.Minute, MaxAttempts: 1})
		wf := w.workflow("doomed", inApp("Never"))
		n := w.trigger(wf, "ada", nil)
		w.drain()
		require.Empty(t, w.feed("ada"))
		require.Equal(t, []string{"in_app:failed"}, w.jobs(n))
		d := w.details(n, "in_app")
		require.Contains(t, d[len(d)-1], "Gave up after 1 attempts")
	})
}
