package sqlstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestOnInboxChange: the hook hears, after the commit, which subscribers'
// inboxes a transaction changed and which in-app messages it created —
// from inserts, state changes and deletes — and nothing of a change that
// moves no message, nor of a message of another channel; the store's
// InboxMessagesByID and SubscribersByID read what the events carry.
func TestOnInboxChange(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		envID, scope := inboxScope(t, db)
		var mu sync.Mutex
		var heard []store.InboxChange
		db.OnInboxChange(func(c store.InboxChange) {
			mu.Lock()
			heard = append(heard, c)
			mu.Unlock()
		})
		take := func() []store.InboxChange {
			mu.Lock()
			defer mu.Unlock()
			out := heard
			heard = nil
			return out
		}
		subs := map[string]string{}
		for _, sid := range []string{"hook-a", "hook-b"} {
			s, _, err := db.SubscriberUpsert(ctx, &store.SubscriberUpsertParams{Scope: scope, SubscriberID: sid, Now: time.Now()})
			require.NoError(t, err)
			subs[sid] = s.ID
		}
		m := newMessage(scope, "tx-1", subs["hook-a"], "in_app", 1)
		require.NoError(t, db.InsertMessageForTest(ctx, &m))
		require.Equal(t, []store.InboxChange{{EnvironmentID: envID, SubscriberIDs: []string{subs["hook-a"]}, MessageIDs: []string{m.ID}}}, take())

		email := newMessage(scope, "tx-1", subs["hook-b"], "email", 2)
		require.NoError(t, db.InsertMessageForTest(ctx, &email))
		require.Empty(t, take(), "not an in-app message")

		_, err := db.InboxChangeOne(ctx, &store.InboxChangeParams{Scope: scope, SubscriberID: subs["hook-a"], Action: store.InboxRead,
			ID: m.ID, Now: time.Now()})
		require.NoError(t, err)
		require.Equal(t, []store.InboxChange{{EnvironmentID: envID, SubscriberIDs: []string{subs["hook-a"]}}}, take())
		_, err = db.InboxChangeOne(ctx, &store.InboxChangeParams{Scope: scope, SubscriberID: subs["hook-a"], Action: store.InboxRead,
			ID: m.ID, Now: time.Now()})
		require.NoError(t, err)
		require.Empty(t, take(), "marking read what is read moves nothing")

		got, err := db.InboxMessagesByID(ctx, envID, []string{m.ID, email.ID, "nope"})
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, m.ID, got[0].ID)
		byID, err := db.SubscribersByID(ctx, envID, []string{subs["hook-a"], subs["hook-b"]})
		require.NoError(t, err)
		require.Equal(t, "hook-b", byID[subs["hook-b"]].SubscriberID)
		other, err := db.InboxMessagesByID(ctx, "another-environment", []string{m.ID})
		require.NoError(t, err)
		require.Empty(t, other)

		n, err := db.MessageDeleteByTransaction(ctx, &store.MessageDeleteByTransactionParams{Scope: scope, TransactionID: "tx-1",
			Now: time.Now()})
		require.NoError(t, err)
		require.Equal(t, 2, n)
		require.Equal(t, []store.InboxChange{{EnvironmentID: envID, SubscriberIDs: []string{subs["hook-a"]}}}, take())
	})
}
