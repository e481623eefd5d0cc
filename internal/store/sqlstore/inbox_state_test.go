package sqlstore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// inboxFixture is a tenant with in-app messages to change.
type inboxFixture struct {
	db    *sqlstore.DB
	tn    *tenant
	scope store.Scope
}

func newInboxFixture(t *testing.T, db *sqlstore.DB) *inboxFixture {
	tn := setup(t, db)
	return &inboxFixture{db: db, tn: tn, scope: tn.A}
}

// message inserts an in-app message of the subscriber, created at the
// clock plus offset, with two buttons.
func (f *inboxFixture) message(t *testing.T, subscriberID string, offset time.Duration, mod func(*store.Message)) store.Message {
	t.Helper()
	at := f.tn.Clock.Now().Add(offset)
	m := &store.Message{ID: id.NewAt(at), OrganizationID: f.scope.OrganizationID, EnvironmentID: f.scope.EnvironmentID,
		NotificationID: id.New(), JobID: id.New(), SubscriberID: subscriberID, WorkflowID: id.New(), TemplateIdentifier: "wf",
		TransactionID: "tx-" + id.New(), Channel: "in_app", ProviderID: "svc", Content: "c", Status: "sent",
		CTA: store.JSON(`{"type":"redirect","data":{"url":"/x"},"action":{"status":"pending",` +
			`"buttons":[{"type":"primary","content":"Go"},{"type":"secondary","content":"Later"}]}}`),
		Tags: []string{}, CreatedAt: at, UpdatedAt: at}
	if mod != nil {
		mod(m)
	}
	require.NoError(t, f.db.InsertMessageForTest(context.Background(), m))
	return *m
}

func (f *inboxFixture) change(t *testing.T, subscriberID, msgID, action string, until time.Time) (store.Message, error) {
	t.Helper()
	return f.db.InboxChangeOne(context.Background(), &store.InboxChangeParams{Scope: f.scope, SubscriberID: subscriberID,
		Action: action, ID: msgID, SnoozeUntil: until, Now: f.tn.Clock.Now()})
}

// flags is a message's state in short: r read, s seen, a archived, z snoozed.
func flags(m store.Message) string {
	out := ""
	for _, f := range []struct {
		on bool
		c  string
	}{{m.Read, "r"}, {m.Seen, "s"}, {m.Archived, "a"}, {m.SnoozedUntil != nil, "z"}} {
		if f.on {
			out += f.c
		} else {
			out += "-"
		}
	}
	return out
}

