// Package engine runs Herald's workflows: workers claim due jobs from the
// jobs table in batches under a lease, run each step (render its Liquid
// controls, create the in-app message, deliver), and write every outcome —
// message, execution details, job status, next step queued — in one
// transaction. Crashes lose nothing: an expired lease puts a job back in the
// queue, and a re-run never creates a second message for one job.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herald-notify/herald/internal/bridge"
	"github.com/herald-notify/herald/internal/httpstep"
	"github.com/herald-notify/herald/internal/logctx"
	"github.com/herald-notify/herald/internal/metrics"
	"github.com/herald-notify/herald/internal/netguard"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
)

// Options configure an Engine.
type Options struct {
	Store  store.Store
	Logger *slog.Logger
	// Workers is the number of claim loops (default 2).
	Workers int
	// Batch is how many jobs one claim leases (default 64).
	Batch int
	// MaxInFlight bounds the jobs claimed and not yet finished (default
	// DefaultMaxInFlight). A batch with deliveries waits on its providers
	// while its worker claims the next: calls to slow providers overlap, up
	// to this bound (and each integration's own).
	MaxInFlight int
	// Lease is how long a claimed job is a worker's (default 30 s).
	Lease time.Duration
	// Poll is the longest wait between claims when nothing wakes a worker (default 1 s).
	Poll time.Duration
	// MaxAttempts bounds the runs of a job failing transiently (default 5).
	MaxAttempts int
	// Maintain is how often the store's tables are maintained (default
	// 10 s; see store.Pipeline.Maintain).
	Maintain time.Duration
	// Listen, when set, blocks delivering cross-process wake-ups (PostgreSQL NOTIFY).
	Listen func(ctx context.Context, wake func()) error
	// Now is the clock (tests).
	Now func() time.Time
	// Sandbox renders the steps' templates (default: sandbox.DefaultLimits).
	Sandbox *sandbox.Sandbox
	// Delivery configures the providers' calls.
	Delivery DeliveryOptions
	// Metrics, when set, counts deliveries and finished jobs.
	Metrics *metrics.Metrics
	// Linger is how long a worker waits after a partial batch before it
	// claims again (default 5 ms; negative: not at all): under a stream of
	// triggers it gathers fuller batches — fewer, fatter transactions — for
	// a few milliseconds of latency.
	Linger time.Duration
	// Bridge executes the steps of workflows synced from Novu Framework
	// apps (default: a client whose guard allows private networks only
	// when Delivery.AllowPrivateNetworks does).
	Bridge *bridge.Client
	// FanoutBatch is how many recipients of a topic or broadcast one
	// transaction adds (default 500); FanoutBatches how many batches a
	// fan-out job runs before it queues itself again (default 4).
	FanoutBatch, FanoutBatches int
}

// DefaultMaxInFlight is the default bound of jobs in flight per process.
const DefaultMaxInFlight = 1024

// Engine runs jobs.
type Engine struct {
	o    Options
	log  *slog.Logger
	now  func() time.Time
	wake chan struct{}
	sb   *sandbox.Sandbox
	// tr reads translations ({{t.key}}, translate.go); nil where none can be read.
	tr TranslationReader
	// senders keeps a sender per integration.
	senders *senders
	// resumedAt (Unix ns, wall clock) is when a worker last looked for
	// delayed jobs that are due (see loop).
	resumedAt atomic.Int64
	// inFlight holds a token per job claimed and not yet finished.
	inFlight chan struct{}
	// batches are the delivery batches running beside their workers.
	batches sync.WaitGroup
	// envValues reads the environment variables a step's templates name.
	envValues EnvironmentValues
	// http sends the HTTP request steps.
	http *httpstep.Client
	// envs reads environments (env.name and env.type of step conditions).
	envs EnvironmentReader
}

