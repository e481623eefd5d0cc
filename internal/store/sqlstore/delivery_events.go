package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// Delivery events (issue 29, part A): a post's events are queued in one
// transaction (one statement on PostgreSQL) before the post is answered;
// the recorder takes the due ones in a transaction of its own — SKIP LOCKED
// on PostgreSQL, so concurrent recorders take distinct events — matches
// them to messages, writes their execution details and delivered times,
// and marks them recorded in the same transaction: a crash before its
// commit leaves them queued.

const deliveryEventCols = "id, organization_id, environment_id, integration_id, provider_id, event_key, webhook_status," +
	" message_id, provider_message_id, occurred_at, detail, raw, queued, attempts, run_at, received_at"

var deliveryEventTypes = []string{"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "BIGINT", "TEXT",
	"TEXT", "BOOLEAN", "INTEGER", "BIGINT", "BIGINT"}

// deliveryEventsPerStatement bounds the rows of one queueing statement:
// PostgreSQL's row source is one array a column, whatever the rows.
func (db *DB) deliveryEventsPerStatement() int {
	if db.d.name == "postgres" {
		return 10_000
	}
	return db.rowsPerStatement()
}

// DeliveryEventsAdd implements store.DeliveryEvents.
func (db *DB) DeliveryEventsAdd(ctx context.Context, p *store.DeliveryEventsAddParams) (int, error) {
	seen := make(map[string]bool, len(p.Events))
	rows := make([][]any, 0, len(p.Events))
	for _, e := range p.Events {
		if seen[e.IntegrationID+"\x00"+e.Key] {
			continue
		}
		seen[e.IntegrationID+"\x00"+e.Key] = true
		evID := e.ID
		if evID == "" {
			evID = id.NewAt(p.Now)
		}
		rows = append(rows, []any{evID, p.OrganizationID, p.EnvironmentID, e.IntegrationID, e.ProviderID, e.Key, e.Status,
			e.MessageID, e.ProviderMessageID, ms(e.OccurredAt), e.Detail, e.Raw, true, 0, ms(p.Now), ms(p.Now)})
	}
	if len(rows) == 0 {
		return 0, nil
	}
	added := 0
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		added = 0
		per := db.deliveryEventsPerStatement()
		for start := 0; start < len(rows); start += per {
			var a args
			src, err := db.d.rowSource(&a, rows[start:min(start+per, len(rows))], deliveryEventTypes)
			if err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, "INSERT INTO delivery_events ("+deliveryEventCols+") "+src+
				" ON CONFLICT (integration_id, event_key) DO NOTHING", a...)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			added += int(n)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sqlstore: queueing delivery events: %w", err)
	}
	return added, nil
}

// queuedEvent is a queued event as the recorder takes it.
type queuedEvent struct {
	store.DeliveryEvent
	environmentID string
	attempts      int
	receivedAt    time.Time
}

func scanQueuedEvent(r rowScanner) (queuedEvent, error) {
	var e queuedEvent
	var occurred, received int64
	var raw sql.NullString
	err := r.Scan(&e.ID, &e.environmentID, &e.IntegrationID, &e.ProviderID, &e.Status, &e.MessageID, &e.ProviderMessageID,
		&occurred, &e.Detail, &raw, &e.attempts, &received)
	e.OccurredAt, e.receivedAt, e.Raw = fromMS(occurred), fromMS(received), raw.String
	return e, err
}

