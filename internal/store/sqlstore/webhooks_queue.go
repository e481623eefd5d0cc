package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// The webhook queue: events and their attempts. An attempt is claimed as
// jobs are (one UPDATE … RETURNING of the due rows, SKIP LOCKED on
// PostgreSQL), its due_at moved to the end of the lease; its answer is
// written under the claim it was made under, and a failed attempt's next
// one is inserted with it. A sender that dies leaves its attempts to be
// claimed again when their lease ends: each event reaches each endpoint at
// least once.

const webhookAttemptCols = "id, endpoint_id, event_id, event_type, attempt, claims, status_code, success, error, attempted_at," +
	" next_attempt_at"

func scanWebhookAttempt(row rowScanner) (store.WebhookAttempt, error) {
	var a store.WebhookAttempt
	var code sql.NullInt64
	var text sql.NullString
	var at, next sql.NullInt64
	if err := row.Scan(&a.ID, &a.EndpointID, &a.EventID, &a.EventType, &a.Attempt, &a.Claims, &code, &a.Success, &text, &at,
		&next); err != nil {
		return a, notFound(err)
	}
	if code.Valid {
		c := int(code.Int64)
		a.StatusCode = &c
	}
	a.Error, a.AttemptedAt, a.NextAttemptAt = text.String, fromNullMS(at), fromNullMS(next)
	return a, nil
}

// webhookEventTypes are the column types of an event row, and
// webhookAttemptTypes of a new attempt's.
var (
	webhookEventTypes   = []string{"TEXT", "TEXT", "TEXT", "TEXT", "BIGINT"}
	webhookAttemptTypes = []string{"TEXT", "TEXT", "TEXT", "TEXT", "INTEGER", "BIGINT"}
)

// insertWebhookRows writes rows into table a chunk at a time.
func (db *DB) insertWebhookRows(ctx context.Context, q querier, table, cols string, rows [][]any, types []string) error {
	for start := 0; start < len(rows); start += db.rowsPerStatement() {
		var a args
		stmt, err := db.insertFrom(&a, table, cols, rows[start:min(start+db.rowsPerStatement(), len(rows))], types)
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, stmt, a...); err != nil {
			return err
		}
	}
	return nil
}

// WebhookEventCreate implements store.Webhooks. The endpoints are read in
// the transaction: one disabled or deleted before it commits gets nothing.
// The outbox entries the events are made of are deleted first: the events
// of an entry another drain deleted are dropped (each entry's events are
// stored once).
func (db *DB) WebhookEventCreate(ctx context.Context, p *store.WebhookEventCreateParams) (int, error) {
	n := 0
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		stored := p.Events
		if len(p.Outbox) > 0 {
			gone, err := db.deleteOutbox(ctx, tx, p.Outbox)
			if err != nil {
				return err
			}
			stored = nil
			for _, ev := range p.Events {
				if ev.OutboxID == "" || gone[ev.OutboxID] {
					stored = append(stored, ev)
				}
			}
		}
		if len(stored) == 0 {
			return nil
		}
		type endpoint struct {
			id    string
			types []string
		}
		rows, err := tx.QueryContext(ctx, "SELECT id, event_types FROM webhook_endpoints WHERE environment_id = $1 AND disabled = false",
			p.EnvironmentID)
		endpoints, err := scanAll(rows, err, func(r rowScanner) (endpoint, error) {
			var e endpoint
			var raw string
			if err := r.Scan(&e.id, &raw); err != nil {
				return e, err
			}
			return e, json.Unmarshal([]byte(raw), &e.types)
		})
		if err != nil || len(endpoints) == 0 {
			return err
		}
		var events, attempts [][]any
		for _, ev := range stored {
			wanted := false
			for _, e := range endpoints {
				if store.WebhookTypesWant(e.types, ev.Type) {
					attempts = append(attempts, []any{id.NewAt(p.Now), e.id, ev.ID, ev.Type, 1, ms(p.FirstAttemptAt)})
					wanted = true
				}
			}
			if wanted {
				events = append(events, []any{ev.ID, p.EnvironmentID, ev.Type, string(ev.Body), ms(ev.CreatedAt)})
			}
		}
		if err := db.insertWebhookRows(ctx, tx, "webhook_events", "id, environment_id, event_type, body, created_at", events,
			webhookEventTypes); err != nil {
			return err
		}
		n = len(attempts)
		return db.insertWebhookRows(ctx, tx, "webhook_attempts", "id, endpoint_id, event_id, event_type, attempt, due_at", attempts,
			webhookAttemptTypes)
	})
	if err != nil {
		return 0, fmt.Errorf("sqlstore: storing webhook events: %w", err)
	}
	return n, nil
}