// New builds an Engine.
func New(o Options) *Engine {
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.Batch <= 0 {
		o.Batch = 64
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	o.MaxInFlight = max(o.MaxInFlight, o.Batch)
	if o.Lease <= 0 {
		o.Lease = 30 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	if o.Maintain <= 0 {
		o.Maintain = 10 * time.Second
	}
	if o.Linger == 0 {
		o.Linger = 5 * time.Millisecond
	}
	if o.FanoutBatch <= 0 {
		o.FanoutBatch = 500
	}
	if o.FanoutBatches <= 0 {
		o.FanoutBatches = 4
	}
	if o.Sandbox == nil {
		o.Sandbox = sandbox.New(sandbox.DefaultLimits)
	}
	o.Delivery.defaults()
	e := &Engine{o: o, log: o.Logger, now: o.Now, wake: make(chan struct{}, 1), sb: o.Sandbox, inFlight: make(chan struct{}, o.MaxInFlight)}
	if tr, ok := o.Store.(TranslationReader); ok {
		e.tr = tr
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	e.log = logctx.Logger(e.log) // a job's lines carry its job, transaction and environment ids
	if e.now == nil {
		e.now = time.Now
	}
	e.senders = newSenders(o.Delivery, e.now)
	if o.Bridge == nil {
		o.Bridge = bridge.New(bridge.Options{Dialer: &netguard.Dialer{AllowPrivate: o.Delivery.AllowPrivateNetworks,
			Resolve: o.Delivery.Resolve}})
		e.o.Bridge = o.Bridge
	}
	e.http = httpstep.New(&netguard.Dialer{AllowPrivate: o.Delivery.AllowPrivateNetworks, Resolve: o.Delivery.Resolve})
	if o.Store != nil {
		e.envValues, e.envs = o.Store.EnvironmentVariableValues, o.Store
	}
	return e
}

// Wake tells the workers that jobs may be due now. It never blocks.
func (e *Engine) Wake() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Run runs the workers until ctx ends, then waits for in-flight batches.
func (e *Engine) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for i := 0; i < e.o.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.loop(ctx)
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		e.rescueLoop(ctx)
	}()
	go func() {
		defer wg.Done()
		e.maintainLoop(ctx)
	}()
	wg.Add(2)
	go func() {
		defer wg.Done()
		e.snoozeLoop(ctx)
	}()
	go func() {
		defer wg.Done()
		e.deliveryEventsLoop(ctx)
	}()
	if e.o.Listen != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				var err error
				if e.protect("listening for wake-ups", func() { err = e.o.Listen(ctx, e.Wake) }) {
					err = errPanicked
				}
				if err != nil && ctx.Err() == nil {
					e.log.Warn("job wake-up listener stopped; polling meanwhile", "err", err)
					sleep(ctx, time.Second)
				}
			}
		}()
	}
	wg.Wait()
	e.batches.Wait()
	e.senders.close()
}

// InFlight reports the jobs claimed and not yet finished, and their bound
// (herald_jobs_in_flight), and the provider calls in flight.
func (e *Engine) InFlight() (jobs, limit, calls int) {
	return len(e.inFlight), cap(e.inFlight), int(e.senders.inFlight.Load())
}

var errPanicked = errors.New("recovered from a panic")

// protect runs fn; a panic is logged, not fatal, so that the background
// loops keep serving. It reports whether fn panicked.
func (e *Engine) protect(what string, fn func()) (panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			e.log.Error("recovered from a panic", "in", what, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			panicked = true
		}
	}()
	fn()
	return false
}

// maxBackoff is the longest a worker waits after failures in a row: a
// database back on the network is used again within seconds.
const maxBackoff = 5 * time.Second

