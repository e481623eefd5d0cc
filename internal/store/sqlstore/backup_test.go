package sqlstore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestSnapshot: on SQLite a snapshot is a checked copy that holds what was
// committed and opens only with the store's secret; PostgreSQL refuses
// (its backups are pg_dump's), writing nothing.
func TestSnapshot(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		tn := setup(t, db)
		require.NoError(t, db.SecretCheck(ctx))
		out := filepath.Join(t.TempDir(), "snapshot.db")
		snap, err := db.Snapshot(ctx, out, testdb.Keys(t))
		if db.Dialect() == "postgres" {
			require.ErrorIs(t, err, sqlstore.ErrSnapshotUnsupported)
			require.ErrorContains(t, err, "pg_dump")
			require.NoFileExists(t, out)
			return
		}
		require.NoError(t, err)
		require.True(t, snap.SecretChecked)
		require.Positive(t, snap.SchemaVersion)

		b, err := os.ReadFile(out)
		require.NoError(t, err)
		copyPath := filepath.Join(t.TempDir(), "herald.db")
		require.NoError(t, os.WriteFile(copyPath, b, 0o600))
		reopened, err := sqlstore.OpenSQLite(ctx, copyPath, testdb.Keys(t))
		require.NoError(t, err)
		defer reopened.Close()
		require.NoError(t, reopened.SecretCheck(ctx))
		env, err := reopened.EnvironmentGetByName(ctx, tn.EnvA.Name)
		require.NoError(t, err)
		require.Equal(t, tn.EnvA.ID, env.ID, "the copy holds what was committed")

		again, err := sqlstore.CheckSnapshot(ctx, out, nil)
		require.NoError(t, err)
		require.Equal(t, snap.SchemaVersion, again.SchemaVersion)
		require.False(t, again.SecretChecked)
		other, err := secret.Derive("another-secret-0123456789")
		require.NoError(t, err)
		_, err = sqlstore.CheckSnapshot(ctx, out, other)
		require.ErrorIs(t, err, sqlstore.ErrSecretMismatch)

		_, err = db.Snapshot(ctx, out, nil)
		require.ErrorContains(t, err, "exists already")

		damaged := filepath.Join(t.TempDir(), "damaged.db")
		b[len(b)/2] ^= 0xff
		b[len(b)/3] ^= 0xff
		require.NoError(t, os.WriteFile(damaged, b[:len(b)-4096], 0o600))
		_, err = sqlstore.CheckSnapshot(ctx, damaged, nil)
		require.ErrorIs(t, err, sqlstore.ErrNotSnapshot)
		require.Equal(t, []string{"damaged.db"}, dirNames(t, filepath.Dir(damaged)), "checking writes nothing beside the file")

		_, err = sqlstore.SnapshotSQLite(ctx, filepath.Join(t.TempDir(), "none.db"), filepath.Join(t.TempDir(), "x.db"), nil)
		require.ErrorContains(t, err, "no Herald database")
	})
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}