// DeliveryEventsRecord implements store.DeliveryEvents.
func (db *DB) DeliveryEventsRecord(ctx context.Context, p *store.DeliveryEventsRecordParams) (store.DeliveryEventsRecorded, error) {
	out := store.DeliveryEventsRecorded{Recorded: map[string]int{}, Unmatched: map[string]int{}}
	// Most passes find nothing due: a read answers them, off the writer.
	var one int
	err := db.r.QueryRowContext(ctx, "SELECT 1 FROM delivery_events WHERE queued = true AND run_at <= $1 LIMIT 1",
		ms(p.Now)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("sqlstore: delivery events due: %w", err)
	}
	err = db.inTxPipeline(ctx, func(tx *sql.Tx) error {
		out = store.DeliveryEventsRecorded{Recorded: map[string]int{}, Unmatched: map[string]int{}}
		rows, err := tx.QueryContext(ctx, "SELECT id, environment_id, integration_id, provider_id, webhook_status, message_id,"+
			" provider_message_id, occurred_at, detail, raw, attempts, received_at FROM delivery_events"+
			" WHERE queued = true AND run_at <= $1 ORDER BY run_at, id LIMIT "+strconv.Itoa(p.Limit)+db.d.skipLocked, ms(p.Now))
		evs, err := scanAll(rows, err, scanQueuedEvent)
		if err != nil || len(evs) == 0 {
			return err
		}
		out.Taken = len(evs)
		matched, err := db.matchDeliveryEvents(ctx, tx, evs)
		if err != nil {
			return err
		}
		return db.recordDeliveryEvents(ctx, tx, p, evs, matched, &out)
	})
	if err != nil {
		return store.DeliveryEventsRecorded{}, fmt.Errorf("sqlstore: recording delivery events: %w", err)
	}
	return out, nil
}

// matchDeliveryEvents finds each event's message in its environment: by
// the message id it carries, else by the provider's id of the delivery
// (the integration's own message first), looked up only for the events the
// first read left unmatched. An event without one is nil.
func (db *DB) matchDeliveryEvents(ctx context.Context, tx *sql.Tx, evs []queuedEvent) ([]*store.Message, error) {
	out := make([]*store.Message, len(evs))
	var ids []string
	for _, e := range evs {
		if e.MessageID != "" {
			ids = append(ids, e.MessageID)
		}
	}
	byID, err := db.messagesBy(ctx, tx, "id", ids)
	if err != nil {
		return nil, err
	}
	var providerIDs []string
	for i, e := range evs {
		if m := byID[e.MessageID]; e.MessageID != "" && len(m) > 0 && m[0].EnvironmentID == e.environmentID {
			out[i] = m[0]
		} else if e.ProviderMessageID != "" {
			providerIDs = append(providerIDs, e.ProviderMessageID)
		}
	}
	byProvider, err := db.messagesBy(ctx, tx, "provider_message_id", providerIDs)
	if err != nil {
		return nil, err
	}
	for i, e := range evs {
		if out[i] != nil {
			continue
		}
		for _, m := range byProvider[e.ProviderMessageID] {
			if m.EnvironmentID == e.environmentID && (out[i] == nil || m.IntegrationID == e.IntegrationID) {
				out[i] = m
			}
		}
	}
	return out, nil
}

// messagesBy reads the messages whose col is one of values, by that value.
func (db *DB) messagesBy(ctx context.Context, tx *sql.Tx, col string, values []string) (map[string][]*store.Message, error) {
	out := map[string][]*store.Message{}
	if len(values) == 0 {
		return out, nil
	}
	var a args
	rows, err := tx.QueryContext(ctx, "SELECT "+messageCols+" FROM messages WHERE "+db.inList(&a, col, values), db.planned(a)...)
	ms, err := scanAll(rows, err, scanMessage)
	if err != nil {
		return nil, fmt.Errorf("matching messages: %w", err)
	}
	for i := range ms {
		key := ms[i].ID
		if col == "provider_message_id" {
			key = ms[i].ProviderMessageID
		}
		out[key] = append(out[key], &ms[i])
	}
	return out, nil
}

// detailReadTypes are the column types of detailReadCols.
var detailReadTypes = append(append([]string(nil), detailTypes...), "TEXT")

