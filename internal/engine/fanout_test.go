package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/testdb"
)

// eachStore runs f on a new world of each store.
func eachStore(t *testing.T, f func(t *testing.T, w *world)) {
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f(t, newWorld(t, testdb.Open(t, kind)))
		})
	}
}

// subscribe makes subscribers and subscribes them to a topic.
func (w *world) subscribe(key string, subscriberIDs ...string) {
	ctx := context.Background()
	var members []store.TopicMember
	for _, sid := range subscriberIDs {
		_, _, err := w.db.SubscriberUpsert(ctx, &store.SubscriberUpsertParams{Scope: w.scope, SubscriberID: sid, Now: w.clock.Now()})
		require.NoError(w.t, err)
		members = append(members, store.TopicMember{SubscriberID: sid})
	}
	_, err := w.db.TopicSubscribe(ctx, &store.TopicSubscribeParams{Scope: w.scope, Key: key, Members: members, Now: w.clock.Now()})
	require.NoError(w.t, err)
}

// triggerTo triggers wf to direct recipients and topics.
func (w *world) triggerTo(wf store.Workflow, direct []string, topics []store.TopicRecipient, actor string, broadcast bool) store.TriggerResult {
	params := &store.TriggerParams{
		Scope: w.scope, Workflow: wf, TransactionID: id.New(), Payload: []byte(`{"n":1}`), Now: w.clock.Now(),
		Topics: topics, Broadcast: broadcast, ActorSubscriberID: actor,
		ProviderFor: func(string) string { return "svc" },
	}
	for _, sid := range direct {
		params.Recipients = append(params.Recipients, store.Recipient{SubscriberID: sid})
	}
	res, err := w.db.Trigger(context.Background(), params)
	require.NoError(w.t, err)
	return res
}

// inboxSizes counts each subscriber's in-app messages.
func (w *world) inboxSizes(subscriberIDs ...string) map[string]int {
	out := map[string]int{}
	for _, sid := range subscriberIDs {
		out[sid] = len(w.feed(sid))
	}
	return out
}

func TestFanoutReachesEachMemberOnce(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, w *world) {
		// Three batches of three at a time: the fan-out queues itself again
		// between runs.
		w.eng = engine.New(engine.Options{Store: w.db, Now: w.clock.Now, Lease: time.Minute, FanoutBatch: 3, FanoutBatches: 2})
		wf := w.workflow("news", inApp("hello {{subscriber.subscriberId}}"))
		w.subscribe("team", "ada", "bob", "cy", "dee", "eve", "fay", "gus")
		w.subscribe("watchers", "bob", "cy", "hal", "ivy", "jo")
		w.subscribe("board", "kim", "eve")
		w.subscribe("lonely", "zed")
		_, _, err := w.db.SubscriberUpsert(context.Background(), &store.SubscriberUpsertParams{Scope: w.scope,
			SubscriberID: "direct", Now: w.clock.Now()})
		require.NoError(t, err)
		require.NoError(t, w.db.SubscriberDelete(context.Background(), &store.SubscriberDeleteParams{Scope: w.scope,
			SubscriberID: "gus", Now: w.clock.Now()}))

		res := w.triggerTo(wf, []string{"direct", "ada"}, []store.TopicRecipient{
			{Key: "team"}, {Key: "watchers", Exclude: []string{"hal", "cy"}}, {Key: "board", Exclude: []string{"kim", "eve"}},
			{Key: "lonely", Exclude: []string{"zed"}}, {Key: "no-such-topic"},
		}, "fay", false)
		require.Len(t, res.Notifications, 2, "the direct recipients at once")
		require.NotEmpty(t, res.FanoutJobID)
		require.Equal(t, []string{"no-such-topic"}, res.MissingTopics)
		w.drain()

		require.Equal(t, map[string]int{
			"direct": 1, "ada": 1, // named directly, and ada a member too: once
			"bob": 1, "cy": 1, // in two topics: once; cy excluded from one only
			"dee": 1, "eve": 1, // eve excluded from board but in team
			"fay": 0,           // the actor
			"gus": 0,           // deleted
			"hal": 0, "kim": 0, // excluded from their only topic
			"ivy": 1, "jo": 1, "zed": 0,
		}, w.inboxSizes("direct", "ada", "bob", "cy", "dee", "eve", "fay", "gus", "hal", "kim", "ivy", "jo", "zed"))
		require.Equal(t, "completed", w.fanoutStatus(res.FanoutJobID))
	})
}

