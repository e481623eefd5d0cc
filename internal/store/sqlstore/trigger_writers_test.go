package sqlstore_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestTriggerCommittersDuplicates: with several trigger committers
// (PostgreSQL across a network), triggers of one transactionId sent at once
// land in groups of different committers; exactly one of each is written
// and the others are answered as duplicates, every recipient's message
// exists once.
func TestTriggerCommittersDuplicates(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		db.SetTriggerWriters(4)
		ctx := t.Context()
		tn := setup(t, db)
		wf := store.Workflow{ID: id.NewAt(base), OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID, Key: "dup", Name: "dup",
			Active: true, Severity: "none", CreatedAt: base, UpdatedAt: base,
			Steps: []store.Step{{ID: id.New(), StepID: "inbox", Name: "Inbox", Type: "in_app", ControlValues: map[string]any{"body": "hi"}}}}
		require.NoError(t, db.WorkflowCreate(ctx, &wf))
		const txs, copies = 25, 4
		var mu sync.Mutex
		written := map[string]int{}
		var wg sync.WaitGroup
		for i := range txs * copies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tx := fmt.Sprintf("tx-%d", i%txs)
				res, err := db.Trigger(ctx, &store.TriggerParams{Scope: tn.A, Workflow: wf, TransactionID: tx,
					Recipients: []store.Recipient{{SubscriberID: "ada"}}, Payload: store.JSON(`{}`),
					ProviderFor: func(string) string { return "svc" }, Now: base})
				require.NoError(t, err)
				if !res.Duplicate {
					mu.Lock()
					written[tx]++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		require.Len(t, written, txs)
		for tx, n := range written {
			require.Equal(t, 1, n, "%s written once", tx)
		}
		var notifications int
		require.NoError(t, db.Reader().QueryRowContext(ctx, "SELECT count(*) FROM notifications WHERE workflow_id = $1", wf.ID).Scan(&notifications))
		require.Equal(t, txs, notifications)
	})
}
