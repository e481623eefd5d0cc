package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// inboxLockClass is the first key of the transaction-scoped advisory locks
// that serialize the state changes of one subscriber's messages on
// PostgreSQL (two-key locks: apart from the digest's one-key ones).
const inboxLockClass = "1131"

// inboxTx runs fn in a write transaction that changes a subscriber's
// messages: on PostgreSQL under the subscriber's lock (two changes of one
// inbox cannot lock its rows in different orders), after the snoozes due by
// now are over, and with the counts fn gathers applied at the end.
func (db *DB) inboxTx(ctx context.Context, scope store.Scope, subscriberID string, now time.Time,
	fn func(tx *sql.Tx, counts *pendingCounts) error) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if err := db.d.lock(ctx, tx, "SELECT pg_advisory_xact_lock("+inboxLockClass+", hashtext($1))", subscriberID); err != nil {
			return fmt.Errorf("sqlstore: inbox lock: %w", err)
		}
		counts := &pendingCounts{perStatement: db.d.countsPerStatement}
		if _, err := db.changeState(ctx, tx, changeExpire, db.dueSelection(scope, subscriberID, now), time.Time{}, now, counts); err != nil {
			return err
		}
		if err := fn(tx, counts); err != nil {
			return err
		}
		return db.applyCounts(ctx, tx, counts)
	})
}

// dueSelection selects a subscriber's snoozes due by now (through the
// partial index messages_snoozed_subscriber).
func (db *DB) dueSelection(scope store.Scope, subscriberID string, now time.Time) selection {
	var a args
	return selection{where: "subscriber_id = " + a.add(subscriberID) + " AND snoozed_until IS NOT NULL AND deleted = false" +
		" AND snoozed_until <= " + a.add(ms(now)) + " AND environment_id = " + a.add(scope.EnvironmentID), args: a}
}

// settleSnoozes ends a subscriber's snoozes due by now before its inbox is
// read, so that reads never wait for the workers' pass: one index probe,
// and a write only when one is due.
func (db *DB) settleSnoozes(ctx context.Context, scope store.Scope, subscriberID string, now time.Time) error {
	var one int
	err := db.r.QueryRowContext(ctx, "SELECT 1 FROM messages WHERE subscriber_id = $1 AND snoozed_until IS NOT NULL"+
		" AND deleted = false AND snoozed_until <= $2 LIMIT 1", subscriberID, ms(now)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sqlstore: due snoozes: %w", err)
	}
	return db.inboxTx(ctx, scope, subscriberID, now, func(*sql.Tx, *pendingCounts) error { return nil })
}

// settledCounts reads a subscriber's counters, ending its due snoozes first
// when it has snoozed messages: without any (the counters say so exactly),
// the counters are the one read.
func (db *DB) settledCounts(ctx context.Context, scope store.Scope, subscriberID string, now time.Time) (subscriberCounts, error) {
	counts, err := db.countsOf(ctx, scope.EnvironmentID, subscriberID)
	if err != nil || !counts.anySnoozed() {
		return counts, err
	}
	if err := db.settleSnoozes(ctx, scope, subscriberID, now); err != nil {
		return nil, err
	}
	return db.countsOf(ctx, scope.EnvironmentID, subscriberID)
}

// InboxUnsnoozeDue implements store.InboxState: the workers' pass over the
// snoozes of every subscriber, oldest due first, passing over rows that a
// subscriber's own change holds.
func (db *DB) InboxUnsnoozeDue(ctx context.Context, limit int, now time.Time) (int, error) {
	var one int
	err := db.r.QueryRowContext(ctx, "SELECT 1 FROM messages WHERE snoozed_until IS NOT NULL AND deleted = false"+
		" AND snoozed_until <= $1 LIMIT 1", ms(now)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sqlstore: due snoozes: %w", err)
	}
	var n int
	err = db.inTxPipeline(ctx, func(tx *sql.Tx) error {
		var a args
		sel := selection{where: "snoozed_until IS NOT NULL AND deleted = false AND snoozed_until <= " + a.add(ms(now)),
			args: a, order: "snoozed_until, id", limit: limit, skipLocked: true}
		counts := &pendingCounts{perStatement: db.d.countsPerStatement}
		var err error
		if n, err = db.changeState(ctx, tx, changeExpire, sel, time.Time{}, now, counts); err != nil {
			return err
		}
		return db.applyCounts(ctx, tx, counts)
	})
	return n, err
}