// TestInboxStateTransitions: each action from each starting state gives the
// state documented in docs/api-behaviour.md, with its times.
func TestInboxStateTransitions(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		f := newInboxFixture(t, db)
		sub := id.New()
		// Starting states, reached through actions: new, read, archived, snoozed.
		reach := map[string][]string{"new": nil, "read": {store.InboxRead}, "archived": {store.InboxArchive},
			"snoozed": {store.InboxSnooze}}
		want := map[string]map[string]string{ // action → start → flags after
			store.InboxRead:      {"new": "rs--", "read": "rs--", "archived": "rsa-", "snoozed": "rs-z"},
			store.InboxUnread:    {"new": "-s--", "read": "-s--", "archived": "-s--", "snoozed": "-s-z"},
			store.InboxSeen:      {"new": "-s--", "read": "rs--", "archived": "rsa-", "snoozed": "-s-z"},
			store.InboxArchive:   {"new": "rsa-", "read": "rsa-", "archived": "rsa-", "snoozed": "rsa-"},
			store.InboxUnarchive: {"new": "rs--", "read": "rs--", "archived": "rs--", "snoozed": "rs-z"},
			store.InboxSnooze:    {"new": "-s-z", "read": "rs-z", "archived": "rs-z", "snoozed": "-s-z"},
			store.InboxUnsnooze:  {"new": "-s--", "read": "rs--", "archived": "rs--", "snoozed": "-s--"},
		}
		until := f.tn.Clock.Now().Add(time.Hour)
		for action, byStart := range want {
			for start, flagsAfter := range byStart {
				m := f.message(t, sub, 0, nil)
				for _, a := range reach[start] {
					_, err := f.change(t, sub, m.ID, a, until)
					require.NoError(t, err)
				}
				now := f.tn.Clock.Advance(time.Second)
				got, err := f.change(t, sub, m.ID, action, until.Add(time.Hour))
				require.NoError(t, err, "%s from %s", action, start)
				require.Equal(t, flagsAfter, flags(got), "%s from %s", action, start)
				require.Equal(t, got.Archived, got.ArchivedAt != nil, "archivedAt set exactly when archived")
				require.Equal(t, got.Seen, got.FirstSeenAt != nil, "firstSeenAt set once seen")
				if got.Read {
					require.NotNil(t, got.LastReadAt)
				}
				if action == store.InboxSnooze {
					require.True(t, until.Add(time.Hour).Equal(*got.SnoozedUntil))
				}
				if action == store.InboxArchive && start == "new" {
					require.True(t, now.Equal(*got.ArchivedAt))
					require.True(t, now.Equal(*got.FirstSeenAt))
				}
				require.True(t, now.Equal(got.UpdatedAt))
			}
		}

		// The first time seen stays; read keeps its first time while read.
		m := f.message(t, sub, 0, nil)
		first := f.tn.Clock.Advance(time.Second)
		_, err := f.change(t, sub, m.ID, store.InboxSeen, time.Time{})
		require.NoError(t, err)
		f.tn.Clock.Advance(time.Minute)
		got, err := f.change(t, sub, m.ID, store.InboxArchive, time.Time{})
		require.NoError(t, err)
		require.True(t, first.Equal(*got.FirstSeenAt))
		require.True(t, got.LastReadAt.After(first))

		// Delete: gone, and a second time not found.
		require.NoError(t, errOf(f.change(t, sub, m.ID, store.InboxDelete, time.Time{})))
		require.ErrorIs(t, errOf(f.change(t, sub, m.ID, store.InboxDelete, time.Time{})), store.ErrNotFound)
		require.ErrorIs(t, errOf(f.change(t, sub, m.ID, store.InboxRead, time.Time{})), store.ErrNotFound)

		// Another subscriber's message, or another environment's, is not found.
		other := f.message(t, id.New(), 0, nil)
		require.ErrorIs(t, errOf(f.change(t, sub, other.ID, store.InboxRead, time.Time{})), store.ErrNotFound)
		_, err = db.InboxChangeOne(context.Background(), &store.InboxChangeParams{Scope: f.tn.B, SubscriberID: other.SubscriberID,
			Action: store.InboxRead, ID: other.ID, Now: f.tn.Clock.Now()})
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

func errOf(_ store.Message, err error) error { return err }

// TestInboxCompleteAction: completing an action marks it done with its
// button as the result and reads the message; reverting sets it pending;
// a button the message lacks is ErrNoAction.
func TestInboxCompleteAction(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		f := newInboxFixture(t, db)
		ctx := context.Background()
		sub := id.New()
		m := f.message(t, sub, 0, nil)
		got, err := db.InboxCompleteAction(ctx, &store.InboxActionParams{Scope: f.scope, SubscriberID: sub, MessageID: m.ID, Button: "secondary", Done: true,
			Now: f.tn.Clock.Now()})
		require.NoError(t, err)
		require.Equal(t, "rs--", flags(got))
		action := ctaAction(t, got)
		require.Equal(t, "done", action["status"])
		require.Equal(t, map[string]any{"type": "secondary"}, action["result"])
		require.Len(t, action["buttons"], 2, "the buttons stay")

		got, err = db.InboxCompleteAction(ctx, &store.InboxActionParams{Scope: f.scope, SubscriberID: sub, MessageID: m.ID, Button: "secondary", Done: false,
			Now: f.tn.Clock.Now()})
		require.NoError(t, err)
		require.Equal(t, "pending", ctaAction(t, got)["status"])

		bare := f.message(t, sub, 0, func(m *store.Message) { m.CTA = store.JSON(`{}`) })
		_, err = db.InboxCompleteAction(ctx, &store.InboxActionParams{Scope: f.scope, SubscriberID: sub, MessageID: bare.ID, Button: "primary", Done: true,
			Now: f.tn.Clock.Now()})
		require.ErrorIs(t, err, store.ErrNoAction)
		_, err = db.InboxCompleteAction(ctx, &store.InboxActionParams{Scope: f.scope, SubscriberID: id.New(), MessageID: m.ID, Button: "primary", Done: true,
			Now: f.tn.Clock.Now()})
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

func ctaAction(t *testing.T, m store.Message) map[string]any {
	var cta map[string]any
	require.NoError(t, json.Unmarshal(m.CTA, &cta))
	return cta["action"].(map[string]any)
}

// TestInboxSnoozeExpiry: a snoozed message comes back by itself when its
// time passes — unread, unseen, at the top of the feed, created at the time
// its snooze ended — and the counts change then: through the workers' pass,
// or through the subscriber's next read when no worker has passed yet.
func TestInboxSnoozeExpiry(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		f := newInboxFixture(t, db)
		ctx := context.Background()
		sub := id.New()
		old := f.message(t, sub, -time.Hour, nil)
		f.message(t, sub, -time.Minute, nil)
		unread := store.InboxFilter{Read: new(bool), Archived: new(bool), Snoozed: new(bool)}
		yes := true
		snoozed := store.InboxFilter{Snoozed: &yes}
		count := func() [2]int {
			n, err := db.InboxCount(ctx, &store.InboxCountParams{Scope: f.scope, SubscriberID: sub,
				Filters: []store.InboxFilter{unread, snoozed}, Now: f.tn.Clock.Now()})
			require.NoError(t, err)
			return [2]int{n[0], n[1]}
		}
		unseen := func() int {
			n, err := db.MessageUnseenCount(ctx, &store.MessageUnseenCountParams{Scope: f.scope, SubscriberID: sub, Now: f.tn.Clock.Now()})
			require.NoError(t, err)
			return n
		}
		require.Equal(t, [2]int{2, 0}, count())
		require.Equal(t, 2, unseen())
		until := f.tn.Clock.Now().Add(10 * time.Minute)
		_, err := f.change(t, sub, old.ID, store.InboxSnooze, until)
		require.NoError(t, err)
		require.Equal(t, [2]int{1, 1}, count())
		require.Equal(t, 1, unseen())

		// Not due yet: the pass ends nothing.
		n, err := db.InboxUnsnoozeDue(ctx, 100, f.tn.Clock.Now())
		require.NoError(t, err)
		require.Zero(t, n)

		// Due, no worker has passed: the read ends it first (the unseen
		// count, which reads only the counters, included).
		f.tn.Clock.Advance(11 * time.Minute)
		require.Equal(t, 2, unseen())
		require.Equal(t, [2]int{2, 0}, count())
		page, err := db.InboxList(ctx, &store.InboxListParams{Scope: f.scope, SubscriberID: sub, Limit: 10, Now: f.tn.Clock.Now()})
		require.NoError(t, err)
		require.Equal(t, old.ID, page.Messages[0].ID, "back at the top")
		back := page.Messages[0]
		require.Equal(t, "----", flags(back))
		require.True(t, until.Equal(back.CreatedAt), "created when its snooze ended")
		require.Nil(t, back.FirstSeenAt)

		// The v1 feed ends a due snooze before it reads, too.
		_, err = f.change(t, sub, old.ID, store.InboxSnooze, f.tn.Clock.Now().Add(time.Minute))
		require.NoError(t, err)
		f.tn.Clock.Advance(2 * time.Minute)
		feed, err := db.MessageFeed(ctx, &store.FeedParams{Scope: f.scope, SubscriberID: sub, Limit: 1, Now: f.tn.Clock.Now()})
		require.NoError(t, err)
		require.Len(t, feed.Messages, 1)
		require.Equal(t, old.ID, feed.Messages[0].ID, "back at the top of the feed")
		require.True(t, feed.HasMore)
		require.Equal(t, 2, feed.TotalCount, "counted as it came back")
		require.Equal(t, [2]int{2, 0}, count())

		// The workers' pass over every subscriber, in bounded batches.
		subs := []string{id.New(), id.New(), id.New()}
		for _, s := range subs {
			m := f.message(t, s, 0, nil)
			_, err := f.change(t, s, m.ID, store.InboxSnooze, f.tn.Clock.Now().Add(time.Minute))
			require.NoError(t, err)
		}
		f.tn.Clock.Advance(2 * time.Minute)
		n, err = db.InboxUnsnoozeDue(ctx, 2, f.tn.Clock.Now())
		require.NoError(t, err)
		require.Equal(t, 2, n)
		n, err = db.InboxUnsnoozeDue(ctx, 2, f.tn.Clock.Now())
		require.NoError(t, err)
		require.Equal(t, 1, n)
		var left int
		require.NoError(t, db.Reader().QueryRow("SELECT count(*) FROM messages WHERE snoozed_until IS NOT NULL").Scan(&left))
		require.Zero(t, left)
		for _, s := range subs {
			n, err := db.InboxCount(ctx, &store.InboxCountParams{Scope: f.scope, SubscriberID: s,
				Filters: []store.InboxFilter{unread, snoozed}, Now: f.tn.Clock.Now()})
			require.NoError(t, err)
			require.Equal(t, []int{1, 0}, n)
		}
		requireCountsRebuilt(t, db)
	})
}

