package sqlstore_test

import (
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

// emailMessage writes an e-mail message of scope sent through integrationID
// with the provider's id providerID.
func emailMessage(t *testing.T, db *sqlstore.DB, scope store.Scope, integrationID, providerID string) store.Message {
	t.Helper()
	m := store.Message{ID: id.NewAt(base), OrganizationID: scope.OrganizationID, EnvironmentID: scope.EnvironmentID,
		NotificationID: id.NewAt(base), JobID: id.NewAt(base), SubscriberID: id.NewAt(base), WorkflowID: id.NewAt(base),
		TemplateIdentifier: "welcome", TransactionID: "tx-" + id.New(), Channel: "email", ProviderID: "sendgrid",
		Content: "<p>Hi</p>", Status: store.MessageSent, IntegrationID: integrationID, ProviderMessageID: providerID,
		CreatedAt: base, UpdatedAt: base}
	require.NoError(t, db.InsertMessageForTest(t.Context(), &m))
	return m
}

func deliveryEvent(key, status, messageID, providerMessageID string, at time.Time) store.DeliveryEvent {
	return store.DeliveryEvent{IntegrationID: "int-1", ProviderID: "sendgrid", Key: key, Status: status, MessageID: messageID,
		ProviderMessageID: providerMessageID, OccurredAt: at, Raw: fmt.Sprintf(`{"sg_event_id":%q}`, key),
		Detail: "Delivery event from SendGrid: " + status}
}

type detailRow struct {
	JobID, NotificationID, Status, Source, ProviderID, Raw, WebhookStatus string
	CreatedAt                                                             int64
}

func detailsOf(t *testing.T, db *sqlstore.DB, jobID string) []detailRow {
	t.Helper()
	rows, err := db.Reader().QueryContext(t.Context(), "SELECT job_id, notification_id, status, source, provider_id, raw,"+
		" webhook_status, created_at FROM execution_details WHERE job_id = $1 ORDER BY created_at, id", jobID)
	require.NoError(t, err)
	defer rows.Close()
	var out []detailRow
	for rows.Next() {
		var d detailRow
		require.NoError(t, rows.Scan(&d.JobID, &d.NotificationID, &d.Status, &d.Source, &d.ProviderID, &d.Raw, &d.WebhookStatus,
			&d.CreatedAt))
		out = append(out, d)
	}
	require.NoError(t, rows.Err())
	return out
}

func record(t *testing.T, db *sqlstore.DB, now time.Time) store.DeliveryEventsRecorded {
	t.Helper()
	res, err := db.DeliveryEventsRecord(t.Context(), &store.DeliveryEventsRecordParams{Limit: 100, MatchFor: 10 * time.Second, Now: now})
	require.NoError(t, err)
	return res
}

func TestDeliveryEventsRecord(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		byID := emailMessage(t, db, tn.A, "int-1", "sg-1")
		byProvider := emailMessage(t, db, tn.A, "int-1", "sg-2")
		other := emailMessage(t, db, tn.B, "int-1", "sg-3") // another environment's
		delivered := base.Add(-time.Minute).Truncate(time.Millisecond)

		add := func(scope store.Scope, evs ...store.DeliveryEvent) int {
			n, err := db.DeliveryEventsAdd(t.Context(), &store.DeliveryEventsAddParams{Scope: scope, Events: evs, Now: base})
			require.NoError(t, err)
			return n
		}
		require.Equal(t, 4, add(tn.A,
			deliveryEvent("e1", "delivered", byID.ID, "no-such", delivered),
			deliveryEvent("e2", "opened", "", "sg-2", base),
			deliveryEvent("e2", "opened", "", "sg-2", base), // twice in one post
			deliveryEvent("e3", "bounced", other.ID, "sg-3", base),
			deliveryEvent("e4", "deferred", "", "sg-2", base),
		), "a post's duplicates are queued once")
		require.Equal(t, 0, add(tn.A, deliveryEvent("e1", "delivered", byID.ID, "", base)), "a replay is not queued")
		q, err := db.DeliveryEventsQueued(t.Context())
		require.NoError(t, err)
		require.Equal(t, store.DeliveryEventQueue{Queued: 4, Oldest: base.Truncate(time.Millisecond)}, q)

		now := base.Add(time.Second)
		res := record(t, db, now)
		require.Equal(t, 4, res.Taken)
		require.Equal(t, map[string]int{"sendgrid": 3}, res.Recorded)
		require.Empty(t, res.Unmatched, "the unmatched event is tried again first")
		require.Len(t, res.Delivered, 1)
		require.Equal(t, byID.ID, res.Delivered[0].ID)
		require.Equal(t, delivered, *res.Delivered[0].DeliveredAt)

		d := detailsOf(t, db, byID.JobID)
		require.Len(t, d, 1)
		require.Equal(t, detailRow{JobID: byID.JobID, NotificationID: byID.NotificationID, Status: "Success", Source: "Webhook",
			ProviderID: "sendgrid", Raw: `{"sg_event_id":"e1"}`, WebhookStatus: "delivered", CreatedAt: now.UnixMilli()}, d[0])
		d = detailsOf(t, db, byProvider.JobID)
		require.Len(t, d, 2, "matched by the provider's id")
		require.Equal(t, []string{"opened", "deferred"}, []string{d[0].WebhookStatus, d[1].WebhookStatus})
		require.Equal(t, "Pending", d[1].Status)
		require.Empty(t, detailsOf(t, db, other.JobID), "another environment's message is never matched")

		msgs, _, err := db.MessageList(t.Context(), &store.MessageListParams{Scope: tn.A, Channel: "email", Limit: 10})
		require.NoError(t, err)
		for _, m := range msgs {
			if m.ID == byID.ID {
				require.Equal(t, delivered, *m.DeliveredAt)
				require.Equal(t, now.Truncate(time.Millisecond), m.UpdatedAt)
			} else {
				require.Nil(t, m.DeliveredAt)
			}
		}

		require.Equal(t, 0, record(t, db, now).Taken, "the unmatched event waits")
		res = record(t, db, now.Add(2*time.Second))
		require.Equal(t, 1, res.Taken)
		require.Empty(t, res.Unmatched)
		res = record(t, db, base.Add(20*time.Second))
		require.Equal(t, map[string]int{"sendgrid": 1}, res.Unmatched, "past MatchFor it is dropped")
		require.Equal(t, 0, count(t, db, "SELECT count(*) FROM delivery_events WHERE event_key = 'e3'"))
		require.Equal(t, 0, count(t, db, "SELECT count(*) FROM delivery_events WHERE raw IS NOT NULL"), "recorded events keep no body")
		q, err = db.DeliveryEventsQueued(t.Context())
		require.NoError(t, err)
		require.Equal(t, store.DeliveryEventQueue{}, q)

		// A later delivered event keeps the earlier time; an earlier one wins.
		require.Equal(t, 2, add(tn.A, deliveryEvent("e5", "delivered", byID.ID, "", delivered.Add(time.Hour)),
			deliveryEvent("e6", "delivered", byID.ID, "", delivered.Add(-time.Hour))))
		res = record(t, db, base.Add(21*time.Second))
		require.Len(t, res.Delivered, 1)
		require.Equal(t, delivered.Add(-time.Hour), *res.Delivered[0].DeliveredAt)
	})
}

// Concurrent recorders record each event once.
func TestDeliveryEventsConcurrentRecorders(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		m := emailMessage(t, db, tn.A, "int-1", "sg-1")
		var evs []store.DeliveryEvent
		for i := range 300 {
			evs = append(evs, deliveryEvent(fmt.Sprintf("c%d", i), "opened", m.ID, "", base))
		}
		n, err := db.DeliveryEventsAdd(t.Context(), &store.DeliveryEventsAddParams{Scope: tn.A, Events: evs, Now: base})
		require.NoError(t, err)
		require.Equal(t, 300, n)
		var mu sync.Mutex
		total := 0
		errs := parallel(4, func(int) error {
			for {
				res, err := db.DeliveryEventsRecord(t.Context(), &store.DeliveryEventsRecordParams{Limit: 25, MatchFor: time.Minute,
					Now: base.Add(time.Second)})
				if err != nil || res.Taken == 0 {
					return err
				}
				mu.Lock()
				total += res.Recorded["sendgrid"]
				mu.Unlock()
			}
		})
		for _, err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, 300, total)
		require.Len(t, detailsOf(t, db, m.JobID), 300)
	})
}
