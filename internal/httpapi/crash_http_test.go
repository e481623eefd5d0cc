package httpapi_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// testClock is a settable clock, safe for concurrent use.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// twoStepWorkflow has two in_app steps, so that a crash can fall between them.
func twoStepWorkflow() map[string]any {
	return map[string]any{"name": "Crashy", "steps": []any{
		map[string]any{"name": "First", "type": "in_app", "controlValues": map[string]any{"body": "first {{payload.i}}"}},
		map[string]any{"name": "Second", "type": "in_app", "controlValues": map[string]any{"body": "second {{payload.i}}"}},
	}}
}

// triggerMany acknowledges n events of the crashy workflow, three recipients
// each, and returns their transactionIds.
func triggerMany(t *testing.T, h *harness, n int) []string {
	t.Helper()
	h.createWorkflow(t, h.authFor(asDev), twoStepWorkflow())
	txs := make([]string, n)
	for i := range txs {
		txs[i] = "tx-" + strconv.Itoa(i)
		h.trigger(t, h.authFor(asDev), map[string]any{"name": "crashy", "transactionId": txs[i],
			"to": []any{"s-a", "s-b", "s-" + strconv.Itoa(i%5)}, "payload": map[string]any{"i": i}})
	}
	return txs
}

// requireExactlyOnce checks that every acknowledged event produced each of
// its messages exactly once and that every job completed.
func requireExactlyOnce(t *testing.T, h *harness, txs []string) {
	t.Helper()
	for _, tx := range txs {
		require.Equal(t, 3, h.count(t, "SELECT count(*) FROM notifications WHERE transaction_id = $1", tx), tx)
		require.Equal(t, 6, h.count(t, "SELECT count(*) FROM messages WHERE transaction_id = $1", tx), tx)
	}
	total := 6 * len(txs)
	require.Equal(t, total, h.count(t, "SELECT count(*) FROM jobs WHERE status = 'completed'"))
	require.Equal(t, 0, h.count(t, "SELECT count(*) FROM jobs WHERE status <> 'completed'"))
	require.Equal(t, total, h.count(t, "SELECT count(*) FROM messages"))
	require.Equal(t, total, h.count(t, "SELECT count(DISTINCT job_id) FROM messages"))
	// No job has two messages, and each message is its own job's.
	require.Equal(t, 0, h.count(t, "SELECT count(*) FROM messages m JOIN jobs j ON j.id = m.job_id"+
		" WHERE j.notification_id <> m.notification_id"))
}

// TestCrashedWorkerLeaseRescue: a worker claims a batch and dies before
// finishing it. Other workers run everything else but never the leased
// jobs; once the lease expires the jobs are queued again and run, every
// acknowledged trigger yields its messages exactly once, and the dead
// worker's late outcomes are dropped.
func TestCrashedWorkerLeaseRescue(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		txs := triggerMany(t, h, 30)
		// After the triggers, which can take more than a second on a loaded
		// machine: every job they queued is due.
		clock := &testClock{t: time.Now().Add(time.Second)}
		const lease = 30 * time.Second

		// The dead worker: it claimed a batch and will never finish it.
		dead, err := h.DB.JobClaim(ctx, 25, lease, clock.Now())
		require.NoError(t, err)
		require.Len(t, dead, 25)

		live := h.newEngine(engine.Options{Now: clock.Now, Lease: lease, Batch: 16})
		ran := drain(t, live)
		require.Equal(t, 6*len(txs)-2*len(dead), ran, "everything but the leased jobs and their next steps")
		for _, c := range dead {
			require.Equal(t, 0, h.count(t, "SELECT count(*) FROM messages WHERE job_id = $1", c.Job.ID))
			require.Equal(t, 1, h.count(t, "SELECT count(*) FROM jobs WHERE id = $1 AND status = 'running'", c.Job.ID))
		}

		// Before the lease ends nothing is rescued; after it, all of them.
		n, err := h.DB.JobRescue(ctx, clock.Now())
		require.NoError(t, err)
		require.Zero(t, n)
		clock.Advance(lease + time.Second)
		n, err = h.DB.JobRescue(ctx, clock.Now())
		require.NoError(t, err)
		require.Equal(t, len(dead), n)
		require.Equal(t, 2*len(dead), drain(t, live), "the rescued jobs and the steps after them")

		// The dead worker wakes up and reports outcomes: they are all dropped.
		outcomes := make([]store.JobOutcome, len(dead))
		for i, c := range dead {
			m := &store.Message{ID: id.New(), OrganizationID: c.Job.OrganizationID, EnvironmentID: c.Job.EnvironmentID,
				NotificationID: c.Job.NotificationID, JobID: c.Job.ID, SubscriberID: c.Job.SubscriberID,
				WorkflowID: c.Job.WorkflowID, TransactionID: c.Job.TransactionID, Channel: "in_app", ProviderID: "svc",
				Content: "stale", Status: "sent", CreatedAt: clock.Now(), UpdatedAt: clock.Now()}
			outcomes[i] = store.JobOutcome{Job: c.Job, Status: store.JobCompleted, Messages: []*store.Message{m}, ContinueWorkflow: true}
		}
		applied, err := h.DB.JobFinish(ctx, outcomes, clock.Now())
		require.NoError(t, err)
		for i, ok := range applied {
			require.False(t, ok, "the stale outcome of job %s was applied", dead[i].Job.ID)
		}
		require.Equal(t, 0, h.count(t, "SELECT count(*) FROM messages WHERE content = 'stale'"))

		requireExactlyOnce(t, h, txs)
		rerun := h.count(t, "SELECT count(*) FROM jobs WHERE attempts = 2")
		require.Equal(t, len(dead), rerun, "only the rescued jobs ran twice")
		require.Equal(t, 6*len(txs)-len(dead), h.count(t, "SELECT count(*) FROM jobs WHERE attempts = 1"))
		// A rescued job's execution details say it was a retry.
		require.Equal(t, len(dead), h.count(t, "SELECT count(*) FROM execution_details WHERE is_retry = true"))
		require.Equal(t, 0, drain(t, live))
	})
}

