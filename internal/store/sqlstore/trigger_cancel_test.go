package sqlstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestTriggerCancelManyJobs: canceling a transaction with 6,000 pending jobs
// (a fan-out reaches that many) cancels them all and writes an execution
// detail for each: 72,000 values at 12 a detail, more than PostgreSQL binds
// in one statement (65,535), so the details go in chunks.
func TestTriggerCancelManyJobs(t *testing.T) {
	t.Parallel()
	const jobs = 6000
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		wf := store.Workflow{ID: id.NewAt(base), OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID, Key: "many", Name: "many",
			Active: true, Severity: "none", CreatedAt: base, UpdatedAt: base,
			Steps: []store.Step{{ID: id.New(), StepID: "inbox", Name: "Inbox", Type: "in_app", ControlValues: map[string]any{"body": "hi"}}}}
		require.NoError(t, db.WorkflowCreate(ctx, &wf))
		_, err := db.Trigger(ctx, &store.TriggerParams{Scope: tn.A, Workflow: wf, TransactionID: "tx-many",
			Recipients: []store.Recipient{{SubscriberID: "ada"}}, Payload: store.JSON(`{}`),
			ProviderFor: func(string) string { return "svc" }, Now: base})
		require.NoError(t, err)
		// The trigger queued one job; copies of it make the rest.
		cols := "organization_id, environment_id, notification_id, subscriber_id, workflow_id, transaction_id, step_id," +
			" step_index, type, provider_id, status, run_at, lease_until, attempts, digest, digest_key, error," +
			" schedule_extensions_count, created_at, updated_at"
		_, err = db.Writer().ExecContext(ctx, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1)"+
			" INSERT INTO jobs (id, "+cols+") SELECT id || '-' || CAST(i AS TEXT), "+cols+" FROM jobs, n WHERE transaction_id = 'tx-many'",
			jobs-1)
		require.NoError(t, err)

		n, err := db.TriggerCancel(ctx, &store.TriggerCancelParams{Scope: tn.A, TransactionID: "tx-many", Now: tn.Clock.Now()})
		require.NoError(t, err)
		require.Equal(t, jobs, n)
		var canceled, details int
		require.NoError(t, db.Reader().QueryRowContext(ctx, "SELECT count(*) FROM jobs WHERE transaction_id = 'tx-many'"+
			" AND status = 'canceled'").Scan(&canceled))
		require.Equal(t, jobs, canceled)
		require.NoError(t, db.Reader().QueryRowContext(ctx, "SELECT count(DISTINCT d.job_id) FROM execution_details d"+
			" JOIN jobs j ON j.id = d.job_id WHERE j.transaction_id = 'tx-many' AND d.detail = 'Step canceled before it ran'").Scan(&details))
		require.Equal(t, jobs, details)
	})
}