func TestFanoutBroadcast(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, w *world) {
		w.eng = engine.New(engine.Options{Store: w.db, Now: w.clock.Now, Lease: time.Minute, FanoutBatch: 4})
		wf := w.workflow("all", inApp("to everyone"))
		var all []string
		for i := range 11 {
			sid := fmt.Sprintf("s%02d", i)
			_, _, err := w.db.SubscriberUpsert(context.Background(), &store.SubscriberUpsertParams{Scope: w.scope,
				SubscriberID: sid, Now: w.clock.Now()})
			require.NoError(t, err)
			all = append(all, sid)
		}
		other := otherEnvironment(t, w)
		_, _, err := w.db.SubscriberUpsert(context.Background(), &store.SubscriberUpsertParams{Scope: other, SubscriberID: "s00",
			Now: w.clock.Now()})
		require.NoError(t, err)

		res := w.triggerTo(wf, nil, nil, "s03", true)
		require.Empty(t, res.Notifications)
		w.drain()
		want := map[string]int{}
		for _, sid := range all {
			want[sid] = 1
		}
		want["s03"] = 0 // the actor
		require.Equal(t, want, w.inboxSizes(all...))
		require.Equal(t, 10, count(t, w, "SELECT count(*) FROM notifications"), "none in the other environment")
	})
}

func TestFanoutResumesWithoutDuplicates(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, w *world) {
		ctx := context.Background()
		wf := w.workflow("big", inApp("hi"))
		var members []string
		for i := range 10 {
			members = append(members, fmt.Sprintf("m%d", i))
		}
		w.subscribe("big", members...)
		res := w.triggerTo(wf, nil, []store.TopicRecipient{{Key: "big"}}, "", false)

		// A worker claims the fan-out and writes one batch, then dies.
		claimed, err := w.db.JobClaim(ctx, 10, time.Minute, w.clock.Now())
		require.NoError(t, err)
		require.Len(t, claimed, 1)
		job := claimed[0].Job
		require.Equal(t, store.JobFanout, job.Type)
		r, err := w.db.FanoutRun(ctx, &store.FanoutRunParams{Job: job, Limit: 4, Lease: time.Minute, Now: w.clock.Now()})
		require.NoError(t, err)
		require.Equal(t, store.FanoutRunResult{Applied: true, Created: 4}, r)

		// Its lease expires; the job runs again on another worker.
		w.clock.Advance(2 * time.Minute)
		n, err := w.db.JobRescue(ctx, w.clock.Now())
		require.NoError(t, err)
		require.Equal(t, 1, n)
		// The dead worker's stale claim writes nothing.
		r, err = w.db.FanoutRun(ctx, &store.FanoutRunParams{Job: job, Limit: 4, Lease: time.Minute, Now: w.clock.Now()})
		require.NoError(t, err)
		require.False(t, r.Applied)

		w.drain()
		want := map[string]int{}
		for _, m := range members {
			want[m] = 1
		}
		require.Equal(t, want, w.inboxSizes(members...))
		require.Equal(t, "completed", w.fanoutStatus(res.FanoutJobID))
	})
}

