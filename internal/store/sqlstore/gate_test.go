package sqlstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// queueGate starts a waiter for each name (in order, each queued before the
// next starts) and returns the order in which they got the slot.
func queueGate(t *testing.T, g *writeGate, names []string) func() []string {
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	for _, name := range names {
		pipeline := name[0] == 'P'
		before := len(g.high) + len(g.low)
		wg.Add(1)
		go func() {
			defer wg.Done()
			require.NoError(t, g.acquire(context.Background(), pipeline))
			mu.Lock()
			got = append(got, name)
			mu.Unlock()
			g.release(pipeline)
		}()
		require.Eventually(t, func() bool {
			g.mu.Lock()
			defer g.mu.Unlock()
			return len(g.high)+len(g.low) == before+1
		}, time.Second, time.Millisecond)
	}
	return func() []string { wg.Wait(); return got }
}

// urgentGate is a gate whose workers have just taken work due long ago.
func urgentGate(g *writeGate) *writeGate {
	now := time.Now()
	g.noteDue(now, now.Add(-time.Minute))
	return g
}

// TestWriteGatePipelineFirst: on SQLite's single slot, while the workers lag,
// waiting pipeline transactions go before waiting API ones, three in a row at
// most.
func TestWriteGatePipelineFirst(t *testing.T) {
	g := urgentGate(&writeGate{slots: 1, shared: true})
	require.True(t, g.urgent())
	require.NoError(t, g.acquire(context.Background(), false)) // an API write holds the writer
	done := queueGate(t, g, []string{"A1", "P1", "P2", "P3", "P4", "A2", "P5"})
	g.release(false)
	require.Equal(t, []string{"P1", "P2", "P3", "A1", "P4", "P5", "A2"}, done())
	require.Zero(t, g.used)
}

// TestWriteGateInOrder: while the workers keep up (work taken within the
// lag threshold), writes are served in the order they came.
func TestWriteGateInOrder(t *testing.T) {
	g := &writeGate{slots: 1, shared: true}
	now := time.Now()
	g.noteDue(now, now.Add(-lagThreshold/2))
	require.False(t, g.urgent())
	require.NoError(t, g.acquire(context.Background(), true))
	done := queueGate(t, g, []string{"A1", "P1", "A2", "P2"})
	g.release(true)
	require.Equal(t, []string{"A1", "P1", "A2", "P2"}, done())
	require.Zero(t, g.used)
}

// TestWriteGateUrgencyExpires: one sign of lag counts for urgentFor.
func TestWriteGateUrgencyExpires(t *testing.T) {
	clock := time.Now()
	g := &writeGate{slots: 1, shared: true, now: func() time.Time { return clock }}
	g.noteDue(clock, clock.Add(-time.Second))
	require.True(t, g.urgent())
	clock = clock.Add(urgentFor + time.Millisecond)
	require.False(t, g.urgent())
}

// TestWriteGateCancel: a waiter whose context ends leaves the queue and the
// slot goes to the next.
func TestWriteGateCancel(t *testing.T) {
	g := &writeGate{slots: 1, shared: true}
	require.NoError(t, g.acquire(context.Background(), true))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- g.acquire(ctx, false) }()
	require.Eventually(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.low) == 1 }, time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	g.release(true)
	require.Zero(t, g.used)
	require.Empty(t, g.low)
}

// TestWriteGatePostgres: pipeline transactions never wait; API ones are
// limited to the slots only while the workers lag.
func TestWriteGatePostgres(t *testing.T) {
	g := &writeGate{slots: 2}
	for range 5 {
		require.NoError(t, g.acquire(context.Background(), false), "no limit while the workers keep up")
	}
	for range 5 {
		g.release(false)
	}
	urgentGate(g)
	require.NoError(t, g.acquire(context.Background(), false))
	require.NoError(t, g.acquire(context.Background(), false))
	require.NoError(t, g.acquire(context.Background(), true), "a pipeline transaction does not wait for API slots")
	g.release(true)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, g.acquire(ctx, false), context.DeadlineExceeded, "a third API write waits")
	g.release(false)
	require.NoError(t, g.acquire(context.Background(), false))
	require.Equal(t, 2, g.used)
}
