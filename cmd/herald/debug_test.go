package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/metrics"
)

func TestDebugListener(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	met := metrics.New(metrics.Options{})
	addr, err := serveDebug(ctx, "127.0.0.1:0", slog.New(slog.DiscardHandler), met.Handler())
	require.NoError(t, err)
	res, err := http.Get("http://" + addr + "/debug/pprof/")
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.True(t, strings.Contains(string(body), "goroutine"), "the profiles index")
	res, err = http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, string(body), "\ngo_goroutines ", "the metrics, without a token")
	cancel()
	require.Eventually(t, func() bool {
		_, err := http.Get("http://" + addr + "/debug/pprof/")
		return err != nil
	}, 5*time.Second, 20*time.Millisecond, "closed with the server's context")
}
