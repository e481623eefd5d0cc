package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store"
)

func TestLimit(t *testing.T) {
	// No deadline: the limit is set.
	ctx, cancel := limit(context.Background(), time.Second)
	defer cancel()
	dl, ok := ctx.Deadline()
	require.True(t, ok)
	require.InDelta(t, time.Second, time.Until(dl), float64(100*time.Millisecond))

	// An earlier deadline of the caller wins.
	early, cancelEarly := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelEarly()
	ctx, cancel = limit(early, time.Second)
	defer cancel()
	require.Equal(t, early, ctx)

	// A later one is cut to the limit.
	late, cancelLate := context.WithTimeout(context.Background(), time.Hour)
	defer cancelLate()
	ctx, cancel = limit(late, time.Second)
	defer cancel()
	dl, _ = ctx.Deadline()
	require.Less(t, time.Until(dl), 2*time.Second)

	// Without limits: as the caller says.
	free := withoutLimits(context.Background())
	ctx, cancel = limit(free, time.Second)
	defer cancel()
	_, ok = ctx.Deadline()
	require.False(t, ok)
}

func TestLimitedCheck(t *testing.T) {
	var c limitedConnector
	fired := make(chan struct{}, 4)
	c.onTimeout = func() { fired <- struct{}{} }
	bg := context.Background()

	// A statement's own error (the server answered) stays as it is.
	pgErr := &pgconn.PgError{Code: "23505", Message: "duplicate key"}
	require.Equal(t, error(pgErr), c.check(bg, bg, pgErr))

	// The limit cut it: unavailable, and the idle connections go.
	lctx, cancel := context.WithTimeout(bg, time.Nanosecond)
	defer cancel()
	<-lctx.Done()
	err := c.check(bg, lctx, fmt.Errorf("read: %w", context.DeadlineExceeded))
	require.ErrorIs(t, err, store.ErrUnavailable)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	select {
	case <-fired:
	case <-time.After(time.Second):
		t.Fatal("onTimeout did not run")
	}
	// At most once a second.
	c.check(bg, lctx, context.DeadlineExceeded) //nolint:errcheck
	select {
	case <-fired:
		t.Fatal("onTimeout ran twice within a second")
	case <-time.After(50 * time.Millisecond):
	}

	// The caller's own cancellation is the caller's.
	gone, cancelGone := context.WithCancel(bg)
	cancelGone()
	err = c.check(gone, gone, context.Canceled)
	require.False(t, errors.Is(err, store.ErrUnavailable))

	// A failed connection is unavailability.
	for _, e := range []error{io.EOF, io.ErrUnexpectedEOF, &net.OpError{Op: "read", Err: errors.New("connection reset")},
		&pgconn.PgError{Code: "57P01"}, &pgconn.PgError{Code: "08006"}} {
		require.ErrorIs(t, c.check(bg, bg, e), store.ErrUnavailable, "%v", e)
	}
}
