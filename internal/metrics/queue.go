package metrics

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-notify/herald/internal/store"
)

// queueCacheFor is how long one reading of the queue answers scrapes:
// several scrapers (or a burst of them) cost the store one query.
const queueCacheFor = time.Second

// queueTimeout bounds the store query of one scrape.
const queueTimeout = 2 * time.Second

// jobTypes are the job types whose series are always present (zero when
// there are none), so that an alert on a missing series is never needed.
var jobTypes = []string{"in_app", "email", "sms", "chat", "push", "delay", "digest", store.JobFanout}

var jobStates = []string{store.JobStatDue, store.JobStatScheduled, store.JobStatRunning, store.JobStatDelayed}

// queueCollector reads the job queue from the store at scrape time.
type queueCollector struct {
	stats store.Stats
	now   func() time.Time
	log   *slog.Logger
	jobs  *prometheus.Desc
	age   *prometheus.Desc

	mu   sync.Mutex // held through a reading: concurrent scrapes share it
	at   time.Time
	last store.JobStats
	ok   bool
}

func newQueueCollector(st store.Stats, now func() time.Time, log *slog.Logger) *queueCollector {
	return &queueCollector{stats: st, now: now, log: log,
		jobs: prometheus.NewDesc("herald_jobs", "Live jobs by type and state: due (queued, waiting for a worker), scheduled"+
			" (queued for later: a retry's backoff), running (leased), delayed (a delay or an open digest window).",
			[]string{"type", "status"}, nil),
		age: prometheus.NewDesc("herald_jobs_oldest_due_seconds",
			"How long the longest-waiting due job has been due (0: none is due).", nil, nil),
	}
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.jobs; ch <- c.age }

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	st, now, ok := c.read()
	if !ok {
		return
	}
	counts := map[[2]string]int64{}
	for _, t := range jobTypes {
		for _, s := range jobStates {
			counts[[2]string{t, s}] = 0
		}
	}
	for _, n := range st.Counts {
		counts[[2]string{n.Type, n.Status}] += n.Count
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
	age := 0.0
	if !st.OldestDue.IsZero() {
		age = max(now.Sub(st.OldestDue).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, age)
}

// read returns the queue as read at most queueCacheFor ago, and when.
func (c *queueCollector) read() (store.JobStats, time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.ok && now.Sub(c.at) < queueCacheFor && !now.Before(c.at) {
		return c.last, c.at, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), queueTimeout)
	defer cancel()
	st, err := c.stats.JobStats(ctx, now)
	if err != nil {
		c.log.Warn("metrics: reading the job queue", "err", err)
		c.ok = false
		return store.JobStats{}, now, false
	}
	c.at, c.last, c.ok = now, st, true
	return st, now, true
}
