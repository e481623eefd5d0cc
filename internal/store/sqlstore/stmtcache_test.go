package sqlstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestStatementCacheNestedQueries: the same statement run again while its
// rows are still open (on one connection, in one transaction) reads its own
// rows; the outer iteration is not disturbed.
func TestStatementCacheNestedQueries(t *testing.T) {
	t.Parallel()
	db, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "h.db"), testdb.Keys(t))
	require.NoError(t, err)
	defer db.Close()
	tx, err := db.Writer().Begin()
	require.NoError(t, err)
	defer tx.Rollback() //nolint:errcheck
	_, err = tx.Exec("CREATE TABLE t (n INTEGER)")
	require.NoError(t, err)
	for i := range 5 {
		_, err := tx.Exec("INSERT INTO t (n) VALUES ($1)", i)
		require.NoError(t, err)
	}
	const q = "SELECT n FROM t WHERE n >= $1 ORDER BY n"
	outer, err := tx.Query(q, 0)
	require.NoError(t, err)
	var seen []string
	for outer.Next() {
		var n int
		require.NoError(t, outer.Scan(&n))
		inner, err := tx.Query(q, 3)
		require.NoError(t, err)
		var count int
		for inner.Next() {
			count++
		}
		require.NoError(t, inner.Close())
		seen = append(seen, fmt.Sprintf("%d:%d", n, count))
	}
	require.NoError(t, outer.Err())
	require.NoError(t, outer.Close())
	require.Equal(t, []string{"0:2", "1:2", "2:2", "3:2", "4:2"}, seen)
	// Once closed, the statement is shared again.
	var n int
	require.NoError(t, tx.QueryRow(q, 4).Scan(&n))
	require.Equal(t, 4, n)
}