// TestCanceledWorkersResume stops running workers (their context is
// canceled) in the middle of the work and starts new ones: every
// acknowledged trigger yields its messages exactly once.
func TestCanceledWorkersResume(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		txs := triggerMany(t, h, 40)
		total := 6 * len(txs)
		run := func(until func() bool) {
			t.Helper()
			ctx, cancel := context.WithCancel(context.Background())
			eng := h.newEngine(engine.Options{Workers: 3, Batch: 4, Poll: 5 * time.Millisecond})
			done := make(chan struct{})
			go func() {
				defer close(done)
				eng.Run(ctx)
			}()
			require.Eventually(t, until, 30*time.Second, 2*time.Millisecond)
			cancel()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the workers did not stop")
			}
		}
		run(func() bool { return h.count(t, "SELECT count(*) FROM messages") > 0 })
		stopped := h.count(t, "SELECT count(*) FROM messages")
		t.Logf("%d of %d messages when the first workers stopped", stopped, total)
		require.Zero(t, h.count(t, "SELECT count(*) FROM jobs WHERE status = 'running'"),
			"stopping waits for the batches in flight")
		run(func() bool { return h.count(t, "SELECT count(*) FROM jobs WHERE status = 'completed'") == total })
		requireExactlyOnce(t, h, txs)
	})
}

// TestPoisonJobGivesUp: a job whose worker dies every time it runs is not
// retried forever; after MaxAttempts runs it fails with a Failed detail.
func TestPoisonJobGivesUp(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		const lease, attempts = 10 * time.Second, 3
		h.createWorkflow(t, h.authFor(asDev), plainWorkflow("Poison"))
		h.trigger(t, h.authFor(asDev), map[string]any{"name": "poison", "to": "victim", "transactionId": "tx-poison"})
		clock := &testClock{t: time.Now().Add(time.Second)}
		for range attempts {
			claimed, err := h.DB.JobClaim(ctx, 10, lease, clock.Now())
			require.NoError(t, err)
			require.Len(t, claimed, 1)
			clock.Advance(lease + time.Millisecond)
			n, err := h.DB.JobRescue(ctx, clock.Now())
			require.NoError(t, err)
			require.Equal(t, 1, n)
		}
		eng := h.newEngine(engine.Options{Now: clock.Now, Lease: lease, MaxAttempts: attempts})
		require.Equal(t, 1, drain(t, eng))
		require.Empty(t, h.feedItems(t, "victim"))
		list := objects(t, h.events(t, map[string][]string{"transactionId": {"tx-poison"}})["data"])
		require.Len(t, list, 1)
		job := objects(t, h.event(t, list[0]["_id"].(string))["jobs"])[0]
		require.Equal(t, "failed", job["status"])
		require.Equal(t, []detailSummary{{"Pending", "Internal"}, {"Failed", "Internal"}}, jobDetails(t, job))
		failed := objects(t, job["executionDetails"])[1]
		require.Equal(t, true, failed["isRetry"])
		require.Contains(t, failed["detail"], "Gave up after 3 attempts")
	})
}
