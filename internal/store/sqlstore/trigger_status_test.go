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

// TestNotificationListStatus: NotificationList's Status keeps exactly the
// triggers whose jobs sum up to it (store.TriggerStatus), newest first,
// a page at a time, with the other filters.
func TestNotificationListStatus(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		wf := store.Workflow{ID: id.NewAt(base), OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID, Key: "two", Name: "Two",
			Active: true, Severity: "none", CreatedAt: base, UpdatedAt: base,
			Steps: []store.Step{{ID: id.New(), StepID: "a", Name: "A", Type: "sms", ControlValues: map[string]any{"body": "a"}},
				{ID: id.New(), StepID: "b", Name: "B", Type: "sms", ControlValues: map[string]any{"body": "b"}}}}
		require.NoError(t, db.WorkflowCreate(ctx, &wf))
		// Each trigger's two jobs are set to these statuses.
		cases := []struct{ first, second, want string }{
			{store.JobCompleted, store.JobCompleted, store.TriggerCompleted},
			{store.JobFailed, store.JobCanceled, store.TriggerFailed},
			{store.JobSkipped, store.JobMerged, store.TriggerCompleted},
			{store.JobQueued, store.JobPending, store.TriggerInProgress},
			{store.JobCanceled, store.JobCompleted, store.TriggerCanceled},
			{store.JobCanceled, store.JobDelayed, store.TriggerInProgress},
			{store.JobRunning, store.JobFailed, store.TriggerFailed},
			{store.JobCompleted, store.JobSkipped, store.TriggerCompleted},
		}
		want := map[string][]string{}
		for i, c := range cases {
			tx := fmt.Sprintf("tx-%d", i)
			_, err := db.Trigger(ctx, &store.TriggerParams{Scope: tn.A, Workflow: wf, TransactionID: tx,
				Recipients: []store.Recipient{{SubscriberID: "dee"}}, Payload: store.JSON(`{}`),
				ProviderFor: func(string) string { return "svc" }, Now: base.Add(time.Duration(i) * time.Second)})
			require.NoError(t, err)
			res, err := db.Writer().ExecContext(ctx, "UPDATE jobs SET status = CASE step_index WHEN 0 THEN $1 ELSE $2 END WHERE transaction_id = $3",
				c.first, c.second, tx)
			require.NoError(t, err)
			n, _ := res.RowsAffected()
			require.EqualValues(t, 2, n)
			want[c.want] = append([]string{tx}, want[c.want]...) // newest first
		}
		list := func(p store.NotificationListParams) ([]string, bool) {
			t.Helper()
			p.Scope = tn.A
			if p.Limit == 0 {
				p.Limit = 50
			}
			got, more, err := db.NotificationList(ctx, &p)
			require.NoError(t, err)
			txs := []string{}
			for _, n := range got {
				txs = append(txs, n.Notification.TransactionID)
				require.Equal(t, p.Status, store.TriggerStatus(n.Jobs), "%s", n.Notification.TransactionID)
			}
			return txs, more
		}
		for _, status := range store.TriggerStatuses {
			got, more := list(store.NotificationListParams{Status: status})
			require.Equal(t, want[status], got, status)
			require.False(t, more)
		}
		// Paging: three completed triggers, two at a time.
		got, more := list(store.NotificationListParams{Status: store.TriggerCompleted, Limit: 2})
		require.Equal(t, want[store.TriggerCompleted][:2], got)
		require.True(t, more)
		got, more = list(store.NotificationListParams{Status: store.TriggerCompleted, Limit: 2, Page: 1})
		require.Equal(t, want[store.TriggerCompleted][2:], got)
		require.False(t, more)
		// With the other filters.
		got, _ = list(store.NotificationListParams{Status: store.TriggerFailed, TransactionID: "tx-1"})
		require.Equal(t, []string{"tx-1"}, got)
		got, _ = list(store.NotificationListParams{Status: store.TriggerFailed, WorkflowIDs: []string{"nope"}})
		require.Empty(t, got)
		other := tn.A
		other.EnvironmentID = tn.EnvB.ID
		none, _, err := db.NotificationList(ctx, &store.NotificationListParams{Scope: other, Status: store.TriggerCompleted, Limit: 10})
		require.NoError(t, err)
		require.Empty(t, none, "another environment's")

		_, _, err = db.NotificationList(ctx, &store.NotificationListParams{Scope: tn.A, Status: "done", Limit: 10})
		require.Error(t, err)
	})
}