// requireCountsRebuilt: rebuilding the counts from the messages changes
// nothing.
func requireCountsRebuilt(t *testing.T, db *sqlstore.DB) {
	t.Helper()
	before := countsRows(t, db)
	require.NoError(t, db.RebuildInboxCounts(context.Background()))
	require.Equal(t, before, countsRows(t, db))
}

// TestInboxCountsLongTags: a tag set longer than an index row (16 tags of
// 64 four-byte characters) is counted like any other, on both stores.
func TestInboxCountsLongTags(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		f := newInboxFixture(t, db)
		ctx := context.Background()
		sub := id.New()
		var long []string
		for i := range 16 {
			var b strings.Builder
			for j := range 64 {
				b.WriteRune(rune(0x10000 + (i*64+j)*37%0xFFFF))
			}
			long = append(long, b.String())
		}
		m := f.message(t, sub, 0, func(m *store.Message) { m.Tags = long })
		f.message(t, sub, 0, func(m *store.Message) { m.Tags = long[:1] })
		got, err := db.InboxCount(ctx, &store.InboxCountParams{Scope: f.scope, SubscriberID: sub,
			Filters: []store.InboxFilter{{Tags: [][]string{{long[15]}}}, {Tags: [][]string{{long[0]}}}}, Now: f.tn.Clock.Now()})
		require.NoError(t, err)
		require.Equal(t, []int{1, 2}, got)
		_, err = f.change(t, sub, m.ID, store.InboxArchive, time.Time{})
		require.NoError(t, err)
		requireCountsRebuilt(t, db)
	})
}
