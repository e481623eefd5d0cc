package retention_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/config"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/metrics"
	"github.com/herald-notify/herald/internal/retention"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// oldMessages loads n in-app messages of one subscriber created at.
func oldMessages(t *testing.T, db *sqlstore.DB, n int, at time.Time) {
	t.Helper()
	sub := id.New()
	msgs := make([]store.Message, n)
	for i := range msgs {
		msgs[i] = store.Message{ID: id.New(), OrganizationID: "org", EnvironmentID: "env", NotificationID: id.New(), JobID: id.New(),
			SubscriberID: sub, WorkflowID: "wf", TemplateIdentifier: "wf", TransactionID: id.New(), Channel: "in_app",
			ProviderID: "herald", Content: "c", Status: "sent", Read: i%2 == 0, Seen: i%3 == 0, CreatedAt: at, UpdatedAt: at}
	}
	require.NoError(t, db.MessageBulkLoad(t.Context(), msgs))
}

func inApp(t *testing.T, db *sqlstore.DB) int {
	t.Helper()
	var n int
	require.NoError(t, db.Reader().QueryRow("SELECT count(*) FROM messages WHERE channel = 'in_app'").Scan(&n))
	return n
}

// series reads the purge's series: deleted rows by kind, and the store size.
func series(t *testing.T, m *metrics.Metrics) (map[string]float64, float64) {
	t.Helper()
	families, err := m.Registry().Gather()
	require.NoError(t, err)
	deleted, size := map[string]float64{}, -1.0
	for _, f := range families {
		switch f.GetName() {
		case "herald_retention_deleted_total":
			for _, s := range f.GetMetric() {
				deleted[s.GetLabel()[0].GetValue()] = s.GetCounter().GetValue()
			}
		case "herald_store_size_bytes":
			size = f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return deleted, size
}

// observed is the real store, with a look at the counters as each batch
// starts, and a panic on demand.
type observed struct {
	store.Retention
	mu      sync.Mutex
	met     *metrics.Metrics
	t       *testing.T
	seen    []float64
	panics  int
	batches int
}

func (o *observed) RetentionInboxPurge(ctx context.Context, p *store.RetentionPurgeParams) (store.RetentionPurged, error) {
	o.mu.Lock()
	deleted, _ := series(o.t, o.met)
	o.seen = append(o.seen, deleted[metrics.RetentionInboxMessages])
	o.batches++
	panics := o.panics > 0
	if panics {
		o.panics--
	}
	o.mu.Unlock()
	if panics {
		panic("the test's panic")
	}
	return o.Retention.RetentionInboxPurge(ctx, p)
}

// TestRunPurgesInBatches: the loop exports every kind at 0 and the store's
// size from the start, runs within one interval, purges a batch at a time
// (the counter grows with each committed batch), survives a panic and
// ends with its context.
func TestRunPurgesInBatches(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		met := metrics.New(metrics.Options{Logger: slog.New(slog.DiscardHandler)})
		oldMessages(t, db, 25, time.Now().Add(-400*24*time.Hour))
		oldMessages(t, db, 3, time.Now().Add(-300*24*time.Hour))
		var logs syncBuffer
		obs := &observed{Retention: db, met: met, t: t, panics: 1}
		p := retention.New(retention.Options{Store: obs, Metrics: met, Batch: 10, Fixed: true,
			Retention: config.Retention{Activity: 30 * 24 * time.Hour, Inbox: 365 * 24 * time.Hour, Interval: 50 * time.Millisecond},
			Logger:    slog.New(slog.NewTextHandler(&logs, nil))})
		deleted, size := series(t, met)
		require.Equal(t, map[string]float64{"notifications": 0, "jobs": 0, "execution_details": 0, "messages": 0, "transactions": 0,
			"inbox_messages": 0}, deleted, "every kind from the start")
		require.Zero(t, size, "read when the loop starts")

		ctx, cancel := context.WithCancel(t.Context())
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			p.Run(ctx)
		}()
		require.Eventually(t, func() bool {
			deleted, size := series(t, met)
			return deleted[metrics.RetentionInboxMessages] == 25 && size > 0
		}, 10*time.Second, 10*time.Millisecond)
		cancel()
		select {
		case <-stopped:
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not end with its context")
		}
		require.Contains(t, logs.String(), "recovered from a panic", "the first run panicked, the next one purged")
		obs.mu.Lock()
		defer obs.mu.Unlock()
		require.Equal(t, []float64{0, 0, 10, 20}, obs.seen[:4], "the panic, then three batches counted as each commits")
		require.Equal(t, 3, inApp(t, db), "younger than a year: kept")
	})
}

// TestKeepForever: a retention of 0 deletes nothing, however old; an
// API-only process (SizeOnly) purges nothing either.
func TestKeepForever(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		oldMessages(t, db, 5, time.Now().Add(-10*365*24*time.Hour))
		totals, err := retention.New(retention.Options{Store: db, Logger: slog.New(slog.DiscardHandler)}).RunOnce(t.Context())
		require.NoError(t, err)
		require.Empty(t, totals)
		require.Equal(t, 5, inApp(t, db))

		met := metrics.New(metrics.Options{Logger: slog.New(slog.DiscardHandler)})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		sized := &sizeReads{Retention: db}
		go retention.New(retention.Options{Store: sized, Metrics: met, SizeOnly: true, Logger: slog.New(slog.DiscardHandler),
			Retention: config.Retention{Inbox: time.Hour, Interval: 20 * time.Millisecond}}).Run(ctx)
		require.Eventually(t, func() bool {
			_, size := series(t, met)
			return size > 0 && sized.n.Load() >= 3
		}, 5*time.Second, 10*time.Millisecond, "the size read at start and at each interval")
		require.Equal(t, 5, inApp(t, db), "an API-only process only reads the size")
	})
}

// TestOneProcessPurges: on PostgreSQL a run does nothing while another
// process holds the purge.
func TestOneProcessPurges(t *testing.T) {
	t.Parallel()
	db, reopen := testdb.Reopenable(t, "postgres", testdb.Keys(t))
	oldMessages(t, db, 5, time.Now().Add(-400*24*time.Hour))
	other := reopen(testdb.Keys(t)) // another process on the same database
	release, ok, err := other.RetentionLock(t.Context())
	require.NoError(t, err)
	require.True(t, ok)
	p := retention.New(retention.Options{Store: db, Logger: slog.New(slog.DiscardHandler),
		Retention: config.Retention{Inbox: 365 * 24 * time.Hour, Interval: time.Hour}})
	totals, err := p.RunOnce(t.Context())
	require.NoError(t, err)
	require.Empty(t, totals)
	require.Equal(t, 5, inApp(t, db))
	release()
	totals, err = p.RunOnce(t.Context())
	require.NoError(t, err)
	require.Equal(t, retention.Totals{"inbox_messages": 5}, totals)
}

// sizeReads counts the reads of the store's size.
type sizeReads struct {
	store.Retention
	n atomic.Int64
}

func (s *sizeReads) StoreSize(ctx context.Context) (int64, error) {
	s.n.Add(1)
	return s.Retention.StoreSize(ctx)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
