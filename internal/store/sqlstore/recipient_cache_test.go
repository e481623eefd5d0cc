package sqlstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestRememberedRecipientsStayCurrent: triggers planned from recipients
// remembered from an earlier group (PostgreSQL, recipient_cache.go) write
// what a fresh read would have given after every kind of change between
// the two: a subscriber's field updated, a preference row added, one
// changed, the subscriber deleted. On SQLite nothing is remembered and the
// same sequence holds.
func TestRememberedRecipientsStayCurrent(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		db.SetTriggerPlanner(engine.InAppPlanner(sandbox.New(sandbox.DefaultLimits), db))
		wf := store.Workflow{ID: id.NewAt(base), OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID, Key: "inbox", Name: "Inbox",
			Active: true, Severity: "none", CreatedAt: base, UpdatedAt: base,
			Steps: []store.Step{{ID: id.New(), StepID: "inbox", Name: "Inbox", Type: "in_app",
				ControlValues: map[string]any{"body": "Hello {{subscriber.firstName}}"}}}}
		require.NoError(t, db.WorkflowCreate(ctx, &wf))
		name := func(v string) store.Field { return store.Field{Set: true, Value: &v} }
		_, _, err := db.SubscriberUpsert(ctx, &store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "dee", FirstName: name("Dee")})
		require.NoError(t, err)
		n := 0
		trigger := func() (status, content string) {
			n++
			tx := fmt.Sprintf("tx-%d", n)
			res, err := db.Trigger(ctx, &store.TriggerParams{Scope: tn.A, Workflow: wf, TransactionID: tx,
				Recipients: []store.Recipient{{SubscriberID: "dee"}}, Payload: store.JSON(`{}`),
				ProviderFor: func(string) string { return "svc" }, Now: base.Add(time.Duration(n) * time.Second)})
			require.NoError(t, err)
			require.False(t, res.Duplicate)
			q := db.Reader()
			require.NoError(t, q.QueryRowContext(ctx, "SELECT status FROM jobs WHERE transaction_id = $1", tx).Scan(&status))
			err = q.QueryRowContext(ctx, "SELECT content FROM messages WHERE transaction_id = $1", tx).Scan(&content)
			if err != nil {
				content = "(none)"
			}
			return status, content
		}
		prefer := func(workflow string, inApp bool) {
			_, err := db.SubscriberPreferenceUpdate(ctx, &store.SubscriberPreferenceUpdateParams{Scope: tn.A, SubscriberID: "dee",
				Changes: []store.PreferenceChange{{WorkflowID: workflow, Channels: map[string]bool{"in_app": inApp}}}, Now: base})
			require.NoError(t, err)
		}
		status, content := trigger()
		require.Equal(t, [2]string{"completed", "Hello Dee"}, [2]string{status, content})
		status, content = trigger() // nothing changed
		require.Equal(t, [2]string{"completed", "Hello Dee"}, [2]string{status, content})

		_, _, err = db.SubscriberUpsert(ctx, &store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "dee", FirstName: name("Eve")})
		require.NoError(t, err)
		status, content = trigger()
		require.Equal(t, [2]string{"completed", "Hello Eve"}, [2]string{status, content}, "the new name")

		prefer(wf.ID, false) // a row added
		status, content = trigger()
		require.Equal(t, [2]string{"skipped", "(none)"}, [2]string{status, content}, "the new preference")
		prefer(wf.ID, true) // the row changed
		status, content = trigger()
		require.Equal(t, [2]string{"completed", "Hello Eve"}, [2]string{status, content}, "the changed preference")
		prefer("", false) // a global row added
		status, _ = trigger()
		require.Equal(t, "skipped", status, "the new global preference")

		require.NoError(t, db.SubscriberDelete(ctx, &store.SubscriberDeleteParams{Scope: tn.A, SubscriberID: "dee", Now: base}))
		status, _ = trigger()
		require.Equal(t, "queued", status, "a deleted subscriber is created again by a worker, as if never read")

		hits, afresh := db.RememberedRecipients()
		if db.Dialect() == "postgres" {
			require.EqualValues(t, 6, hits, "every trigger after the first planned from memory")
			require.EqualValues(t, 5, afresh, "every change found by the group's statement")
		} else {
			require.Zero(t, hits+afresh)
		}
	})
}
