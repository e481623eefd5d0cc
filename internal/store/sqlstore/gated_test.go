package sqlstore

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store"
)

// readOnly are the store's methods that never write.
var readOnly = []string{
	"APIKeyGetByHash", "APIKeyList", "APIKeySigningKeys", "ChannelChoices", "EnvironmentGetByID",
	"EnvironmentGetByIdentifier", "EnvironmentGetByName", "EnvironmentList", "InboxMessagesByID",
	"IntegrationForCredentials", "IntegrationGet", "IntegrationList", "JobNextRunAt", "JobStats", "MemberGetOwner",
	"MessageList", "NotificationGet", "NotificationList", "Ping", "SubscriberGet", "SubscriberGetMany",
	"SubscriberPreferenceGet", "SubscriberSearch", "SubscriberTopicList", "SubscribersByID", "TopicGet", "TopicList",
	"TopicMembership", "TopicSubscriptionGet", "TopicSubscriptionList", "WorkflowGet", "WorkflowList",
	"LayoutGet", "LayoutList", "LayoutUsage",
	"TranslationGet", "TranslationLocales", "TranslationListLocale", "TranslationDefaultLocale", "TranslationSetFor",
	"EnvironmentResources", "WorkflowTags",
	"EnvironmentVariableGet", "EnvironmentVariableList", "EnvironmentVariableValues", "ContextGet", "ContextList",
	"StepResults", "DeliveryEventsQueued", "MessageDailyCounts",
	"UserGetByEmail", "UserList", "UserSessionGet", // the dashboard's accounts (users_gated_test.go has their writes)
	"StoreSize", "WebhookEndpointList", "WebhookEndpointGet", "WebhookEndpointTypes", "WebhookAttemptList", "WebhookNextDue",
	"WebhookQueueStats", "WebhookMessagesChanged",
	"Snapshot", // a read transaction; it writes a new file, not the database (backup.go)
}

// notData are the store's methods that touch no tenant data, and why.
var notData = map[string]string{
	"Close":                "closes the pools",
	"Dialect":              "names the dialect",
	"Reader":               "returns the reader pool (tests, metrics)",
	"Writer":               "returns the writer pool (tests, metrics)",
	"OnInboxChange":        "sets the after-commit hook",
	"SetWebhookOutbox":     "sets the webhook outbox's filter and after-commit hook",
	"SetTriggerPlanner":    "sets the trigger planner",
	"SetTriggerWriters":    "sets how many trigger committers run",
	"TriggerWriters":       "reports how many trigger committers run",
	"RTT":                  "reports the round trip measured at open",
	"RememberedRecipients": "counts the trigger recipients planned from memory (tests)",
	"ListenInbox":          "PostgreSQL's LISTEN of other processes' inbox changes; nothing on SQLite",
	"ListenJobs":           "PostgreSQL's LISTEN of wake-ups; nothing on SQLite",
	"RetentionLock":        "PostgreSQL's advisory lock of the purge; nothing on SQLite",
	"Maintain":             "PostgreSQL's ANALYZE and VACUUM on a connection of its own; nothing on SQLite",
}

// TestEveryWriteTakesTheGate: every method of the store that writes waits
// for the write gate before its first write. The store's methods are read
// from its method set (the store.Store interface and the rest of *DB's):
// each is a write — called while another writer holds SQLite's one slot,
// it must neither return nor change the database until the slot is free,
// then succeed — or is read-only or touches no data. A method in none of
// those lists fails the test, so a new write cannot go unchecked.
func TestEveryWriteTakesTheGate(t *testing.T) {
	t.Parallel()
	f := newGateFixture(t)
	writes := f.writes()
	maps.Copy(writes, f.layoutWrites())
	maps.Copy(writes, f.userWrites())
	maps.Copy(writes, f.deliveryEventWrites())
	maps.Copy(writes, f.retentionWrites())
	maps.Copy(writes, f.webhookWrites())

	kinds := map[string]string{}
	for name := range writes {
		kinds[name] = "write"
	}
	for _, name := range readOnly {
		require.NotContains(t, kinds, name, "listed twice")
		kinds[name] = "read-only"
	}
	for name := range notData {
		require.NotContains(t, kinds, name, "listed twice")
		kinds[name] = "no data"
	}
	var methods []string
	for typ, i := reflect.TypeFor[*DB](), 0; i < typ.NumMethod(); i++ {
		methods = append(methods, typ.Method(i).Name)
	}
	for _, name := range methods {
		require.Contains(t, kinds, name, "%s is a new method of the store: add it to the writes (with a call that writes)"+
			" or to readOnly", name)
	}
	for name := range kinds {
		require.Contains(t, methods, name, "%s is listed but the store has no such method", name)
	}
	for typ, i := reflect.TypeFor[store.Store](), 0; i < typ.NumMethod(); i++ {
		require.Contains(t, kinds, typ.Method(i).Name) // the interface's methods are among them
	}

	for _, name := range slices.Sorted(maps.Keys(writes)) {
		t.Run(name, func(t *testing.T) {
			w := writes[name]
			if w.setup != nil {
				w.setup(t)
			}
			before := f.dataVersion(t)
			require.NoError(t, f.db.gate.acquire(context.Background(), false))
			held := true
			defer func() {
				if held {
					f.db.gate.release(false)
				}
			}()
			done := make(chan error, 1)
			go func() { done <- w.call(context.Background()) }()
			require.Never(t, func() bool { return len(done) > 0 }, 50*time.Millisecond, 5*time.Millisecond,
				"returned while another writer held the gate")
			require.Equal(t, before, f.dataVersion(t), "wrote while another writer held the gate")
			f.db.gate.release(false)
			held = false
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				require.FailNow(t, "still waiting after the gate was released")
			}
		})
	}
}
