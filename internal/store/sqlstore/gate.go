package sqlstore

import (
	"context"
	"slices"
	"sync"
)

// writeGate orders the write transactions of one process: the pipeline's
// (workers resuming closed windows, claiming and finishing jobs, placing
// digests) ahead of the API's. Under a flood of triggers a FIFO writer
// served the workers one transaction in nine, and digests whose windows had
// closed waited a minute behind new events. With the gate, a waiting
// pipeline transaction goes first — but never more than highRun times in a
// row while API writes wait, so a large backlog cannot starve the API.
//
// On SQLite the gate holds the single writer's one slot (pipeline and API
// alike take it). On PostgreSQL pipeline transactions never wait for the
// gate; API write transactions take one of slots (twice the CPUs), so a
// burst of API writes cannot crowd the workers' backends off the server.
type writeGate struct {
	mu      sync.Mutex
	slots   int
	used    int
	shared  bool // pipeline transactions take slots too
	highRun int  // pipeline grants in a row while API writes waited
	high    []chan struct{}
	low     []chan struct{}
}

const maxHighRun = 3

// acquire waits for a slot; release must be called once it is done.
func (g *writeGate) acquire(ctx context.Context, pipeline bool) error {
	if g == nil || (pipeline && !g.shared) {
		return nil
	}
	g.mu.Lock()
	if g.used < g.slots && len(g.high) == 0 && len(g.low) == 0 {
		g.used++
		g.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	if pipeline {
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

// release frees a slot taken by acquire(pipeline), handing it to the next
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
