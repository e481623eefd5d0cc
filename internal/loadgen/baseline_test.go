package loadgen_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/loadgen"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestBaseline runs the baseline for a second on a fresh store of each
// kind: every transaction commits, and the messages and inbox counters it
// leaves are one per delivery, as Herald's would be.
func TestBaseline(t *testing.T) {
	t.Parallel()
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			a := &app.App{Store: testdb.Open(t, kind), Keys: testdb.Keys(t)}
			r, err := loadgen.Baseline(context.Background(), a, loadgen.BaselineConfig{Clients: 8, Duration: time.Second, Subscribers: 30})
			require.NoError(t, err)
			var out bytes.Buffer
			require.NoError(t, r.Print(&out))
			t.Log("\n" + out.String())
			require.Zero(t, r.ErrorCount(), out.String())
			require.Equal(t, kind, r.Dialect)
			require.Positive(t, r.Messages)
			// Each client claims after its own trigger, so on SQLite's one
			// writer a job is always due; on PostgreSQL a claim's snapshot
			// may see only jobs that others claimed since.
			if kind == "sqlite" {
				require.Zero(t, r.EmptyClaims)
			}
			require.Equal(t, r.Triggers, r.Messages+r.EmptyClaims)
			require.Equal(t, r.Messages, r.StoredMessages)
			require.Equal(t, r.Messages, r.Counted)
			require.Positive(t, r.MessagesPerSecond)
			require.InDelta(t, 4*r.TriggersPerSecond+5*r.MessagesPerSecond, r.RowsPerSecond, 0.001*r.RowsPerSecond)
			require.Positive(t, r.TriggerTx.P99)
			require.Positive(t, r.DeliveryTx.P99)
			require.Contains(t, out.String(), "baseline messages/s")

			// The jobs, notifications and details are what Herald's would be.
			db := a.Store.Reader()
			count := func(q string) int {
				var n int
				require.NoError(t, db.QueryRow(q).Scan(&n))
				return n
			}
			require.Equal(t, r.Messages, count("SELECT count(*) FROM jobs WHERE status = 'completed'"))
			require.Equal(t, r.Triggers, count("SELECT count(*) FROM notifications"))
			require.Equal(t, r.Triggers+r.Messages, count("SELECT count(*) FROM execution_details"))
			require.Equal(t, r.Messages, count("SELECT count(*) FROM messages m JOIN jobs j ON j.id = m.job_id"+
				" AND j.notification_id = m.notification_id AND j.subscriber_id = m.subscriber_id"))
		})
	}
}

// TestBaselineRefusesAStoreWithData checks that the baseline does not write
// its rows into a store that is in use.
func TestBaselineRefusesAStoreWithData(t *testing.T) {
	t.Parallel()
	a := &app.App{Store: testdb.Open(t, "sqlite"), Keys: testdb.Keys(t)}
	_, err := a.Bootstrap(context.Background())
	require.NoError(t, err)
	_, err = loadgen.Baseline(context.Background(), a, loadgen.BaselineConfig{Clients: 1, Duration: time.Millisecond})
	require.ErrorIs(t, err, loadgen.ErrNotEmpty)
}

// TestGroupedBaseline runs the grouped baseline for a second on a fresh
// store of each kind: every trigger of every group is stored with its
// completed job, both details, its message and its count.
func TestGroupedBaseline(t *testing.T) {
	t.Parallel()
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			a := &app.App{Store: testdb.Open(t, kind), Keys: testdb.Keys(t)}
			r, err := loadgen.Baseline(context.Background(), a, loadgen.BaselineConfig{Clients: 4, Duration: time.Second,
				Subscribers: 30, Group: 8})
			require.NoError(t, err)
			var out bytes.Buffer
			require.NoError(t, r.Print(&out))
			t.Log("\n" + out.String())
			require.Zero(t, r.ErrorCount(), out.String())
			require.Contains(t, out.String(), "8 triggers with their in-app deliveries a transaction")
			require.Positive(t, r.Messages)
			require.Zero(t, r.Messages%8, "whole groups")
			require.Equal(t, r.Triggers, r.Messages)
			require.Equal(t, r.Messages, r.StoredMessages)
			require.Equal(t, r.Messages, r.Counted)
			require.InDelta(t, 7*r.TriggersPerSecond, r.RowsPerSecond, 0.001*r.RowsPerSecond)

			db := a.Store.Reader()
			count := func(q string) int {
				var n int
				require.NoError(t, db.QueryRow(q).Scan(&n))
				return n
			}
			require.Equal(t, r.Triggers, count("SELECT count(*) FROM transactions"))
			require.Equal(t, r.Triggers, count("SELECT count(*) FROM notifications"))
			require.Equal(t, r.Triggers, count("SELECT count(*) FROM jobs WHERE status = 'completed'"))
			require.Equal(t, 2*r.Triggers, count("SELECT count(*) FROM execution_details"))
			require.Equal(t, r.Messages, count("SELECT count(*) FROM messages m JOIN jobs j ON j.id = m.job_id"+
				" AND j.notification_id = m.notification_id AND j.subscriber_id = m.subscriber_id"))
		})
	}
}
