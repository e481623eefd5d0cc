package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// The webhook outbox (store/outbox.go): every write transaction gathers the
// message events of what it writes (noteOutbox; the new in-app messages
// come from the inbox tracking, realtime.go) and, before it commits, writes
// those an endpoint takes — one entry per environment — with the entries
// its context asks for. After the commit it tells the webhooks service.

// txOutbox are one transaction's message events, by environment, and the
// result its store call noted for its intents' Render.
type txOutbox struct {
	byEnv  map[string][]store.OutboxMessage
	order  []string
	result any
}

// outboxHook is the DB's part of the outbox.
type outboxHook struct {
	wants   atomic.Pointer[store.OutboxFilter]
	written atomic.Pointer[func([]store.OutboxEntry)]
}

// SetWebhookOutbox implements store.WebhookOutbox.
func (db *DB) SetWebhookOutbox(wants store.OutboxFilter, written func([]store.OutboxEntry)) {
	db.outbox.written.Store(&written)
	db.outbox.wants.Store(&wants)
}

// outboxOn reports whether the store writes its own changes' entries.
func (db *DB) outboxOn() bool { return db.outbox.wants.Load() != nil }

// outboxPending reports whether ctx has intents not yet written.
func outboxPending(ctx context.Context) bool {
	for _, in := range store.OutboxFrom(ctx) {
		if !in.Written() {
			return true
		}
	}
	return false
}

// noteResult records what a store call's change wrote, for its intents'
// Render (store.OutboxTx.Result).
func noteResult(q querier, v any) {
	if n := tracked(q); n != nil {
		n.outbox.result = v
	}
}

// noteOutbox records message events of environment env written on q, if q
// is a tracked transaction.
func noteOutbox(q querier, env string, evs ...store.OutboxMessage) {
	n := tracked(q)
	if n == nil || len(evs) == 0 {
		return
	}
	ob := &n.outbox
	if ob.byEnv == nil {
		ob.byEnv = map[string][]store.OutboxMessage{}
	}
	if _, ok := ob.byEnv[env]; !ok {
		ob.order = append(ob.order, env)
	}
	ob.byEnv[env] = append(ob.byEnv[env], evs...)
}

// noteSent records message.sent or message.failed for each message that is
// not in-app (in-app messages are noted as they are created).
func noteSent(q querier, msgs []*store.Message) {
	for _, m := range msgs {
		if m == nil || m.Channel == "in_app" {
			continue
		}
		typ := store.WebhookMessageSent
		if m.Status == store.MessageError {
			typ = store.WebhookMessageFailed
		}
		noteOutbox(q, m.EnvironmentID, store.OutboxMessage{Type: typ, Message: m})
	}
}

// outboxCols are the columns of an entry, as claimed.
const outboxCols = "id, organization_id, environment_id, kind, ref, claims, created_at"

// outboxInsertCols are the columns of a new entry's row.
const outboxInsertCols = "id, organization_id, environment_id, kind, ref, due_at, created_at"

