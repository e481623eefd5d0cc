package sqlstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestMessageDailyCounts: messages of several days, channels and outcomes
// are counted on the UTC day they were created (its first and last
// millisecond included), by channel; sent and failed from their status,
// delivered from a provider's `delivered` event (and in-app messages as
// created), opened once however many `opened` events a message has, even
// when the event came days later; deleted messages count; the days before
// the window, after now and another environment's messages do not.
func TestMessageDailyCounts(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		now := base // 2031-03-14 15:09 UTC
		today := time.Date(2031, 3, 14, 0, 0, 0, 0, time.UTC)
		yesterday, first := today.AddDate(0, 0, -1), today.AddDate(0, 0, -2)
		msg := func(scope store.Scope, channel, status string, at time.Time) store.Message {
			m := newMessage(scope, "tx-"+id.New(), id.New(), channel, 0)
			m.Status, m.CreatedAt, m.UpdatedAt = status, at, at
			return m
		}
		sent, failed := store.MessageSent, store.MessageError
		var msgs []store.Message
		add := func(m store.Message) store.Message {
			msgs = append(msgs, m)
			return m
		}
		add(msg(tn.A, "in_app", sent, today.Add(time.Hour)))
		deleted := msg(tn.A, "in_app", sent, today.Add(2*time.Hour))
		deleted.Deleted = true
		add(deleted)
		delivered := add(msg(tn.A, "email", sent, today.Add(3*time.Hour)))
		opened := add(msg(tn.A, "email", sent, today.Add(4*time.Hour)))
		both := add(msg(tn.A, "email", sent, today.Add(5*time.Hour)))
		add(msg(tn.A, "email", failed, today.Add(6*time.Hour)))
		clicked := add(msg(tn.A, "sms", sent, now))
		add(msg(tn.A, "chat", sent, today.Add(-time.Millisecond)))        // yesterday's last millisecond
		openedLater := add(msg(tn.A, "email", sent, first))               // the window's first millisecond
		add(msg(tn.A, "push", failed, first.Add(time.Minute)))            // the first day
		add(msg(tn.A, "email", sent, first.Add(-time.Millisecond)))       // the day before the window
		add(msg(tn.A, "email", sent, today.AddDate(0, 0, 1)))             // tomorrow
		otherEnv := add(msg(tn.B, "email", sent, today.Add(3*time.Hour))) // another environment's
		require.NoError(t, db.MessageBulkLoad(ctx, msgs))

		event := func(key, status string, m store.Message) store.DeliveryEvent {
			return store.DeliveryEvent{IntegrationID: "int-1", ProviderID: "sendgrid", Key: key, Status: status, MessageID: m.ID,
				OccurredAt: now, Raw: "{}", Detail: status}
		}
		for scope, evs := range map[store.Scope][]store.DeliveryEvent{
			tn.A: {event("d1", "delivered", delivered), event("d2", "delivered", both), event("o1", "opened", opened),
				event("o2", "opened", both), event("o3", "opened", both), event("c1", "clicked", clicked),
				event("o4", "opened", openedLater)},
			tn.B: {event("o5", "opened", otherEnv), event("d3", "delivered", otherEnv)},
		} {
			_, err := db.DeliveryEventsAdd(ctx, &store.DeliveryEventsAddParams{Scope: scope, Events: evs, Now: now})
			require.NoError(t, err)
		}
		rec, err := db.DeliveryEventsRecord(ctx, &store.DeliveryEventsRecordParams{Limit: 100, MatchFor: time.Minute, Now: now})
		require.NoError(t, err)
		require.Equal(t, 9, rec.Recorded["sendgrid"])

		got, err := db.MessageDailyCounts(ctx, &store.MessageDailyCountsParams{Scope: tn.A, Days: 3, Now: now})
		require.NoError(t, err)
		require.Equal(t, []store.MessageDayCount{
			{Day: first, Channel: "email", Messages: 1, Sent: 1, Opened: 1},
			{Day: first, Channel: "push", Messages: 1, Failed: 1},
			{Day: yesterday, Channel: "chat", Messages: 1, Sent: 1},
			{Day: today, Channel: "email", Messages: 4, Sent: 3, Failed: 1, Delivered: 2, Opened: 2},
			{Day: today, Channel: "in_app", Messages: 2, Sent: 2, Delivered: 2},
			{Day: today, Channel: "sms", Messages: 1, Sent: 1},
		}, got)

		one, err := db.MessageDailyCounts(ctx, &store.MessageDailyCountsParams{Scope: tn.A, Days: 1, Now: now})
		require.NoError(t, err)
		require.Len(t, one, 3, "one day: today's")
		other, err := db.MessageDailyCounts(ctx, &store.MessageDailyCountsParams{Scope: tn.B, Days: 30, Now: now})
		require.NoError(t, err)
		require.Equal(t, []store.MessageDayCount{{Day: today, Channel: "email", Messages: 1, Sent: 1, Delivered: 1, Opened: 1}}, other)
		none, err := db.MessageDailyCounts(ctx, &store.MessageDailyCountsParams{Scope: otherOrganization(t, db), Days: 30, Now: now})
		require.NoError(t, err)
		require.Empty(t, none)
		for _, days := range []int{0, -1, 367} {
			_, err := db.MessageDailyCounts(ctx, &store.MessageDailyCountsParams{Scope: tn.A, Days: days, Now: now})
			require.Error(t, err, "%d days", days)
		}
	})
}

// TestMessageDailyCountsPlan: the statement reads the messages through
// messages_analytics alone (no table row; on SQLite in the order of the
// groups, without sorting them) and the opened jobs through
// execution_details_webhook.
func TestMessageDailyCountsPlan(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		plan, err := sqlstore.ExplainMessageDailyCountsForTest(t.Context(), db, tn.EnvA.ID, base.UnixMilli())
		require.NoError(t, err)
		if db.Dialect() == "sqlite" {
			require.Contains(t, plan, "SEARCH messages USING COVERING INDEX messages_analytics (environment_id=? AND <expr>>? AND <expr><?)")
			require.Contains(t, plan, "SEARCH execution_details USING COVERING INDEX execution_details_webhook")
			require.NotContains(t, plan, "TEMP B-TREE", "the groups are read in order")
			return
		}
		require.Contains(t, plan, "Index Only Scan using messages_analytics on messages")
		require.Contains(t, plan, "Index Only Scan using execution_details_webhook on execution_details")
		require.NotContains(t, plan, "Seq Scan")
	})
}
