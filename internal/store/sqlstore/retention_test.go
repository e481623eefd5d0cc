package sqlstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

const day = 24 * time.Hour

// purgeAll runs a purge's batches until it is done and sums them; it
// checks that no batch looked at more than limit rows of distinct times.
func purgeAll(t *testing.T, fn func(context.Context, *store.RetentionPurgeParams) (store.RetentionPurged, error),
	before time.Time, limit int) (store.RetentionPurged, int) {
	t.Helper()
	var sum store.RetentionPurged
	p := &store.RetentionPurgeParams{Before: before, Limit: limit}
	for batches := 1; batches < 10_000; batches++ {
		got, err := fn(t.Context(), p)
		require.NoError(t, err)
		sum.Notifications += got.Notifications
		sum.Jobs += got.Jobs
		sum.ExecutionDetails += got.ExecutionDetails
		sum.Messages += got.Messages
		sum.Transactions += got.Transactions
		sum.InboxMessages += got.InboxMessages
		if got.Done {
			sum.Done = true
			return sum, batches
		}
		if got.Next != "" { // a cursor (the inbox purge needs none: it deletes what it looks at)
			require.NotEqual(t, p.After, got.Next, "a batch that is not the last moves on")
		}
		p.After = got.Next
	}
	t.Fatal("the purge never finished")
	return sum, 0
}

// inboxMessage is an in-app message of a subscriber created at.
func inboxMessage(scope store.Scope, subscriberID string, at time.Time) store.Message {
	m := newMessage(scope, "tx-"+id.New(), subscriberID, "in_app", 0)
	m.CreatedAt, m.UpdatedAt = at, at
	return m
}

// TestRetentionInboxPurge: every in-app message older than the cut-off goes,
// in any state, a batch at a time; younger ones and other channels' stay;
// each subscriber's counts equal what its lists return.
func TestRetentionInboxPurge(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		now := tn.Clock.Now()
		cut := now.Add(-365 * day)
		old, young := cut.Add(-time.Hour), cut.Add(time.Hour)
		later := now.Add(time.Hour)
		subs := []string{id.New(), id.New(), id.New()}
		subB := id.New() // a subscriber's _id is unique across environments
		var msgs []store.Message
		states := []func(m *store.Message){
			func(*store.Message) {},
			func(m *store.Message) { m.Read, m.Seen = true, true },
			func(m *store.Message) { m.Seen = true },
			func(m *store.Message) { m.Archived, m.Read, m.Seen = true, true, true },
			func(m *store.Message) { m.SnoozedUntil, m.Seen = &later, true },
			func(m *store.Message) { m.Deleted = true },
			func(m *store.Message) { m.Tags = []string{"billing"}; m.Severity = "high" },
			func(m *store.Message) { m.Tags = []string{"ops", "billing"}; m.Read = true },
		}
		for i := range 60 {
			at := old.Add(-time.Duration(i) * time.Minute)
			if i%3 == 0 {
				at = young.Add(time.Duration(i) * time.Minute)
			}
			m := inboxMessage(tn.A, subs[i%len(subs)], at)
			if i%10 == 9 {
				m = inboxMessage(tn.B, subB, at)
			}
			states[i%len(states)](&m)
			msgs = append(msgs, m)
		}
		email := newMessage(tn.A, "tx-mail", subs[0], "email", 0)
		email.CreatedAt, email.UpdatedAt = old, old
		msgs = append(msgs, email)
		require.NoError(t, db.MessageBulkLoad(ctx, msgs))
		wantOld := count(t, db, "SELECT count(*) FROM messages WHERE channel = 'in_app' AND created_at < $1", cut.UnixMilli())
		wantKept := count(t, db, "SELECT count(*) FROM messages WHERE channel = 'in_app' AND created_at >= $1", cut.UnixMilli())
		require.Equal(t, 40, wantOld)

		got, batches := purgeAll(t, db.RetentionInboxPurge, cut, 7)
		require.Equal(t, store.RetentionPurged{InboxMessages: int64(wantOld), Done: true}, got)
		require.Equal(t, 6, batches, "40 messages, 7 a batch")
		require.Zero(t, count(t, db, "SELECT count(*) FROM messages WHERE channel = 'in_app' AND created_at < $1", cut.UnixMilli()))
		require.Equal(t, wantKept, count(t, db, "SELECT count(*) FROM messages WHERE channel = 'in_app'"), "the younger ones stay")
		require.Equal(t, 1, count(t, db, "SELECT count(*) FROM messages WHERE channel = 'email'"), "other channels are activity's")
		requireCountsExact(t, db)
		for _, sub := range subs {
			requireListsMatchCounts(t, db, tn.A, sub, now)
		}
		requireListsMatchCounts(t, db, tn.B, subB, now)

		again, _ := purgeAll(t, db.RetentionInboxPurge, cut, 7)
		require.Equal(t, store.RetentionPurged{Done: true}, again, "nothing left")
	})
}

