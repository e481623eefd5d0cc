package pipeline

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file holds the SQL of the inbox operations the benchmarks time
// beside the HTTP calls: the statements sqlstore runs for them, written out.

// messageColumns are the columns the store reads for a message.
const messageColumns = "id, organization_id, environment_id, notification_id, job_id, subscriber_id, workflow_id," +
	" template_identifier, transaction_id, channel, provider_id, content, subject, avatar, cta, actor, payload, data, tags," +
	" overrides, status, read, seen, archived, last_read_at, last_seen_at, deleted, created_at, updated_at," +
	" target, integration_id, provider_message_id, error_text, delivery, first_seen_at, archived_at, snoozed_until, severity"

// inboxWhere is the store's filter of a subscriber's in-app messages ($1 the
// subscriber's _id, $2 the environment); inboxWhereSQLite is SQLite's.
const (
	inboxWhere       = "subscriber_id = $1 AND environment_id = $2 AND channel = 'in_app' AND deleted = false"
	inboxWhereSQLite = "subscriber_id = $1 AND +environment_id = $2 AND channel = 'in_app' AND deleted = false"
)

// where is the store's inboxWhere on this store.
func (in *inbox) where() string {
	if in.kind == "sqlite" {
		return inboxWhereSQLite
	}
	return inboxWhere
}

// codeSQL is the store's code of a message's state in the inbox counts.
const codeSQL = "(CASE WHEN read THEN 1 ELSE 0 END + CASE WHEN seen THEN 2 ELSE 0 END" +
	" + CASE WHEN archived THEN 4 ELSE 0 END + CASE WHEN snoozed_until IS NOT NULL THEN 8 ELSE 0 END" +
	" + CASE severity WHEN 'low' THEN 16 WHEN 'medium' THEN 32 WHEN 'high' THEN 48 ELSE 0 END)"

// settleSQL is the probe every inbox read starts with: a snooze of the
// subscriber that is due.
func (in *inbox) settleSQL(ctx context.Context, subscriberID string) error {
	var one int
	err := in.db.Reader().QueryRowContext(ctx, "SELECT 1 FROM messages WHERE subscriber_id = $1 AND snoozed_until IS NOT NULL"+
		" AND deleted = false AND snoozed_until <= $2 LIMIT 1", subscriberID, time.Now().UnixMilli()).Scan(&one)
	if err == sql.ErrNoRows {
		return nil
	}
	if err == nil {
		err = fmt.Errorf("subscriber %s has a snooze due", subscriberID)
	}
	return err
}

// countsSQL reads the subscriber's inbox counts, by code, those of the
// messages with tag in withTag.
func (in *inbox) countsSQL(ctx context.Context, subscriberID, tag string) (all, withTag [64]int, err error) {
	rows, err := in.db.Reader().QueryContext(ctx, "SELECT state, tags, unread_unseen, read_unseen, unread_seen, read_seen"+
		" FROM inbox_counts WHERE subscriber_id = $1 AND environment_id = $2", subscriberID, in.scope.EnvironmentID)
	if err != nil {
		return all, withTag, err
	}
	defer rows.Close()
	for rows.Next() {
		var st int
		var tags string
		var n [4]int
		if err := rows.Scan(&st, &tags, &n[0], &n[1], &n[2], &n[3]); err != nil {
			return all, withTag, err
		}
		var list []string
		_ = json.Unmarshal([]byte(tags), &list)
		for i := range n {
			all[st<<2|i] += n[i]
			if slices.Contains(list, tag) {
				withTag[st<<2|i] += n[i]
			}
		}
	}
	return all, withTag, rows.Err()
}

// feedSQL runs the statements sqlstore.MessageFeed runs for one unfiltered
// page (the snooze probe, the page, then the subscriber's inbox_counts rows
// when the page does not tell the total) and returns the ids and the total
// count of the inbox proper (neither archived nor snoozed).
func (in *inbox) feedSQL(ctx context.Context, subscriberID string, page, limit int) ([]string, int, error) {
	if err := in.settleSQL(ctx, subscriberID); err != nil {
		return nil, 0, err
	}
	rows, err := in.db.Reader().QueryContext(ctx, "SELECT "+messageColumns+" FROM messages WHERE "+in.where()+
		" AND archived = $3 AND snoozed_until IS NULL ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5",
		subscriberID, in.scope.EnvironmentID, false, limit+1, page*limit)
	if err != nil {
		return nil, 0, err
	}
	ids, err := scanIDs(rows)
	if err != nil {
		return nil, 0, err
	}
	more := len(ids) > limit
	if more {
		ids = ids[:limit]
	}
	if page == 0 && !more {
		return ids, len(ids), nil
	}
	counts, _, err := in.countsSQL(ctx, subscriberID, "")
	total := 0
	for c, n := range counts {
		if c&(4|8) == 0 {
			total += n
		}
	}
	return ids, total, err
}

// countStar is the exact count of the subscriber's inbox proper (the
// messages neither archived nor snoozed, which the v1 feed shows), counted.
func (in *inbox) countStar(tb interface{ Fatalf(string, ...any) }, subscriberID string) int {
	var n int
	if err := in.db.Reader().QueryRow("SELECT count(*) FROM messages WHERE "+inboxWhere+" AND archived = $3"+
		" AND snoozed_until IS NULL", subscriberID, in.scope.EnvironmentID, false).Scan(&n); err != nil {
		tb.Fatalf("count: %v", err)
	}
	return n
}