func TestFanoutCanceled(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, w *world) {
		ctx := context.Background()
		wf := w.workflow("later", store.Step{Type: "delay", ControlValues: map[string]any{"amount": 1, "unit": "hours"}}, inApp("hi"))
		var members []string
		for i := range 9 {
			members = append(members, fmt.Sprintf("m%d", i))
		}
		w.subscribe("t", members...)
		res := w.triggerTo(wf, nil, []store.TopicRecipient{{Key: "t"}}, "", false)
		claimed, err := w.db.JobClaim(ctx, 10, time.Minute, w.clock.Now())
		require.NoError(t, err)
		r, err := w.db.FanoutRun(ctx, &store.FanoutRunParams{Job: claimed[0].Job, Limit: 3, Lease: time.Minute, Now: w.clock.Now()})
		require.NoError(t, err)
		require.Equal(t, 3, r.Created)

		tx := rawString(t, w, "SELECT transaction_id FROM jobs WHERE id = $1", res.FanoutJobID)
		canceled, err := w.db.TriggerCancel(ctx, &store.TriggerCancelParams{Scope: w.scope, TransactionID: tx, Now: w.clock.Now()})
		require.NoError(t, err)
		require.Equal(t, 1+3*2, canceled, "the fan-out, and both steps of each of the three notifications it made")
		r, err = w.db.FanoutRun(ctx, &store.FanoutRunParams{Job: claimed[0].Job, Limit: 3, Lease: time.Minute, Now: w.clock.Now()})
		require.NoError(t, err)
		require.False(t, r.Applied, "a canceled fan-out stops")
		w.clock.Advance(2 * time.Hour)
		w.drain()
		require.Equal(t, 3, count(t, w, "SELECT count(*) FROM notifications"))
		require.Zero(t, count(t, w, "SELECT count(*) FROM messages"))
		require.Equal(t, "canceled", w.fanoutStatus(res.FanoutJobID))
	})
}

func (w *world) fanoutStatus(jobID string) string {
	return rawString(w.t, w, "SELECT status FROM jobs WHERE id = $1", jobID)
}

func count(t *testing.T, w *world, q string, a ...any) int {
	var n int
	require.NoError(t, w.db.Reader().QueryRow(q, a...).Scan(&n))
	return n
}

func rawString(t *testing.T, w *world, q string, a ...any) string {
	var s string
	require.NoError(t, w.db.Reader().QueryRow(q, a...).Scan(&s))
	return s
}

// otherEnvironment is another environment of the world's organization.
func otherEnvironment(t *testing.T, w *world) store.Scope {
	env, err := w.db.EnvironmentGetByName(context.Background(), "production")
	require.NoError(t, err)
	return store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}
}

func TestFanoutHonoursSubscriptionPreferences(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, w *world) {
		ctx := context.Background()
		wf := w.workflow("digest-news", inApp("hi"))
		other := w.workflow("other", inApp("other"))
		w.subscribe("news", "ada", "bob", "cy")
		w.subscribe("all-hands", "bob")
		off := false
		for _, ref := range []struct{ key, sid string }{{"news", "ada"}, {"news", "bob"}} {
			_, err := w.db.TopicSubscriptionUpdate(ctx, &store.TopicSubscriptionUpdateParams{
				TopicSubscriptionRef: store.TopicSubscriptionRef{Scope: w.scope, Key: ref.key, SubscriberID: ref.sid,
					Identifier: "tk_" + ref.key + ":si_" + ref.sid},
				PreferencesSet: true, Preferences: []store.TopicPreferenceRule{{WorkflowIDs: []string{wf.Key}, Enabled: &off}},
				Now: w.clock.Now()})
			require.NoError(t, err)
		}
		w.triggerTo(wf, nil, []store.TopicRecipient{{Key: "news"}, {Key: "all-hands"}}, "", false)
		w.triggerTo(other, nil, []store.TopicRecipient{{Key: "news"}}, "", false)
		w.drain()
		// ada turned this workflow off for her only subscription; bob too, but
		// his all-hands subscription still brings it; the other workflow is not concerned.
		require.Equal(t, map[string]int{"ada": 1, "bob": 2, "cy": 2}, w.inboxSizes("ada", "bob", "cy"))
		require.Equal(t, []string{"other"}, w.feed("ada"))
	})
}
