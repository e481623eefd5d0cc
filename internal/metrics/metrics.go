// Package metrics owns Herald's Prometheus metrics: one private registry
// with the HTTP request histogram, the engine's delivery and job series, the
// job queue read from the store at scrape time, the store's connection
// pools, and the Go runtime and process collectors. Every recording method
// is safe on a nil *Metrics (metrics off) and never allocates per call once
// a label combination has been seen.
package metrics

import (
	"database/sql"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/herald-notify/herald/internal/store"
)

// Options configure the metrics of one process.
type Options struct {
	// Stats is read at scrape time for the job queue (herald_jobs); nil
	// leaves those series out.
	Stats store.Stats
	// Pools are the store's connection pools by name (db_name label of the
	// go_sql_* series).
	Pools map[string]*sql.DB
	// Logger reports failures of a scrape; slog.Default when nil.
	Logger *slog.Logger
	// Now is the clock of the queue's due split (tests); time.Now when nil.
	Now func() time.Time
}

// Metrics are one process's metrics.
type Metrics struct {
	reg          *prometheus.Registry
	handler      http.Handler
	httpDuration *prometheus.HistogramVec
	messages     *prometheus.CounterVec
	jobLatency   *prometheus.HistogramVec
	jobsFinished *prometheus.CounterVec
	webhooks     *prometheus.CounterVec // webhooks.go
	// deliveryEvents and deliveryPosts: delivery_events.go.
	deliveryEvents, deliveryPosts *prometheus.CounterVec
}

// Unmatched is the route label of requests no route matches: the raw path
// is never a label, so the series stay bounded whatever clients send.
const Unmatched = "unmatched"

// Message outcomes of herald_messages_sent_total.
const (
	OutcomeSent   = "sent"   // the provider accepted the message (in-app: the message was created)
	OutcomeFailed = "failed" // the provider refused it for good, or the retries ran out
	OutcomeRetry  = "retry"  // a temporary failure: the job runs again (or fails over)
)

// New builds the registry and registers every collector.
func New(o Options) *Metrics {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "herald_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern (unmatched: no route), method and status code.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method", "code"}),
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_messages_sent_total",
			Help: "Deliveries by channel, provider and outcome (sent, failed, retry); in-app messages count as sent.",
		}, []string{"channel", "provider", "outcome"}),
		jobLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "herald_job_latency_seconds",
			Help:    "Time from a job's run time (when it became due) to its outcome being written, by job type.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600},
		}, []string{"type"}),
		jobsFinished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_jobs_finished_total",
			Help: "Jobs this process finished, by type and final status (completed, failed, skipped, canceled, merged).",
		}, []string{"type", "status"}),
		webhooks: newWebhookCounter(),
	}
	m.deliveryEvents, m.deliveryPosts = newDeliveryEventCounters()
	m.reg.MustRegister(m.httpDuration, m.messages, m.jobLatency, m.jobsFinished, m.webhooks, m.deliveryEvents, m.deliveryPosts,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for name, db := range o.Pools {
		m.reg.MustRegister(collectors.NewDBStatsCollector(db, name))
	}
	if o.Stats != nil {
		m.reg.MustRegister(newQueueCollector(o.Stats, o.Now, o.Logger))
	}
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		// A collector that fails leaves its series out; the rest is served.
		ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:      slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn),
	})
	return m
}

// InFlight exports a worker process's bounds of work in flight, read at
// scrape time: herald_jobs_in_flight (jobs claimed and not yet finished),
// herald_jobs_in_flight_limit (their bound) and
// herald_provider_calls_in_flight (provider calls under way).
func (m *Metrics) InFlight(read func() (jobs, limit, calls int)) {
	if m == nil {
		return
	}
	gauge := func(name, help string, pick func(jobs, limit, calls int) int) prometheus.GaugeFunc {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			return float64(pick(read()))
		})
	}
	m.reg.MustRegister(
		gauge("herald_jobs_in_flight", "Jobs this process has claimed and not yet finished.",
			func(j, _, _ int) int { return j }),
		gauge("herald_jobs_in_flight_limit", "The most jobs this process has claimed and not yet finished (--jobs-in-flight).",
			func(_, l, _ int) int { return l }),
		gauge("herald_provider_calls_in_flight", "Provider calls under way in this process (each integration bounded by its concurrency).",
			func(_, _, c int) int { return c }))
}

// Pools names a store's connection pools: one "herald" pool when the
// writer and the readers share it (PostgreSQL), else "herald_write" and
// "herald_read" (SQLite).
func Pools(writer, reader *sql.DB) map[string]*sql.DB {
	if writer == reader {
		return map[string]*sql.DB{"herald": writer}
	}
	return map[string]*sql.DB{"herald_write": writer, "herald_read": reader}
}

// Handler serves the metrics in Prometheus's text format (or OpenMetrics
// when the scraper asks for it). It does no authorization.
func (m *Metrics) Handler() http.Handler { return m.handler }

// Registry is the registry of the metrics (tests gather from it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ObserveRequest records one answered HTTP request. route is the matched
// pattern (or Unmatched); an unusual method is recorded as "other".
func (m *Metrics) ObserveRequest(route, method string, code int, d time.Duration) {
	if m == nil {
		return
	}
	m.httpDuration.WithLabelValues(route, methodLabel(method), codeLabel(code)).Observe(d.Seconds())
}

// MessageOutcome counts one delivery's outcome.
func (m *Metrics) MessageOutcome(channel, provider, outcome string) {
	if m == nil {
		return
	}
	m.messages.WithLabelValues(channel, provider, outcome).Inc()
}

// JobFinished records a job whose final outcome was written: its status,
// and the time since it became due. Each finished job is recorded once, by
// the process that wrote its end: a worker's outcome, a delay or digest
// resumed, a digest event placed, a fan-out through, an in-app step run
// with its trigger.
func (m *Metrics) JobFinished(jobType, status string, sinceDue time.Duration) {
	if m == nil {
		return
	}
	m.jobsFinished.WithLabelValues(jobType, status).Inc()
	m.jobLatency.WithLabelValues(jobType).Observe(max(sinceDue, 0).Seconds())
}

func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

// codes are the status code labels, made once.
var codes = func() (c [600]string) {
	for i := range c {
		c[i] = strconv.Itoa(i)
	}
	return c
}()

func codeLabel(code int) string {
	if code <= 0 {
		code = http.StatusOK // nothing written: net/http answers 200
	}
	if code >= len(codes) {
		return "other"
	}
	return codes[code]
}
