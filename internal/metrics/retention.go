package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Kinds of herald_retention_deleted_total: what the purge deleted.
const (
	RetentionNotifications    = "notifications"     // triggers, by activity retention
	RetentionJobs             = "jobs"              // their jobs (and finished fan-out jobs)
	RetentionExecutionDetails = "execution_details" // their execution details
	RetentionMessages         = "messages"          // their non-in-app messages
	RetentionTransactions     = "transactions"      // transactionId reservations
	RetentionInboxMessages    = "inbox_messages"    // in-app messages, by inbox retention
)

// RetentionKinds are every kind, each exported from the start.
var RetentionKinds = []string{RetentionNotifications, RetentionJobs, RetentionExecutionDetails, RetentionMessages,
	RetentionTransactions, RetentionInboxMessages}

// Retention are the series of the purge (internal/retention).
type Retention struct {
	deleted *prometheus.CounterVec
	size    prometheus.Gauge
}

// Retention registers the purge's series, once, and returns them:
// herald_retention_deleted_total{kind}, every kind at 0 from the start, and
// herald_store_size_bytes. It returns nil on a nil *Metrics.
func (m *Metrics) Retention() *Retention {
	if m == nil {
		return nil
	}
	r := &Retention{
		deleted: register(m.reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_retention_deleted_total",
			Help: "Rows the retention purge deleted, by kind (notifications, jobs, execution_details, messages: non-in-app," +
				" transactions, inbox_messages: in-app).",
		}, []string{"kind"})),
		size: register(m.reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "herald_store_size_bytes",
			Help: "The database's size (SQLite: pages × page size; PostgreSQL: pg_database_size), read at each retention run.",
		})),
	}
	for _, k := range RetentionKinds {
		r.deleted.WithLabelValues(k)
	}
	return r
}

// register registers c, or returns the collector registered before it
// under the same name.
func register[C prometheus.Collector](reg *prometheus.Registry, c C) C {
	var are prometheus.AlreadyRegisteredError
	if err := reg.Register(c); errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	return c
}

// Deleted counts n rows of a kind deleted.
func (r *Retention) Deleted(kind string, n int64) {
	if r == nil || n <= 0 {
		return
	}
	r.deleted.WithLabelValues(kind).Add(float64(n))
}

// StoreSize sets the database's size in bytes.
func (r *Retention) StoreSize(bytes int64) {
	if r == nil {
		return
	}
	r.size.Set(float64(bytes))
}
