package logctx_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/logctx"
)

func TestHandlerAddsTheContextsFields(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := logctx.Logger(slog.New(slog.NewTextHandler(&buf, nil)))
	require.Same(t, log, logctx.Logger(log), "wrapping twice adds the fields twice")

	f := &logctx.Fields{RequestID: "req-1"}
	ctx := logctx.With(context.Background(), f)
	f.EnvironmentID, f.TransactionID = "env-1", "tx-1" // set after the context was made
	log.InfoContext(ctx, "one", "a", 1)
	require.Contains(t, buf.String(), "msg=one a=1 requestId=req-1 environmentId=env-1 transactionId=tx-1\n")
	require.NotContains(t, buf.String(), "jobId")

	buf.Reset()
	log.With("k", "v").InfoContext(logctx.With(context.Background(), &logctx.Fields{JobID: "job-1"}), "two")
	require.Contains(t, buf.String(), "msg=two k=v jobId=job-1\n")

	buf.Reset()
	log.Info("three")
	require.Contains(t, buf.String(), "msg=three\n", "no context, no fields")
}
