// Package sqlstore implements store.Store on database/sql for both of
// Herald's databases: SQLite (modernc.org/sqlite, the embedded default) and
// PostgreSQL (pgx). The SQL text is shared; every place where the dialects
// differ goes through the dialect value (dialect.go).
package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/herald-notify/herald/internal/store"
)

//go:embed migrations
var migrationFS embed.FS

// Sealer encrypts values at rest: integration credentials and secret
// configuration fields, stored answers of session requests, the secret check
// value (see secrets.go).
type Sealer interface {
	Seal(plaintext []byte) string
	Open(sealed string) ([]byte, error)
}

// DB is the store on one database.
type DB struct {
	w, r   *sql.DB // writer and readers; the same pool on PostgreSQL
	d      dialect
	sealer Sealer
	url    string // PostgreSQL only, for the LISTEN connection
	notify notifier
	gate   *writeGate
	// triggers gathers concurrent triggers into groups (trigger_group.go).
	triggers triggerQueue
	// recipients are the recipients read for earlier trigger groups.
	recipients recipientCache
	planner    atomic.Pointer[func(ctx context.Context, ps []*store.TriggerParams)]
	// realtime is the after-commit hook of inbox changes (realtime.go).
	realtime realtimeHook
	// outbox writes the webhook outbox entries of changes (outbox.go).
	outbox outboxHook

	// writers is how many trigger groups are written at once, rtt the
	// round trip measured at open (trigger_writers.go).
	writers atomic.Int32
	rtt     time.Duration

	keys      ttlCache[keyAndEnv]
	workflows ttlCache[store.Workflow]
	closers   []func() error
}

var _ store.Store = (*DB)(nil)

// OpenSQLite opens (creating) the SQLite database file at path.
func OpenSQLite(ctx context.Context, path string, sealer Sealer) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("sqlstore: %w", err)
	}
	pragmas := "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	// The writer's commits never checkpoint: the checkpointer does (checkpoint.go).
	w, err := sql.Open("sqlite-cached", "file:"+path+"?"+pragmas+"&_pragma=wal_autocheckpoint(0)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlstore: %w", err)
	}
	// One writer: SQLite allows one at a time, and queueing in Go is cheaper
	// than busy-waiting in the database.
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	r, err := sql.Open("sqlite-cached", "file:"+path+"?"+pragmas+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlstore: %w", err)
	}
	r.SetMaxOpenConns(8)
	r.SetMaxIdleConns(8)
	db := &DB{w: w, r: r, d: sqliteDialect, sealer: sealer, closers: []func() error{r.Close, w.Close},
		gate: &writeGate{slots: 1, shared: true}}
	db.initCaches()
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	c, err := sql.Open("sqlite-cached", "file:"+path+"?"+pragmas)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlstore: %w", err)
	}
	c.SetMaxOpenConns(1)
	db.closers = append([]func() error{startCheckpointer(c, db).close}, db.closers...)
	return db, nil
}

// pgPoolSize is the PostgreSQL pool's size, idle connections included.
const pgPoolSize = 32

// OpenPostgres connects to the PostgreSQL database at url.
func OpenPostgres(ctx context.Context, url string, sealer Sealer) (*DB, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: %w", err)
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > pgLimits.Connect {
		cfg.ConnectTimeout = pgLimits.Connect
	}
	conn := &limitedConnector{inner: stdlib.GetConnector(*cfg)}
	p := sql.OpenDB(conn)
	p.SetMaxOpenConns(pgPoolSize)
	p.SetMaxIdleConns(pgPoolSize)
	p.SetConnMaxIdleTime(5 * time.Minute)
	db := &DB{w: p, r: p, d: postgresDialect, sealer: sealer, url: url, closers: []func() error{p.Close},
		gate: &writeGate{slots: postgresAPIWriters()}}
	// A statement cut by its time limit: the database may be gone, and the
	// idle connections with it. Closing them at once spares the next
	// callers a wait on each (a new connection answers, or fails within
	// pgLimits.Connect).
	conn.onTimeout = func() {
		p.SetMaxIdleConns(0)
		p.SetMaxIdleConns(pgPoolSize)
	}
	db.initCaches()
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	db.rtt = db.measureRTT(ctx)
	db.writers.Store(int32(writersFor(runtime.GOMAXPROCS(0), db.rtt)))
	return db, nil
}

func (db *DB) initCaches() {
	db.keys.ttl, db.workflows.ttl = apiKeyCacheTTL, workflowCacheTTL
}

// Dialect names the database: "sqlite" or "postgres".
func (db *DB) Dialect() string { return db.d.name }

// Writer returns the pool that writes (for tools and tests that need raw SQL).
func (db *DB) Writer() *sql.DB { return db.w }

// Reader returns the pool that reads.
func (db *DB) Reader() *sql.DB { return db.r }

