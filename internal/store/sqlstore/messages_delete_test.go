package sqlstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// newMessage is a message of a transaction to a subscriber (by _id).
func newMessage(scope store.Scope, tx, subscriberID, channel string, at int) store.Message {
	return store.Message{ID: id.New(), OrganizationID: scope.OrganizationID, EnvironmentID: scope.EnvironmentID,
		NotificationID: id.New(), JobID: id.New(), SubscriberID: subscriberID, WorkflowID: id.New(), TemplateIdentifier: "wf",
		TransactionID: tx, Channel: channel, ProviderID: "svc", Content: "c", Status: "sent",
		CreatedAt: time.UnixMilli(int64(1000 + at)), UpdatedAt: time.UnixMilli(int64(1000 + at))}
}

// requireCountsExact checks every subscriber's inbox counts, by state
// (archived, snoozed, severity) and tag set (the tags column, "[]" for
// none), against a count of its messages.
func requireCountsExact(t *testing.T, db *sqlstore.DB) {
	t.Helper()
	want := map[string][4]int{}
	rows, err := db.Reader().Query("SELECT subscriber_id, read, seen, archived, snoozed_until IS NOT NULL, severity," +
		" coalesce(tags, '[]') FROM messages WHERE channel = 'in_app' AND deleted = false")
	require.NoError(t, err)
	for rows.Next() {
		var sub, severity, tags string
		var read, seen, archived, snoozed bool
		require.NoError(t, rows.Scan(&sub, &read, &seen, &archived, &snoozed, &severity, &tags))
		state := map[string]int{"low": 1, "medium": 2, "high": 3}[severity] * 4
		if archived {
			state++
		}
		if snoozed {
			state += 2
		}
		key := fmt.Sprintf("%s/%d/%s", sub, state, tags)
		c := want[key]
		switch {
		case !read && !seen:
			c[0]++
		case !read:
			c[1]++
		case !seen:
			c[2]++
		default:
			c[3]++
		}
		want[key] = c
	}
	require.NoError(t, rows.Err())
	rows.Close()
	require.Equal(t, want, countsRows(t, db))
}

func deleteByTx(ctx context.Context, db *sqlstore.DB, tn *tenant, tx, channel string) (int, error) {
	return db.MessageDeleteByTransaction(ctx, &store.MessageDeleteByTransactionParams{Scope: tn.A, TransactionID: tx, Channel: channel,
		Now: tn.Clock.Now()})
}

func TestMessageDeleteByTransaction(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		ada, bob := id.New(), id.New()
		msgs := []store.Message{
			newMessage(tn.A, "tx-1", ada, "in_app", 1), newMessage(tn.A, "tx-1", ada, "in_app", 2),
			newMessage(tn.A, "tx-1", bob, "in_app", 3), newMessage(tn.A, "tx-1", ada, "email", 4),
			newMessage(tn.A, "tx-2", ada, "in_app", 5),
			newMessage(tn.B, "tx-1", id.New(), "in_app", 6), // another environment's transaction of the same id
		}
		require.NoError(t, db.MessageBulkLoad(ctx, msgs))
		_, err := db.MessageMarkAs(ctx, &store.MessageMarkAsParams{Scope: tn.A, SubscriberID: ada, IDs: []string{msgs[0].ID},
			MarkAs: store.MarkRead, Now: time.Now()})
		require.NoError(t, err)
		_, err = db.MessageMarkAs(ctx, &store.MessageMarkAsParams{Scope: tn.A, SubscriberID: bob, IDs: []string{msgs[2].ID},
			MarkAs: store.MarkSeen, Now: time.Now()})
		require.NoError(t, err)

		for _, c := range []struct {
			name, tx, channel string
		}{{"unknown transaction", "tx-9", ""}, {"a channel it has none of", "tx-1", "sms"}, {"the tool channel", "tx-1", "tool"}} {
			_, err := deleteByTx(ctx, db, tn, c.tx, c.channel)
			require.ErrorIs(t, err, store.ErrNotFound, c.name)
		}

		n, err := deleteByTx(ctx, db, tn, "tx-1", "email")
		require.NoError(t, err)
		require.Equal(t, 1, n, "only the channel asked for")
		require.Equal(t, 3, count(t, db, "SELECT count(*) FROM messages WHERE transaction_id = 'tx-1' AND environment_id = $1 AND deleted = false", tn.A.EnvironmentID))

		at := tn.Clock.Advance(time.Minute)
		n, err = deleteByTx(ctx, db, tn, "tx-1", "")
		require.NoError(t, err)
		require.Equal(t, 3, n)
		require.Equal(t, 4, count(t, db, "SELECT count(*) FROM messages WHERE deleted = true AND transaction_id = 'tx-1'"),
			"soft deleted, the other environment's kept")
		require.Equal(t, 3, count(t, db, "SELECT count(*) FROM messages WHERE deleted = true AND updated_at = $1 AND channel = 'in_app'", at.UnixMilli()))
		_, err = deleteByTx(ctx, db, tn, "tx-1", "")
		require.ErrorIs(t, err, store.ErrNotFound, "nothing left to delete")

		page, err := db.MessageFeed(ctx, &store.FeedParams{Scope: tn.A, SubscriberID: ada, Limit: 10, Now: tn.Clock.Now()})
		require.NoError(t, err)
		require.Len(t, page.Messages, 1)
		require.Equal(t, msgs[4].ID, page.Messages[0].ID, "the other transaction's message stays in the feed")
		unseen, err := db.MessageUnseenCount(ctx, &store.MessageUnseenCountParams{Scope: tn.A, SubscriberID: bob, Now: tn.Clock.Now()})
		require.NoError(t, err)
		require.Zero(t, unseen)
		requireCountsExact(t, db)
	})
}

// TestMessageDeleteByTransactionLarge: a transaction of more messages and
// subscribers than one statement names, deleted while its subscribers'
// messages are marked concurrently; the counts stay exact.
func TestMessageDeleteByTransactionLarge(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		subs := make([]string, 700)
		for i := range subs {
			subs[i] = id.New()
		}
		var msgs []store.Message
		for i := range 1300 {
			msgs = append(msgs, newMessage(tn.A, "broadcast", subs[i%len(subs)], "in_app", i))
		}
		for i := range 100 { // other transactions of the same subscribers
			msgs = append(msgs, newMessage(tn.A, fmt.Sprint("other-", i), subs[i], "in_app", 2000+i))
		}
		require.NoError(t, db.MessageBulkLoad(ctx, msgs))

		var wg sync.WaitGroup
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < 120; i += 3 {
					m := msgs[i*7%len(msgs)]
					_, err := db.MessageMarkAs(ctx, &store.MessageMarkAsParams{Scope: tn.A, SubscriberID: m.SubscriberID,
						IDs: []string{m.ID}, MarkAs: store.MarkRead, Now: time.Now()})
					require.NoError(t, err)
				}
			}()
		}
		n, err := deleteByTx(ctx, db, tn, "broadcast", "in_app")
		wg.Wait()
		require.NoError(t, err)
		require.Equal(t, 1300, n)
		require.Equal(t, 100, count(t, db, "SELECT count(*) FROM messages WHERE deleted = false"))
		requireCountsExact(t, db)
	})
}
