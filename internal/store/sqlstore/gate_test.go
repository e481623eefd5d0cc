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

// TestWriteGatePipelineFirst: on SQLite's single slot, waiting pipeline
// transactions go before waiting API ones, three in a row at most.
func TestWriteGatePipelineFirst(t *testing.T) {
	g := &writeGate{slots: 1, shared: true}
	require.NoError(t, g.acquire(context.Background(), false)) // an API write holds the writer
	done := queueGate(t, g, []string{"A1", "P1", "P2", "P3", "P4", "A2", "P5"})
	g.release(false)
	require.Equal(t, []string{"P1", "P2", "P3", "A1", "P4", "P5", "A2"}, done())
	require.Zero(t, g.used)
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

// TestWriteGatePostgres: pipeline transactions never wait; API ones take
// the slots.
func TestWriteGatePostgres(t *testing.T) {
	g := &writeGate{slots: 2}
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