// filterConditions are the conditions of f, each starting with " AND ".
func (db *DB) filterConditions(a *args, f *store.InboxFilter) string {
	var b strings.Builder
	for _, c := range []struct {
		col  string
		want *bool
	}{{"read", f.Read}, {"seen", f.Seen}, {"archived", f.Archived}} {
		if c.want != nil {
			b.WriteString(" AND " + c.col + " = " + a.add(*c.want))
		}
	}
	if f.Snoozed != nil {
		if *f.Snoozed {
			b.WriteString(" AND snoozed_until IS NOT NULL")
		} else {
			b.WriteString(" AND snoozed_until IS NULL")
		}
	}
	if len(f.Severity) > 0 {
		b.WriteString(" AND severity IN (" + a.list(f.Severity) + ")")
	}
	for _, group := range f.Tags {
		b.WriteString(" AND " + db.d.tagsAnyOf(a, group))
	}
	for _, c := range f.Data {
		b.WriteString(" AND " + db.d.jsonEquals(a, "data", c))
	}
	if f.CreatedGTE != nil {
		b.WriteString(" AND created_at >= " + a.add(ms(*f.CreatedGTE)))
	}
	if f.CreatedLTE != nil {
		b.WriteString(" AND created_at <= " + a.add(ms(*f.CreatedLTE)))
	}
	if f.ContextKeys != nil {
		b.WriteString(" AND " + contextKeysCondition(a, *f.ContextKeys))
	}
	return b.String()
}

// InboxList implements store.InboxState.
func (db *DB) InboxList(ctx context.Context, p *store.InboxListParams) (store.InboxPage, error) {
	var page store.InboxPage
	if err := db.settleSnoozes(ctx, p.Scope, p.SubscriberID, p.Now); err != nil {
		return page, err
	}
	var a args
	where := db.inboxFilter(&a, p.Scope, p.SubscriberID) + db.filterConditions(&a, &p.InboxFilter)
	if p.After != "" {
		var created int64
		err := db.r.QueryRowContext(ctx, "SELECT created_at FROM messages WHERE id = $1 AND subscriber_id = $2"+
			" AND environment_id = $3", p.After, p.SubscriberID, p.EnvironmentID).Scan(&created)
		if errors.Is(err, sql.ErrNoRows) {
			return page, store.ErrBadCursor
		}
		if err != nil {
			return page, fmt.Errorf("sqlstore: inbox cursor: %w", err)
		}
		cph := a.add(created)
		where += " AND (created_at < " + cph + " OR (created_at = " + cph + " AND id < " + a.add(p.After) + "))"
	}
	rows, err := db.r.QueryContext(ctx, "SELECT "+messageCols+" FROM messages WHERE "+where+
		" ORDER BY created_at DESC, id DESC LIMIT "+strconv.Itoa(p.Limit+1)+" OFFSET "+strconv.Itoa(p.Offset), a...)
	if err != nil {
		return page, fmt.Errorf("sqlstore: inbox list: %w", err)
	}
	if page.Messages, err = scanAll(rows, nil, scanMessage); err != nil {
		return page, err
	}
	if len(page.Messages) > p.Limit {
		page.HasMore, page.Messages = true, page.Messages[:p.Limit]
	}
	return page, nil
}

// InboxCount implements store.InboxState. Filters of state and tags are
// sums of the subscriber's counters; those with data or times are counted
// together in one pass over the subscriber's messages.
func (db *DB) InboxCount(ctx context.Context, p *store.InboxCountParams) ([]int, error) {
	scope, subscriberID, filters := p.Scope, p.SubscriberID, p.Filters
	counts, err := db.settledCounts(ctx, scope, subscriberID, p.Now)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(filters))
	var a args
	var sums []string
	var at []int
	for i := range filters {
		f := &filters[i]
		if !f.Counted() {
			sums = append(sums, "coalesce(sum(CASE WHEN true"+db.filterConditions(&a, f)+" THEN 1 ELSE 0 END), 0)")
			at = append(at, i)
			continue
		}
		out[i] = counts.sumMatching(f)
	}
	if len(sums) == 0 {
		return out, nil
	}
	ns := make([]any, len(sums))
	for i := range ns {
		ns[i] = &out[at[i]]
	}
	err = db.r.QueryRowContext(ctx, "SELECT "+strings.Join(sums, ", ")+" FROM messages WHERE "+
		db.inboxFilter(&a, scope, subscriberID), a...).Scan(ns...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: inbox count: %w", err)
	}
	return out, nil
}

