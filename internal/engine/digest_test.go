package engine_test

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/store"
)

func digestStep(controls map[string]any) store.Step {
	return store.Step{Type: "digest", ControlValues: controls}
}

const digestBody = "{{step.total_count}} updates:{% for e in step.events %} {{e.item}}{% endfor %}"

func TestDigestRegularMergesByKey(t *testing.T) {
	eachPlacement(t, func(t *testing.T, w *world) {
		db := w.db
		wf := w.workflow("digest", digestStep(map[string]any{"type": "regular", "amount": 1, "unit": "minutes", "digestKey": "project"}),
			inApp(digestBody))
		first := w.trigger(wf, "ada", map[string]any{"project": "p1", "item": "a"})
		w.drain()
		w.clock.Advance(10 * time.Second)
		second := w.trigger(wf, "ada", map[string]any{"project": "p1", "item": "b"})
		other := w.trigger(wf, "ada", map[string]any{"project": "p2", "item": "x"})
		w.clock.Advance(10 * time.Second)
		third := w.trigger(wf, "ada", map[string]any{"project": "p1", "item": "c"})
		if w.atTrigger {
			// Placed by the trigger itself, before any worker ran.
			require.Equal(t, []string{"digest:merged", "in_app:skipped"}, w.jobs(third))
			require.Equal(t, []string{"digest:delayed", "in_app:pending"}, w.jobs(other))
		}
		w.drain()
		require.Empty(t, w.feed("ada"), "nothing before the window closes")
		require.Equal(t, []string{"digest:delayed", "in_app:pending"}, w.jobs(first))
		require.Equal(t, []string{"digest:merged", "in_app:skipped"}, w.jobs(second))
		require.Equal(t, []string{"digest:merged", "in_app:skipped"}, w.jobs(third))
		require.Equal(t, []string{"digest:delayed", "in_app:pending"}, w.jobs(other))

		d, err := db.NotificationGet(context.Background(), w.scope, second.ID)
		require.NoError(t, err)
		require.Equal(t, first.ID, d.Notification.DigestedNotificationID)

		w.clock.Advance(41 * time.Second) // first window: opened at 12:00:00, closes 12:01:00
		w.drain()
		require.Equal(t, []string{"3 updates: a b c"}, w.feed("ada"))
		w.clock.Advance(10 * time.Second) // p2 window opened at 12:00:10
		w.drain()
		require.Equal(t, []string{"1 updates: x", "3 updates: a b c"}, w.feed("ada"))

		d, err = db.NotificationGet(context.Background(), w.scope, first.ID)
		require.NoError(t, err)
		var meta struct {
			Type, Unit, DigestKey string
			Amount                float64
			Events                []map[string]any
		}
		require.NoError(t, json.Unmarshal(d.Jobs[0].Digest, &meta))
		require.Equal(t, "regular", meta.Type)
		require.Equal(t, "minutes", meta.Unit)
		require.Equal(t, "project", meta.DigestKey)
		require.EqualValues(t, 1, meta.Amount)
		require.Len(t, meta.Events, 3)

		// A new event after the window closed opens a new window.
		late := w.trigger(wf, "ada", map[string]any{"project": "p1", "item": "d"})
		w.drain()
		require.Equal(t, []string{"digest:delayed", "in_app:pending"}, w.jobs(late))
	})
}

func TestDigestBackoff(t *testing.T) {
	eachPlacement(t, func(t *testing.T, w *world) {
		wf := w.workflow("backoff", digestStep(map[string]any{"type": "regular", "amount": 1, "unit": "minutes",
			"backoff": true, "backoffAmount": 5, "backoffUnit": "minutes"}), inApp(digestBody))
		first := w.trigger(wf, "ada", map[string]any{"item": "a"})
		w.drain()
		require.Equal(t, []string{"1 updates: a"}, w.feed("ada"), "the first event of a quiet period goes out at once")
		require.Equal(t, []string{"digest:skipped", "in_app:completed"}, w.jobs(first))

		w.clock.Advance(30 * time.Second)
		second := w.trigger(wf, "ada", map[string]any{"item": "b"})
		w.clock.Advance(5 * time.Second)
		w.trigger(wf, "ada", map[string]any{"item": "c"})
		w.drain()
		require.Equal(t, []string{"digest:delayed", "in_app:pending"}, w.jobs(second))
		w.clock.Advance(time.Minute)
		w.drain()
		require.Equal(t, []string{"2 updates: b c", "1 updates: a"}, w.feed("ada"))

		// After a quiet period longer than the backoff, the next event goes at once again.
		w.clock.Advance(10 * time.Minute)
		w.trigger(wf, "ada", map[string]any{"item": "e"})
		w.drain()
		require.Equal(t, "1 updates: e", w.feed("ada")[0])
	})
}

