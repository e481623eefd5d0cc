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

func workflow(t *testing.T, db *sqlstore.DB, scope store.Scope, key string, at time.Time, tags ...string) store.Workflow {
	t.Helper()
	w := store.Workflow{ID: id.NewAt(at), OrganizationID: scope.OrganizationID, EnvironmentID: scope.EnvironmentID, Key: key,
		Name: "Flow " + key, Tags: tags, Active: true, Severity: "high", CreatedAt: at, UpdatedAt: at}
	require.NoError(t, db.WorkflowCreate(t.Context(), &w))
	return w
}

func TestTopicSubscriptionGetUpdate(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		now := base
		for _, sid := range []string{"ada", "bob"} {
			upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: sid, Now: tn.Clock.Now()})
		}
		alerts := workflow(t, db, tn.A, "alerts", now, "ops")
		digest := workflow(t, db, tn.A, "digest", now.Add(time.Second), "weekly", "ops")
		workflow(t, db, tn.A, "other", now.Add(2*time.Second))
		_, err := db.TopicSubscribe(ctx, &store.TopicSubscribeParams{Scope: tn.A, Key: "watchers",
			Members: []store.TopicMember{{SubscriberID: "ada"},
				{SubscriberID: "ada", Identifier: "ada-mobile"}, {SubscriberID: "bob", Identifier: "shared"}}, Now: now})
		require.NoError(t, err)

		plain := &store.TopicSubscriptionRef{Scope: tn.A, Key: "watchers", Identifier: "tk_watchers:si_ada", SubscriberID: "ada"}
		got, err := db.TopicSubscriptionGet(ctx, plain)
		require.NoError(t, err)
		require.Equal(t, "ada", got.Subscriber.SubscriberID)
		require.Empty(t, got.Identifier, "the plain subscription")
		require.Nil(t, got.Name)
		require.Empty(t, got.Preferences)
		custom, err := db.TopicSubscriptionGet(ctx, &store.TopicSubscriptionRef{Scope: tn.A, Key: "watchers", Identifier: "ada-mobile"})
		require.NoError(t, err)
		require.Equal(t, "ada-mobile", custom.Identifier)
		require.NotEqual(t, got.ID, custom.ID)

		later := now.Add(time.Hour)
		off := false
		upd, err := db.TopicSubscriptionUpdate(ctx, &store.TopicSubscriptionUpdateParams{TopicSubscriptionRef: *plain,
			Name: set("Ada's"), PreferencesSet: true, Now: later, Preferences: []store.TopicPreferenceRule{
				{WorkflowIDs: []string{"alerts", "no-such-workflow"}, Enabled: &off, Condition: store.JSON(`{"==":[{"var":"payload.tier"},"gold"]}`)},
				{Tags: []string{"ops"}}, // alerts is already named by the first rule; digest gets this one
			}})
		require.NoError(t, err)
		require.Equal(t, got.ID, upd.ID)
		require.Equal(t, "Ada's", *upd.Name)
		require.True(t, upd.UpdatedAt.Equal(later))
		require.True(t, upd.CreatedAt.Equal(got.CreatedAt))
		require.Len(t, upd.Preferences, 2)
		require.Equal(t, alerts.ID, upd.Preferences[0].Workflow.ID)
		require.False(t, upd.Preferences[0].Enabled)
		require.JSONEq(t, `{"==":[{"var":"payload.tier"},"gold"]}`, string(upd.Preferences[0].Condition))
		require.Equal(t, digest.ID, upd.Preferences[1].Workflow.ID)
		require.True(t, upd.Preferences[1].Enabled, "enabled unless said otherwise")
		require.Nil(t, upd.Preferences[1].Condition)
		again, err := db.TopicSubscriptionGet(ctx, plain)
		require.NoError(t, err)
		require.Equal(t, upd, again, "read back as written")

		// A name alone leaves the preferences; preferences sent replace them all; a deleted workflow's drops out.
		upd, err = db.TopicSubscriptionUpdate(ctx, &store.TopicSubscriptionUpdateParams{TopicSubscriptionRef: *plain, Name: null, Now: later})
		require.NoError(t, err)
		require.Nil(t, upd.Name)
		require.Len(t, upd.Preferences, 2)
		require.NoError(t, db.WorkflowDelete(ctx, &store.WorkflowDeleteParams{Scope: tn.A, ID: digest.ID, Now: tn.Clock.Now()}))
		got, err = db.TopicSubscriptionGet(ctx, plain)
		require.NoError(t, err)
		require.Len(t, got.Preferences, 1)
		upd, err = db.TopicSubscriptionUpdate(ctx, &store.TopicSubscriptionUpdateParams{TopicSubscriptionRef: *plain,
			PreferencesSet: true, Preferences: []store.TopicPreferenceRule{}, Now: later})
		require.NoError(t, err)
		require.Empty(t, upd.Preferences)
		other, err := db.TopicSubscriptionGet(ctx, &store.TopicSubscriptionRef{Scope: tn.A, Key: "watchers", Identifier: "ada-mobile"})
		require.NoError(t, err)
		require.Nil(t, other.Name, "the other subscription is untouched")

		// An identifier used by two subscribers names no one subscription.
		_, err = db.TopicSubscribe(ctx, &store.TopicSubscribeParams{Scope: tn.A, Key: "watchers",
			Members: []store.TopicMember{{SubscriberID: "ada", Identifier: "shared"}}, Now: now})
		require.NoError(t, err)
		_, err = db.TopicSubscriptionGet(ctx, &store.TopicSubscriptionRef{Scope: tn.A, Key: "watchers", Identifier: "shared"})
		require.ErrorIs(t, err, store.ErrConflict)

		for name, ref := range map[string]store.TopicSubscriptionRef{
			"unknown identifier":      {Scope: tn.A, Key: "watchers", Identifier: "nope"},
			"not a member":            {Scope: tn.A, Key: "watchers", Identifier: "tk_watchers:si_eve", SubscriberID: "eve"},
			"plain one of bob: none":  {Scope: tn.A, Key: "watchers", Identifier: "tk_watchers:si_bob", SubscriberID: "bob"},
			"unknown topic":           {Scope: tn.A, Key: "nope", Identifier: "ada-mobile"},
			"another environment":     {Scope: tn.B, Key: "watchers", Identifier: "ada-mobile"},
			"another environment too": {Scope: tn.B, Key: "watchers", Identifier: "tk_watchers:si_ada", SubscriberID: "ada"},
		} {
			_, err := db.TopicSubscriptionGet(ctx, &ref)
			require.ErrorIs(t, err, store.ErrNotFound, name)
			_, err = db.TopicSubscriptionUpdate(ctx, &store.TopicSubscriptionUpdateParams{TopicSubscriptionRef: ref, Name: set("x"), Now: later})
			require.ErrorIs(t, err, store.ErrNotFound, name)
		}

		// A deleted subscriber's subscriptions are not found.
		require.NoError(t, db.SubscriberDelete(ctx, &store.SubscriberDeleteParams{Scope: tn.A, SubscriberID: "ada", Now: tn.Clock.Now()}))
		_, err = db.TopicSubscriptionGet(ctx, &store.TopicSubscriptionRef{Scope: tn.A, Key: "watchers", Identifier: "ada-mobile"})
		require.ErrorIs(t, err, store.ErrNotFound)
		bobs, err := db.TopicSubscriptionGet(ctx, &store.TopicSubscriptionRef{Scope: tn.A, Key: "watchers", Identifier: "shared"})
		require.NoError(t, err, "only bob's is left under that identifier")
		require.Equal(t, "bob", bobs.Subscriber.SubscriberID)
	})
}
