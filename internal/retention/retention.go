// Package retention owns the purge of what Herald has kept long enough:
// finished triggers with their activity and transactionId reservations
// (activity retention), in-app messages (inbox retention). A Purger runs in
// the background of `herald serve`, once per interval, a batch per store
// transaction with a pause between batches, so that the API keeps
// answering meanwhile; it exports what it deleted and the database's size
// (docs/operations.md, "Retention").
package retention

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/herald-notify/herald/internal/config"
	"github.com/herald-notify/herald/internal/metrics"
	"github.com/herald-notify/herald/internal/store"
)

// Defaults of Options.
const (
	// DefaultBatch is the rows the first batch of a run looks at, and
	// MaxBatch the most any batch does; in between, each batch's size
	// follows from how long the previous one took, aiming at BatchTime. On
	// SQLite a batch holds the one writer while it runs, and every write
	// of the API waits for it (docs/benchmarks.md, "Retention").
	DefaultBatch = 500
	MaxBatch     = 5000
	BatchTime    = 25 * time.Millisecond
	// MinPause and MaxPause bound the pause after a batch, which is as long
	// as the batch took: the purge takes at most about half of the writer,
	// and backs off when the store is busy.
	MinPause = 10 * time.Millisecond
	MaxPause = time.Second
	// FirstRunAfter is when the first run comes after start, or one
	// interval if that is shorter.
	FirstRunAfter = time.Minute
)

// Options configure a Purger.
type Options struct {
	Store store.Retention
	// Retention is what to keep (a zero Activity or Inbox keeps forever) and
	// how often to purge.
	Retention config.Retention
	// SizeOnly leaves the purge to other processes (an API-only process):
	// only the store's size is read, once per interval.
	SizeOnly bool
	// Batch is the rows the first batch of each purge looks at
	// (DefaultBatch when 0); Fixed keeps every batch at that size.
	Batch   int
	Fixed   bool
	Metrics *metrics.Metrics
	Logger  *slog.Logger
	// Now is the clock (tests); time.Now when nil.
	Now func() time.Time
}

// Purger runs the purge.
type Purger struct {
	o   Options
	met *metrics.Retention
	log *slog.Logger
}