// WebhookAttemptList implements store.Webhooks.
func (db *DB) WebhookAttemptList(ctx context.Context, scope store.Scope, endpointID string, limit int) ([]store.WebhookAttempt, error) {
	if _, err := db.webhookEndpoint(ctx, db.r, scope, endpointID, ""); err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, "SELECT "+webhookAttemptCols+" FROM webhook_attempts WHERE endpoint_id = $1"+
		" AND attempted_at IS NOT NULL ORDER BY attempted_at DESC, id DESC LIMIT "+strconv.Itoa(limit), endpointID)
	out, err := scanAll(rows, err, scanWebhookAttempt)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: listing webhook attempts: %w", err)
	}
	return out, nil
}

// WebhookAttemptClaim implements store.Webhooks.
func (db *DB) WebhookAttemptClaim(ctx context.Context, limit int, lease time.Duration, now time.Time) ([]store.WebhookClaimed, error) {
	attempts, err := db.claimWebhookAttempts(ctx, limit, lease, now)
	if err != nil || len(attempts) == 0 {
		return nil, err
	}
	var endpointIDs, eventIDs []string
	seen := map[string]bool{}
	for _, a := range attempts {
		if !seen[a.EndpointID] {
			seen[a.EndpointID], endpointIDs = true, append(endpointIDs, a.EndpointID)
		}
		if !seen[a.EventID] {
			seen[a.EventID], eventIDs = true, append(eventIDs, a.EventID)
		}
	}
	endpoints, err := db.webhookEndpointsByID(ctx, endpointIDs)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: claimed webhook endpoints: %w", err)
	}
	events, err := db.webhookEventsByID(ctx, eventIDs)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: claimed webhook events: %w", err)
	}
	out := make([]store.WebhookClaimed, 0, len(attempts))
	for _, a := range attempts {
		e, okE := endpoints[a.EndpointID]
		ev, okV := events[a.EventID]
		if okE && okV { // else deleted since: the cascade took the attempt too
			out = append(out, store.WebhookClaimed{Attempt: a, Endpoint: e, Event: ev})
		}
	}
	return out, nil
}

// claimWebhookAttempts leases the due attempts, holding the write gate only
// for that.
func (db *DB) claimWebhookAttempts(ctx context.Context, limit int, lease time.Duration, now time.Time) ([]store.WebhookAttempt, error) {
	if err := db.gate.acquire(ctx, true); err != nil {
		return nil, err
	}
	defer db.gate.release(true)
	rows, err := db.w.QueryContext(ctx, "UPDATE webhook_attempts SET due_at = $1, claims = claims + 1 WHERE id IN"+
		" (SELECT id FROM webhook_attempts WHERE due_at IS NOT NULL AND due_at <= $2 ORDER BY due_at LIMIT "+strconv.Itoa(limit)+
		db.d.skipLocked+") RETURNING "+webhookAttemptCols, ms(now.Add(lease)), ms(now))
	out, err := scanAll(rows, err, scanWebhookAttempt)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: claiming webhook attempts: %w", err)
	}
	return out, nil
}

