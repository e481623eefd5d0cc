package metrics

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-notify/herald/internal/store"
)

// Outcomes of herald_delivery_events_total: what became of one event a
// provider posted.
const (
	EventQueued    = "queued"    // stored, to be recorded
	EventDuplicate = "duplicate" // posted before (or twice in its post): not stored again
	EventIgnored   = "ignored"   // a type Herald does not record
	EventRecorded  = "recorded"  // recorded on its message
	EventUnmatched = "unmatched" // matched no message of its environment: dropped
)

// Outcomes of herald_delivery_event_posts_total: what became of one post.
const (
	PostAccepted     = "accepted"
	PostNotFound     = "refused_404" // no such integration, or one that takes no events
	PostUnauthorized = "refused_401"
	PostMalformed    = "refused_400"
	PostRateLimited  = "refused_429"
	// PostUnavailable: what the post needs from its provider (SNS's signing
	// certificate, a subscription's confirmation) could not be had (503).
	PostUnavailable = "failed_503"
)

func newDeliveryEventCounters() (events, posts *prometheus.CounterVec) {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_delivery_events_total",
			Help: "Delivery events providers posted, by provider and outcome (queued, duplicate, ignored, recorded, unmatched).",
		}, []string{"provider", "outcome"}),
		prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_delivery_event_posts_total",
			Help: "Posts to the inbound delivery-event route, by provider (unknown without an integration) and outcome" +
				" (accepted, refused_404, refused_401, refused_400, refused_429, failed_503).",
		}, []string{"provider", "outcome"})
}

// DeliveryEvents counts n delivery events of provider with outcome.
func (m *Metrics) DeliveryEvents(provider, outcome string, n int) {
	if m == nil || n <= 0 {
		return
	}
	m.deliveryEvents.WithLabelValues(provider, outcome).Add(float64(n))
}

// DeliveryPost counts one post to the inbound route; provider is "" when
// no integration was found.
func (m *Metrics) DeliveryPost(provider, outcome string) {
	if m == nil {
		return
	}
	if provider == "" {
		provider = "unknown"
	}
	m.deliveryPosts.WithLabelValues(provider, outcome).Inc()
}

// DeliveryEventQueue exports the queue of delivery events not recorded
// yet, read with read at scrape time (at most once a second):
// herald_delivery_events_queued and herald_delivery_events_oldest_seconds.
// Registering it again is a no-op.
func (m *Metrics) DeliveryEventQueue(read func(ctx context.Context) (store.DeliveryEventQueue, error), log *slog.Logger) {
	if m == nil {
		return
	}
	if log == nil {
		log = slog.Default()
	}
	err := m.reg.Register(&storedQueueCollector{what: "the delivery event queue", log: log,
		read: func(ctx context.Context, _ time.Time) (int64, time.Time, error) {
			q, err := read(ctx)
			return q.Queued, q.Oldest, err
		},
		count: prometheus.NewDesc("herald_delivery_events_queued", "Delivery events stored and not recorded yet.", nil, nil),
		age: prometheus.NewDesc("herald_delivery_events_oldest_seconds",
			"How long the longest-waiting delivery event has waited to be recorded (0: none waits).", nil, nil)})
	var already prometheus.AlreadyRegisteredError
	if err != nil && !errors.As(err, &already) {
		log.Warn("metrics: registering the delivery event queue", "err", err)
	}
}
