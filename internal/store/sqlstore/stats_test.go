package sqlstore_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestJobStats: the live jobs are counted by type and state — due and
// scheduled split the queued ones at now — and finished or pending jobs
// are not; OldestDue is the earliest due run time.
func TestJobStats(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		empty, err := db.JobStats(ctx, base)
		require.NoError(t, err)
		require.Empty(t, empty.Counts)
		require.True(t, empty.OldestDue.IsZero())

		steps := []store.Step{
			{ID: id.New(), StepID: "inbox", Name: "Inbox", Type: "in_app", ControlValues: map[string]any{"body": "hi"}},
			{ID: id.New(), StepID: "mail", Name: "Mail", Type: "email", ControlValues: map[string]any{"body": "hi"}},
		}
		wf := store.Workflow{ID: id.NewAt(base), OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID, Key: "wf", Name: "wf",
			Active: true, Severity: "none", Steps: steps, CreatedAt: base, UpdatedAt: base}
		require.NoError(t, db.WorkflowCreate(ctx, &wf))
		for i := range 6 {
			sid := fmt.Sprintf("sub-%d", i)
			upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: sid, Now: tn.Clock.Now()})
			_, err := db.Trigger(ctx, &store.TriggerParams{Scope: tn.A, Workflow: wf, TransactionID: "tx-" + sid,
				Recipients: []store.Recipient{{SubscriberID: sid}}, Payload: store.JSON(`{}`),
				ProviderFor: func(string) string { return "svc" }, Now: base.Add(time.Duration(i) * time.Second)})
			require.NoError(t, err)
		}
		// Six queued in-app jobs due at base+0s … base+5s, six pending e-mail jobs.
		claimed, err := db.JobClaim(ctx, 2, time.Minute, base.Add(time.Second)) // the first two: running
		require.NoError(t, err)
		require.Len(t, claimed, 2)
		exec(t, db, "UPDATE jobs SET status = 'delayed' WHERE transaction_id = 'tx-sub-5' AND type = 'in_app'")
		exec(t, db, "UPDATE jobs SET status = 'completed' WHERE transaction_id = 'tx-sub-4' AND type = 'in_app'")
		exec(t, db, "UPDATE jobs SET status = 'queued', run_at = $1 WHERE transaction_id = 'tx-sub-4' AND type = 'email'",
			base.Add(time.Hour).UnixMilli())

		now := base.Add(2500 * time.Millisecond) // sub-2 is due, sub-3 not yet
		st, err := db.JobStats(ctx, now)
		require.NoError(t, err)
		require.ElementsMatch(t, []store.JobCount{
			{Type: "in_app", Status: store.JobStatRunning, Count: 2},
			{Type: "in_app", Status: store.JobStatDue, Count: 1},
			{Type: "in_app", Status: store.JobStatScheduled, Count: 1},
			{Type: "in_app", Status: store.JobStatDelayed, Count: 1},
			{Type: "email", Status: store.JobStatScheduled, Count: 1},
		}, st.Counts)
		require.Equal(t, base.Add(2*time.Second), st.OldestDue)

		later, err := db.JobStats(ctx, base.Add(2*time.Hour))
		require.NoError(t, err)
		require.Contains(t, later.Counts, store.JobCount{Type: "in_app", Status: store.JobStatDue, Count: 2})
		require.Contains(t, later.Counts, store.JobCount{Type: "email", Status: store.JobStatDue, Count: 1})
		require.Equal(t, base.Add(2*time.Second), later.OldestDue)
	})
}

// TestJobStatsUsesThePartialIndexes: the counting can always go through
// the partial indexes of the live statuses, never a scan of the whole jobs
// table (it keeps every finished job).
func TestJobStatsUsesThePartialIndexes(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		setup(t, db)
		tx, err := db.Reader().BeginTx(t.Context(), nil)
		require.NoError(t, err)
		defer tx.Rollback() //nolint:errcheck // read-only
		explain := "EXPLAIN QUERY PLAN "
		if db.Dialect() == "postgres" {
			explain = "EXPLAIN "
			// An empty table is cheapest to scan: ask whether the indexes apply.
			_, err = tx.ExecContext(t.Context(), "SET LOCAL enable_seqscan = off")
			require.NoError(t, err)
		}
		rows, err := tx.QueryContext(t.Context(), explain+sqlstore.JobStatsQuery, base.UnixMilli())
		require.NoError(t, err)
		defer rows.Close()
		cols, err := rows.Columns()
		require.NoError(t, err)
		var plan []string
		for rows.Next() {
			vals := make([]any, len(cols))
			for i := range vals {
				vals[i] = new(any)
			}
			require.NoError(t, rows.Scan(vals...))
			plan = append(plan, fmt.Sprint(*(vals[len(vals)-1].(*any))))
		}
		require.NoError(t, rows.Err())
		text := strings.Join(plan, "\n")
		require.NotContains(t, text, "Seq Scan", text)
		require.NotRegexp(t, `(?m)SCAN jobs$`, text, "SQLite scans the table")
		require.Contains(t, text, "jobs_due", text)
		require.Contains(t, text, "jobs_leased", text)
		require.Regexp(t, `jobs_delayed|jobs_digest_open`, text) // both are partial on status = 'delayed'
	})
}
