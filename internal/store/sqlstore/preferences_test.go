package sqlstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// prefChange is a change of a subscriber's preferences in a test.
func prefChange(workflowID string, channels map[string]bool) store.PreferenceChange {
	return store.PreferenceChange{WorkflowID: workflowID, Channels: channels}
}

func TestSubscriberPreferenceUpdate(t *testing.T) {
	t.Parallel()
	wf1, wf2 := id.New(), id.New()
	type want struct {
		global    map[string]bool // nil: no global preference
		workflows map[string]map[string]bool
	}
	for _, tc := range []struct {
		name    string
		updates [][]store.PreferenceChange
		want    want
	}{
		{name: "nothing set", updates: nil, want: want{workflows: map[string]map[string]bool{}}},
		{name: "a change without channels writes nothing", updates: [][]store.PreferenceChange{{prefChange("", nil)}},
			want: want{workflows: map[string]map[string]bool{}}},
		{name: "global channels merge, the last value wins",
			updates: [][]store.PreferenceChange{
				{prefChange("", map[string]bool{"email": false, "sms": false})},
				{prefChange("", map[string]bool{"sms": true, "push": false})},
			},
			want: want{global: map[string]bool{"email": false, "sms": true, "push": false}, workflows: map[string]map[string]bool{}}},
		{name: "workflow preferences are apart from each other and from the global one",
			updates: [][]store.PreferenceChange{
				{prefChange(wf1, map[string]bool{"in_app": false})},
				{prefChange(wf2, map[string]bool{"email": true}), prefChange(wf1, map[string]bool{"chat": false})},
			},
			want: want{workflows: map[string]map[string]bool{wf1: {"in_app": false, "chat": false}, wf2: {"email": true}}}},
		{name: "a global channel clears that channel of the workflow preferences",
			updates: [][]store.PreferenceChange{
				{prefChange(wf1, map[string]bool{"in_app": true, "email": false}), prefChange(wf2, map[string]bool{"in_app": true})},
				{prefChange("", map[string]bool{"in_app": false})},
			},
			want: want{global: map[string]bool{"in_app": false}, workflows: map[string]map[string]bool{wf1: {"email": false}}}},
		{name: "a workflow set after the global one keeps its choice",
			updates: [][]store.PreferenceChange{
				{prefChange("", map[string]bool{"in_app": false})},
				{prefChange(wf1, map[string]bool{"in_app": true})},
			},
			want: want{global: map[string]bool{"in_app": false}, workflows: map[string]map[string]bool{wf1: {"in_app": true}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
				ctx := t.Context()
				tn := setup(t, db)
				ada, _ := upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "ada", Now: tn.Clock.Now()})
				var last store.SubscriberPreferences
				for i, changes := range tc.updates {
					now := base.Add(time.Duration(i) * time.Second)
					var err error
					last, err = db.SubscriberPreferenceUpdate(ctx, &store.SubscriberPreferenceUpdateParams{Scope: tn.A,
						SubscriberID: "ada", Changes: changes, Now: now})
					require.NoError(t, err)
					require.Equal(t, ada.ID, last.Subscriber.ID)
				}
				got, err := db.SubscriberPreferenceGet(ctx, &store.SubscriberPreferenceGetParams{Scope: tn.A, SubscriberID: "ada"})
				require.NoError(t, err)
				require.Equal(t, ada.ID, got.Subscriber.ID)
				for _, p := range []store.SubscriberPreferences{got, last} {
					if tc.want.global == nil {
						require.Nil(t, p.Global)
					} else {
						require.NotNil(t, p.Global)
						require.Equal(t, tc.want.global, p.Global.Channels)
						require.Equal(t, ada.ID, p.Global.SubscriberID)
						require.Equal(t, tn.A.EnvironmentID, p.Global.EnvironmentID)
					}
					workflows := map[string]map[string]bool{}
					for wf, pref := range p.Workflows {
						require.Equal(t, wf, pref.WorkflowID)
						workflows[wf] = pref.Channels
					}
					require.Equal(t, tc.want.workflows, workflows)
				}
				if len(tc.updates) > 0 {
					require.Len(t, got.Workflows, count(t, db, "SELECT count(*) FROM subscriber_preferences WHERE workflow_id <> ''"),
						"a workflow preference left without channels is deleted")
				}
			})
		})
	}
}

func TestSubscriberPreferenceTimesAndScope(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "ada", Now: tn.Clock.Now()})
		wf := id.New()
		update := func(scope store.Scope, sid string, now time.Time, changes ...store.PreferenceChange) (store.SubscriberPreferences, error) {
			return db.SubscriberPreferenceUpdate(ctx, &store.SubscriberPreferenceUpdateParams{Scope: scope, SubscriberID: sid,
				Changes: changes, Now: now})
		}
		first, err := update(tn.A, "ada", base, prefChange(wf, map[string]bool{"email": false}))
		require.NoError(t, err)
		created := first.Workflows[wf]
		require.True(t, created.CreatedAt.Equal(base) && created.UpdatedAt.Equal(base), "%v", created)
		later := base.Add(time.Minute)
		second, err := update(tn.A, "ada", later, prefChange(wf, map[string]bool{"sms": false}))
		require.NoError(t, err)
		changed := second.Workflows[wf]
		require.Equal(t, created.ID, changed.ID, "the same preference")
		require.True(t, changed.CreatedAt.Equal(base), "created at its first change")
		require.True(t, changed.UpdatedAt.Equal(later), "updated at the last")

		// Unknown, deleted and other environments' subscribers are not found.
		_, err = update(tn.B, "ada", later, prefChange("", map[string]bool{"email": false}))
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = db.SubscriberPreferenceGet(ctx, &store.SubscriberPreferenceGetParams{Scope: tn.B, SubscriberID: "ada"})
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = update(tn.A, "nobody", later)
		require.ErrorIs(t, err, store.ErrNotFound)
		require.NoError(t, db.SubscriberDelete(ctx, &store.SubscriberDeleteParams{Scope: tn.A, SubscriberID: "ada", Now: tn.Clock.Now()}))
		_, err = db.SubscriberPreferenceGet(ctx, &store.SubscriberPreferenceGetParams{Scope: tn.A, SubscriberID: "ada"})
		require.ErrorIs(t, err, store.ErrNotFound)

		// A subscriber created again under the same subscriberId starts afresh.
		upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "ada", Now: tn.Clock.Now()})
		got, err := db.SubscriberPreferenceGet(ctx, &store.SubscriberPreferenceGetParams{Scope: tn.A, SubscriberID: "ada"})
		require.NoError(t, err)
		require.Nil(t, got.Global)
		require.Empty(t, got.Workflows)
	})
}

