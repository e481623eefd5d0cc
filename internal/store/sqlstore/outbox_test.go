package sqlstore_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestWebhookOutbox: the outbox entries of a change are written in its own
// transaction (none when it rolls back, none that no endpoint takes, an
// intent once however many transactions its context runs), hold what the
// change left, and become events exactly once.
func TestWebhookOutbox(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		var told atomic.Int32
		db.SetWebhookOutbox(func(_ context.Context, env, typ string) bool {
			return env == tn.A.EnvironmentID && typ != store.WebhookMessageDelivered
		}, func(entries []store.OutboxEntry) { told.Add(int32(len(entries))) })
		claim := func() []store.OutboxEntry {
			t.Helper()
			got, err := db.WebhookOutboxClaim(ctx, []string{store.OutboxMessages, store.OutboxEvents}, 100, time.Minute,
				time.Now().Add(store.OutboxHold+time.Second))
			require.NoError(t, err)
			return got
		}
		inApp := func(scope store.Scope) store.Message {
			m := store.Message{ID: id.New(), OrganizationID: scope.OrganizationID, EnvironmentID: scope.EnvironmentID,
				NotificationID: id.New(), JobID: id.New(), SubscriberID: id.New(), WorkflowID: id.New(), TemplateIdentifier: "w",
				TransactionID: "tx-" + id.New(), Channel: "in_app", Content: "hi", Status: store.MessageSent, CreatedAt: base,
				UpdatedAt: base}
			require.NoError(t, db.InsertMessageForTest(ctx, &m))
			return m
		}

		// A new in-app message: message.sent by id (nobody takes
		// message.delivered); another environment's: nothing.
		m := inApp(tn.A)
		inApp(tn.B)
		got := claim()
		require.Len(t, got, 1)
		require.Equal(t, tn.A.EnvironmentID, got[0].EnvironmentID)
		require.Equal(t, store.OutboxMessages, got[0].Kind)
		var items []store.OutboxMessage
		require.NoError(t, json.Unmarshal(got[0].Ref, &items))
		require.Equal(t, []store.OutboxMessage{{Type: store.WebhookMessageSent, MessageID: m.ID}}, items)
		require.EqualValues(t, 1, told.Load(), "told after the commit")
		early, err := db.WebhookOutboxClaim(ctx, []string{store.OutboxMessages}, 100, time.Minute, time.Now())
		require.NoError(t, err)
		require.Empty(t, early, "its writer's for OutboxHold")
		require.Empty(t, claim(), "leased")

		// A change of messages: the message as the change left it.
		at := base.Add(time.Minute)
		sel := store.WebhookMessagesChangedParams{Scope: tn.A, SubscriberID: m.SubscriberID, IDs: []string{m.ID}, At: at}
		read := &store.OutboxIntent{Scope: tn.A, Type: "message.read", Changed: &sel}
		_, err = db.MessageMarkAs(store.WithOutbox(ctx, read), &store.MessageMarkAsParams{Scope: tn.A, SubscriberID: m.SubscriberID,
			IDs: []string{m.ID}, MarkAs: store.MarkRead, Now: at})
		require.NoError(t, err)
		require.True(t, read.Written())
		_, err = db.MessageMarkAs(ctx, &store.MessageMarkAsParams{Scope: tn.A, SubscriberID: m.SubscriberID, IDs: []string{m.ID},
			MarkAs: store.MarkUnread, Now: at.Add(time.Second)})
		require.NoError(t, err)
		got = claim()
		require.Len(t, got, 1)
		items = nil
		require.NoError(t, json.Unmarshal(got[0].Ref, &items))
		require.Len(t, items, 1)
		require.Equal(t, "message.read", items[0].Type)
		require.Equal(t, m.ID, items[0].Message.ID)
		require.True(t, items[0].Message.Read, "read when the change wrote it, unread since")

		// Rendered events: none when the change rolls back; once for a
		// context whose transactions are many.
		events := func(typ string) *store.OutboxIntent {
			return &store.OutboxIntent{Scope: tn.A, Render: func(_ context.Context, tx store.OutboxTx) ([]store.OutboxEvent, error) {
				return []store.OutboxEvent{{Type: typ, Data: json.RawMessage(`{"object":{}}`)}}, nil
			}}
		}
		wf := store.Workflow{ID: id.New(), OrganizationID: tn.A.OrganizationID, EnvironmentID: tn.A.EnvironmentID, Key: "w",
			Name: "W", Active: true, CreatedAt: base, UpdatedAt: base}
		require.NoError(t, db.WorkflowCreate(ctx, &wf))
		lost := events("workflow.created")
		dup := wf
		dup.ID = id.New()
		require.ErrorIs(t, db.WorkflowCreate(store.WithOutbox(ctx, lost), &dup), store.ErrConflict)
		require.False(t, lost.Written())
		require.Empty(t, claim(), "a change rolled back writes no entry")
		once := events("workflow.updated")
		octx := store.WithOutbox(ctx, once)
		for range 2 {
			wf.UpdatedAt = wf.UpdatedAt.Add(time.Second)
			require.NoError(t, db.WorkflowUpdate(octx, &wf))
		}
		got = claim()
		require.Len(t, got, 1)
		require.Equal(t, store.OutboxEvents, got[0].Kind)
		require.JSONEq(t, `[{"t":"workflow.updated","d":{"object":{}}}]`, string(got[0].Ref))

		// An entry's events are stored once, by the drain that deletes it.
		_, err = db.WebhookEndpointCreate(ctx, &store.WebhookEndpointCreateParams{Scope: tn.A, URL: "https://hooks.example.com/h",
			Secret: "whsec_c2VjcmV0", Now: base})
		require.NoError(t, err)
		complete := func() int {
			n, err := db.WebhookEventCreate(ctx, &store.WebhookEventCreateParams{Scope: tn.A, Outbox: []string{got[0].ID},
				Events: []store.WebhookEvent{{ID: "evt_" + id.New(), EnvironmentID: tn.A.EnvironmentID, Type: "workflow.updated",
					Body: []byte(`{}`), CreatedAt: base, OutboxID: got[0].ID}}, FirstAttemptAt: base, Now: base})
			require.NoError(t, err)
			return n
		}
		require.Equal(t, 1, complete())
		require.Zero(t, complete(), "another drain's events of the same entry")
		var stored int
		require.NoError(t, db.Reader().QueryRowContext(ctx, "SELECT count(*) FROM webhook_events").Scan(&stored))
		require.Equal(t, 1, stored)

		// Nothing is left but the leased entries, whose lease ends.
		var left int
		require.NoError(t, db.Reader().QueryRowContext(ctx, "SELECT count(*) FROM webhook_outbox").Scan(&left))
		require.Equal(t, 2, left)
		again, err := db.WebhookOutboxClaim(ctx, []string{store.OutboxMessages}, 100, time.Minute, time.Now().Add(2*time.Minute))
		require.NoError(t, err)
		require.Len(t, again, 2)
		for _, e := range again {
			require.Equal(t, 2, e.Claims)
		}
	})
}
