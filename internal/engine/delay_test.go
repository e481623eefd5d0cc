package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

func TestDelayRegular(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		w := newWorld(t, db)
		wf := w.workflow("later", store.Step{Type: "delay", ControlValues: map[string]any{"type": "regular", "amount": 5, "unit": "minutes"}},
			inApp("Hello {{subscriber.subscriberId}}"))
		n := w.trigger(wf, "ada", nil)
		w.drain()
		require.Equal(t, []string{"delay:delayed", "in_app:pending"}, w.jobs(n))
		require.Empty(t, w.feed("ada"))

		next, err := db.JobNextRunAt(context.Background())
		require.NoError(t, err)
		require.Equal(t, w.clock.Now().Add(5*time.Minute), next)

		w.clock.Advance(5*time.Minute - time.Second)
		w.drain()
		require.Empty(t, w.feed("ada"), "nothing before the delay is over")

		w.clock.Advance(time.Second)
		w.drain()
		require.Equal(t, []string{"Hello ada"}, w.feed("ada"))
		require.Equal(t, []string{"delay:completed", "in_app:completed"}, w.jobs(n))
		d := w.details(n, "delay")
		require.Len(t, d, 3)
		require.Contains(t, d[1], "Delayed until 2026-11-22T12:05:00Z")
		require.Equal(t, "Success Internal: Delay finished", d[2])
	})
}

func TestDelayScheduled(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		w := newWorld(t, db)
		wf := w.workflow("scheduled", store.Step{Type: "delay", ControlValues: map[string]any{"type": "scheduled", "delayPath": "send.at"}},
			inApp("Reminder"))

		ok := w.trigger(wf, "ada", map[string]any{"send": map[string]any{"at": "2026-11-22T13:30:00Z"}})
		missing := w.trigger(wf, "bob", map[string]any{"send": map[string]any{}})
		past := w.trigger(wf, "cy", map[string]any{"send": map[string]any{"at": "2026-11-22T11:00:00Z"}})
		garbage := w.trigger(wf, "di", map[string]any{"send": map[string]any{"at": "tomorrow"}})
		w.drain()

		require.Equal(t, []string{"delay:delayed", "in_app:pending"}, w.jobs(ok))
		for _, n := range []store.Notification{missing, past, garbage} {
			require.Equal(t, []string{"delay:failed", "in_app:skipped"}, w.jobs(n))
			d := w.details(n, "delay")
			require.Contains(t, d[len(d)-1], "Failed Payload:")
		}
		w.clock.Advance(90 * time.Minute)
		w.drain()
		require.Equal(t, []string{"Reminder"}, w.feed("ada"))
		require.Empty(t, w.feed("bob"))
		require.Empty(t, w.feed("cy"))
	})
}

func TestDelayCanceled(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		w := newWorld(t, db)
		wf := w.workflow("cancel-me", store.Step{Type: "delay", ControlValues: map[string]any{"amount": 1, "unit": "hours"}}, inApp("Never"))
		n := w.trigger(wf, "ada", nil)
		w.drain()
		require.Equal(t, []string{"delay:delayed", "in_app:pending"}, w.jobs(n))

		canceled, err := db.TriggerCancel(context.Background(), &store.TriggerCancelParams{Scope: w.scope,
			TransactionID: n.TransactionID, Now: w.clock.Now()})
		require.NoError(t, err)
		require.Equal(t, 2, canceled)
		w.clock.Advance(2 * time.Hour)
		w.drain()
		require.Empty(t, w.feed("ada"))
		require.Equal(t, []string{"delay:canceled", "in_app:canceled"}, w.jobs(n))
	})
}

// TestDelaySurvivesRestart: the engine that delayed a job is gone; a new one
// (another process, after a restart) runs the following steps when due.
func TestDelaySurvivesRestart(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		w := newWorld(t, db)
		wf := w.workflow("restart", store.Step{Type: "delay", ControlValues: map[string]any{"amount": 30, "unit": "seconds"}}, inApp("After restart"))
		w.trigger(wf, "ada", nil)
		w.drain()
		w.eng = w.engine() // the first engine is never used again
		w.clock.Advance(31 * time.Second)
		w.drain()
		require.Equal(t, []string{"After restart"}, w.feed("ada"))
	})
}

// TestDelayWithRunningEngine runs the real worker loop (wake-ups, polling)
// on the real clock: the following step runs once the delay is over.
func TestDelayWithRunningEngine(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		w := newWorld(t, db)
		w.clock = &clock{t: time.Now()}
		wf := w.workflow("real-clock", store.Step{Type: "delay", ControlValues: map[string]any{"amount": 1, "unit": "seconds"}}, inApp("On time"))
		eng := engineWithRealClock(db)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); eng.Run(ctx) }()
		defer func() { cancel(); <-done }()

		w.clock.t = time.Now()
		w.trigger(wf, "ada", nil)
		eng.Wake()
		require.Eventually(t, func() bool { return len(w.feed("ada")) == 1 }, 10*time.Second, 20*time.Millisecond)
	})
}