// New returns a Purger; its metrics are exported from now on.
func New(o Options) *Purger {
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	if o.Retention.Interval <= 0 {
		o.Retention.Interval = config.DefaultRetention.Interval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Purger{o: o, met: o.Metrics.Retention(), log: o.Logger.With("in", "retention")}
}

// Totals are the rows one run deleted, by kind (metrics.RetentionKinds).
type Totals map[string]int64

func (t Totals) add(p store.RetentionPurged) {
	for k, n := range map[string]int64{metrics.RetentionNotifications: p.Notifications, metrics.RetentionJobs: p.Jobs,
		metrics.RetentionExecutionDetails: p.ExecutionDetails, metrics.RetentionMessages: p.Messages,
		metrics.RetentionTransactions: p.Transactions, metrics.RetentionInboxMessages: p.InboxMessages} {
		if n > 0 {
			t[k] += n
		}
	}
}

// Run reads the store's size at once, then purges (unless SizeOnly) at most
// FirstRunAfter after start and once per interval, until ctx ends. A run
// that fails or panics is logged; the next one comes at its time.
func (p *Purger) Run(ctx context.Context) {
	p.guard(ctx, "reading the store's size", p.refreshSize)
	first := time.NewTimer(min(FirstRunAfter, p.o.Retention.Interval))
	defer first.Stop()
	select {
	case <-ctx.Done():
		return
	case <-first.C:
	}
	t := time.NewTicker(p.o.Retention.Interval)
	defer t.Stop()
	for {
		if p.o.SizeOnly {
			p.guard(ctx, "reading the store's size", p.refreshSize)
		} else {
			p.guard(ctx, "purging", func(ctx context.Context) error {
				_, err := p.RunOnce(ctx)
				return err
			})
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// guard runs fn, logging its error (unless ctx ended) or its panic.
func (p *Purger) guard(ctx context.Context, what string, fn func(context.Context) error) {
	defer func() {
		if r := recover(); r != nil {
			p.log.Error("recovered from a panic", "while", what, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	if err := fn(ctx); err != nil && ctx.Err() == nil {
		p.log.Error(what, "err", err)
	}
}

func (p *Purger) refreshSize(ctx context.Context) error {
	n, err := p.o.Store.StoreSize(ctx)
	if err != nil {
		return err
	}
	p.met.StoreSize(n)
	return nil
}

// RunOnce is one run: every batch of what is due now, then the store's
// size. On PostgreSQL it only reads the size while another process purges.
// It returns what it deleted, also when it stops on an error.
func (p *Purger) RunOnce(ctx context.Context) (Totals, error) {
	totals := Totals{}
	release, ok, err := p.o.Store.RetentionLock(ctx)
	if err != nil {
		return totals, err
	}
	if !ok { // another process purges
		return totals, p.refreshSize(ctx)
	}
	defer release()
	start, now := time.Now(), p.o.Now()
	type pass struct {
		what  string
		keep  time.Duration
		purge func(context.Context, *store.RetentionPurgeParams) (store.RetentionPurged, error)
	}
	for _, ps := range []pass{
		{"triggers", p.o.Retention.Activity, p.o.Store.RetentionActivityPurge},
		// After the triggers: a reservation goes once its triggers have.
		{"transactionId reservations", p.o.Retention.Activity, p.o.Store.RetentionTransactionPurge},
		{"in-app messages", p.o.Retention.Inbox, p.o.Store.RetentionInboxPurge},
	} {
		if ps.keep <= 0 {
			continue // kept forever
		}
		if err := p.batches(ctx, now.Add(-ps.keep), ps.purge, totals); err != nil {
			return totals, fmt.Errorf("retention: %s: %w", ps.what, err)
		}
	}
	if len(totals) > 0 {
		args := []any{"took", time.Since(start).Round(time.Millisecond).String()}
		for _, k := range metrics.RetentionKinds {
			if totals[k] > 0 {
				args = append(args, k, totals[k])
			}
		}
		p.log.Info("purged", args...)
	}
	return totals, p.refreshSize(ctx)
}

// batches runs one purge's batches until it is done, counting each as it
// commits, with a pause after each as long as it took.
func (p *Purger) batches(ctx context.Context, before time.Time,
	purge func(context.Context, *store.RetentionPurgeParams) (store.RetentionPurged, error), totals Totals) error {
	params := &store.RetentionPurgeParams{Before: before, Limit: p.o.Batch}
	for {
		began := time.Now()
		got, err := purge(ctx, params)
		if err != nil {
			return err
		}
		batch := Totals{}
		batch.add(got)
		p.log.Debug("batch", "size", params.Limit, "took", got.Took.String(), "waited", (time.Since(began) - got.Took).String(),
			"deleted", batch)
		if !p.o.Fixed {
			params.Limit = nextSize(params.Limit, got.Took)
		}
		for k, n := range batch {
			totals[k] += n
			p.met.Deleted(k, n)
		}
		if got.Done {
			return nil
		}
		params.After = got.Next
		// As long as the batch took with its wait for the writer: a busy
		// store slows the purge down.
		pause := time.NewTimer(min(max(time.Since(began), MinPause), MaxPause))
		select {
		case <-ctx.Done():
			pause.Stop()
			return ctx.Err()
		case <-pause.C:
		}
	}
}

// nextSize is the size of the batch after one of size rows that took took:
// scaled towards BatchTime, at most doubled, within [10, MaxBatch].
func nextSize(size int, took time.Duration) int {
	next := 2 * size
	if took > 0 {
		next = min(next, int(float64(size)*float64(BatchTime)/float64(took)))
	}
	return min(max(next, 10), MaxBatch)
}
