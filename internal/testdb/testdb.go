// Package testdb gives tests real databases: a fresh SQLite file, and a fresh
// schema on the PostgreSQL server named by HERALD_TEST_DATABASE_URL (default
// the local server). PostgreSQL tests skip when no server answers, except
// under CI=true, where that is a failure.
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store/sqlstore"
)

// DefaultPostgresURL is the local test server.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Kinds are the stores every conformance test runs against.
var Kinds = []string{"sqlite", "postgres"}

// Keys returns fixed test keys.
func Keys(t testing.TB) *secret.Keys {
	k, err := secret.Derive("test-secret-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// PostgresURL returns the server URL tests use.
func PostgresURL() string {
	if u := os.Getenv("HERALD_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultPostgresURL
}

// Open returns a migrated store of the given kind, closed when the test ends.
func Open(t testing.TB, kind string) *sqlstore.DB {
	t.Helper()
	ctx := context.Background()
	switch kind {
	case "sqlite":
		db, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "herald.db"), Keys(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	case "postgres":
		u := NewPostgresSchema(t)
		db, err := sqlstore.OpenPostgres(ctx, u, Keys(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	t.Fatalf("testdb: unknown kind %q", kind)
	return nil
}

// Reopenable returns a fresh store of kind sealing with keys, and a function
// that opens the same database again with other keys (each store is closed
// when the test ends): for tests of a changed server secret.
func Reopenable(t testing.TB, kind string, keys sqlstore.Sealer) (*sqlstore.DB, func(keys sqlstore.Sealer) *sqlstore.DB) {
	t.Helper()
	var open func(keys sqlstore.Sealer) (*sqlstore.DB, error)
	switch kind {
	case "sqlite":
		path := filepath.Join(t.TempDir(), "herald.db")
		open = func(keys sqlstore.Sealer) (*sqlstore.DB, error) {
			return sqlstore.OpenSQLite(context.Background(), path, keys)
		}
	case "postgres":
		u := NewPostgresSchema(t)
		open = func(keys sqlstore.Sealer) (*sqlstore.DB, error) {
			return sqlstore.OpenPostgres(context.Background(), u, keys)
		}
	default:
		t.Fatalf("testdb: unknown kind %q", kind)
	}
	reopen := func(keys sqlstore.Sealer) *sqlstore.DB {
		t.Helper()
		db, err := open(keys)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	return reopen(keys), reopen
}

// NewPostgresSchema creates an empty schema, dropped when the test ends, and
// returns a URL whose connections use it.
func NewPostgresSchema(t testing.TB) string {
	t.Helper()
	base := PostgresURL()
	admin, err := sql.Open("pgx", base)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = admin.PingContext(ctx)
		cancel()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("testdb: PostgreSQL unreachable at %s under CI: %v", base, err)
		}
		t.Skipf("testdb: PostgreSQL unreachable (%v); set HERALD_TEST_DATABASE_URL", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "herald_t_" + hex.EncodeToString(b)
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE") //nolint:errcheck
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema+",public")
	u.RawQuery = q.Encode()
	return u.String()
}

// ForEach runs fn as a subtest against each kind of store.
func ForEach(t *testing.T, fn func(t *testing.T, db *sqlstore.DB)) {
	for _, kind := range Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			fn(t, Open(t, kind))
		})
	}
}