// TestSubscriberPreferenceConcurrentUpdates: concurrent changes of one
// subscriber's channels all land, none lost to another's read.
func TestSubscriberPreferenceConcurrentUpdates(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "ada", Now: tn.Clock.Now()})
		wf := id.New()
		channels := []string{"in_app", "email", "sms", "chat", "push"}
		errs := parallel(len(channels), func(i int) error {
			_, err := db.SubscriberPreferenceUpdate(t.Context(), &store.SubscriberPreferenceUpdateParams{Scope: tn.A,
				SubscriberID: "ada", Changes: []store.PreferenceChange{prefChange(wf, map[string]bool{channels[i]: i%2 == 0})}, Now: base})
			return err
		})
		for _, err := range errs {
			require.NoError(t, err)
		}
		got, err := db.SubscriberPreferenceGet(t.Context(), &store.SubscriberPreferenceGetParams{Scope: tn.A, SubscriberID: "ada"})
		require.NoError(t, err)
		require.Equal(t, map[string]bool{"in_app": true, "email": false, "sms": true, "chat": false, "push": true}, got.Workflows[wf].Channels)
	})
}

// TestJobClaimLoadsPreferences: a claimed batch carries each channel job's
// subscriber choices — global and for its workflow — read for the whole
// batch; delay and digest jobs carry none.
func TestJobClaimLoadsPreferences(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		steps := []store.Step{{ID: id.New(), StepID: "inbox", Name: "Inbox", Type: "in_app", ControlValues: map[string]any{"body": "hi"}}}
		wait := []store.Step{{ID: id.New(), StepID: "wait", Name: "Wait", Type: "delay", ControlValues: map[string]any{"amount": 1, "unit": "seconds"}}}
		mk := func(key string, steps []store.Step) store.Workflow {
			wf := store.Workflow{ID: id.NewAt(base), OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID, Key: key, Name: key,
				Active: true, Severity: "none", Steps: steps, CreatedAt: base, UpdatedAt: base}
			require.NoError(t, db.WorkflowCreate(ctx, &wf))
			return wf
		}
		wfA, wfB, wfWait := mk("a", steps), mk("b", steps), mk("wait", wait)
		var subs []string
		for i := range 4 {
			sid := fmt.Sprintf("sub-%d", i)
			upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: sid, Now: tn.Clock.Now()})
			subs = append(subs, sid)
		}
		set := func(sid, wf string, ch map[string]bool) {
			_, err := db.SubscriberPreferenceUpdate(ctx, &store.SubscriberPreferenceUpdateParams{Scope: tn.A, SubscriberID: sid,
				Changes: []store.PreferenceChange{prefChange(wf, ch)}, Now: base})
			require.NoError(t, err)
		}
		set("sub-0", "", map[string]bool{"in_app": false})
		set("sub-0", wfA.ID, map[string]bool{"in_app": true})
		set("sub-1", wfB.ID, map[string]bool{"in_app": false})
		set("sub-2", "", map[string]bool{"email": false})
		for _, wf := range []store.Workflow{wfA, wfB, wfWait} {
			var rcps []store.Recipient
			for _, sid := range subs {
				rcps = append(rcps, store.Recipient{SubscriberID: sid})
			}
			res, err := db.Trigger(ctx, &store.TriggerParams{Scope: tn.A, Workflow: wf, TransactionID: "tx-" + wf.Key,
				Recipients: rcps, Payload: store.JSON(`{}`), ProviderFor: func(string) string { return "svc" }, Now: base})
			require.NoError(t, err)
			require.Len(t, res.Notifications, len(subs))
		}
		claimed, err := db.JobClaim(ctx, 100, time.Minute, base.Add(time.Second))
		require.NoError(t, err)
		require.Len(t, claimed, 12)
		type key struct{ sub, wf string }
		got := map[key]store.ChannelChoices{}
		for _, c := range claimed {
			got[key{c.Subscriber.SubscriberID, c.Workflow.Key}] = c.Preferences
		}
		want := map[key]store.ChannelChoices{
			{"sub-0", "a"}: {Global: map[string]bool{"in_app": false}, Workflow: map[string]bool{"in_app": true}},
			{"sub-0", "b"}: {Global: map[string]bool{"in_app": false}},
			{"sub-1", "b"}: {Workflow: map[string]bool{"in_app": false}},
			{"sub-2", "a"}: {Global: map[string]bool{"email": false}},
			{"sub-2", "b"}: {Global: map[string]bool{"email": false}},
		}
		for _, sid := range subs {
			for _, wf := range []string{"a", "b", "wait"} {
				require.Equal(t, want[key{sid, wf}], got[key{sid, wf}], "%s of %s", wf, sid)
			}
		}
	})
}
