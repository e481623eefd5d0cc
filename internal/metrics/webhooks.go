package metrics

import (
	"context"
	"log/slog"
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
// long the longest-waiting of them has been due), and the outbox before
// them: herald_webhook_outbox_entries (changes whose events are not made
// yet) and herald_webhook_outbox_oldest_seconds.
func (m *Metrics) WebhookQueue(read func(ctx context.Context, now time.Time) (store.WebhookQueue, error), log *slog.Logger) {
	if m == nil {
		return
	}
	if log == nil {
		log = slog.Default()
	}
	m.reg.MustRegister(&storedQueueCollector{what: "the webhook queue", log: log,
		read: func(ctx context.Context, now time.Time) (int64, time.Time, error) {
			q, err := read(ctx, now)
			return q.Due, q.OldestDue, err
		},
		count: prometheus.NewDesc("herald_webhook_attempts_due", "Outbound webhook attempts due and not yet claimed by a sender.", nil, nil),
		age: prometheus.NewDesc("herald_webhook_oldest_due_seconds",
			"How long the longest-waiting due webhook attempt has been due (0: none is due).", nil, nil)})
	m.reg.MustRegister(&storedQueueCollector{what: "the webhook outbox", log: log,
		read: func(ctx context.Context, now time.Time) (int64, time.Time, error) {
			q, err := read(ctx, now)
			return q.Outbox, q.OutboxOldest, err
		},
		count: prometheus.NewDesc("herald_webhook_outbox_entries",
			"Outbox entries of committed changes whose webhook events are not made yet.", nil, nil),
		age: prometheus.NewDesc("herald_webhook_outbox_oldest_seconds",
			"How long the oldest webhook outbox entry has waited (0: none).", nil, nil)})
}
