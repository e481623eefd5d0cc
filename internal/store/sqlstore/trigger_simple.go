package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// A simple group in one statement. Where the database is across a network
// every round trip of a group's transaction is a wait: BEGIN, the claim of
// the transactionIds, the rows, COMMIT. A group whose recipients were all
// found before it (findKnown) and that upserts no subscriber, places no
// digest and fans out to no topic needs nothing from the database to be
// built, so PostgreSQL writes it as ONE statement outside any explicit
// transaction — the claim, the rows, the messages and the inbox counts as
// data-modifying CTEs, atomic as every statement is. The claim is
// optimistic: when a transactionId was used before (or by a concurrent
// group), the statement fails on purpose and writes nothing, and the group
// takes the transaction that tells each duplicate apart.

// errDuplicateInGroup is the statement's own failure: a transactionId of
// the group was claimed before.
var errDuplicateInGroup = errors.New("sqlstore: a transactionId of the group was used before")

// simpleGroup reports whether every trigger of calls can be written by
// writeSimpleGroup.
func (db *DB) simpleGroup(calls []*triggerCall) bool {
	if db.d.name != "postgres" {
		return false
	}
	for _, c := range calls {
		p := c.p
		if p.Known == nil || !simpleCandidate(p) {
			return false
		}
		for _, r := range p.Recipients {
			if _, ok := p.Known[r.SubscriberID]; !ok {
				return false
			}
		}
	}
	return true
}

// simpleCandidate reports whether a trigger can be part of a simple group
// once its recipients are found: it upserts no subscriber, places no digest
// and fans out to no topic.
func simpleCandidate(p *store.TriggerParams) bool {
	if len(p.Topics) > 0 || p.Broadcast || p.DigestPlans != nil {
		return false
	}
	return !slices.ContainsFunc(p.Recipients, func(r store.Recipient) bool { return r.Upsert != nil })
}

// writeSimpleGroup writes a simple group in one statement; ok is false
// (and nothing written) when a transactionId was used before.
func (db *DB) writeSimpleGroup(ctx context.Context, calls []*triggerCall) (results []store.TriggerResult, ok bool, err error) {
	results = make([]store.TriggerResult, len(calls))
	live := make([]int, len(calls))
	for i := range calls {
		live[i] = i
	}
	g := &triggerGroup{db: db} // no transaction: nothing below reads the database
	if err := g.findRecipients(ctx, calls, live); err != nil {
		return nil, false, err
	}
	inApp := make([][]*store.JobOutcome, len(calls))
	for _, i := range live {
		if results[i].Notifications, inApp[i], err = g.notifications(ctx, calls[i].p); err != nil {
			return nil, false, err
		}
	}
	if err := g.placeAndAdd(ctx, calls, live, results, inApp); err != nil {
		return nil, false, err
	}
	var a args
	claims := make([][]any, len(calls))
	for i, c := range calls {
		claims[i] = []any{c.p.EnvironmentID, c.p.TransactionID, c.p.Workflow.ID, ms(c.p.Now)}
	}
	src, err := db.d.rowSource(&a, claims, transactionTypes)
	if err != nil {
		return nil, false, err
	}
	stmts, counts, err := db.groupStatements(&a, g.rows, g.msgs)
	if err != nil {
		return nil, false, err
	}
	// The webhook outbox entries of its new in-app messages, in the same
	// statement.
	var added *txInboxChanges
	if counts != nil {
		added = &txInboxChanges{}
		added.note(counts)
	}
	entries, err := db.ownEntries(ctx, time.Now(), added, nil)
	if err != nil {
		return nil, false, err
	}
	if len(entries) > 0 {
		esrc, err := db.d.rowSource(&a, outboxRows(entries), outboxTypes)
		if err != nil {
			return nil, false, err
		}
		stmts = append(stmts, "INSERT INTO webhook_outbox ("+outboxInsertCols+") SELECT * FROM ("+esrc+") v")
	}
	ctes := []string{"claimed AS (INSERT INTO transactions (environment_id, transaction_id, workflow_id, created_at)" +
		" SELECT * FROM (" + src + ") v ON CONFLICT DO NOTHING RETURNING 1)"}
	for i, s := range stmts {
		ctes = append(ctes, "w"+strconv.Itoa(i)+" AS ("+s+")")
	}
	// Division by zero when fewer transactionIds were claimed than sent, or
	// when a recipient changed since it was read: the statement fails, and
	// with it every insert.
	current, err := db.recipientsCurrent(&a, calls)
	if err != nil || current == "" {
		return nil, false, err
	}
	stmt := "WITH " + strings.Join(ctes, ", ") + " SELECT 1 / CASE WHEN (SELECT count(*) FROM claimed) = " +
		a.add(len(calls)) + " AND " + current + " THEN 1 ELSE 0 END"
	if err := db.gate.acquire(ctx, false); err != nil {
		return nil, false, err
	}
	var one int
	err = db.w.QueryRowContext(ctx, stmt, a...).Scan(&one)
	db.gate.release(false)
	if err != nil {
		if isDivisionByZero(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("sqlstore: trigger: %w", err)
	}
	if db.realtime.fn.Load() != nil {
		ch := &txInboxChanges{}
		ch.note(counts)
		if len(ch.byEnv) > 0 {
			db.inboxCommitted(ch)
		}
	}
	db.outboxCommitted(nil, entries)
	return results, true, nil
}

// isDivisionByZero reports PostgreSQL's division_by_zero (22012).
func isDivisionByZero(err error) bool {
	var code interface{ SQLState() string }
	return errors.As(err, &code) && code.SQLState() == "22012"
}

// recipientsCurrent is a condition that holds when the recipients of calls
// are as they were read: each subscriber row has the version planned with,
// and the preference rows of each (subscriber, workflow) pair read are
// exactly those read. It is empty when the calls were planned from two
// reads of the same row (the group then takes the transaction).
func (db *DB) recipientsCurrent(a *args, calls []*triggerCall) (string, error) {
	var g recipientVersions
	for _, c := range calls {
		if c.versions != nil && !g.merge(c.versions) {
			return "", nil
		}
	}
	cond := "true"
	if len(g.subs) == 0 {
		return cond, nil
	}
	subs := make([][]any, 0, len(g.subs))
	for id, v := range g.subs {
		subs = append(subs, []any{id, v})
	}
	src, err := db.d.rowSource(a, subs, []string{"TEXT", "BIGINT"})
	if err != nil {
		return "", err
	}
	cond += " AND (SELECT count(*) FROM subscribers s JOIN (" + src + ") v (id, version) ON s.id = v.id AND s." +
		db.d.rowVersion + " = v.version AND s.deleted = false) = " + a.add(len(subs))
	pairs := make([][]any, 0, len(g.prefs))
	found := 0
	for k, v := range g.prefs {
		pairs = append(pairs, []any{k[0], k[1], v})
		if v != 0 {
			found++
		}
	}
	if len(pairs) == 0 {
		return cond, nil
	}
	if src, err = db.d.rowSource(a, pairs, []string{"TEXT", "TEXT", "BIGINT"}); err != nil {
		return "", err
	}
	n := a.add(found)
	cond += " AND (SELECT count(*) = " + n + " AND count(*) FILTER (WHERE p." + db.d.rowVersion + " = v.version) = " + n +
		" FROM subscriber_preferences p JOIN (" + src + ") v (subscriber_id, workflow_id, version)" +
		" ON p.subscriber_id = v.subscriber_id AND p.workflow_id = v.workflow_id)"
	return cond, nil
}
