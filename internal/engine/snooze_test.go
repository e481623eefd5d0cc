package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestSnoozesEndWhileRunning: a running engine ends due snoozes by itself,
// without anyone reading the inbox: the message is unread and unseen again.
func TestSnoozesEndWhileRunning(t *testing.T) {
	t.Parallel()
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, testdb.Open(t, kind))
			ctx := context.Background()
			wf := w.workflow("snooze", inApp("Hello"))
			w.trigger(wf, "ada", nil)
			w.drain()
			sub, err := w.db.SubscriberGet(ctx, w.scope, "ada")
			require.NoError(t, err)
			page, err := w.db.InboxList(ctx, &store.InboxListParams{Scope: w.scope, SubscriberID: sub.ID, Limit: 10, Now: w.clock.Now()})
			require.NoError(t, err)
			require.Len(t, page.Messages, 1)
			msg := page.Messages[0]
			_, err = w.db.InboxChangeOne(ctx, &store.InboxChangeParams{Scope: w.scope, SubscriberID: sub.ID, Action: store.InboxSnooze,
				ID: msg.ID, SnoozeUntil: w.clock.Now().Add(time.Hour), Now: w.clock.Now()})
			require.NoError(t, err)

			n, err := w.eng.UnsnoozeDue(ctx)
			require.NoError(t, err)
			require.Zero(t, n, "not due yet")

			eng := engine.New(engine.Options{Store: w.db, Now: w.clock.Now, Poll: 20 * time.Millisecond})
			runCtx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { eng.Run(runCtx); close(done) }()
			defer func() { stop(); <-done }()
			w.clock.Advance(time.Hour)
			snoozedLeft := func() int {
				var n int
				require.NoError(t, w.db.Reader().QueryRow("SELECT count(*) FROM messages WHERE snoozed_until IS NOT NULL").Scan(&n))
				return n
			}
			require.Eventually(t, func() bool { return snoozedLeft() == 0 }, 10*time.Second, 10*time.Millisecond,
				"the engine ends the snooze")
			unseen, err := w.db.MessageUnseenCount(ctx, &store.MessageUnseenCountParams{Scope: w.scope, SubscriberID: sub.ID,
				Now: w.clock.Now()})
			require.NoError(t, err)
			require.Equal(t, 1, unseen)
		})
	}
}
