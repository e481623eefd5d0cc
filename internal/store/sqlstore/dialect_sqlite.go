package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// sqliteDialect is SQLite's (modernc.org/sqlite): one writer, one process.
var sqliteDialect = dialect{
	name:               "sqlite",
	unindexed:          "+",
	rowsPerStatement:   32,
	rowSource:          valuesSource,
	countsPerStatement: 100,
	countsConflict:     "(subscriber_id, state, tags)",
	unique:             func(err error) bool { return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed") },
	lock:               func(context.Context, querier, string, ...any) error { return nil },
	substring: func(col, ph, v string) (string, any) {
		return "instr(" + col + ", " + ph + ") > 0", v
	},
	inList:  func(a *args, col string, values []string) string { return col + " IN (" + a.list(values) + ")" },
	planned: func(a args) []any { return a },
	tagsAnyOf: func(a *args, anyOf []string) string {
		return "EXISTS (SELECT 1 FROM json_each(messages.tags) WHERE json_each.value IN (" + a.list(anyOf) + "))"
	},
	jsonEquals: jsonEqualsSQLite,
	emailWords: func(*args, string) (string, bool) { return "", false },
	// One process owns the database and wakes its own workers.
	listen: func(ctx context.Context, _, _ string, _ func(string)) error {
		<-ctx.Done()
		return nil
	},
	insertMessages:  insertMessagesEach,
	changeState:     changeStateSQLite,
	loadSubscribers: (*DB).bulkLoadSQLite,
	loadMessages: func(ctx context.Context, _ *sql.Conn, tx *sql.Tx, msgs []store.Message) error {
		return insertMessagesSQLite(ctx, tx, msgs)
	},
	// SQLite keeps no statistics unless asked and reuses free pages itself.
	maintain: func(*DB, context.Context) ([]string, error) { return nil, nil },
	snapshot: "VACUUM INTO $1",
}

// jsonEqualsSQLite is dialect.jsonEquals on text columns. SQLite's ->
// returns the stored JSON text, escapes and number spelling included, so
// scalars compare as SQL values of the matching JSON type: "caf\u00e9"
// equals "café" and 1.5e3 equals 1500, as on PostgreSQL.
func jsonEqualsSQLite(a *args, col string, c store.PayloadCondition) string {
	var path strings.Builder
	path.WriteString("$")
	for _, p := range c.Path {
		path.WriteString(`."` + p + `"`)
	}
	ph := a.add(path.String())
	dec := json.NewDecoder(strings.NewReader(string(c.Value)))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) == nil {
		switch t := v.(type) {
		case nil:
			return "json_type(" + col + ", " + ph + ") = 'null'"
		case bool:
			return "json_type(" + col + ", " + ph + ") = '" + strconv.FormatBool(t) + "'"
		case string:
			return "(json_type(" + col + ", " + ph + ") = 'text' AND " + col + " ->> " + ph + " = " + a.add(t) + ")"
		case json.Number:
			var num any
			if n, err := t.Int64(); err == nil {
				num = n
			} else if f, err := t.Float64(); err == nil {
				num = f
			} else {
				return "false"
			}
			return "(json_type(" + col + ", " + ph + ") IN ('integer', 'real') AND " + col + " ->> " + ph + " = " + a.add(num) + ")"
		}
	}
	return "(" + col + " -> " + ph + ") = " + a.add(string(c.Value))
}

// insertMessagesEach is dialect.insertMessages a statement per message: in
// process, a statement costs little, and binding many arguments much.
func insertMessagesEach(ctx context.Context, q querier, msgs []*store.Message, counts *pendingCounts) error {
	for _, m := range msgs {
		if err := insertMessage(ctx, q, m, counts); err != nil {
			return err
		}
	}
	return nil
}

// changeStateSQLite is dialect.changeState: the one writer holds the
// database, so the rows read are the rows changed.
func changeStateSQLite(ctx context.Context, tx *sql.Tx, ch stateChange, sel selection, bound string, a args,
	until, now time.Time, counts *pendingCounts) (int, error) {
	target := sel.where
	if bound != "" {
		target = "id IN (SELECT id FROM messages WHERE " + sel.where + bound + ")"
	}
	n, err := collectMoves(tx.QueryContext(ctx, "SELECT subscriber_id, environment_id, "+codeSQL+", coalesce(tags, '[]'),"+
		" count(*) FROM messages WHERE "+target+" GROUP BY 1, 2, 3, 4", a...))(ch, counts)
	if err == nil && n > 0 {
		set := setClause(&a, ch, until, now)
		_, err = tx.ExecContext(ctx, "UPDATE messages SET "+set+" WHERE "+target, a...)
	}
	return n, err
}