func (db *DB) webhookEventsByID(ctx context.Context, ids []string) (map[string]store.WebhookEvent, error) {
	var a args
	rows, err := db.r.QueryContext(ctx, "SELECT id, environment_id, event_type, body, created_at FROM webhook_events WHERE "+
		db.inList(&a, "id", ids), db.planned(a)...)
	out := map[string]store.WebhookEvent{}
	err = eachRow(rows, err, func(r rowScanner) error {
		var ev store.WebhookEvent
		var body string
		var created int64
		if err := r.Scan(&ev.ID, &ev.EnvironmentID, &ev.Type, &body, &created); err != nil {
			return err
		}
		ev.Body, ev.CreatedAt = []byte(body), fromMS(created)
		out[ev.ID] = ev
		return nil
	})
	return out, err
}

// webhookFinishTypes are the column types of WebhookAttemptFinish's rows.
var webhookFinishTypes = []string{"TEXT", "BIGINT", "BIGINT", "BOOLEAN", "TEXT", "BIGINT", "BIGINT"}

// WebhookAttemptFinish implements store.Webhooks.
func (db *DB) WebhookAttemptFinish(ctx context.Context, results []store.WebhookAttemptResult, now time.Time) error {
	if len(results) == 0 {
		return nil
	}
	err := db.inTxPipeline(ctx, func(tx *sql.Tx) error {
		written := map[string]bool{}
		for start := 0; start < len(results); start += db.rowsPerStatement() {
			chunk := results[start:min(start+db.rowsPerStatement(), len(results))]
			rows := make([][]any, len(chunk))
			for i, r := range chunk {
				var code, at, next any
				if r.StatusCode != nil {
					code = int64(*r.StatusCode)
				}
				if !r.Canceled {
					at = ms(r.AttemptedAt)
				}
				if r.NextAttemptAt != nil {
					next = ms(*r.NextAttemptAt)
				}
				rows[i] = []any{r.Attempt.ID, int64(r.Attempt.Claims), code, r.Success, nullString(r.Error), at, next}
			}
			var a args
			src, err := db.d.rowSource(&a, rows, webhookFinishTypes)
			if err != nil {
				return err
			}
			res, err := tx.QueryContext(ctx, "WITH v(id, claims, status_code, success, error, attempted_at, next_attempt_at) AS ("+src+")"+
				" UPDATE webhook_attempts SET due_at = NULL, status_code = v.status_code, success = v.success, error = v.error,"+
				" attempted_at = v.attempted_at, next_attempt_at = v.next_attempt_at FROM v"+
				" WHERE webhook_attempts.id = v.id AND webhook_attempts.claims = v.claims RETURNING webhook_attempts.id", a...)
			ids, err := scanAll(res, err, func(r rowScanner) (string, error) {
				var id string
				return id, r.Scan(&id)
			})
			if err != nil {
				return err
			}
			for _, id := range ids {
				written[id] = true
			}
		}
		var next [][]any
		var disable []string
		for _, r := range results {
			if !written[r.Attempt.ID] {
				continue // the claim was lost: another sender has the attempt
			}
			if r.NextAttemptAt != nil {
				next = append(next, []any{id.NewAt(now), r.Attempt.EndpointID, r.Attempt.EventID, r.Attempt.EventType,
					r.Attempt.Attempt + 1, ms(*r.NextAttemptAt)})
			}
			if r.Disable {
				disable = append(disable, r.Attempt.EndpointID)
			}
		}
		if err := db.insertWebhookRows(ctx, tx, "webhook_attempts", "id, endpoint_id, event_id, event_type, attempt, due_at", next,
			webhookAttemptTypes); err != nil {
			return err
		}
		if len(disable) == 0 {
			return nil
		}
		a := args{ms(now)}
		if _, err := tx.ExecContext(ctx, "UPDATE webhook_endpoints SET disabled = true, updated_at = $1 WHERE id IN ("+
			a.list(disable)+")", a...); err != nil {
			return err
		}
		return cancelWebhookAttempts(ctx, tx, disable)
	})
	if err != nil {
		return fmt.Errorf("sqlstore: writing webhook attempts: %w", err)
	}
	return nil
}