// requireListsMatchCounts checks a subscriber's feed totals, unseen count
// and v2 counts against the lists of its messages.
func requireListsMatchCounts(t *testing.T, db *sqlstore.DB, scope store.Scope, sub string, now time.Time) {
	t.Helper()
	ctx := t.Context()
	yes, no := true, false
	for _, f := range []struct{ read, seen *bool }{{nil, nil}, {&yes, nil}, {&no, nil}, {nil, &yes}, {nil, &no}, {&no, &no}} {
		all, err := db.MessageFeed(ctx, &store.FeedParams{Scope: scope, SubscriberID: sub, Read: f.read, Seen: f.seen, Limit: 100, Now: now})
		require.NoError(t, err)
		// A page of one: its total is the counters' sum.
		one, err := db.MessageFeed(ctx, &store.FeedParams{Scope: scope, SubscriberID: sub, Read: f.read, Seen: f.seen, Limit: 1, Now: now})
		require.NoError(t, err)
		require.Equal(t, len(all.Messages), one.TotalCount, "feed read=%s seen=%s", fmtBool(f.read), fmtBool(f.seen))
	}
	unseen, err := db.MessageUnseenCount(ctx, &store.MessageUnseenCountParams{Scope: scope, SubscriberID: sub, Now: now})
	require.NoError(t, err)
	page, err := db.MessageFeed(ctx, &store.FeedParams{Scope: scope, SubscriberID: sub, Seen: &no, Limit: 100, Now: now})
	require.NoError(t, err)
	require.Len(t, page.Messages, unseen)
	filters := []store.InboxFilter{{}, {Read: &no}, {Archived: &yes}, {Snoozed: &yes}, {Tags: [][]string{{"billing"}}},
		{Severity: []string{"high"}}, {Seen: &yes, Archived: &no}}
	counts, err := db.InboxCount(ctx, &store.InboxCountParams{Scope: scope, SubscriberID: sub, Filters: filters, Now: now})
	require.NoError(t, err)
	for i, f := range filters {
		list, err := db.InboxList(ctx, &store.InboxListParams{Scope: scope, SubscriberID: sub, InboxFilter: f, Limit: 100, Now: now})
		require.NoError(t, err)
		require.Len(t, list.Messages, counts[i], "v2 filter %d", i)
	}
}

// activityRows writes a trigger's rows by SQL: its notification, its jobs
// (one per status, each with an execution detail) and a transactionId
// reservation, all created at; it returns the notification's id.
func activityRows(t *testing.T, db *sqlstore.DB, scope store.Scope, tx string, at time.Time, statuses ...string) string {
	t.Helper()
	n := id.New()
	ms := at.UnixMilli()
	sqlExec(t, db, "INSERT INTO notifications (id, organization_id, environment_id, workflow_id, subscriber_id, transaction_id,"+
		" context_keys, created_at, updated_at) VALUES ($1, $2, $3, 'wf', 'sub', $4, 'tenant:acme', $5, $5)",
		n, scope.OrganizationID, scope.EnvironmentID, tx, ms)
	sqlExec(t, db, "INSERT INTO transactions (environment_id, transaction_id, workflow_id, created_at) VALUES ($1, $2, 'wf', $3)"+
		" ON CONFLICT DO NOTHING", scope.EnvironmentID, tx, ms)
	for _, s := range statuses {
		jobRow(t, db, scope, n, tx, "step", s, at)
	}
	return n
}

