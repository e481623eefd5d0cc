package sqlstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestCheckpointsBesideTheWriter: the writer's commits do not checkpoint
// SQLite's write-ahead log (wal_autocheckpoint is 0 on its connection); the
// checkpointer copies the log into the database file soon after, with no
// further commit.
func TestCheckpointsBesideTheWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "herald.db")
	db, err := sqlstore.OpenSQLite(ctx, path, testdb.Keys(t))
	require.NoError(t, err)
	defer db.Close()

	var every int
	require.NoError(t, db.Writer().QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&every))
	require.Zero(t, every, "the writer's commits never checkpoint")

	before := fileSize(t, path)
	tx, err := db.Writer().BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, "CREATE TABLE checkpoint_probe (v TEXT)")
	require.NoError(t, err)
	row := strings.Repeat("x", 1000)
	for range 4000 { // ~4 MB, ~1,000 pages of log: past the automatic checkpoint
		_, err = tx.ExecContext(ctx, "INSERT INTO checkpoint_probe (v) VALUES ($1)", row)
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit())
	require.Greater(t, fileSize(t, path+"-wal"), int64(3<<20), "the rows are in the log")

	require.Eventually(t, func() bool { return fileSize(t, path) > before+3<<20 }, 5*time.Second, 20*time.Millisecond,
		"the checkpointer copies the log into the database file")
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}