// loopBackoff is a worker's wait after the nth failure in a row: poll,
// doubling, at most maxBackoff (or poll, when that is longer).
func loopBackoff(poll time.Duration, n int) time.Duration {
	d := poll << min(n-1, 10)
	return max(poll, min(d, maxBackoff))
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// loop claims and runs batches; when there is nothing due it waits for a
// wake-up, the next run time, or the poll interval, whichever comes first.
// After a partial batch it lingers (Options.Linger) so that the next one is
// fuller. The workers look for delayed jobs that are due (digest windows,
// delays) at most every resumeEvery between them.
func (e *Engine) loop(ctx context.Context) {
	failures := 0 // in a row: the worker backs off while the store fails
	for ctx.Err() == nil {
		var resumed, claimed int
		var err error
		resume := e.resumeTurn()
		if e.protect("running jobs", func() { resumed, claimed, err = e.claimAndRun(context.WithoutCancel(ctx), ctx, resume) }) {
			err = errPanicked
		}
		if err != nil {
			failures++
			wait := loopBackoff(e.o.Poll, failures)
			e.log.Error("running jobs", "err", err, "failuresInARow", failures, "retryIn", wait)
			sleep(ctx, wait)
			continue
		}
		failures = 0
		if claimed > 0 {
			if claimed < e.o.Batch && e.o.Linger > 0 {
				sleep(ctx, e.o.Linger)
			}
			continue
		}
		if resumed > 0 {
			continue
		}
		wait := e.o.Poll
		if next, err := e.o.Store.JobNextRunAt(ctx); err == nil && !next.IsZero() {
			wait = min(wait, max(next.Sub(e.now()), time.Millisecond))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-e.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// claimAndRun is one turn of a worker: it takes tokens for a batch (waiting
// while MaxInFlight jobs are in flight), claims that many jobs at most, and
// runs them. A batch with deliveries runs beside the worker, which goes on
// claiming while the providers answer; the others run in turn.
func (e *Engine) claimAndRun(ctx, run context.Context, resume bool) (int, int, error) {
	n := 0
	select {
	case e.inFlight <- struct{}{}:
		n = 1
	case <-run.Done():
		return 0, 0, nil
	}
	for n < e.o.Batch {
		select {
		case e.inFlight <- struct{}{}:
			n++
			continue
		default:
		}
		break
	}
	release := func(k int) {
		for range k {
			<-e.inFlight
		}
	}
	resumed, claimed, err := e.resumeAndClaim(ctx, resume, n)
	release(n - len(claimed))
	if err != nil || len(claimed) == 0 {
		return resumed, 0, err
	}
	if !hasDelivery(claimed) {
		defer release(len(claimed))
		return resumed, len(claimed), e.runBatch(ctx, claimed)
	}
	e.batches.Add(1)
	go func() {
		defer e.batches.Done()
		defer release(len(claimed))
		e.protect("running a batch of deliveries", func() {
			if err := e.runBatch(ctx, claimed); err != nil {
				e.log.Error("running jobs", "err", err)
			}
		})
	}()
	return resumed, len(claimed), nil
}

func hasDelivery(claimed []store.Claimed) bool {
	for _, c := range claimed {
		if runsBeside(c) {
			return true
		}
	}
	return false
}

// resumeEvery spaces the workers' looks for due delayed jobs.
const resumeEvery = 10 * time.Millisecond

// resumeTurn reports whether this worker's cycle looks for due delayed jobs.
func (e *Engine) resumeTurn() bool {
	now := time.Now().UnixNano()
	last := e.resumedAt.Load()
	return now-last >= int64(resumeEvery) && e.resumedAt.CompareAndSwap(last, now)
}

func (e *Engine) rescueLoop(ctx context.Context) {
	rescue := func() {
		if n, err := e.o.Store.JobRescue(ctx, e.now()); err != nil && ctx.Err() == nil {
			e.log.Warn("rescuing jobs", "err", err)
		} else if n > 0 {
			e.log.Info("requeued jobs whose lease expired", "count", n)
			e.Wake()
		}
	}
	e.protect("rescuing jobs", rescue)
	e.every(ctx, max(e.o.Lease/4, 100*time.Millisecond), "rescuing jobs", rescue)
}

// maintainLoop keeps the store's tables fit for their query plans.
func (e *Engine) maintainLoop(ctx context.Context) {
	e.every(ctx, e.o.Maintain, "maintaining tables", func() {
		start := time.Now()
		did, err := e.o.Store.Maintain(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			e.log.Warn("maintaining tables", "err", err)
		case len(did) > 0:
			e.log.Info("maintained tables", "statements", did, "ms", time.Since(start).Milliseconds())
		}
	})
}

// every runs fn, recovered from a panic as what (protect), every interval
// until ctx ends, the first time one interval after the call.
func (e *Engine) every(ctx context.Context, interval time.Duration, what string, fn func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		e.protect(what, fn)
	}
}

// RunOnce resumes the due delayed jobs, claims one batch of due jobs, runs
// them and writes the outcomes; it returns how many jobs it moved.
func (e *Engine) RunOnce(ctx context.Context) (int, error) {
	resumed, claimed, err := e.cycle(ctx, true)
	return resumed + claimed, err
}

// cycle is RunOnce, resuming delayed jobs only when resume is set; it
// returns how many jobs it resumed and how many it claimed.
func (e *Engine) cycle(ctx context.Context, resume bool) (int, int, error) {
	resumed, claimed, err := e.resumeAndClaim(ctx, resume, e.o.Batch)
	if err != nil || len(claimed) == 0 {
		return resumed, 0, err
	}
	return resumed, len(claimed), e.runBatch(ctx, claimed)
}

// resumeAndClaim resumes the due delayed jobs (when resume is set) and
// claims up to limit due jobs.
func (e *Engine) resumeAndClaim(ctx context.Context, resume bool, limit int) (int, []store.Claimed, error) {
	resumed := 0
	if resume {
		jobs, err := e.o.Store.JobResumeDue(ctx, e.now())
		if err != nil {
			return 0, nil, err
		}
		now := e.now()
		for _, j := range jobs {
			e.done(j, now)
		}
		resumed = len(jobs)
	}
	claimed, err := e.o.Store.JobClaim(ctx, limit, e.o.Lease, e.now())
	return resumed, claimed, err
}

// runBatch runs claimed jobs and writes their outcomes.
func (e *Engine) runBatch(ctx context.Context, claimed []store.Claimed) error {
	outcomes := make([]store.JobOutcome, len(claimed))
	var joins []*store.DigestJoinParams
	var joinAt []int
	// Deliveries wait on providers: they run concurrently (bounded per
	// integration), the other steps in turn. A delivery still waiting for
	// its integration's call slot, or still calling, when three quarters of
	// the lease are gone gives up with a temporary failure (the job runs
	// again later): a slow provider never holds a job past its lease, where
	// another worker would run it a second time.
	b := &batchIntegrations{}
	var wg sync.WaitGroup
	runCtx, cancel := context.WithTimeout(ctx, e.o.Lease*3/4)
	defer cancel()
	joinOf := make([]*store.DigestJoinParams, len(claimed))
	for i, c := range claimed {
		if runsBeside(c) || c.Job.Type == store.JobFanout {
			jctx := ctx
			if runsBeside(c) {
				jctx = runCtx
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				// A synced workflow's digest step returns its join too.
				outcomes[i], joinOf[i] = e.runGuarded(jctx, c, b)
			}()
			continue
		}
		outcomes[i], joinOf[i] = e.runGuarded(ctx, c, b)
	}
	wg.Wait()
	for i, join := range joinOf {
		if join != nil {
			joins, joinAt = append(joins, join), append(joinAt, i)
		}
	}
	e.joinDigests(ctx, outcomes, joins, joinAt)
	applied, err := e.o.Store.JobFinish(ctx, outcomes, e.now())
	if err != nil {
		// Nothing of the batch was written. One outcome the store refuses
		// must not hold back the others: write them one at a time.
		e.log.Error("writing a batch of job outcomes; writing them one by one", "count", len(outcomes), "err", err)
		if applied, err = e.finishEach(ctx, outcomes, err); err != nil {
			return err
		}
	}
	// The store wrote the webhook outbox entries of the messages it wrote
	// (message.sent, message.failed) in the same transaction.
	now := e.now()
	for i, ok := range applied {
		if !ok {
			e.log.WarnContext(jobContext(ctx, outcomes[i].Job), "dropped the outcome of a job whose lease was lost")
			continue
		}
		e.finished(ctx, outcomes[i], now)
	}
	return nil
}

// finishEach writes outcomes one at a time; an outcome the store refuses is
// replaced by a retry of its job with backoff. If even that cannot be
// written, the job's lease expires and the rescue loop queues it. It fails
// only when no outcome could be written.
func (e *Engine) finishEach(ctx context.Context, outcomes []store.JobOutcome, cause error) ([]bool, error) {
	if errors.Is(cause, store.ErrUnavailable) {
		// The database did not answer: one write per outcome would wait
		// as long again for each. The leases expire and the rescue loop
		// queues the jobs; what they wrote is written once (messages
		// are keyed by job) and providers get the same idempotency keys.
		return nil, cause
	}
	applied := make([]bool, len(outcomes))
	var lastErr error
	written := 0
	for i, o := range outcomes {
		ok, err := []bool(nil), cause
		if len(outcomes) > 1 { // a batch of one was just refused
			ok, err = e.o.Store.JobFinish(ctx, []store.JobOutcome{o}, e.now())
		}
		if err != nil {
			e.log.ErrorContext(jobContext(ctx, o.Job), "writing a job outcome; retrying the job", "err", err)
			ok, err = e.o.Store.JobFinish(ctx, []store.JobOutcome{e.retry(store.JobOutcome{Job: o.Job}, err)}, e.now())
		}
		if err != nil {
			if lastErr = err; errors.Is(err, store.ErrUnavailable) {
				break
			}
			continue
		}
		written++
		applied[i] = len(ok) == 1 && ok[0]
	}
	if written == 0 && lastErr != nil {
		return nil, lastErr
	}
	return applied, nil
}

// runGuarded runs one job; a panic fails that job alone, with its id in the
// log, and the batch goes on.
func (e *Engine) runGuarded(ctx context.Context, c store.Claimed, b *batchIntegrations) (o store.JobOutcome, join *store.DigestJoinParams) {
	ctx = jobContext(ctx, c.Job)
	defer func() {
		if p := recover(); p != nil {
			e.log.ErrorContext(ctx, "a step panicked; its job fails", "notificationId", c.Job.NotificationID,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			o, join = e.fail(store.JobOutcome{Job: c.Job}, "Internal", "The step failed unexpectedly; nothing was sent"), nil
			if c.Job.Type == store.JobFanout {
				o = e.fanoutFailed(o, "The fan-out failed unexpectedly")
			}
		}
	}()
	return e.run(ctx, c, b)
}

// retry schedules a job that failed transiently to run again after an
// exponential backoff, or fails it once it has used its attempts.
func (e *Engine) retry(o store.JobOutcome, cause error) store.JobOutcome {
	if o.Job.Attempts >= e.o.MaxAttempts {
		return e.fail(o, "Internal", fmt.Sprintf("Gave up after %d attempts: %v", o.Job.Attempts, cause))
	}
	wait := backoff(o.Job.Attempts)
	o.Status, o.RunAt, o.Error, o.Messages, o.ContinueWorkflow, o.SkipRest, o.Handled = store.JobQueued, e.now().Add(wait), cause.Error(), nil, false, false, false
	o.Details = []store.ExecutionDetail{e.detail(o, "Warning", "Internal",
		fmt.Sprintf("Temporary failure, retrying in %s: %v", wait.Round(time.Millisecond), cause), nil)}
	return o
}

// backoff is the wait before the retry that follows attempt n (1-based):
// exponential from one second with jitter, at most five minutes.
func backoff(attempt int) time.Duration {
	d := min(time.Second<<min(max(attempt-1, 0), 9), 5*time.Minute)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}
