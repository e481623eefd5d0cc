package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/metrics"
	"github.com/herald-notify/herald/internal/store"
)

// fakeStats counts its readings and answers what it is set to.
type fakeStats struct {
	mu    sync.Mutex
	reads int
	st    store.JobStats
	err   error
}

func (f *fakeStats) JobStats(context.Context, time.Time) (store.JobStats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return f.st, f.err
}

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	return rec.Body.String()
}

// TestQueueIsReadAtMostOncePerSecond: scrapes within a second share one
// reading of the store; the oldest due job's age is measured at the
// reading; a failed reading leaves the queue's series out, logs, and the
// rest is still served.
func TestQueueIsReadAtMostOncePerSecond(t *testing.T) {
	t.Parallel()
	now := time.Date(2031, 1, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	st := &fakeStats{st: store.JobStats{Counts: []store.JobCount{{Type: "email", Status: store.JobStatDue, Count: 7},
		{Type: "webhook", Status: store.JobStatRunning, Count: 2}}, OldestDue: now.Add(-90 * time.Second)}}
	var logs bytes.Buffer
	m := metrics.New(metrics.Options{Stats: st, Now: clock, Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	body := scrape(t, m)
	require.Contains(t, body, `herald_jobs{status="due",type="email"} 7`)
	require.Contains(t, body, `herald_jobs{status="running",type="webhook"} 2`, "a type Herald does not know yet")
	require.Contains(t, body, `herald_jobs{status="scheduled",type="sms"} 0`)
	require.Contains(t, body, "herald_jobs_oldest_due_seconds 90\n")
	advance(500 * time.Millisecond)
	scrape(t, m)
	require.Equal(t, 1, st.reads, "one reading within a second")
	advance(600 * time.Millisecond)
	require.Contains(t, scrape(t, m), "herald_jobs_oldest_due_seconds 91.1\n")
	require.Equal(t, 2, st.reads)

	st.mu.Lock()
	st.err = errors.New("store down")
	st.mu.Unlock()
	advance(2 * time.Second)
	body = scrape(t, m)
	require.NotContains(t, body, "herald_jobs{")
	require.Contains(t, body, "go_goroutines")
	require.Contains(t, logs.String(), "store down")
}

// TestNilMetricsAreOff: every recording method is a no-op on nil.
func TestNilMetricsAreOff(t *testing.T) {
	t.Parallel()
	var m *metrics.Metrics
	m.ObserveRequest("GET /health", "GET", 200, time.Millisecond)
	m.MessageOutcome("email", "sendgrid", metrics.OutcomeSent)
	m.JobFinished("email", store.JobCompleted, time.Second)
}

// TestLabelsStayBounded: unusual methods and codes map to fixed labels.
func TestLabelsStayBounded(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{})
	m.ObserveRequest(metrics.Unmatched, "BREW", 404, time.Millisecond)
	m.ObserveRequest(metrics.Unmatched, "GET", 0, time.Millisecond)
	m.ObserveRequest(metrics.Unmatched, "GET", 999, time.Millisecond)
	body := scrape(t, m)
	require.Contains(t, body, `herald_http_request_duration_seconds_count{code="404",method="other",route="unmatched"} 1`)
	require.Contains(t, body, `herald_http_request_duration_seconds_count{code="200",method="GET",route="unmatched"} 1`)
	require.Contains(t, body, `herald_http_request_duration_seconds_count{code="other",method="GET",route="unmatched"} 1`)
	require.False(t, strings.Contains(body, "BREW"))
}

// TestRecordingDoesNotAllocate: once a label combination exists, recording
// it costs no allocation (the request and delivery paths are hot).
func TestRecordingDoesNotAllocate(t *testing.T) {
	m := metrics.New(metrics.Options{})
	m.ObserveRequest("POST /v1/events/trigger", "POST", 201, time.Millisecond)
	m.MessageOutcome("email", "sendgrid", metrics.OutcomeSent)
	m.JobFinished("email", store.JobCompleted, time.Second)
	allocs := testing.AllocsPerRun(1000, func() {
		m.ObserveRequest("POST /v1/events/trigger", "POST", 201, time.Millisecond)
		m.MessageOutcome("email", "sendgrid", metrics.OutcomeSent)
		m.JobFinished("email", store.JobCompleted, time.Second)
	})
	require.Zero(t, allocs)
}

// TestInFlight: the bounds of work in flight are read at each scrape.
func TestInFlight(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{})
	var mu sync.Mutex
	jobs, calls := 3, 2
	m.InFlight(func() (int, int, int) {
		mu.Lock()
		defer mu.Unlock()
		return jobs, 1024, calls
	})
	body := scrape(t, m)
	require.Contains(t, body, "herald_jobs_in_flight 3\n")
	require.Contains(t, body, "herald_jobs_in_flight_limit 1024\n")
	require.Contains(t, body, "herald_provider_calls_in_flight 2\n")
	mu.Lock()
	jobs, calls = 700, 256
	mu.Unlock()
	body = scrape(t, m)
	require.Contains(t, body, "herald_jobs_in_flight 700\n")
	require.Contains(t, body, "herald_provider_calls_in_flight 256\n")
	var off *metrics.Metrics
	off.InFlight(func() (int, int, int) { return 0, 0, 0 })
}

// TestStoredQueues: the delivery events' and the webhooks' queue gauges
// read the store at scrape time, once for scrapes within a second; the
// age is that of the oldest at the reading; a failed reading leaves the
// series out and is logged.
func TestStoredQueues(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	m := metrics.New(metrics.Options{Logger: log})
	var mu sync.Mutex
	reads, fail := 0, false
	oldest := time.Now().Add(-30 * time.Second)
	m.DeliveryEventQueue(func(context.Context) (store.DeliveryEventQueue, error) {
		mu.Lock()
		defer mu.Unlock()
		reads++
		if fail {
			return store.DeliveryEventQueue{}, errors.New("store down")
		}
		return store.DeliveryEventQueue{Queued: 3, Oldest: oldest}, nil
	}, log)
	m.WebhookQueue(func(_ context.Context, now time.Time) (store.WebhookQueue, error) {
		return store.WebhookQueue{Due: 5, Outbox: 3}, nil
	}, log)

	body := scrape(t, m)
	require.Contains(t, body, "herald_delivery_events_queued 3\n")
	require.Regexp(t, `herald_delivery_events_oldest_seconds 3\d\.?\d*\n`, body)
	require.Contains(t, body, "herald_webhook_attempts_due 5\n")
	require.Contains(t, body, "herald_webhook_oldest_due_seconds 0\n", "none due: 0")
	require.Contains(t, body, "herald_webhook_outbox_entries 3\n")
	require.Contains(t, body, "herald_webhook_outbox_oldest_seconds 0\n")
	scrape(t, m)
	mu.Lock()
	require.Equal(t, 1, reads, "one reading within a second")
	fail = true
	mu.Unlock()

	time.Sleep(1100 * time.Millisecond)
	body = scrape(t, m)
	require.NotContains(t, body, "herald_delivery_events_queued")
	require.Contains(t, body, "herald_webhook_attempts_due 5\n")
	require.Contains(t, logs.String(), "store down")
}
