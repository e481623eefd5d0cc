package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/herald-notify/herald/internal/store"
)

// postgresDialect is PostgreSQL's (pgx): concurrent writers, maybe several
// processes.
var postgresDialect = dialect{
	name:               "postgres",
	forUpdate:          " FOR UPDATE",
	skipLocked:         " FOR UPDATE SKIP LOCKED",
	rowsPerStatement:   500,
	rowSource:          unnestSource,
	countsPerStatement: 5000,
	countsConflict:     "(subscriber_id, state, md5(tags))",
	notifies:           true,
	rowVersion:         "xmin::text::bigint",
	unique:             func(err error) bool { return err != nil && strings.Contains(err.Error(), "SQLSTATE 23505") },
	lock: func(ctx context.Context, q querier, query string, args ...any) error {
		_, err := q.ExecContext(ctx, query, args...)
		return err
	},
	substring: func(col, ph, v string) (string, any) {
		r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
		return col + " LIKE " + ph + ` ESCAPE '\'`, "%" + r.Replace(v) + "%"
	},
	inList: func(a *args, col string, values []string) string {
		return col + " = ANY(CAST(" + a.add(values) + " AS TEXT[]))"
	},
	// Planned for its values: an unnamed statement, its description cached.
	planned: func(a args) []any { return append([]any{pgx.QueryExecModeCacheDescribe}, a...) },
	tagsAnyOf: func(a *args, anyOf []string) string {
		return "CAST(tags AS jsonb) ?| CAST(" + a.add(anyOf) + " AS TEXT[])"
	},
	// The payload is jsonb; other columns are text.
	jsonEquals: func(a *args, col string, c store.PayloadCondition) string {
		if col != "payload" {
			col = "CAST(" + col + " AS jsonb)"
		}
		return col + " #> ARRAY[" + a.list(c.Path) + "]::text[] = " + a.add(string(c.Value)) + "::jsonb"
	},
	emailWords:      emailWordsPostgres,
	listen:          listenPostgres,
	insertMessages:  insertMessagesChunked,
	changeState:     changeStatePostgres,
	loadSubscribers: (*DB).bulkLoadPostgres,
	loadMessages: func(ctx context.Context, conn *sql.Conn, _ *sql.Tx, msgs []store.Message) error {
		return copyMessages(ctx, conn, msgs)
	},
	maintain: (*DB).maintainPostgres,
}

// listenQuiet is how long a LISTEN connection may hear nothing before it
// checks, within listenPing, that the server still answers: a host gone
// from the network leaves the connection open and silent for good.
const (
	listenQuiet = 10 * time.Second
	listenPing  = 3 * time.Second
)

// listenPostgres is dialect.listen on a connection of its own. It returns
// an error when the connection fails or stops answering; the caller
// listens again (and polls meanwhile).
func listenPostgres(ctx context.Context, url, channel string, fn func(payload string)) error {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("sqlstore: listen %s: %w", channel, err)
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > pgLimits.Connect {
		cfg.ConnectTimeout = pgLimits.Connect
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("sqlstore: listen %s: %w", channel, err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	lctx, cancel := context.WithTimeout(ctx, pgLimits.Statement)
	_, err = conn.Exec(lctx, "LISTEN "+channel)
	cancel()
	if err != nil {
		return fmt.Errorf("sqlstore: listen %s: %w", channel, err)
	}
	for {
		wctx, cancel := context.WithTimeout(ctx, listenQuiet)
		n, err := conn.WaitForNotification(wctx)
		quiet := wctx.Err() != nil
		cancel()
		switch {
		case err == nil:
			fn(n.Payload)
			continue
		case ctx.Err() != nil:
			return nil
		case !quiet:
			return fmt.Errorf("sqlstore: listen %s: %w", channel, err)
		}
		// Quiet for a while (a wait cut by its deadline leaves the
		// connection usable): does the server still answer?
		pctx, cancel := context.WithTimeout(ctx, listenPing)
		err = conn.Ping(pctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("sqlstore: listen %s: the connection stopped answering: %w", channel, err)
		}
	}
}

// insertMessagesChunked is dialect.insertMessages a chunk of 500 messages
// per statement.
func insertMessagesChunked(ctx context.Context, q querier, msgs []*store.Message, counts *pendingCounts) error {
	byJob := make(map[string]*store.Message, len(msgs))
	for start := 0; start < len(msgs); start += 500 {
		chunk := msgs[start:min(start+500, len(msgs))]
		rows := make([][]any, len(chunk))
		for i, m := range chunk {
			byJob[m.JobID+"\x00"+m.Target] = m
			rows[i] = messageValues(m)
		}
		var a args
		src, err := unnestSource(&a, rows, messageTypes)
		if err != nil {
			return err
		}
		res, err := q.QueryContext(ctx, "INSERT INTO messages ("+messageCols+") "+src+
			" ON CONFLICT DO NOTHING RETURNING job_id, target", a...)
		inserted, err := scanAll(res, err, func(r rowScanner) (*store.Message, error) {
			var jobID, target string
			err := r.Scan(&jobID, &target)
			return byJob[jobID+"\x00"+target], err
		})
		if err != nil {
			return fmt.Errorf("sqlstore: insert messages: %w", err)
		}
		for _, m := range inserted {
			if m != nil && m.Channel == "in_app" && !m.Deleted {
				counts.add(m)
			}
		}
	}
	return nil
}

// messageTypes are the PostgreSQL column types of messageCols.
var messageTypes = []string{"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT",
	"TEXT", "TEXT", "TEXT", "TEXT", "JSONB", "TEXT", "TEXT", "TEXT", "TEXT", "BOOLEAN", "BOOLEAN", "BOOLEAN", "BIGINT", "BIGINT",
	"BOOLEAN", "BIGINT", "BIGINT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "BIGINT", "BIGINT", "BIGINT", "TEXT", "BIGINT"}

// changeStatePostgres is dialect.changeState in one statement that locks
// the rows (in one order), changes them and returns their codes from
// before: rows that other transactions insert meanwhile are neither changed
// nor counted.
func changeStatePostgres(ctx context.Context, tx *sql.Tx, ch stateChange, sel selection, bound string, a args,
	until, now time.Time, counts *pendingCounts) (int, error) {
	if bound == "" {
		bound = " ORDER BY id"
	}
	lock := " FOR UPDATE"
	if sel.skipLocked {
		lock += " SKIP LOCKED"
	}
	where := sel.where + bound + lock
	set := setClause(&a, ch, until, now)
	return collectMoves(tx.QueryContext(ctx, "WITH old AS (SELECT id, subscriber_id, environment_id, "+codeSQL+
		" AS c, coalesce(tags, '[]') AS t FROM messages WHERE "+where+"), upd AS (UPDATE messages SET "+set+
		" FROM old WHERE messages.id = old.id RETURNING old.subscriber_id, old.environment_id, old.c, old.t)"+
		" SELECT subscriber_id, environment_id, c, t, count(*) FROM upd GROUP BY subscriber_id, environment_id, c, t", a...))(ch, counts)
}