// jobRow writes a job of a notification ("" for a fan-out job) with one
// execution detail.
func jobRow(t *testing.T, db *sqlstore.DB, scope store.Scope, notification, tx, typ, status string, at time.Time) string {
	t.Helper()
	j := id.New()
	sqlExec(t, db, "INSERT INTO jobs (id, organization_id, environment_id, notification_id, subscriber_id, workflow_id,"+
		" transaction_id, step_id, step_index, type, provider_id, status, run_at, created_at, updated_at)"+
		" VALUES ($1, $2, $3, $4, 'sub', 'wf', $5, 's', 0, $6, '', $7, $8, $8, $8)",
		j, scope.OrganizationID, scope.EnvironmentID, notification, tx, typ, status, at.UnixMilli())
	sqlExec(t, db, "INSERT INTO execution_details (id, job_id, notification_id, environment_id, status, source, detail, created_at)"+
		" VALUES ($1, $2, $3, $4, 'Success', 'Internal', 'd', $5)", id.New(), j, notification, scope.EnvironmentID, at.UnixMilli())
	return j
}

func sqlExec(t *testing.T, db *sqlstore.DB, q string, a ...any) {
	t.Helper()
	_, err := db.Writer().ExecContext(t.Context(), q, a...)
	require.NoError(t, err, q)
}

