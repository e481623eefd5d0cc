package metrics

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// storedQueueCollector exports a queue kept in the store as two gauges: how many
// wait (count) and how long the longest-waiting has waited (age, 0 when
// none). The store is read at scrape time, at most once per queueCacheFor;
// a failed read is logged and exports nothing.
type storedQueueCollector struct {
	what       string // names the queue in the log
	read       func(ctx context.Context, now time.Time) (n int64, oldest time.Time, err error)
	log        *slog.Logger
	count, age *prometheus.Desc

	mu     sync.Mutex
	at     time.Time
	n      int64
	oldest time.Time
}

func (c *storedQueueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.count; ch <- c.age }

func (c *storedQueueCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if now.Sub(c.at) >= queueCacheFor || now.Before(c.at) {
		ctx, cancel := context.WithTimeout(context.Background(), queueTimeout)
		n, oldest, err := c.read(ctx, now)
		cancel()
		if err != nil {
			c.log.Warn("metrics: reading "+c.what, "err", err)
			return
		}
		c.at, c.n, c.oldest = now, n, oldest
	}
	age := 0.0
	if !c.oldest.IsZero() {
		age = max(c.at.Sub(c.oldest).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(c.count, prometheus.GaugeValue, float64(c.n))
	ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, age)
}
