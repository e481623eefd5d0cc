package sqlstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestMaintainAnalyzesWithoutAutovacuum: on a PostgreSQL server whose
// autovacuum is off, Maintain analyzes a table that grew past autovacuum's
// threshold, once; with autovacuum on it leaves the tables to the server.
// SQLite has nothing to maintain.
func TestMaintainAnalyzesWithoutAutovacuum(t *testing.T) {
	t.Parallel()
	lite := testdb.Open(t, "sqlite")
	did, err := lite.Maintain(t.Context())
	require.NoError(t, err)
	require.Empty(t, did)

	db := testdb.Open(t, "postgres")
	tn := setup(t, db)
	for i := range 300 {
		upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: fmt.Sprintf("s%03d", i), Now: tn.Clock.Now()})
	}
	var autovacuum string
	require.NoError(t, db.Reader().QueryRow("SELECT current_setting('autovacuum')").Scan(&autovacuum))
	if autovacuum == "on" {
		did, err := db.Maintain(t.Context())
		require.NoError(t, err)
		require.Empty(t, did, "autovacuum is on: the server maintains its tables")
		return
	}
	// The server's table statistics trail commits by up to a second: wait
	// until they count every insert, so that one ANALYZE covers them all.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var inserted int64
		require.NoError(t, db.Reader().QueryRow("SELECT coalesce(sum(n_tup_ins), 0) FROM pg_stat_user_tables"+
			" WHERE schemaname = current_schema() AND relname = 'subscribers'").Scan(&inserted))
		if inserted >= 300 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the statistics never counted the inserts (%d)", inserted)
		time.Sleep(100 * time.Millisecond)
	}
	for !slices.ContainsFunc(did, func(s string) bool { return s == "ANALYZE subscribers" || s == "VACUUM (ANALYZE) subscribers" }) {
		require.True(t, time.Now().Before(deadline), "subscribers never analyzed; Maintain did %v", did)
		time.Sleep(200 * time.Millisecond)
		did, err = db.Maintain(t.Context())
		require.NoError(t, err)
	}
	var analyzed bool
	require.NoError(t, db.Reader().QueryRowContext(context.Background(), "SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables"+
		" WHERE schemaname = current_schema() AND relname = 'subscribers'").Scan(&analyzed))
	require.True(t, analyzed)
	did, err = db.Maintain(t.Context())
	require.NoError(t, err)
	require.NotContains(t, did, "ANALYZE subscribers", "analyzed again with nothing changed")
}
