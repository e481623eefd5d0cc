package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// dialect holds every difference between SQLite and PostgreSQL, so that the
// code around it is written once: SQL fragments, small builders, and, where
// a whole algorithm differs, the per-dialect implementation chosen here once
// (sqliteDialect in dialect_sqlite.go, postgresDialect in dialect_postgres.go).
type dialect struct {
	name string

	// forUpdate locks the rows a SELECT reads, and skipLocked passes over
	// those another transaction locked; both are empty on SQLite, whose one
	// writer holds the whole database.
	forUpdate, skipLocked string
	// unindexed prefixes a column whose index the planner must not choose
	// (SQLite's unary +; see inboxFilter).
	unindexed string
	// rowsPerStatement bounds multi-row statements: modernc's SQLite driver
	// slows with the square of a statement's arguments, PostgreSQL does not.
	rowsPerStatement int
	// countsPerStatement bounds the rows of one inbox-count upsert (7
	// arguments a row), and countsConflict is its ON CONFLICT target: on
	// PostgreSQL a tag set is keyed by its digest (inbox_counts_key), as 16
	// tags of 64 four-byte characters are longer than an index row may be.
	countsPerStatement int
	countsConflict     string
	// rowSource renders rows of the given column types as the source of a
	// multi-row statement (rowsource.go): a VALUES list on SQLite, unnest
	// over one array a column on PostgreSQL.
	rowSource func(a *args, rows [][]any, types []string) (string, error)
	// rowVersion is a column expression that changes with every update of
	// a row (PostgreSQL's xmin); empty where there is none, and then no
	// recipient is remembered between trigger groups (recipient_cache.go).
	rowVersion string
	// notifies: other processes may share the database, and learn of new
	// jobs and inbox changes through NOTIFY (listen.go, realtime.go).
	notifies bool

	// unique reports a unique-constraint violation.
	unique func(error) bool
	// lock runs a statement that serializes concurrent writers (a row,
	// table or advisory lock); on SQLite, whose one writer holds the whole
	// database, it does nothing.
	lock func(ctx context.Context, q querier, query string, args ...any) error
	// substring returns a condition that col contains arg (case-sensitive)
	// and the argument to bind for it.
	substring func(col, placeholder string, value string) (string, any)
	// inList is a condition that col is one of values (see DB.inList), and
	// planned the arguments of its statement.
	inList  func(a *args, col string, values []string) string
	planned func(a args) []any
	// tagsAnyOf holds when a message has one of the tags (its tags are a
	// JSON array of strings, or NULL).
	tagsAnyOf func(a *args, anyOf []string) string
	// jsonEquals compares the value at a path of a JSON column with a JSON
	// value (see DB.jsonCondition).
	jsonEquals func(a *args, col string, c store.PayloadCondition) string
	// emailWords is a condition equal to "email contains v" that an index
	// answers, when the dialect has one and v encloses a word (search_words.go).
	emailWords func(a *args, v string) (cond string, ok bool)
	// listen calls fn with the payload of every notification on channel
	// until ctx ends or the connection fails; on SQLite it waits for ctx.
	listen func(ctx context.Context, url, channel string, fn func(payload string)) error

	// insertMessages writes messages once per (job, target) and adds the
	// in-app ones inserted to counts.
	insertMessages func(ctx context.Context, q querier, msgs []*store.Message, counts *pendingCounts) error
	// changeState applies an inbox change to the selected messages, bound
	// (ORDER BY … LIMIT, or empty) and a its arguments so far, and moves
	// their counts; it returns how many messages it changed.
	changeState func(ctx context.Context, tx *sql.Tx, ch stateChange, sel selection, bound string, a args,
		until, now time.Time, counts *pendingCounts) (int, error)
	// loadSubscribers and loadMessages are the bulk loads of seeding:
	// loadMessages writes inside tx, open on conn.
	loadSubscribers func(db *DB, ctx context.Context, subs []store.Subscriber) error
	loadMessages    func(ctx context.Context, conn *sql.Conn, tx *sql.Tx, msgs []store.Message) error
	// maintain does the database's upkeep where it does not itself (maintain.go).
	maintain func(db *DB, ctx context.Context) ([]string, error)
	// snapshot copies the database, as one read transaction, into the new
	// file named by $1 (backup.go); empty where backups are the database's
	// own tools' work (PostgreSQL: pg_dump).
	snapshot string
}

// lockKeys takes a transaction-scoped lock on each name (an advisory lock
// on its hash, in ascending order so that transactions cannot deadlock);
// what names them in errors.
func (d *dialect) lockKeys(ctx context.Context, q querier, what string, names []string) error {
	keys := make([]int64, 0, len(names))
	for _, n := range names {
		h := fnv.New64a()
		h.Write([]byte(n))
		keys = append(keys, int64(h.Sum64()))
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	if err := d.lock(ctx, q, "SELECT pg_advisory_xact_lock(k) FROM unnest(CAST($1 AS BIGINT[])) AS u(k)", keys); err != nil {
		return fmt.Errorf("sqlstore: %s locks: %w", what, err)
	}
	return nil
}