// outboxTypes are the column types of a new entry's row.
var outboxTypes = []string{"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "BIGINT", "BIGINT"}

// newEntry is a new entry written at now.
func newEntry(now time.Time, org, env, kind string, ref any) (store.OutboxEntry, error) {
	b, err := json.Marshal(ref)
	if err != nil {
		return store.OutboxEntry{}, fmt.Errorf("sqlstore: an outbox entry: %w", err)
	}
	return store.OutboxEntry{ID: id.NewAt(now), Scope: store.Scope{OrganizationID: org, EnvironmentID: env}, Kind: kind, Ref: b,
		CreatedAt: now}, nil
}

// outboxRows are the rows of new entries: due to other drains after
// store.OutboxHold.
func outboxRows(entries []store.OutboxEntry) [][]any {
	rows := make([][]any, len(entries))
	for i, e := range entries {
		rows[i] = []any{e.ID, e.OrganizationID, e.EnvironmentID, e.Kind, string(e.Ref), ms(e.CreatedAt.Add(store.OutboxHold)),
			ms(e.CreatedAt)}
	}
	return rows
}

// ownEntries are the entries of a transaction's own message events that an
// endpoint takes, one per environment: the new in-app messages of inbox
// (sent and delivered; nil: none) and what ob noted (nil: none).
func (db *DB) ownEntries(ctx context.Context, now time.Time, inbox *txInboxChanges, ob *txOutbox) ([]store.OutboxEntry, error) {
	if !db.outboxOn() {
		return nil, nil
	}
	wants := *db.outbox.wants.Load()
	byEnv := map[string][]store.OutboxMessage{}
	var order []string
	if inbox != nil {
		for env, c := range inbox.byEnv {
			if len(c.MessageIDs) == 0 {
				continue
			}
			sent, delivered := wants(ctx, env, store.WebhookMessageSent), wants(ctx, env, store.WebhookMessageDelivered)
			if !sent && !delivered {
				continue
			}
			order = append(order, env)
			for _, mid := range c.MessageIDs {
				if sent {
					byEnv[env] = append(byEnv[env], store.OutboxMessage{Type: store.WebhookMessageSent, MessageID: mid})
				}
				if delivered {
					byEnv[env] = append(byEnv[env], store.OutboxMessage{Type: store.WebhookMessageDelivered, MessageID: mid})
				}
			}
		}
	}
	if ob != nil {
		for _, env := range ob.order {
			for _, ev := range ob.byEnv[env] {
				if wants(ctx, env, ev.Type) {
					if _, ok := byEnv[env]; !ok {
						order = append(order, env)
					}
					byEnv[env] = append(byEnv[env], ev)
				}
			}
		}
	}
	entries := make([]store.OutboxEntry, 0, len(order))
	for _, env := range order {
		e, err := newEntry(now, "", env, store.OutboxMessages, byEnv[env])
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// flushOutbox writes, in tx, the entries of its own message events (its
// notes n: nil when not tracked) and of its context's intents. It returns
// the intents it wrote and the entries.
func (db *DB) flushOutbox(ctx context.Context, tx *sql.Tx, n *txNotes) ([]*store.OutboxIntent, []store.OutboxEntry, error) {
	if n == nil {
		return nil, nil, nil
	}
	ob := &n.outbox
	now := time.Now()
	entries, err := db.ownEntries(ctx, now, &n.inbox, ob)
	if err != nil {
		return nil, nil, err
	}
	add := func(org, env, kind string, ref any) error {
		e, err := newEntry(now, org, env, kind, ref)
		entries = append(entries, e)
		return err
	}
	var flushed []*store.OutboxIntent
	for _, in := range store.OutboxFrom(ctx) {
		if in.Written() {
			continue
		}
		switch {
		case in.Changed != nil:
			msgs, err := db.webhookMessagesChanged(ctx, tx, in.Changed)
			if err != nil {
				return nil, nil, err
			}
			evs := make([]store.OutboxMessage, len(msgs))
			for i := range msgs {
				evs[i] = store.OutboxMessage{Type: in.Type, Message: &msgs[i]}
			}
			if len(evs) > 0 {
				if err := add(in.OrganizationID, in.EnvironmentID, store.OutboxMessages, evs); err != nil {
					return nil, nil, err
				}
			}
		case in.Render != nil:
			evs, err := in.Render(ctx, outboxTx{tx: tx, result: ob.result})
			if err != nil {
				return nil, nil, fmt.Errorf("sqlstore: rendering webhook events: %w", err)
			}
			if len(evs) > 0 {
				if err := add(in.OrganizationID, in.EnvironmentID, store.OutboxEvents, evs); err != nil {
					return nil, nil, err
				}
			}
		}
		flushed = append(flushed, in)
	}
	if len(entries) == 0 {
		return flushed, nil, nil
	}
	err = db.insertWebhookRows(ctx, tx, "webhook_outbox", outboxInsertCols, outboxRows(entries), outboxTypes)
	if err != nil {
		return nil, nil, fmt.Errorf("sqlstore: writing the webhook outbox: %w", err)
	}
	return flushed, entries, nil
}

// outboxTx is store.OutboxTx on a change's transaction.
type outboxTx struct {
	tx     *sql.Tx
	result any
}

func (o outboxTx) Result() any { return o.result }

func (o outboxTx) WorkflowGet(ctx context.Context, scope store.Scope, idOrKey string) (store.Workflow, error) {
	return workflowGet(ctx, o.tx, scope, idOrKey)
}

// outboxCommitted marks the flushed intents written and tells the webhooks
// service of the entries written.
func (db *DB) outboxCommitted(flushed []*store.OutboxIntent, entries []store.OutboxEntry) {
	for _, in := range flushed {
		in.MarkWritten()
	}
	if len(entries) > 0 {
		if fn := db.outbox.written.Load(); fn != nil && *fn != nil {
			(*fn)(entries)
		}
	}
}

// WebhookOutboxClaim implements store.WebhookOutbox, holding the write gate
// only for the claim.
func (db *DB) WebhookOutboxClaim(ctx context.Context, kinds []string, limit int, lease time.Duration, now time.Time) ([]store.OutboxEntry, error) {
	if len(kinds) == 0 || limit <= 0 {
		return nil, nil
	}
	if err := db.gate.acquire(ctx, true); err != nil {
		return nil, err
	}
	defer db.gate.release(true)
	var a args
	until, at := a.add(ms(now.Add(lease))), a.add(ms(now))
	rows, err := db.w.QueryContext(ctx, "UPDATE webhook_outbox SET due_at = "+until+", claims = claims + 1 WHERE id IN"+
		" (SELECT id FROM webhook_outbox WHERE due_at <= "+at+" AND kind IN ("+a.list(kinds)+") ORDER BY due_at LIMIT "+
		strconv.Itoa(limit)+db.d.skipLocked+") RETURNING "+outboxCols, a...)
	out, err := scanAll(rows, err, func(r rowScanner) (store.OutboxEntry, error) {
		var e store.OutboxEntry
		var ref string
		var created int64
		if err := r.Scan(&e.ID, &e.OrganizationID, &e.EnvironmentID, &e.Kind, &ref, &e.Claims, &created); err != nil {
			return e, err
		}
		e.Ref, e.CreatedAt = json.RawMessage(ref), fromMS(created)
		return e, nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlstore: claiming webhook outbox entries: %w", err)
	}
	return out, nil
}

// deleteOutbox deletes the entries of ids in tx and returns those it
// deleted: the others were made into events by another drain.
func (db *DB) deleteOutbox(ctx context.Context, tx *sql.Tx, ids []string) (map[string]bool, error) {
	gone := map[string]bool{}
	for start := 0; start < len(ids); start += webhookIDsPerRead {
		var a args
		rows, err := tx.QueryContext(ctx, "DELETE FROM webhook_outbox WHERE id IN ("+a.list(ids[start:min(start+webhookIDsPerRead, len(ids))])+
			") RETURNING id", a...)
		if err := eachRow(rows, err, func(r rowScanner) error {
			var v string
			if err := r.Scan(&v); err != nil {
				return err
			}
			gone[v] = true
			return nil
		}); err != nil {
			return nil, fmt.Errorf("sqlstore: deleting webhook outbox entries: %w", err)
		}
	}
	return gone, nil
}
