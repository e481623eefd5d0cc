package sqlstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

func TestTopicUpsertGetDelete(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		now := time.Now().Truncate(time.Millisecond)

		created, isNew, err := db.TopicUpsert(ctx, &store.TopicUpsertParams{Scope: tn.A, Key: "team:ops", Name: set("Ops"), Now: now})
		require.NoError(t, err)
		require.True(t, isNew)
		again, isNew, err := db.TopicUpsert(ctx, &store.TopicUpsertParams{Scope: tn.A, Key: "team:ops", Name: set("Operations"),
			DataSet: true, Data: store.JSON(`{"on":"call"}`), Now: now.Add(time.Second)})
		require.NoError(t, err)
		require.False(t, isNew)
		require.Equal(t, created.ID, again.ID, "the same topic for the same key")
		got, err := db.TopicGet(ctx, tn.A, "team:ops")
		require.NoError(t, err)
		require.Equal(t, "Operations", *got.Name)
		require.JSONEq(t, `{"on":"call"}`, string(got.Data))
		require.True(t, created.CreatedAt.Equal(got.CreatedAt))

		_, _, err = db.TopicUpsert(ctx, &store.TopicUpsertParams{Scope: tn.A, Key: "team:ops", FailIfExists: true, Now: now})
		require.ErrorIs(t, err, store.ErrConflict)
		_, _, err = db.TopicUpsert(ctx, &store.TopicUpsertParams{Scope: tn.A, Key: "nope", UpdateOnly: true, Now: now})
		require.ErrorIs(t, err, store.ErrNotFound)

		// Environments are apart.
		_, err = db.TopicGet(ctx, tn.B, "team:ops")
		require.ErrorIs(t, err, store.ErrNotFound)
		require.ErrorIs(t, db.TopicDelete(ctx, tn.B, "team:ops"), store.ErrNotFound)

		upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "ada", Now: tn.Clock.Now()})
		_, err = db.TopicSubscribe(ctx, &store.TopicSubscribeParams{Scope: tn.A, Key: "team:ops",
			Members: []store.TopicMember{{SubscriberID: "ada"}}, Now: now})
		require.NoError(t, err)
		require.NoError(t, db.TopicDelete(ctx, tn.A, "team:ops"))
		_, err = db.TopicGet(ctx, tn.A, "team:ops")
		require.ErrorIs(t, err, store.ErrNotFound)
		require.Zero(t, count(t, db, "SELECT count(*) FROM topic_subscriptions"), "its subscriptions went with it")
	})
}

func TestTopicSubscriptions(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		now := time.Now().Truncate(time.Millisecond)
		for _, sid := range []string{"ada", "bob", "eve"} {
			upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: sid, Now: tn.Clock.Now()})
		}
		upsert(t, db, store.SubscriberUpsertParams{Scope: tn.B, SubscriberID: "other-env", Now: tn.Clock.Now()})

		// Subscribing creates the topic; unknown ids (and other environments' subscribers) are listed.
		ch, err := db.TopicSubscribe(ctx, &store.TopicSubscribeParams{Scope: tn.A, Key: "watchers",
			Members: []store.TopicMember{{SubscriberID: "ada"}, {SubscriberID: "bob"},
				{SubscriberID: "ghost"}, {SubscriberID: "other-env"}, {SubscriberID: "ada"}}, Now: now})
		require.NoError(t, err)
		require.Equal(t, "watchers", ch.Topic.Key)
		require.Len(t, ch.Subscriptions, 2, "ada once")
		require.Equal(t, []string{"ghost", "other-env"}, ch.Unknown)

		// Again: the same subscriptions, nothing duplicated; an identifier makes a second one.
		again, err := db.TopicSubscribe(ctx, &store.TopicSubscribeParams{Scope: tn.A, Key: "watchers",
			Members: []store.TopicMember{{SubscriberID: "ada"}, {SubscriberID: "ada", Identifier: "mobile"}}, Now: now})
		require.NoError(t, err)
		require.Equal(t, ch.Subscriptions[0].ID, again.Subscriptions[0].ID)
		require.Equal(t, 3, count(t, db, "SELECT count(*) FROM topic_subscriptions"))

		m, err := db.TopicMembership(ctx, &store.TopicMembershipParams{Scope: tn.A, Key: "watchers", SubscriberID: "bob"})
		require.NoError(t, err)
		require.Equal(t, "bob", m.Subscriber.SubscriberID)
		_, err = db.TopicMembership(ctx, &store.TopicMembershipParams{Scope: tn.A, Key: "watchers", SubscriberID: "eve"})
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = db.TopicMembership(ctx, &store.TopicMembershipParams{Scope: tn.B, Key: "watchers", SubscriberID: "bob"})
		require.ErrorIs(t, err, store.ErrNotFound)

		// Removing a member without identifier removes all its subscriptions.
		gone, err := db.TopicUnsubscribe(ctx, &store.TopicUnsubscribeParams{Scope: tn.A, Key: "watchers",
			Members: []store.TopicMember{{SubscriberID: "ada"}, {SubscriberID: "eve"}, {SubscriberID: "ghost"}}})
		require.NoError(t, err)
		require.Len(t, gone.Subscriptions, 2)
		require.Equal(t, []string{"eve"}, gone.NotMembers)
		require.Equal(t, []string{"ghost"}, gone.Unknown)
		require.Equal(t, 1, count(t, db, "SELECT count(*) FROM topic_subscriptions"))
		_, err = db.TopicUnsubscribe(ctx, &store.TopicUnsubscribeParams{Scope: tn.A, Key: "missing",
			Members: []store.TopicMember{{SubscriberID: "bob"}}})
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

func TestTopicConcurrentSubscribe(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		for i := range 20 {
			upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: fmt.Sprintf("s%d", i), Now: tn.Clock.Now()})
		}
		// Twenty concurrent first subscriptions to one new topic: one topic, twenty members.
		errs := parallel(20, func(i int) error {
			_, err := db.TopicSubscribe(t.Context(), &store.TopicSubscribeParams{Scope: tn.A, Key: "race",
				Members: []store.TopicMember{{SubscriberID: fmt.Sprintf("s%d", i)}}, Now: time.Now()})
			return err
		})
		for _, err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, 1, count(t, db, "SELECT count(*) FROM topics"))
		require.Equal(t, 20, count(t, db, "SELECT count(*) FROM topic_subscriptions"))
	})
}
