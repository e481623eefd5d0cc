package sqlstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// migrationNames lists the migration files of a dialect.
func migrationNames(t *testing.T, dialect string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("migrations", dialect))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") {
			names = append(names, e.Name())
		}
	}
	require.NotEmpty(t, names)
	return names
}

// TestMigrationsMatch: both dialects have the same numbered migrations, so a
// schema version means the same in both.
func TestMigrationsMatch(t *testing.T) {
	t.Parallel()
	require.Equal(t, migrationNames(t, "sqlite"), migrationNames(t, "postgres"))
}

type migrationRow struct {
	Version   int
	AppliedAt int64
}

func appliedMigrations(t *testing.T, db *sqlstore.DB) []migrationRow {
	t.Helper()
	rows, err := db.Reader().QueryContext(t.Context(), "SELECT version, applied_at FROM schema_migrations ORDER BY version")
	require.NoError(t, err)
	defer rows.Close()
	var out []migrationRow
	for rows.Next() {
		var r migrationRow
		require.NoError(t, rows.Scan(&r.Version, &r.AppliedAt))
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}

func TestMigrateSQLiteTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "herald.db")
	db, err := sqlstore.OpenSQLite(ctx, path, testdb.Keys(t))
	require.NoError(t, err)
	tn := setup(t, db)
	upsert(t, db, store.SubscriberUpsertParams{Scope: tn.A, SubscriberID: "kept", Now: tn.Clock.Now()})
	first := appliedMigrations(t, db)
	require.Len(t, first, len(migrationNames(t, "sqlite")), "every migration applied once")
	require.NoError(t, db.Close())

	db, err = sqlstore.OpenSQLite(ctx, path, testdb.Keys(t))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	require.Equal(t, first, appliedMigrations(t, db), "a second open applies nothing")
	_, err = db.SubscriberGet(ctx, tn.A, "kept")
	require.NoError(t, err, "data survives a reopen")
}

func TestMigratePostgresConcurrently(t *testing.T) {
	t.Parallel()
	url := testdb.NewPostgresSchema(t)
	const n = 3
	dbs := make([]*sqlstore.DB, n)
	errs := parallel(n, func(i int) error {
		var err error
		dbs[i], err = sqlstore.OpenPostgres(context.Background(), url, testdb.Keys(t))
		return err
	})
	for i := range n {
		require.NoError(t, errs[i])
		t.Cleanup(func() { dbs[i].Close() })
	}
	first := appliedMigrations(t, dbs[0])
	require.Len(t, first, len(migrationNames(t, "postgres")), "every migration applied once")
	require.NoError(t, dbs[1].Ping(t.Context()))
	setup(t, dbs[1]) // the schema works

	again, err := sqlstore.OpenPostgres(context.Background(), url, testdb.Keys(t))
	require.NoError(t, err)
	t.Cleanup(func() { again.Close() })
	require.Equal(t, first, appliedMigrations(t, again), "a later open applies nothing")
}
