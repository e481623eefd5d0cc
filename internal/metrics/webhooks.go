package metrics

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-notify/herald/internal/store"
)

// Outcomes of herald_webhook_deliveries_total: what became of one attempt.
const (
	WebhookSuccess = "success" // a 2xx answer within the time limit
	WebhookRetry   = "retry"   // failed; the event's next attempt is scheduled
	WebhookFailed  = "failed"  // failed; the schedule is exhausted
	WebhookGone    = "gone"    // 410 Gone: the endpoint is disabled
)

func newWebhookCounter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_webhook_deliveries_total",
		Help: "Outbound webhook attempts this process made, by outcome (success, retry, failed, gone).",
	}, []string{"outcome"})
}

// WebhookAttempt counts one outbound webhook attempt's outcome.
func (m *Metrics) WebhookAttempt(outcome string) {
	if m == nil {
		return
	}
	m.webhooks.WithLabelValues(outcome).Inc()
}

// WebhookQueue exports the outbound webhook attempts queue, read with read
// at scrape time (at most once a second): herald_webhook_attempts_due (due
// and not claimed by a sender) and herald_webhook_oldest_due_seconds (how
// long the longest-waiting of them has been due).
func (m *Metrics) WebhookQueue(read func(ctx context.Context, now time.Time) (store.WebhookQueue, error), log *slog.Logger) {
	if m == nil {
		return
	}
	if log == nil {
		log = slog.Default()
	}
	m.reg.MustRegister(&webhookQueueCollector{read: read, log: log,
		due: prometheus.NewDesc("herald_webhook_attempts_due", "Outbound webhook attempts due and not yet claimed by a sender.", nil, nil),
		age: prometheus.NewDesc("herald_webhook_oldest_due_seconds",
			"How long the longest-waiting due webhook attempt has been due (0: none is due).", nil, nil)})
}

type webhookQueueCollector struct {
	read     func(ctx context.Context, now time.Time) (store.WebhookQueue, error)
	log      *slog.Logger
	due, age *prometheus.Desc

	mu   sync.Mutex
	at   time.Time
	last store.WebhookQueue
}

func (c *webhookQueueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.due; ch <- c.age }

func (c *webhookQueueCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if now.Sub(c.at) >= queueCacheFor || now.Before(c.at) {
		ctx, cancel := context.WithTimeout(context.Background(), queueTimeout)
		q, err := c.read(ctx, now)
		cancel()
		if err != nil {
			c.log.Warn("metrics: reading the webhook queue", "err", err)
			return
		}
		c.at, c.last = now, q
	}
	age := 0.0
	if !c.last.OldestDue.IsZero() {
		age = max(c.at.Sub(c.last.OldestDue).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(c.due, prometheus.GaugeValue, float64(c.last.Due))
	ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, age)
}
