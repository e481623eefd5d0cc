package bench

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/seed"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// fixture is a seeded store of one kind behind a real HTTP server.
type fixture struct {
	kind      string
	db        *sqlstore.DB
	srv       *httptest.Server
	client    *http.Client
	devKey    string // API key of the development environment (the seeded one)
	prodKey   string // API key of the production environment (creates go there)
	dev, prod store.Scope
	gen       *seed.Generator
	n         int // subscribers 0..n-1 are seeded
	closers   []func()
}

var (
	fixturesMu sync.Mutex
	fixtures   = map[string]*fixture{}
)

func TestMain(m *testing.M) {
	code := m.Run()
	fixturesMu.Lock()
	for _, f := range fixtures {
		f.close()
	}
	fixturesMu.Unlock()
	os.Exit(code)
}

// benchSubscribers is the dataset size of the benchmarks.
func benchSubscribers(tb testing.TB) int {
	v := os.Getenv("HERALD_BENCH_SUBSCRIBERS")
	if v == "" {
		return 20000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		tb.Fatalf("HERALD_BENCH_SUBSCRIBERS=%q: want a positive number", v)
	}
	return n
}

// getFixture returns the process-wide fixture of kind, making it on first use.
func getFixture(tb testing.TB, kind string) *fixture {
	fixturesMu.Lock()
	defer fixturesMu.Unlock()
	if f, ok := fixtures[kind]; ok {
		return f
	}
	f := newFixture(tb, kind, benchSubscribers(tb), true)
	fixtures[kind] = f
	return f
}

// newFixture opens the store of kind (the seeded database named in the
// environment when reuse is true, else a fresh one seeded with n
// subscribers) and serves it over HTTP.
func newFixture(tb testing.TB, kind string, n int, reuse bool) *fixture {
	ctx := context.Background()
	keys, err := secret.Derive("herald-bench-secret")
	if err != nil {
		tb.Fatal(err)
	}
	f := &fixture{kind: kind, n: n}
	var existing bool
	switch kind {
	case "sqlite":
		path := os.Getenv("HERALD_BENCH_SQLITE_PATH")
		existing = reuse && path != ""
		if !existing {
			dir, err := os.MkdirTemp("", "herald-bench-")
			if err != nil {
				tb.Fatal(err)
			}
			f.closers = append(f.closers, func() { os.RemoveAll(dir) })
			path = filepath.Join(dir, "herald.db")
		}
		f.db, err = sqlstore.OpenSQLite(ctx, path, keys)
	case "postgres":
		u := os.Getenv("HERALD_BENCH_DATABASE_URL")
		existing = reuse && u != ""
		if !existing {
			u = freshPostgresSchema(tb, f)
		}
		f.db, err = sqlstore.OpenPostgres(ctx, u, keys)
	default:
		tb.Fatalf("bench: unknown store %q", kind)
	}
	if err != nil {
		f.close()
		tb.Fatal(err)
	}
	f.closers = append(f.closers, func() { f.db.Close() })

	a := &app.App{Store: f.db, Keys: keys}
	if _, err := a.Bootstrap(ctx); err != nil {
		f.close()
		tb.Fatal(err)
	}
	f.dev, f.devKey = f.environment(tb, "development")
	f.prod, f.prodKey = f.environment(tb, "production")
	f.gen = seed.New(f.dev, seed.DefaultSeed)

	if existing {
		last := seed.SubscriberID(n - 1)
		if _, err := f.db.SubscriberGet(ctx, f.dev, last); err != nil {
			f.close()
			tb.Fatalf("bench: the %s database named in the environment lacks subscriber %s (%v): "+
				"seed it with `herald seed --subscribers %d` or lower HERALD_BENCH_SUBSCRIBERS", kind, last, err, n)
		}
	} else {
		o := seed.LoadOptions{Count: n}
		if n >= 100000 {
			fmt.Fprintf(os.Stderr, "bench: seeding %d subscribers into a fresh %s store\n", n, kind)
			bar := seed.NewProgress(os.Stderr, n)
			defer bar.Finish()
			o.Progress = bar.Add
		}
		err := seed.Load(ctx, f.gen, f.db.SubscriberBulkLoad, o)
		if err != nil {
			f.close()
			tb.Fatal(err)
		}
		if kind == "postgres" {
			if _, err := f.db.Writer().ExecContext(ctx, "VACUUM ANALYZE subscribers"); err != nil {
				f.close()
				tb.Fatal(err)
			}
		}
	}

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f.srv = httptest.NewServer(httpapi.New(httpapi.Options{Store: f.db, Keys: keys, Logger: log}))
	f.closers = append(f.closers, f.srv.Close)
	f.client = &http.Client{Transport: &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64}, Timeout: time.Minute}
	return f
}

// environment returns the scope of the named environment and a new API key
// of it, revoked when the fixture closes.
func (f *fixture) environment(tb testing.TB, name string) (store.Scope, string) {
	ctx := context.Background()
	env, err := f.db.EnvironmentGetByName(ctx, name)
	if err != nil {
		f.close()
		tb.Fatalf("bench: environment %s: %v", name, err)
	}
	key := secret.NewAPIKey()
	rec := app.NewKeyRecord(env.ID, key, time.Now())
	if err := f.db.APIKeyCreate(ctx, &rec); err != nil {
		f.close()
		tb.Fatal(err)
	}
	f.closers = append(f.closers, func() {
		f.db.APIKeyRevoke(context.Background(), &store.APIKeyRevokeParams{EnvironmentID: env.ID, ID: rec.ID, Now: time.Now()})
	}) //nolint:errcheck
	return store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}, key
}

// close releases everything, last opened first.
func (f *fixture) close() {
	for i := len(f.closers) - 1; i >= 0; i-- {
		f.closers[i]()
	}
	f.closers = nil
}

// freshPostgresSchema creates a schema on the test server, dropped when the
// fixture closes, and returns a URL that uses it; it skips when no server answers.
func freshPostgresSchema(tb testing.TB, f *fixture) string {
	base := testdb.PostgresURL()
	admin, err := sql.Open("pgx", base)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = admin.PingContext(ctx)
		cancel()
	}
	if err != nil {
		tb.Skipf("bench: PostgreSQL unreachable at %s: %v", base, err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "herald_bench_" + hex.EncodeToString(b)
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		tb.Fatal(err)
	}
	f.closers = append(f.closers, func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE") //nolint:errcheck
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema+",public")
	u.RawQuery = q.Encode()
	return u.String()
}

// do sends one request with the API key and returns the status and the
// whole body, so the time measured around it includes reading the response.
func (f *fixture) do(method, path, key string, body io.Reader) (int, []byte, error) {
	req, err := http.NewRequest(method, f.srv.URL+path, body)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "ApiKey "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := f.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}