// TestRetentionActivityPurge: old triggers whose jobs are all final go with
// their jobs, details and non-in-app messages; their in-app messages stay
// with the trigger's context keys; triggers with unfinished work and young
// ones stay; the transactionId reservations left without a trigger and
// without unfinished work go (with a finished fan-out job), the others
// stay.
func TestRetentionActivityPurge(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		now := tn.Clock.Now()
		cut := now.Add(-30 * day)
		old, young := cut.Add(-time.Hour), cut.Add(time.Minute)
		final := []string{store.JobCompleted, store.JobFailed, store.JobCanceled, store.JobSkipped, store.JobMerged}

		var gone []string
		for i := range 12 { // more than a batch, several in the same millisecond
			at := old.Add(-time.Duration(i/3) * time.Second)
			gone = append(gone, activityRows(t, db, tn.A, fmt.Sprint("done-", i), at, final[i%5], final[(i+1)%5]))
		}
		jobless := activityRows(t, db, tn.B, "jobless", old)
		gone = append(gone, jobless)
		live := map[string]string{}
		for _, s := range []string{store.JobPending, store.JobQueued, store.JobRunning, store.JobDelayed} {
			live[s] = activityRows(t, db, tn.A, "live-"+s, old.Add(-time.Minute), store.JobCompleted, s)
		}
		fresh := activityRows(t, db, tn.A, "fresh", young, store.JobCompleted)
		// One transaction of two triggers: one finished, one not.
		activityRows(t, db, tn.A, "shared", old, store.JobCompleted)
		sharedLive := activityRows(t, db, tn.A, "shared", old, store.JobDelayed)
		// Topic fan-outs: jobs of no trigger.
		sqlExec(t, db, "INSERT INTO transactions (environment_id, transaction_id, workflow_id, created_at) VALUES ($1, 'topic-done', 'wf', $2),"+
			" ($1, 'topic-running', 'wf', $2), ($1, 'no-trigger', 'wf', $2), ($1, 'young-reservation', 'wf', $3)",
			tn.A.EnvironmentID, old.UnixMilli(), young.UnixMilli())
		jobRow(t, db, tn.A, "", "topic-done", store.JobFanout, store.JobCompleted, old)
		runningFanout := jobRow(t, db, tn.A, "", "topic-running", store.JobFanout, store.JobRunning, old)

		// Each trigger's messages: an e-mail and an in-app one.
		var msgs []store.Message
		inApp := map[string]string{}
		for _, n := range append(append([]string{fresh, sharedLive}, gone...), live[store.JobDelayed]) {
			for _, ch := range []string{"email", "in_app"} {
				m := newMessage(tn.A, "tx", "sub-"+n, ch, 0)
				m.NotificationID, m.CreatedAt, m.UpdatedAt = n, old, old
				msgs = append(msgs, m)
				if ch == "in_app" {
					inApp[n] = m.ID
				}
			}
		}
		require.NoError(t, db.MessageBulkLoad(ctx, msgs))

		got, batches := purgeAll(t, db.RetentionActivityPurge, cut, 4)
		require.Equal(t, store.RetentionPurged{Notifications: 14, Jobs: 25, ExecutionDetails: 25, Messages: 13, Done: true}, got,
			"12 finished triggers of two jobs, one without jobs, one finished trigger of a shared transaction (its own e-mail"+
				" not loaded); an e-mail each of the 13")
		require.Equal(t, 5, batches, "19 triggers before the cut-off, 4 a batch")

		for _, n := range gone {
			require.Zero(t, count(t, db, "SELECT count(*) FROM notifications WHERE id = $1", n))
			require.Zero(t, count(t, db, "SELECT count(*) FROM jobs WHERE notification_id = $1", n))
			require.Zero(t, count(t, db, "SELECT count(*) FROM execution_details WHERE notification_id = $1", n))
			require.Zero(t, count(t, db, "SELECT count(*) FROM messages WHERE notification_id = $1 AND channel <> 'in_app'", n))
			require.Equal(t, 1, count(t, db, "SELECT count(*) FROM messages WHERE id = $1 AND context_keys = 'tenant:acme'", inApp[n]),
				"the in-app message stays, with its trigger's context keys")
			_, err := db.NotificationGet(ctx, tn.A, n)
			require.ErrorIs(t, err, store.ErrNotFound)
			for keys, want := range map[string]int{"tenant:acme": 1, "": 0, "tenant:other": 0} {
				page, err := db.InboxList(ctx, &store.InboxListParams{Scope: tn.A, SubscriberID: "sub-" + n,
					InboxFilter: store.InboxFilter{ContextKeys: &keys}, Limit: 10, Now: now})
				require.NoError(t, err)
				require.Len(t, page.Messages, want, "the inbox filters it by its trigger's context keys still (%q)", keys)
			}
		}
		for _, n := range append([]string{fresh, sharedLive}, live[store.JobPending], live[store.JobQueued], live[store.JobRunning],
			live[store.JobDelayed]) {
			d, err := db.NotificationGet(ctx, tn.A, n)
			require.NoError(t, err, "unfinished or young: kept")
			require.NotEmpty(t, d.Jobs)
			require.Equal(t, len(d.Jobs), count(t, db, "SELECT count(*) FROM execution_details WHERE notification_id = $1", n))
		}
		require.Equal(t, 2, count(t, db, "SELECT count(*) FROM messages WHERE notification_id = $1", live[store.JobDelayed]))
		require.Equal(t, 1, count(t, db, "SELECT count(*) FROM messages WHERE id = $1 AND context_keys IS NULL", inApp[fresh]))
		list, _, err := db.NotificationList(ctx, &store.NotificationListParams{Scope: tn.A, Limit: 100})
		require.NoError(t, err)
		require.Len(t, list, 6, "the kept triggers only")

		// The reservations.
		got, _ = purgeAll(t, db.RetentionTransactionPurge, cut, 3)
		require.Equal(t, store.RetentionPurged{Transactions: 15, Jobs: 1, ExecutionDetails: 1, Done: true}, got,
			"12 finished, jobless, no-trigger, and topic-done with its fan-out job and detail")
		var kept []string
		rows, err := db.Reader().QueryContext(ctx, "SELECT transaction_id FROM transactions ORDER BY transaction_id")
		kept, err = scanStrings(rows, err)
		require.NoError(t, err)
		require.Equal(t, []string{"fresh", "live-delayed", "live-pending", "live-queued", "live-running", "shared", "topic-running",
			"young-reservation"}, kept)
		require.Equal(t, 1, count(t, db, "SELECT count(*) FROM jobs WHERE id = $1", runningFanout))
		require.Zero(t, count(t, db, "SELECT count(*) FROM jobs WHERE notification_id NOT IN (SELECT id FROM notifications)"+
			" AND id <> $1", runningFanout), "no job dangles")
		require.Zero(t, count(t, db, "SELECT count(*) FROM execution_details WHERE job_id NOT IN (SELECT id FROM jobs)"),
			"no detail dangles")

		// Keeping forever is the loop's (a retention of 0 runs no purge);
		// a cut-off before everything deletes nothing.
		got, _ = purgeAll(t, db.RetentionActivityPurge, old.Add(-day), 4)
		require.Equal(t, store.RetentionPurged{Done: true}, got)
	})
}

func scanStrings(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
	Close() error
}, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// TestRetentionLockAndSize: one holder of the purge lock at a time (on
// PostgreSQL; SQLite has one process), and a database size above zero.
func TestRetentionLockAndSize(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		size, err := db.StoreSize(ctx)
		require.NoError(t, err)
		require.Positive(t, size)
		release, ok, err := db.RetentionLock(ctx)
		require.NoError(t, err)
		require.True(t, ok)
		if db.Dialect() == "postgres" {
			_, ok2, err := db.RetentionLock(ctx)
			require.NoError(t, err)
			require.False(t, ok2, "held by the first")
		}
		release()
		release2, ok, err := db.RetentionLock(ctx)
		require.NoError(t, err)
		require.True(t, ok, "free again")
		release2()
	})
}
