package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// Retention (docs/operations.md, "Retention"). Each purge runs a batch per
// transaction, walking its table by creation time (and key) through an
// index of its own (migration 0023): a batch is the rows after the previous
// batch's last, up to the Limit-th (or to the cut-off when fewer are left).
// Its statements name no ids (but the few fan-out jobs a reservation may
// leave): each selects its rows by that range and a condition that holds
// the same for every statement of the batch — on
// SQLite the one writer holds the database; on PostgreSQL each condition is
// one that nothing but the purge (one process at a time, RetentionLock)
// turns true.

var _ store.Retention = (*DB)(nil)

// unfinished holds when a job may still run: any status but the final ones
// (store.JobFinal).
var unfinished = "status NOT IN ('" + strings.Join([]string{store.JobCompleted, store.JobFailed, store.JobCanceled,
	store.JobSkipped, store.JobMerged}, "', '") + "')"

// retentionDialects is, by dialect name, what the purge asks of each
// dialect apart: the database's size; the session lock that lets one
// process purge at a time where several may share the database (none on
// SQLite: one process owns it); and the plan of a batch. A batch is a small
// slice of large tables, and only index probes keep its cost to its own
// rows: PostgreSQL, which costs a batch by estimates, hashed or merged whole
// tables (jobs, messages) into batches of 1,000 up to a few hundred
// thousand rows (a second a batch at 200,000), so a batch's transaction
// turns those plans off. And on PostgreSQL an id (COLLATE "C") compared
// with a column that refers to it (jobs.notification_id, of the default
// collation) takes that column's collation, or no index of it serves.
var retentionDialects = map[string]struct{ size, tryLock, unlock, plan, referred string }{
	"sqlite": {size: "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()"},
	"postgres": {referred: ` COLLATE "default"`, size: "SELECT pg_database_size(current_database())",
		tryLock: "SELECT pg_try_advisory_lock($1, hashtext(current_schema()))",
		unlock:  "SELECT pg_advisory_unlock($1, hashtext(current_schema()))",
		plan: "SELECT set_config('enable_seqscan', 'off', true), set_config('enable_hashjoin', 'off', true)," +
			" set_config('enable_mergejoin', 'off', true)"},
}

// retentionLockClass is the first key of the purge's session advisory lock
// on PostgreSQL; the second is the schema's (one purge per schema).
const retentionLockClass = 1123

// RetentionLock implements store.Retention: on PostgreSQL a session
// advisory lock on a connection of its own, held until release.
func (db *DB) RetentionLock(ctx context.Context) (func(), bool, error) {
	rd := retentionDialects[db.d.name]
	if rd.tryLock == "" {
		return func() {}, true, nil
	}
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("sqlstore: retention lock: %w", err)
	}
	var locked bool
	if err := conn.QueryRowContext(ctx, rd.tryLock, retentionLockClass).Scan(&locked); err != nil || !locked {
		conn.Close()
		if err != nil {
			return nil, false, fmt.Errorf("sqlstore: retention lock: %w", err)
		}
		return nil, false, nil
	}
	return func() {
		// A connection that cannot unlock is closed with its session, and
		// the lock with it.
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), rd.unlock, retentionLockClass); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn }) //nolint:errcheck
		}
		conn.Close()
	}, true, nil
}

// StoreSize implements store.Retention.
func (db *DB) StoreSize(ctx context.Context) (int64, error) {
	var n int64
	if err := db.r.QueryRowContext(ctx, retentionDialects[db.d.name].size).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlstore: store size: %w", err)
	}
	return n, nil
}

// purgeOrder is the order in which the purge walks a table: by creation
// time, then by its key (an index of each, migration 0023).
type purgeOrder struct {
	table string
	key   []string
}

var (
	notificationsOrder = purgeOrder{"notifications", []string{"id"}}
	transactionsOrder  = purgeOrder{"transactions", []string{"environment_id", "transaction_id"}}
)

// cols is the order's columns as a row value.
func (o purgeOrder) cols() string {
	return "(" + o.table + ".created_at, " + o.table + "." + strings.Join(o.key, ", "+o.table+".") + ")"
}

// purgeRange is one batch of a table: the rows created before before,
// after from (nil: the first) and up to to (nil: the last), in its order.
type purgeRange struct {
	order    purgeOrder
	before   int64
	from, to []any
}

// where is the range's condition, its arguments added to a.
func (r purgeRange) where(a *args) string {
	cond := r.order.table + ".created_at < " + a.add(r.before)
	for _, b := range []struct {
		op  string
		row []any
	}{{" > ", r.from}, {" <= ", r.to}} {
		if b.row == nil {
			continue
		}
		ph := make([]string, len(b.row))
		for i, v := range b.row {
			ph[i] = a.add(v)
		}
		cond += " AND " + r.order.cols() + b.op + "(" + strings.Join(ph, ", ") + ")"
	}
	return cond
}

