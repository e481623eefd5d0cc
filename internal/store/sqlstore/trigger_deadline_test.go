package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// TestTriggerGroupOutOfTime: a trigger whose group runs out of time (the
// callers' earliest deadline) waiting for a store that does not answer —
// here SQLite's write slot, held by another writer — fails as the store
// being unavailable (the API's 503), not with a bare deadline error (a
// 500 for a caller whose own deadline had not passed yet).
func TestTriggerGroupOutOfTime(t *testing.T) {
	t.Parallel()
	f := newGateFixture(t)
	require.NoError(t, f.db.gate.acquire(t.Context(), false))
	released := false
	release := func() {
		if !released {
			released = true
			f.db.gate.release(false)
		}
	}
	defer release()

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err := f.db.Trigger(ctx, f.trigger(id.New(), false, f.now()))
	require.ErrorIs(t, err, store.ErrUnavailable)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	release()
	_, err = f.db.Trigger(t.Context(), f.trigger(id.New(), false, f.now()))
	require.NoError(t, err, "the store writes again once it answers")
}
