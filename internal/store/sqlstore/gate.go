package sqlstore

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// writeGate orders the write transactions of one process when the workers
// run late. Urgent, for urgentFor after a sign of it: a worker resumed a
// closed digest window or a finished delay more than lagThreshold after its
// time, or, on SQLite, claimed any job that long after it was due. While
// urgent, the pipeline's transactions (resuming windows, claiming and
// finishing jobs, placing digests) go ahead of the API's — never more than
// maxHighRun in a row while API writes wait, so a large backlog cannot
// starve the API. Under a flood of triggers a FIFO writer had served the
// workers one transaction in nine, and digests whose windows had closed
// waited a minute behind new events. Otherwise writes are served in order.
// On PostgreSQL, urgency from every queued job that waited cost a fifth of
// the triggers/s (the API throttled while the workers kept up) and bought
// nothing; SQLite's single writer needs it (without it the step after a
// closed window waited behind triggers: p99 lateness 1.9 s instead of
// 0.6 s) and keeps its triggers/s.
//
// On SQLite the gate holds the single writer's one slot (pipeline and API
// alike take it). On PostgreSQL pipeline transactions never wait; while
// urgent, API write transactions take one of slots (twice the CPUs), so a
// burst of API writes cannot crowd the workers' backends off the server.
type writeGate struct {
	mu      sync.Mutex
	slots   int
	used    int
	shared  bool // pipeline transactions take slots too
	highRun int  // pipeline grants in a row while API writes waited
	high    []chan struct{}
	low     []chan struct{}
	// urgentUntil (Unix ms) is when the latest sign of lagging workers expires.
	urgentUntil atomic.Int64
	now         func() time.Time
}

const (
	maxHighRun = 3
	// lagThreshold is how long work may wait once due before the workers'
	// writes go first, and urgentFor how long one sign of it counts.
	lagThreshold = 100 * time.Millisecond
	urgentFor    = time.Second
)

// noteDue records that a worker resumed timed work due at due.
func (g *writeGate) noteDue(now, due time.Time) {
	if g != nil && now.Sub(due) > lagThreshold {
		g.urgentUntil.Store(g.clock().Add(urgentFor).UnixMilli())
	}
}

func (g *writeGate) clock() time.Time {
	if g.now != nil {
		return g.now()
	}
	return time.Now()
}

func (g *writeGate) urgent() bool { return g.clock().UnixMilli() < g.urgentUntil.Load() }

// acquire waits for a slot; release(pipeline) must follow once done.
func (g *writeGate) acquire(ctx context.Context, pipeline bool) error {
	if g == nil || (pipeline && !g.shared) {
		return nil
	}
	urgent := g.urgent()
	g.mu.Lock()
	free := g.used < g.slots || (!g.shared && !urgent)
	if free && len(g.high) == 0 && len(g.low) == 0 {
		g.used++
		g.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	if pipeline && urgent {
		g.high = append(g.high, ch)
	} else {
		g.low = append(g.low, ch)
	}
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		waiting := false
		for _, q := range []*[]chan struct{}{&g.high, &g.low} {
			if i := slices.Index(*q, ch); i >= 0 {
				*q = slices.Delete(*q, i, i+1)
				waiting = true
			}
		}
		g.mu.Unlock()
		if !waiting { // handed a slot as ctx ended: pass it on
			g.release(pipeline)
		}
		return ctx.Err()
	}
}

// release frees the slot taken by acquire(pipeline), handing it to the next
// waiter.
func (g *writeGate) release(pipeline bool) {
	if g == nil || (pipeline && !g.shared) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var next chan struct{}
	switch {
	case len(g.high) > 0 && (len(g.low) == 0 || g.highRun < maxHighRun):
		next, g.high = g.high[0], g.high[1:]
		if len(g.low) > 0 {
			g.highRun++
		}
	case len(g.low) > 0:
		next, g.low = g.low[0], g.low[1:]
		g.highRun = 0
	}
	if next == nil {
		g.used--
		return
	}
	close(next) // the slot passes to next
}