// batchRange is the next batch of the order's table after p.After: up to
// its Limit-th row, or to its end when fewer are left (done).
func batchRange(ctx context.Context, q querier, o purgeOrder, p *store.RetentionPurgeParams) (r purgeRange, done bool, err error) {
	r = purgeRange{order: o, before: ms(p.Before)}
	if p.After != "" {
		var from []any
		if err := json.Unmarshal([]byte(p.After), &from); err != nil || len(from) != 1+len(o.key) {
			return r, false, fmt.Errorf("sqlstore: retention cursor %q", p.After)
		}
		created, ok := from[0].(float64)
		if !ok {
			return r, false, fmt.Errorf("sqlstore: retention cursor %q", p.After)
		}
		from[0] = int64(created)
		r.from = from
	}
	var a args
	to := make([]any, 1+len(o.key))
	dest := make([]any, len(to))
	for i := range to {
		dest[i] = &to[i]
	}
	err = q.QueryRowContext(ctx, "SELECT "+strings.Trim(o.cols(), "()")+" FROM "+o.table+" WHERE "+r.where(&a)+
		" ORDER BY "+strings.Trim(o.cols(), "()")+" LIMIT 1 OFFSET "+strconv.Itoa(max(p.Limit, 1)-1), a...).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return r, true, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("sqlstore: retention batch of %s: %w", o.table, err)
	}
	for i, v := range to {
		if b, ok := v.([]byte); ok {
			to[i] = string(b)
		}
	}
	r.to = to
	return r, false, nil
}

// purgeTx runs fn in a write transaction planned for a batch, and notes in
// out how long it took (its statements, not its wait for the writer).
func (db *DB) purgeTx(ctx context.Context, out *store.RetentionPurged, fn func(tx *sql.Tx) error) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		*out = store.RetentionPurged{}
		began := time.Now()
		defer func() { out.Took = time.Since(began) }()
		if plan := retentionDialects[db.d.name].plan; plan != "" {
			if _, err := tx.ExecContext(ctx, plan); err != nil {
				return fmt.Errorf("sqlstore: retention plan: %w", err)
			}
		}
		return fn(tx)
	})
}

// purgeBatch runs one batch of the order's table in a write transaction:
// fn deletes what the range selects.
func (db *DB) purgeBatch(ctx context.Context, o purgeOrder, p *store.RetentionPurgeParams,
	fn func(tx *sql.Tx, r purgeRange, out *store.RetentionPurged) error) (store.RetentionPurged, error) {
	var out store.RetentionPurged
	err := db.purgeTx(ctx, &out, func(tx *sql.Tx) error {
		r, done, err := batchRange(ctx, tx, o, p)
		if err != nil {
			return err
		}
		if out.Done = done; !done {
			next, err := json.Marshal(r.to)
			if err != nil {
				return err
			}
			out.Next = string(next)
		}
		return fn(tx, r, &out)
	})
	return out, err
}

// execCount runs a statement and adds the rows it changed to n.
func execCount(ctx context.Context, tx *sql.Tx, n *int64, what, query string, a args) error {
	res, err := tx.ExecContext(ctx, query, a...)
	if err != nil {
		return fmt.Errorf("sqlstore: retention: %s: %w", what, err)
	}
	c, _ := res.RowsAffected()
	*n += c
	return nil
}

// RetentionActivityPurge implements store.Retention. Its jobs go first:
// those of the batch's triggers whose jobs are all final. The triggers
// left without jobs are then the ones to delete — their jobs gone, or none
// ever — and no other transaction ever leaves a trigger without jobs, nor
// adds one to it: the later statements select those.
func (db *DB) RetentionActivityPurge(ctx context.Context, p *store.RetentionPurgeParams) (store.RetentionPurged, error) {
	return db.purgeBatch(ctx, notificationsOrder, p, func(tx *sql.Tx, r purgeRange, out *store.RetentionPurged) error {
		var a args
		id := "notifications.id" + retentionDialects[db.d.name].referred
		finished := "SELECT " + id + " FROM notifications WHERE " + r.where(&a) +
			" AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.notification_id = " + id + " AND jobs." + unfinished + ")"
		if err := execCount(ctx, tx, &out.Jobs, "jobs", "DELETE FROM jobs WHERE notification_id IN ("+finished+")", a); err != nil {
			return err
		}
		a = nil
		joblessWhere := r.where(&a) + " AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.notification_id = " + id + ")"
		jobless := "SELECT " + id + " FROM notifications WHERE " + joblessWhere
		if err := execCount(ctx, tx, &out.ExecutionDetails, "execution details",
			"DELETE FROM execution_details WHERE notification_id IN ("+jobless+")", a); err != nil {
			return err
		}
		// Messages are locked in id order, as every change of several
		// messages locks them (changeState): two such never deadlock.
		if err := execCount(ctx, tx, &out.Messages, "messages", "DELETE FROM messages WHERE id IN (SELECT id FROM messages"+
			" WHERE notification_id IN ("+jobless+") AND channel <> 'in_app' ORDER BY id"+db.d.forUpdate+")", a); err != nil {
			return err
		}
		// The in-app messages stay, with their trigger's context keys.
		var kept int64
		if err := execCount(ctx, tx, &kept, "in-app messages' context keys", "UPDATE messages SET context_keys ="+
			" (SELECT n.context_keys FROM notifications n WHERE n.id = messages.notification_id) WHERE id IN (SELECT id FROM messages"+
			" WHERE notification_id IN ("+jobless+") AND channel = 'in_app' AND context_keys IS NULL ORDER BY id"+db.d.forUpdate+")",
			a); err != nil {
			return err
		}
		return execCount(ctx, tx, &out.Notifications, "notifications", "DELETE FROM notifications WHERE "+joblessWhere, a)
	})
}