// WebhookNextDue implements store.Webhooks.
func (db *DB) WebhookNextDue(ctx context.Context) (time.Time, error) {
	var v sql.NullInt64
	if err := db.r.QueryRowContext(ctx, "SELECT min(due_at) FROM webhook_attempts WHERE due_at IS NOT NULL").Scan(&v); err != nil {
		return time.Time{}, err
	}
	if !v.Valid {
		return time.Time{}, nil
	}
	return fromMS(v.Int64), nil
}

// WebhookQueueStats implements store.Webhooks.
func (db *DB) WebhookQueueStats(ctx context.Context, now time.Time) (store.WebhookQueue, error) {
	var q store.WebhookQueue
	var oldest sql.NullInt64
	if err := db.r.QueryRowContext(ctx, "SELECT count(*), min(due_at) FROM webhook_attempts WHERE due_at IS NOT NULL AND due_at <= $1",
		ms(now)).Scan(&q.Due, &oldest); err != nil {
		return q, fmt.Errorf("sqlstore: reading the webhook queue: %w", err)
	}
	if oldest.Valid {
		q.OldestDue = fromMS(oldest.Int64)
	}
	oldest = sql.NullInt64{}
	if err := db.r.QueryRowContext(ctx, "SELECT count(*), min(created_at) FROM webhook_outbox").Scan(&q.Outbox, &oldest); err != nil {
		return q, fmt.Errorf("sqlstore: reading the webhook outbox: %w", err)
	}
	if oldest.Valid {
		q.OutboxOldest = fromMS(oldest.Int64)
	}
	return q, nil
}

// webhookPruneBatch bounds the events one statement of WebhookPrune deletes.
const webhookPruneBatch = 5000

// WebhookPrune implements store.Webhooks.
func (db *DB) WebhookPrune(ctx context.Context, keep int, before time.Time) (int, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT id FROM webhook_endpoints")
	endpoints, err := scanAll(rows, err, func(r rowScanner) (string, error) {
		var id string
		return id, r.Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("sqlstore: pruning webhooks: %w", err)
	}
	total := 0
	count := func(res sql.Result, err error) error {
		if err == nil {
			n, _ := res.RowsAffected()
			total += int(n)
		}
		return err
	}
	for _, e := range endpoints {
		// Canceled attempts, then the answered ones beyond the newest keep.
		if err := count(db.exec(ctx, "DELETE FROM webhook_attempts WHERE endpoint_id = $1 AND attempted_at IS NULL"+
			" AND due_at IS NULL", e)); err != nil {
			return total, fmt.Errorf("sqlstore: pruning webhooks: %w", err)
		}
		var cutoff sql.NullInt64
		err := db.r.QueryRowContext(ctx, "SELECT attempted_at FROM webhook_attempts WHERE endpoint_id = $1 AND attempted_at IS NOT NULL"+
			" ORDER BY attempted_at DESC LIMIT 1 OFFSET "+strconv.Itoa(keep), e).Scan(&cutoff)
		if err == sql.ErrNoRows || !cutoff.Valid {
			continue
		}
		if err != nil {
			return total, fmt.Errorf("sqlstore: pruning webhooks: %w", err)
		}
		if err := count(db.exec(ctx, "DELETE FROM webhook_attempts WHERE endpoint_id = $1 AND attempted_at <= $2"+
			" AND due_at IS NULL", e, cutoff.Int64)); err != nil {
			return total, fmt.Errorf("sqlstore: pruning webhooks: %w", err)
		}
	}
	for {
		res, err := db.exec(ctx, "DELETE FROM webhook_events WHERE id IN (SELECT id FROM webhook_events e WHERE created_at < $1"+
			" AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.event_id = e.id) LIMIT "+strconv.Itoa(webhookPruneBatch)+")",
			ms(before))
		if err != nil {
			return total, fmt.Errorf("sqlstore: pruning webhook events: %w", err)
		}
		n, _ := res.RowsAffected()
		total += int(n)
		if n < webhookPruneBatch {
			return total, nil
		}
	}
}
