package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// claimWatch wraps one worker process's store and records, across all the
// processes of a test, every claim and every finish: a job claimed while
// another claim of it is in flight, a step claimed before the step before it
// finished, or an outcome dropped, is a violation.
type claimWatch struct {
	store.Store
	shared *claimLedger
}

type claimLedger struct {
	mu         sync.Mutex
	inFlight   map[string]bool // job id
	claims     map[string]int  // job id -> claims
	finished   map[string]bool // notification id + step index, marked before the finish commits
	dropped    int
	violations []string
}

func newClaimLedger() *claimLedger {
	return &claimLedger{inFlight: map[string]bool{}, claims: map[string]int{}, finished: map[string]bool{}}
}

func stepKey(notificationID string, stepIndex int) string {
	return fmt.Sprintf("%s/%d", notificationID, stepIndex)
}

func (w *claimWatch) JobClaim(ctx context.Context, limit int, lease time.Duration, now time.Time) ([]store.Claimed, error) {
	cs, err := w.Store.JobClaim(ctx, limit, lease, now)
	l := w.shared
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.violations = append(l.violations, "claim: "+err.Error())
	}
	for _, c := range cs {
		j := c.Job
		if l.inFlight[j.ID] {
			l.violations = append(l.violations, "job "+j.ID+" claimed while another worker runs it")
		}
		if j.StepIndex > 0 && !l.finished[stepKey(j.NotificationID, j.StepIndex-1)] {
			l.violations = append(l.violations, fmt.Sprintf("step %d of %s claimed before the step before it finished",
				j.StepIndex, j.NotificationID))
		}
		l.inFlight[j.ID] = true
		l.claims[j.ID]++
	}
	return cs, err
}

func (w *claimWatch) JobFinish(ctx context.Context, outcomes []store.JobOutcome, now time.Time) ([]bool, error) {
	l := w.shared
	l.mu.Lock()
	for _, o := range outcomes {
		l.finished[stepKey(o.Job.NotificationID, o.Job.StepIndex)] = true
	}
	l.mu.Unlock()
	applied, err := w.Store.JobFinish(ctx, outcomes, now)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.violations = append(l.violations, "finish: "+err.Error())
	}
	for i, o := range outcomes {
		delete(l.inFlight, o.Job.ID)
		if err == nil && !applied[i] {
			l.dropped++
		}
	}
	return applied, err
}

// TestWorkersNeverRunAJobTwice runs four worker processes — each its own
// connection pool, two claim loops each — against one PostgreSQL schema
// holding a few thousand queued jobs: every job is claimed once, runs once,
// and completes; every message exists once; steps run in order.
func TestWorkersNeverRunAJobTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testdb.NewPostgresSchema(t)
	open := func() *sqlstore.DB {
		db, err := sqlstore.OpenPostgres(ctx, url, testdb.Keys(t))
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		return db
	}
	db := open()
	_, err := (&app.App{Store: db, Keys: testdb.Keys(t)}).Bootstrap(ctx)
	require.NoError(t, err)
	env, err := db.EnvironmentGetByName(ctx, "development")
	require.NoError(t, err)
	scope := store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}
	now := time.Now()
	step := func(name string) store.Step {
		return store.Step{ID: id.New(), StepID: name, Name: name, Type: "in_app",
			ControlValues: map[string]any{"body": name + " {{payload.i}} for {{subscriber.subscriberId}}"}}
	}
	wf := store.Workflow{ID: id.New(), OrganizationID: scope.OrganizationID, EnvironmentID: scope.EnvironmentID, Key: "race",
		Name: "Race", Active: true, Severity: "none", Steps: []store.Step{step("first"), step("second")}, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, db.WorkflowCreate(ctx, &wf))

	const events, recipients = 15, 100
	for i := range events {
		rs := make([]store.Recipient, recipients)
		for r := range rs {
			rs[r] = store.Recipient{SubscriberID: fmt.Sprintf("sub-%d", r)}
		}
		res, err := db.Trigger(ctx, &store.TriggerParams{Scope: scope, Workflow: wf, TransactionID: fmt.Sprintf("tx-%d", i),
			Recipients: rs, Payload: store.JSON(fmt.Sprintf(`{"i":%d}`, i)), Now: now,
			ProviderFor: func(string) string { return "svc" }})
		require.NoError(t, err)
		require.Len(t, res.Notifications, recipients)
	}
	const jobs = events * recipients * 2

	ledger := newClaimLedger()
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 4 {
		eng := engine.New(engine.Options{Store: &claimWatch{Store: open(), shared: ledger}, Workers: 2, Batch: 32,
			Poll: 5 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
		wg.Add(1)
		go func() {
			defer wg.Done()
			eng.Run(runCtx)
		}()
	}
	count := func(q string) int {
		var n int
		require.NoError(t, db.Writer().QueryRow(q).Scan(&n), q)
		return n
	}
	require.Eventually(t, func() bool { return count("SELECT count(*) FROM jobs WHERE status = 'completed'") == jobs },
		60*time.Second, 10*time.Millisecond)
	stop()
	wg.Wait()

	ledger.mu.Lock()
	defer ledger.mu.Unlock()
	require.Empty(t, ledger.violations[:min(len(ledger.violations), 5)], "%d violations", len(ledger.violations))
	require.Zero(t, ledger.dropped, "no outcome was dropped")
	require.Len(t, ledger.claims, jobs)
	for jobID, n := range ledger.claims {
		require.Equal(t, 1, n, "job %s claimed %d times", jobID, n)
	}
	require.Equal(t, jobs, count("SELECT count(*) FROM jobs WHERE attempts = 1 AND status = 'completed'"))
	require.Equal(t, jobs, count("SELECT count(*) FROM messages"))
	require.Equal(t, jobs, count("SELECT count(DISTINCT job_id) FROM messages"))
	// Two details per job: queued at the trigger, the success of its one run.
	require.Equal(t, 2*jobs, count("SELECT count(*) FROM execution_details"))
	require.Zero(t, count("SELECT count(*) FROM execution_details WHERE is_retry"))
	// Per notification, the second step's message was created after the first's.
	require.Zero(t, count(`SELECT count(*) FROM messages a JOIN jobs ja ON ja.id = a.job_id
		JOIN messages b ON b.notification_id = a.notification_id JOIN jobs jb ON jb.id = b.job_id
		WHERE ja.step_index = 0 AND jb.step_index = 1 AND b.created_at < a.created_at`))
}