// RetentionTransactionPurge implements store.Retention. A reservation is
// released once no trigger of its transaction is left and none of its jobs
// can still run; its jobs left then (a topic's fan-out job, which belongs
// to no trigger) go with it, and the reservation goes only once no job of
// it is left (a fan-out that finished meanwhile waits for the next run).
func (db *DB) RetentionTransactionPurge(ctx context.Context, p *store.RetentionPurgeParams) (store.RetentionPurged, error) {
	return db.purgeBatch(ctx, transactionsOrder, p, func(tx *sql.Tx, r purgeRange, out *store.RetentionPurged) error {
		noTrigger := " AND NOT EXISTS (SELECT 1 FROM notifications n WHERE n.environment_id = transactions.environment_id" +
			" AND n.transaction_id = transactions.transaction_id)"
		var a args
		rows, err := tx.QueryContext(ctx, "SELECT j.id FROM jobs j WHERE (j.environment_id, j.transaction_id) IN"+
			" (SELECT environment_id, transaction_id FROM transactions WHERE "+r.where(&a)+noTrigger+
			" AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.environment_id = transactions.environment_id"+
			" AND jobs.transaction_id = transactions.transaction_id AND jobs."+unfinished+"))", a...)
		jobs, err := scanAll(rows, err, func(r rowScanner) (string, error) {
			var id string
			return id, r.Scan(&id)
		})
		if err != nil {
			return fmt.Errorf("sqlstore: retention: jobs of transactions: %w", err)
		}
		for start := 0; start < len(jobs); start += db.d.rowsPerStatement {
			chunk := jobs[start:min(start+db.d.rowsPerStatement, len(jobs))]
			var a args
			// A fan-out's details belong to no trigger (notification_id '').
			if err := execCount(ctx, tx, &out.ExecutionDetails, "execution details", "DELETE FROM execution_details"+
				" WHERE notification_id = '' AND "+db.inList(&a, "job_id", chunk), a); err != nil {
				return err
			}
			a = nil
			if err := execCount(ctx, tx, &out.Jobs, "jobs", "DELETE FROM jobs WHERE "+db.inList(&a, "id", chunk), a); err != nil {
				return err
			}
		}
		a = nil
		return execCount(ctx, tx, &out.Transactions, "transactions", "DELETE FROM transactions WHERE "+
			r.where(&a)+noTrigger+" AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.environment_id ="+
			" transactions.environment_id AND jobs.transaction_id = transactions.transaction_id)", a)
	})
}

// RetentionInboxPurge implements store.Retention: one statement deletes the
// oldest in-app messages and returns their places in the counts, which
// move as a deletion moves them (changeState), in the same transaction.
// On PostgreSQL the messages another transaction holds are passed over
// (that transaction counts them as it finds them; the next batch or run
// deletes them).
func (db *DB) RetentionInboxPurge(ctx context.Context, p *store.RetentionPurgeParams) (store.RetentionPurged, error) {
	var out store.RetentionPurged
	limit := max(p.Limit, 1)
	err := db.purgeTx(ctx, &out, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, "DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE channel = 'in_app'"+
			" AND created_at < $1 ORDER BY created_at LIMIT "+strconv.Itoa(limit)+db.d.skipLocked+")"+
			" RETURNING subscriber_id, environment_id, "+codeSQL+", coalesce(tags, '[]'), deleted", ms(p.Before))
		counts := &pendingCounts{perStatement: db.d.countsPerStatement}
		gone := stateChanges[store.InboxDelete].next
		if err := eachRow(rows, err, func(r rowScanner) error {
			var sub, env, tags string
			var c int
			var deleted bool
			if err := r.Scan(&sub, &env, &c, &tags, &deleted); err != nil {
				return err
			}
			if c < 0 || c >= codeCount {
				return fmt.Errorf("code %d", c)
			}
			out.InboxMessages++
			if !deleted { // a deleted message is in no count
				counts.delta(env, sub).move(code(c), gone(code(c)), tags, 1)
			}
			return nil
		}); err != nil {
			return fmt.Errorf("sqlstore: retention: in-app messages: %w", err)
		}
		return db.applyCounts(ctx, tx, counts)
	})
	out.Done = out.InboxMessages < int64(limit)
	return out, err
}