// markSQL runs the transaction sqlstore.MessageMarkAs runs (on PostgreSQL
// the subscriber's lock; the due snoozes ended; the flags changed, with the
// codes they had; the messages read back; the counts moved) and returns the
// ids changed.
func (in *inbox) markSQL(ctx context.Context, subscriberID string, ids []string, read bool) ([]string, error) {
	set := "read = true, last_read_at = $%d, seen = true, last_seen_at = $%[1]d, first_seen_at = coalesce(first_seen_at, $%[1]d)"
	if !read {
		set = "read = false, seen = true, last_seen_at = $%d, first_seen_at = coalesce(first_seen_at, $%[1]d)"
	}
	now := time.Now().UnixMilli()
	pg := in.kind == "postgres"
	// $1 the subscriber, $2 the environment, then the ids.
	where := inboxWhere + " AND id IN ("
	if in.kind == "sqlite" { // the store's byIDsFilter: the ids' index, not the feed's nor the environment's
		where = "+" + inboxWhereSQLite + " AND id IN ("
	}
	args := []any{subscriberID, in.scope.EnvironmentID}
	for i, id := range ids {
		if i > 0 {
			where += ", "
		}
		where += "$" + strconv.Itoa(len(args)+1)
		args = append(args, id)
	}
	where += ")"
	set = fmt.Sprintf(set, len(args)+1) + fmt.Sprintf(", updated_at = $%d", len(args)+1)
	type key struct {
		c    int
		tags string
	}
	moved := map[key]int{}
	// change runs one change; set's placeholders come after where's, and
	// take now.
	change := func(tx *sql.Tx, where string, whereArgs []any, set string, next func(int) int) error {
		args := append(append([]any{}, whereArgs...), now)
		var rows *sql.Rows
		var err error
		if pg {
			rows, err = tx.QueryContext(ctx, "WITH old AS (SELECT id, subscriber_id, environment_id, "+codeSQL+" AS c,"+
				" coalesce(tags, '[]') AS t FROM messages WHERE "+where+" ORDER BY id FOR UPDATE), upd AS (UPDATE messages SET "+set+
				" FROM old WHERE messages.id = old.id RETURNING old.subscriber_id, old.environment_id, old.c, old.t)"+
				" SELECT subscriber_id, environment_id, c, t, count(*) FROM upd GROUP BY subscriber_id, environment_id, c, t", args...)
		} else {
			rows, err = tx.QueryContext(ctx, "SELECT subscriber_id, environment_id, "+codeSQL+", coalesce(tags, '[]'), count(*)"+
				" FROM messages WHERE "+where+" GROUP BY 1, 2, 3, 4", whereArgs...)
		}
		if err != nil {
			return err
		}
		total := 0
		for rows.Next() {
			var s, e, t string
			var c, n int
			if err := rows.Scan(&s, &e, &c, &t, &n); err != nil {
				rows.Close()
				return err
			}
			moved[key{c, t}] -= n
			moved[key{next(c), t}] += n
			total += n
		}
		rows.Close()
		if err := rows.Err(); err != nil || pg || total == 0 {
			return err
		}
		_, err = tx.ExecContext(ctx, "UPDATE messages SET "+set+" WHERE "+where, args...)
		return err
	}
	tx, err := in.db.Writer().BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck
	if pg {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(1131, hashtext($1))", subscriberID); err != nil {
			return nil, err
		}
	}
	expire := "created_at = snoozed_until, snoozed_until = NULL, read = false, seen = false, first_seen_at = NULL, updated_at = $4"
	if err := change(tx, "subscriber_id = $1 AND snoozed_until IS NOT NULL AND deleted = false AND snoozed_until <= $2"+
		" AND environment_id = $3", []any{subscriberID, now, in.scope.EnvironmentID}, expire,
		func(c int) int { return c &^ (1 | 2 | 8) }); err != nil {
		return nil, err
	}
	if err := change(tx, where, args, set, func(c int) int {
		if read {
			return c | 1 | 2
		}
		return c&^1 | 2
	}); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, "SELECT "+messageColumns+" FROM messages WHERE "+where, args...)
	if err != nil {
		return nil, err
	}
	changed, err := scanIDs(rows)
	if err != nil {
		return nil, err
	}
	byRow := map[key]*[4]int{} // by state and tags
	for k, n := range moved {
		if n == 0 {
			continue
		}
		row := key{k.c >> 2, k.tags}
		if byRow[row] == nil {
			byRow[row] = &[4]int{}
		}
		byRow[row][k.c&3] += n
	}
	conflict := "(subscriber_id, state, tags)"
	if pg {
		conflict = "(subscriber_id, state, md5(tags))"
	}
	for row, n := range byRow { // (the store upserts them in one statement, in order)
		if _, err := tx.ExecContext(ctx, "INSERT INTO inbox_counts (subscriber_id, state, tags, environment_id, unread_unseen,"+
			" unread_seen, read_unseen, read_seen) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT "+conflict+" DO UPDATE SET"+
			" unread_unseen = inbox_counts.unread_unseen + excluded.unread_unseen, unread_seen = inbox_counts.unread_seen + excluded.unread_seen,"+
			" read_unseen = inbox_counts.read_unseen + excluded.read_unseen, read_seen = inbox_counts.read_seen + excluded.read_seen",
			subscriberID, row.c, row.tags, in.scope.EnvironmentID, n[0], n[2], n[1], n[3]); err != nil {
			return nil, err
		}
	}
	return changed, tx.Commit()
}

// scanIDs reads rows of messageColumns and returns their ids.
func scanIDs(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
	Close() error
}) ([]string, error) {
	defer rows.Close()
	cols := make([]any, strings.Count(messageColumns, ",")+1)
	ptrs := make([]any, len(cols))
	for i := range cols {
		ptrs[i] = &cols[i]
	}
	var ids []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		ids = append(ids, fmt.Sprint(cols[0]))
	}
	return ids, rows.Err()
}
