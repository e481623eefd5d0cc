package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/testdb"
)

// refusing is the real store, except that it refuses any write of outcomes
// holding a message with "poison" in it, as a store refuses a value it
// cannot hold.
type refusing struct{ store.Store }

func (r refusing) JobFinish(ctx context.Context, outcomes []store.JobOutcome, now time.Time) ([]bool, error) {
	for _, o := range outcomes {
		if len(o.Messages) > 0 && strings.Contains(o.Messages[0].Content, "poison") {
			return nil, errors.New("refused: poison")
		}
	}
	return r.Store.JobFinish(ctx, outcomes, now)
}

// TestRefusedOutcomeFailsOnlyItsJob: when the store refuses one outcome of a
// batch, the others are written; the refused job is retried alone and, past
// its attempts, fails.
func TestRefusedOutcomeFailsOnlyItsJob(t *testing.T) {
	t.Parallel()
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, testdb.Open(t, kind))
			eng := engine.New(engine.Options{Store: refusing{w.db}, Now: w.clock.Now, Lease: time.Minute, MaxAttempts: 2})
			wf := w.workflow("mixed", inApp("{{ payload.text }}"))
			var good []store.Notification
			bad := w.trigger(wf, "ada", map[string]any{"text": "poison"})
			for _, text := range []string{"one", "two", "three"} {
				good = append(good, w.trigger(wf, "ada", map[string]any{"text": text}))
			}
			n, err := eng.RunOnce(context.Background())
			require.NoError(t, err)
			require.Equal(t, 4, n)
			require.ElementsMatch(t, []string{"one", "two", "three"}, w.feed("ada"))
			for _, g := range good {
				require.Equal(t, []string{"in_app:completed"}, w.jobs(g))
			}
			require.Equal(t, []string{"in_app:queued"}, w.jobs(bad), "retried alone")
			for range 3 {
				w.clock.Advance(10 * time.Minute)
				_, err := eng.RunOnce(context.Background())
				require.NoError(t, err)
			}
			require.Equal(t, []string{"in_app:failed"}, w.jobs(bad), "past its attempts")
			require.Len(t, w.feed("ada"), 3)
		})
	}
}
