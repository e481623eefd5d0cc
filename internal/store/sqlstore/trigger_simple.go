package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

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
		if p.Known == nil || len(p.Topics) > 0 || p.Broadcast || p.DigestPlans != nil {
			return false
		}
		for _, r := range p.Recipients {
			if _, ok := p.Known[r.SubscriberID]; !ok || r.Upsert != nil {
				return false
			}
		}
	}
	return true
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
	ctes := []string{"claimed AS (INSERT INTO transactions (environment_id, transaction_id, workflow_id, created_at)" +
		" SELECT * FROM (" + src + ") v ON CONFLICT DO NOTHING RETURNING 1)"}
	for i, s := range stmts {
		ctes = append(ctes, "w"+strconv.Itoa(i)+" AS ("+s+")")
	}
	// Division by zero when fewer transactionIds were claimed than sent:
	// the statement fails, and with it every insert.
	stmt := "WITH " + strings.Join(ctes, ", ") + " SELECT 1 / CASE WHEN (SELECT count(*) FROM claimed) = " +
		a.add(len(calls)) + " THEN 1 ELSE 0 END"
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
	return results, true, nil
}

// isDivisionByZero reports PostgreSQL's division_by_zero (22012).
func isDivisionByZero(err error) bool {
	var code interface{ SQLState() string }
	return errors.As(err, &code) && code.SQLState() == "22012"
}