// Ping implements store.Store.
func (db *DB) Ping(ctx context.Context) error { return db.r.PingContext(ctx) }

// Close implements store.Store.
func (db *DB) Close() error {
	var errs []error
	for _, c := range db.closers {
		errs = append(errs, c())
	}
	return errors.Join(errs...)
}

// migrate applies the embedded migrations not applied yet, each in its own
// transaction. On PostgreSQL an advisory lock lets many processes start at once.
func (db *DB) migrate(ctx context.Context) error {
	ctx = withoutLimits(ctx) // an index on a large table may take minutes
	dir := "migrations/" + db.d.name
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return fmt.Errorf("sqlstore: %w", err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })

	conn, err := db.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sqlstore: connect: %w", err)
	}
	defer conn.Close()
	// One lock for the whole database: extensions are database-wide.
	if err := db.d.lock(ctx, conn, "SELECT pg_advisory_lock(72687311)"); err != nil {
		return fmt.Errorf("sqlstore: migration lock: %w", err)
	}
	defer db.d.lock(context.Background(), conn, "SELECT pg_advisory_unlock(72687311)") //nolint:errcheck
	if _, err := conn.ExecContext(ctx,
		"CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)"); err != nil {
		return fmt.Errorf("sqlstore: %w", err)
	}
	// Every version not applied yet runs, in order — not only those above
	// the highest: a migration merged later with a lower number still runs.
	applied := map[int]bool{}
	rows, err := conn.QueryContext(ctx, "SELECT version FROM schema_migrations")
	if err := eachRow(rows, err, func(r rowScanner) error {
		var v int
		if err := r.Scan(&v); err != nil {
			return err
		}
		applied[v] = true
		return nil
	}); err != nil {
		return fmt.Errorf("sqlstore: %w", err)
	}
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		version, err := strconv.Atoi(num)
		if !ok || err != nil {
			return fmt.Errorf("sqlstore: badly named migration %s", e.Name())
		}
		if applied[version] {
			continue
		}
		text, err := migrationFS.ReadFile(dir + "/" + e.Name())
		if err != nil {
			return fmt.Errorf("sqlstore: %w", err)
		}
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("sqlstore: %w", err)
		}
		if _, err := tx.ExecContext(ctx, string(text)); err != nil {
			tx.Rollback() //nolint:errcheck
			return fmt.Errorf("sqlstore: migration %s: %w", e.Name(), err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)",
			version, time.Now().UnixMilli()); err != nil {
			tx.Rollback() //nolint:errcheck
			return fmt.Errorf("sqlstore: %w", err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("sqlstore: migration %s: %w", e.Name(), err)
		}
	}
	return nil
}

// inTxFn is inTx for code written against querier.
func (db *DB) inTxFn(ctx context.Context, fn func(q querier) error) error {
	return db.inTx(ctx, func(tx *sql.Tx) error { return fn(tx) })
}

// noteDue tells the write gate that a worker resumed timed work due at due.
func (db *DB) noteDue(now, due time.Time) { db.gate.noteDue(now, due) }

// postgresAPIWriters is how many API write transactions of one process run
// on PostgreSQL at once (see writeGate).
func postgresAPIWriters() int { return 2 * runtime.GOMAXPROCS(0) }

// inTx runs fn in a write transaction of the API (see writeGate).
func (db *DB) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return db.inTxAs(ctx, false, fn)
}

// inTxPipeline runs fn in a write transaction of the workers, which the
// write gate lets go first.
func (db *DB) inTxPipeline(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return db.inTxAs(ctx, true, fn)
}

func (db *DB) inTxAs(ctx context.Context, pipeline bool, fn func(tx *sql.Tx) error) error {
	if err := db.gate.acquire(ctx, pipeline); err != nil {
		return err
	}
	defer db.gate.release(pipeline)
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlstore: begin: %w", err)
	}
	notes := db.track(ctx, tx)
	if notes != nil {
		defer untrack(tx)
	}
	if err := fn(tx); err != nil {
		tx.Rollback() //nolint:errcheck
		return err
	}
	flushed, entries, err := db.flushOutbox(ctx, tx, notes)
	if err != nil {
		tx.Rollback() //nolint:errcheck
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlstore: commit: %w", err)
	}
	if notes != nil && len(notes.inbox.byEnv) > 0 {
		db.inboxCommitted(&notes.inbox)
	}
	db.outboxCommitted(flushed, entries)
	return nil
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func fromNullMS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMS(v.Int64)
	return &t
}

func nullMS(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ms(*t)
}

// notFound turns sql.ErrNoRows into store.ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}

// args builds positional arguments and their $n placeholders. LIMIT and
// OFFSET are written as integer literals, never bound: SQLite prepares a
// statement again at every execution once a value is bound to its LIMIT
// (the value may change the plan) — a fifth of a feed read's CPU.
type args []any

func (a *args) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}