func TestDigestTimedInSubscriberTimezone(t *testing.T) {
	eachPlacement(t, func(t *testing.T, w *world) {
		db := w.db
		tz := "America/New_York"
		_, _, err := db.SubscriberUpsert(context.Background(), &store.SubscriberUpsertParams{Scope: w.scope, SubscriberID: "ny",
			Timezone: store.Field{Set: true, Value: &tz}, Now: w.clock.Now()})
		require.NoError(t, err)
		wf := w.workflow("daily", digestStep(map[string]any{"type": "timed", "unit": "days", "amount": 1,
			"timed": map[string]any{"atTime": "09:00"}}), inApp(digestBody))
		// 12:00 UTC is 07:00 in New York: the window closes at 09:00 there, 14:00 UTC.
		n := w.trigger(wf, "ny", map[string]any{"item": "a"})
		w.drain()
		d, err := db.NotificationGet(context.Background(), w.scope, n.ID)
		require.NoError(t, err)
		require.Equal(t, time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC), d.Jobs[0].RunAt)
		w.clock.Advance(2 * time.Hour)
		w.drain()
		require.Equal(t, []string{"1 updates: a"}, w.feed("ny"))
	})
}

// TestDigestConcurrentMerges: several workers and simultaneous triggers never
// produce two digests for one window, nor drop an event.
func TestDigestConcurrentMerges(t *testing.T) {
	eachPlacement(t, func(t *testing.T, w *world) {
		db := w.db
		wf := w.workflow("busy", digestStep(map[string]any{"amount": 1, "unit": "minutes"}), inApp("{{step.total_count}}"))
		const events = 120
		var wg sync.WaitGroup
		for i := range events {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.trigger(wf, "ada", map[string]any{"item": i})
			}()
		}
		wg.Wait()
		engines := make([]*engine.Engine, 4)
		for i := range engines {
			engines[i] = engine.New(engine.Options{Store: db, Now: w.clock.Now, Batch: 8, Lease: time.Minute})
		}
		var run sync.WaitGroup
		for _, e := range engines {
			run.Add(1)
			go func() {
				defer run.Done()
				for range 200 {
					n, err := e.RunOnce(context.Background())
					if err != nil {
						t.Error(err)
						return
					}
					if n == 0 {
						return
					}
				}
			}()
		}
		run.Wait()
		w.clock.Advance(2 * time.Minute)
		w.drain()
		require.Equal(t, []string{"120"}, w.feed("ada"))

		var statuses []string
		rows, err := db.Reader().Query("SELECT status FROM jobs WHERE type = 'digest'")
		require.NoError(t, err)
		for rows.Next() {
			var s string
			require.NoError(t, rows.Scan(&s))
			statuses = append(statuses, s)
		}
		require.NoError(t, rows.Close())
		sort.Strings(statuses)
		require.Len(t, statuses, events)
		require.Equal(t, "completed", statuses[0])
		require.Equal(t, "merged", statuses[1])
		require.Equal(t, "merged", statuses[events-1])
	})
}

func TestDigestMisconfigured(t *testing.T) {
	eachPlacement(t, func(t *testing.T, w *world) {
		wf := w.workflow("broken", digestStep(map[string]any{"amount": 1, "unit": "fortnights"}), inApp("x"))
		n := w.trigger(wf, "ada", nil)
		w.drain()
		require.Equal(t, []string{"digest:failed", "in_app:skipped"}, w.jobs(n))
	})
}

// TestDigestAfterDelay: a digest that follows a delay counts its window from
// when the delay ended, so events a moment apart still merge.
func TestDigestAfterDelay(t *testing.T) {
	eachPlacement(t, func(t *testing.T, w *world) {
		wf := w.workflow("delay-then-digest",
			store.Step{Type: "delay", ControlValues: map[string]any{"amount": 1, "unit": "minutes"}},
			digestStep(map[string]any{"amount": 1, "unit": "minutes"}), inApp(digestBody))
		w.trigger(wf, "ada", map[string]any{"item": "a"})
		w.clock.Advance(time.Second)
		w.trigger(wf, "ada", map[string]any{"item": "b"})
		w.drain()
		w.clock.Advance(time.Minute) // both delays over; the first opens the window, the second joins
		w.drain()
		require.Empty(t, w.feed("ada"))
		w.clock.Advance(time.Minute)
		w.drain()
		require.Equal(t, []string{"2 updates: a b"}, w.feed("ada"))
	})
}

// TestDigestCancelWindow: canceling the transaction that opened a window
// cancels the window with the events merged into it; the next event opens a
// new window.
func TestDigestCancelWindow(t *testing.T) {
	eachPlacement(t, func(t *testing.T, w *world) {
		wf := w.workflow("cancel-digest", digestStep(map[string]any{"amount": 1, "unit": "minutes"}), inApp(digestBody))
		leader := w.trigger(wf, "ada", map[string]any{"item": "a"})
		w.drain()
		merged := w.trigger(wf, "ada", map[string]any{"item": "b"})
		w.drain()
		n, err := w.db.TriggerCancel(context.Background(), &store.TriggerCancelParams{Scope: w.scope,
			TransactionID: leader.TransactionID, Now: w.clock.Now()})
		require.NoError(t, err)
		require.Equal(t, 2, n, "the window and the step after it")
		w.clock.Advance(2 * time.Minute)
		w.drain()
		require.Empty(t, w.feed("ada"))
		require.Equal(t, []string{"digest:canceled", "in_app:canceled"}, w.jobs(leader))
		require.Equal(t, []string{"digest:merged", "in_app:skipped"}, w.jobs(merged))

		next := w.trigger(wf, "ada", map[string]any{"item": "c"})
		w.drain()
		require.Equal(t, []string{"digest:delayed", "in_app:pending"}, w.jobs(next))
		w.clock.Advance(2 * time.Minute)
		w.drain()
		require.Equal(t, []string{"1 updates: c"}, w.feed("ada"))
	})
}