// recordDeliveryEvents writes the matched events' details and delivered
// times, marks them recorded, queues the unmatched ones again while they
// are younger than MatchFor and drops the others.
func (db *DB) recordDeliveryEvents(ctx context.Context, tx *sql.Tx, p *store.DeliveryEventsRecordParams, evs []queuedEvent,
	matched []*store.Message, out *store.DeliveryEventsRecorded) error {
	var details [][]any
	var recorded, retried, dropped []string
	delivered := map[string]time.Time{} // message id → earliest delivered time
	for i, e := range evs {
		m := matched[i]
		if m == nil {
			if p.Now.Sub(e.receivedAt) < p.MatchFor {
				retried = append(retried, e.ID)
			} else {
				dropped = append(dropped, e.ID)
				out.Unmatched[e.ProviderID]++
			}
			continue
		}
		raw := e.Raw
		d := store.ExecutionDetail{ID: id.NewAt(p.Now), JobID: m.JobID, NotificationID: m.NotificationID,
			EnvironmentID: m.EnvironmentID, Status: store.DetailStatus(e.Status), Source: "Webhook", Detail: e.Detail,
			ProviderID: e.ProviderID, Raw: &raw, CreatedAt: p.Now}
		details = append(details, append(detailRow(d), e.Status))
		recorded = append(recorded, e.ID)
		out.Recorded[e.ProviderID]++
		if e.Status == "delivered" {
			if t, ok := delivered[m.ID]; !ok || e.OccurredAt.Before(t) {
				delivered[m.ID] = e.OccurredAt
			}
		}
	}
	for start := 0; start < len(details); start += db.rowsPerStatement() {
		var a args
		stmt, err := db.insertFrom(&a, "execution_details", detailReadCols, details[start:min(start+db.rowsPerStatement(), len(details))],
			detailReadTypes)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, stmt, a...); err != nil {
			return fmt.Errorf("writing details: %w", err)
		}
	}
	if err := db.setDelivered(ctx, tx, delivered, p.Now); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, m := range matched {
		if m == nil {
			continue
		}
		if t, ok := delivered[m.ID]; ok && !seen[m.ID] {
			seen[m.ID] = true
			if m.DeliveredAt == nil || t.Before(*m.DeliveredAt) {
				m.DeliveredAt = &t
			}
			m.UpdatedAt = p.Now
			out.Delivered = append(out.Delivered, *m)
			noteOutbox(tx, m.EnvironmentID, store.OutboxMessage{Type: store.WebhookMessageDelivered, Message: &out.Delivered[len(out.Delivered)-1]})
		}
	}
	for _, step := range []struct {
		ids  []string
		stmt string
	}{
		{recorded, "UPDATE delivery_events SET queued = false, raw = NULL WHERE "},
		{retried, "UPDATE delivery_events SET attempts = attempts + 1, run_at = " + strconv.FormatInt(ms(p.Now), 10) +
			" + 1000 * (attempts + 1) WHERE "},
		{dropped, "DELETE FROM delivery_events WHERE "},
	} {
		if len(step.ids) == 0 {
			continue
		}
		var a args
		if _, err := tx.ExecContext(ctx, step.stmt+db.inList(&a, "id", step.ids), a...); err != nil {
			return fmt.Errorf("marking events: %w", err)
		}
	}
	return nil
}

// setDelivered sets each message's delivered time, keeping an earlier one.
func (db *DB) setDelivered(ctx context.Context, tx *sql.Tx, delivered map[string]time.Time, now time.Time) error {
	rows := make([][]any, 0, len(delivered))
	for msgID, t := range delivered {
		rows = append(rows, []any{msgID, ms(t)})
	}
	for start := 0; start < len(rows); start += db.rowsPerStatement() {
		var a args
		a.add(ms(now))
		src, err := db.d.rowSource(&a, rows[start:min(start+db.rowsPerStatement(), len(rows))], []string{"TEXT", "BIGINT"})
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "WITH v(id, t) AS ("+src+") UPDATE messages SET updated_at = $1,"+
			" delivered_at = CASE WHEN messages.delivered_at IS NULL OR messages.delivered_at > v.t THEN v.t"+
			" ELSE messages.delivered_at END FROM v WHERE messages.id = v.id", a...); err != nil {
			return fmt.Errorf("setting delivered times: %w", err)
		}
	}
	return nil
}

// DeliveryEventsQueued implements store.DeliveryEvents.
func (db *DB) DeliveryEventsQueued(ctx context.Context) (store.DeliveryEventQueue, error) {
	var q store.DeliveryEventQueue
	var oldest sql.NullInt64
	if err := db.r.QueryRowContext(ctx, "SELECT count(*), min(received_at) FROM delivery_events WHERE queued = true").
		Scan(&q.Queued, &oldest); err != nil {
		return q, fmt.Errorf("sqlstore: delivery events queued: %w", err)
	}
	if oldest.Valid {
		q.Oldest = fromMS(oldest.Int64)
	}
	return q, nil
}
