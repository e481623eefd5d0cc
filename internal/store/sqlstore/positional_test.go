package sqlstore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/secret"
)

func TestPositionalParameters(t *testing.T) {
	q, order := positional(`SELECT '$1', "a$2" FROM t WHERE a = $2 AND b IN ($1, $10) AND c = $2 AND d = json_extract(x, '$.events[0]')`)
	require.Equal(t, `SELECT '$1', "a$2" FROM t WHERE a = ? AND b IN (?, ?) AND c = ? AND d = json_extract(x, '$.events[0]')`, q)
	require.Equal(t, []int{2, 1, 10, 2}, order)

	q, order = positional("SELECT 1")
	require.Equal(t, "SELECT 1", q)
	require.Empty(t, order)
}

// TestPositionalParametersBind: a numbered parameter used twice, out of
// order, next to a quoted "$1", binds the caller's arguments by number.
func TestPositionalParametersBind(t *testing.T) {
	t.Parallel()
	keys, err := secret.Derive("test-secret-0123456789abcdef")
	require.NoError(t, err)
	db, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "h.db"), keys)
	require.NoError(t, err)
	defer db.Close()
	var a, b, c string
	var n int
	require.NoError(t, db.Writer().QueryRow("SELECT $2, '$1', $1 || $2, $3", "x", "y", 7).Scan(&a, &b, &c, &n))
	require.Equal(t, []any{"y", "$1", "xy", 7}, []any{a, b, c, n})
	_, err = db.Writer().Exec("SELECT $2", "only one")
	require.Error(t, err)
}