// InboxChangeOne implements store.InboxState (a deleted message is
// returned with its id alone).
func (db *DB) InboxChangeOne(ctx context.Context, p *store.InboxChangeParams) (store.Message, error) {
	var out store.Message
	err := db.inboxTx(ctx, p.Scope, p.SubscriberID, p.Now, func(tx *sql.Tx, counts *pendingCounts) error {
		sel := db.subscriberSelection(p.Scope, p.SubscriberID, nil, []string{p.ID})
		n, err := db.changeState(ctx, tx, p.Action, sel, p.SnoozeUntil, p.Now, counts)
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrNotFound
		}
		if p.Action == store.InboxDelete {
			out.ID = p.ID
			return nil
		}
		out, err = db.messageIn(ctx, tx, p.Scope, p.SubscriberID, p.ID)
		return err
	})
	return out, err
}

// messageIn reads one of a subscriber's in-app messages in tx.
func (db *DB) messageIn(ctx context.Context, tx *sql.Tx, scope store.Scope, subscriberID, id string) (store.Message, error) {
	var a args
	return scanMessage(tx.QueryRowContext(ctx, "SELECT "+messageCols+" FROM messages WHERE "+
		db.byIDsFilter(&a, scope, subscriberID, []string{id}), a...))
}

// InboxChangeMany implements store.InboxState.
func (db *DB) InboxChangeMany(ctx context.Context, p *store.InboxChangeParams) (int, error) {
	var n int
	err := db.inboxTx(ctx, p.Scope, p.SubscriberID, p.Now, func(tx *sql.Tx, counts *pendingCounts) error {
		var err error
		n, err = db.changeState(ctx, tx, p.Action, db.subscriberSelection(p.Scope, p.SubscriberID, &p.Filter, p.IDs),
			p.SnoozeUntil, p.Now, counts)
		return err
	})
	return n, err
}

// InboxCompleteAction implements store.InboxState: the action's status in
// the message's cta (done, or pending again) with the button as its result,
// and the message read if it was not.
func (db *DB) InboxCompleteAction(ctx context.Context, p *store.InboxActionParams) (store.Message, error) {
	scope, subscriberID, messageID, now := p.Scope, p.SubscriberID, p.MessageID, p.Now
	var out store.Message
	err := db.inboxTx(ctx, scope, subscriberID, now, func(tx *sql.Tx, counts *pendingCounts) error {
		var a args
		var raw string
		err := tx.QueryRowContext(ctx, "SELECT cta FROM messages WHERE "+db.byIDsFilter(&a, scope, subscriberID, []string{messageID})+
			db.d.forUpdate, a...).Scan(&raw)
		if err != nil {
			return notFound(err)
		}
		cta, err := setActionStatus(raw, p.Button, p.Done)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE messages SET cta = $1, updated_at = $2 WHERE id = $3", cta, ms(now), messageID); err != nil {
			return fmt.Errorf("sqlstore: inbox action: %w", err)
		}
		unread := store.InboxFilter{Read: new(bool)}
		if _, err := db.changeState(ctx, tx, store.InboxRead, db.subscriberSelection(scope, subscriberID, &unread, []string{messageID}),
			time.Time{}, now, counts); err != nil {
			return err
		}
		out, err = db.messageIn(ctx, tx, scope, subscriberID, messageID)
		return err
	})
	return out, err
}

// setActionStatus returns the cta with action.status done or pending and
// action.result.type the button; store.ErrNoAction if it has no such button.
func setActionStatus(raw, button string, done bool) (string, error) {
	var cta map[string]json.RawMessage
	if err := json.Unmarshal([]byte(orJSON(store.JSON(raw), "{}")), &cta); err != nil || cta == nil {
		cta = map[string]json.RawMessage{}
	}
	var action map[string]json.RawMessage
	if err := json.Unmarshal(cta["action"], &action); err != nil || action == nil {
		return "", store.ErrNoAction
	}
	var buttons []struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(action["buttons"], &buttons)
	found := false
	for _, b := range buttons {
		found = found || b.Type == button
	}
	if !found {
		return "", store.ErrNoAction
	}
	status := "pending"
	if done {
		status = "done"
	}
	var result map[string]json.RawMessage
	if err := json.Unmarshal(action["result"], &result); err != nil || result == nil {
		result = map[string]json.RawMessage{}
	}
	result["type"], _ = json.Marshal(button)
	action["status"], _ = json.Marshal(status)
	action["result"], _ = json.Marshal(result)
	cta["action"], _ = json.Marshal(action)
	enc, err := json.Marshal(cta)
	return string(enc), err
}
