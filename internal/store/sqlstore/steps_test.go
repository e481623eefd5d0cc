package sqlstore_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestThrottleCount: executions counted at once each get their own count
// (1…n, none twice), the window opened by the first holds until its end,
// then the next execution opens a new one; windows are per environment,
// subscriber, workflow, step and key.
func TestThrottleCount(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		now := tn.Clock.Now()
		params := func(scope store.Scope, key string, at time.Time) *store.ThrottleCountParams {
			return &store.ThrottleCountParams{Scope: scope, SubscriberID: "sub", WorkflowID: "wf", StepID: "limit", Key: key,
				WindowEnd: at.Add(time.Hour), Now: at}
		}
		const n = 12
		var mu sync.Mutex
		var counts []int
		for _, err := range parallel(n, func(int) error {
			c, err := db.ThrottleCount(ctx, params(tn.A, "", now))
			mu.Lock()
			counts = append(counts, c.Count)
			mu.Unlock()
			return err
		}) {
			require.NoError(t, err)
		}
		slices.Sort(counts)
		require.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, counts, "every execution counted once")

		later, err := db.ThrottleCount(ctx, params(tn.A, "", now.Add(59*time.Minute)))
		require.NoError(t, err)
		require.Equal(t, n+1, later.Count)
		require.True(t, later.WindowStart.Equal(now), "the window opened by the first execution")
		require.True(t, later.WindowEnd.Equal(now.Add(time.Hour)), "its end does not move")

		next, err := db.ThrottleCount(ctx, params(tn.A, "", now.Add(time.Hour)))
		require.NoError(t, err)
		require.Equal(t, 1, next.Count, "a new window once the last has closed")
		require.True(t, next.WindowEnd.Equal(now.Add(2*time.Hour)))

		other, err := db.ThrottleCount(ctx, params(tn.A, "order-1", now))
		require.NoError(t, err)
		require.Equal(t, 1, other.Count, "another key, another window")
		otherEnv, err := db.ThrottleCount(ctx, params(tn.B, "", now))
		require.NoError(t, err)
		require.Equal(t, 1, otherEnv.Count, "another environment, another window")
	})
}
