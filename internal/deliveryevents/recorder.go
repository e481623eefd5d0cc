package deliveryevents

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/herald-notify/herald/internal/metrics"
	"github.com/herald-notify/herald/internal/store"
)

// Defaults of RecorderOptions.
const (
	DefaultBatch    = 500
	DefaultMatchFor = 30 * time.Second
)

// RecorderOptions configure a Recorder.
type RecorderOptions struct {
	Store   store.DeliveryEvents
	Metrics *metrics.Metrics
	Logger  *slog.Logger
	Now     func() time.Time
	// Batch bounds the events of one transaction (default DefaultBatch).
	Batch int
	// MatchFor is how long an event matching no message is tried again
	// (default DefaultMatchFor): a provider may call before the outcome of
	// its delivery, with the provider's message id, is written.
	MatchFor time.Duration
}

// Recorder records queued delivery events on their messages. The API kicks
// it after queueing a post's events; the workers drain it on a timer, which
// takes what a process that stopped left queued and the events tried again.
type Recorder struct {
	o   RecorderOptions
	log *slog.Logger

	mu      sync.Mutex
	running bool // a Kick's drain is running
	again   bool // kicked while it ran: drain once more
}

// NewRecorder builds a Recorder.
func NewRecorder(o RecorderOptions) *Recorder {
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	if o.MatchFor <= 0 {
		o.MatchFor = DefaultMatchFor
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Recorder{o: o, log: o.Logger}
}

// Drain records the events due until none is, a batch per transaction.
func (r *Recorder) Drain(ctx context.Context) (recorded int, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.log.ErrorContext(ctx, "delivery events: recovered from a panic", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("delivery events: panic: %v", p)
		}
	}()
	for ctx.Err() == nil {
		res, err := r.o.Store.DeliveryEventsRecord(ctx, &store.DeliveryEventsRecordParams{Limit: r.o.Batch, MatchFor: r.o.MatchFor,
			Now: r.o.Now()})
		if err != nil {
			return recorded, err
		}
		for provider, n := range res.Recorded {
			r.o.Metrics.DeliveryEvents(provider, metrics.EventRecorded, n)
			recorded += n
		}
		for provider, n := range res.Unmatched {
			r.o.Metrics.DeliveryEvents(provider, metrics.EventUnmatched, n)
		}
		if res.Taken < r.o.Batch {
			return recorded, nil
		}
	}
	return recorded, ctx.Err()
}

// Kick drains in the background, now: one drain at a time, and once more
// when kicked while it ran. It never blocks.
func (r *Recorder) Kick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running {
		r.again = true
		return
	}
	r.running = true
	go r.kicked()
}

// kickTimeout bounds a kicked drain: what it leaves is the workers' to record.
const kickTimeout = time.Minute

func (r *Recorder) kicked() {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), kickTimeout)
		if _, err := r.Drain(ctx); err != nil {
			r.log.WarnContext(ctx, "delivery events: recording; the workers will try again", "err", err)
		}
		cancel()
		r.mu.Lock()
		if !r.again {
			r.running = false
			r.mu.Unlock()
			return
		}
		r.again = false
		r.mu.Unlock()
	}
}
