package loadgen_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/loadgen"
	"github.com/herald-notify/herald/internal/testdb"
)

// newHerald serves a fresh store of kind over HTTP with its workers, as
// `herald serve` wires them, and returns its URL and development API key.
func newHerald(t *testing.T, kind string) (string, string) {
	t.Helper()
	db := testdb.Open(t, kind)
	a := &app.App{Store: db, Keys: testdb.Keys(t)}
	first, err := a.Bootstrap(context.Background())
	require.NoError(t, err)
	log := slog.New(slog.DiscardHandler)
	eng := engine.New(engine.Options{Store: db, Logger: log, Listen: db.ListenJobs})
	srv := httptest.NewServer(httpapi.New(httpapi.Options{Store: db, Keys: a.Keys, Logger: log, OnTrigger: eng.Wake}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		eng.Run(ctx)
	}()
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-done
	})
	return srv.URL, first.Keys["development"]
}

// TestRunAgainstHerald runs the load tool for two seconds against a real
// server on each store: every answer is right, every accepted trigger's
// message reaches its feed, and each measure has values.
func TestRunAgainstHerald(t *testing.T) {
	t.Parallel()
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			url, key := newHerald(t, kind)
			r, err := loadgen.Run(context.Background(), loadgen.Config{URL: url, APIKey: key, Subscribers: 50, Clients: 4,
				Duration: 2 * time.Second, Probes: 1, FeedDuration: time.Second, DeliveryTimeout: 30 * time.Second, PID: os.Getpid()})
			require.NoError(t, err)
			var out bytes.Buffer
			require.NoError(t, r.Print(&out))
			t.Log("\n" + out.String())
			require.Zero(t, r.Errors(), out.String())
			require.Positive(t, r.Accepted)
			require.Equal(t, r.Sent, r.Accepted)
			require.Equal(t, r.Accepted, r.Delivered)
			require.Positive(t, r.TriggersPerSecond)
			require.Positive(t, r.DeliveredPerSecond)
			require.GreaterOrEqual(t, r.DeliveredIn, 2*time.Second, "from the first trigger to the last message")
			require.Positive(t, r.TriggerLatency.N)
			require.Positive(t, r.FeedLatency.N, "the probe's triggers reached the feed")
			require.Positive(t, r.FeedLatency.P50)
			require.Positive(t, r.FeedReads)
			require.Positive(t, r.FeedRead.P99)
			require.NotNil(t, r.Memory)
			require.NoError(t, r.Memory.Err)
			require.Positive(t, r.Memory.HWM)
			require.Contains(t, out.String(), "delivered messages/s")
		})
	}
}
