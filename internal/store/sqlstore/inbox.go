package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

const messageCols = "id, organization_id, environment_id, notification_id, job_id, subscriber_id, workflow_id," +
	" template_identifier, transaction_id, channel, provider_id, content, subject, avatar, cta, actor, payload, data, tags," +
	" overrides, status, read, seen, archived, last_read_at, last_seen_at, deleted, created_at, updated_at," +
	" target, integration_id, provider_message_id, error_text, delivery, first_seen_at, archived_at, snoozed_until, severity," +
	" delivered_at"

func scanMessage(row interface{ Scan(...any) error }) (store.Message, error) {
	var m store.Message
	var cta, payload, overrides string
	var actor, data, tags, integration, providerMessage, errorText, delivery sql.NullString
	var lastRead, lastSeen, firstSeen, archivedAt, snoozedUntil, deliveredAt sql.NullInt64
	var created, updated int64
	err := row.Scan(&m.ID, &m.OrganizationID, &m.EnvironmentID, &m.NotificationID, &m.JobID, &m.SubscriberID,
		&m.WorkflowID, &m.TemplateIdentifier, &m.TransactionID, &m.Channel, &m.ProviderID, &m.Content, &m.Subject,
		&m.Avatar, &cta, &actor, &payload, &data, &tags, &overrides, &m.Status, &m.Read, &m.Seen, &m.Archived,
		&lastRead, &lastSeen, &m.Deleted, &created, &updated, &m.Target, &integration, &providerMessage, &errorText,
		&delivery, &firstSeen, &archivedAt, &snoozedUntil, &m.Severity, &deliveredAt)
	if err != nil {
		return m, notFound(err)
	}
	m.IntegrationID, m.ProviderMessageID, m.ErrorText = integration.String, providerMessage.String, errorText.String
	if delivery.Valid {
		m.Delivery = store.JSON(delivery.String)
	}
	m.CTA, m.Payload, m.Overrides = store.JSON(cta), store.JSON(payload), store.JSON(overrides)
	if actor.Valid {
		m.Actor = store.JSON(actor.String)
	}
	if data.Valid {
		m.Data = store.JSON(data.String)
	}
	if tags.Valid {
		if err := json.Unmarshal([]byte(tags.String), &m.Tags); err != nil {
			return m, fmt.Errorf("sqlstore: message %s tags: %w", m.ID, err)
		}
	}
	m.LastReadAt, m.LastSeenAt = fromNullMS(lastRead), fromNullMS(lastSeen)
	m.FirstSeenAt, m.ArchivedAt, m.SnoozedUntil = fromNullMS(firstSeen), fromNullMS(archivedAt), fromNullMS(snoozedUntil)
	m.DeliveredAt = fromNullMS(deliveredAt)
	m.CreatedAt, m.UpdatedAt = fromMS(created), fromMS(updated)
	return m, nil
}

// insertMessages writes messages once per (job, target); the in-app ones
// inserted are added to counts.
func (db *DB) insertMessages(ctx context.Context, q querier, msgs []*store.Message, counts *pendingCounts) error {
	return db.d.insertMessages(ctx, q, msgs, counts)
}

// messageValues are a message's column values in messageCols order.
func messageValues(m *store.Message) []any {
	var tags any
	if m.Tags != nil {
		tags = marshalText(m.Tags, "[]")
	}
	return []any{m.ID, m.OrganizationID, m.EnvironmentID, m.NotificationID, m.JobID, m.SubscriberID, m.WorkflowID,
		m.TemplateIdentifier, m.TransactionID, m.Channel, m.ProviderID, m.Content, m.Subject, m.Avatar,
		orJSON(m.CTA, "{}"), nullJSON(m.Actor), orJSON(m.Payload, "{}"), nullJSON(m.Data), tags,
		orJSON(m.Overrides, "{}"), m.Status, m.Read, m.Seen, m.Archived, nullMS(m.LastReadAt), nullMS(m.LastSeenAt),
		m.Deleted, ms(m.CreatedAt), ms(m.UpdatedAt), m.Target, nullString(m.IntegrationID),
		nullString(m.ProviderMessageID), nullString(m.ErrorText), nullJSON(m.Delivery), nullMS(m.FirstSeenAt),
		nullMS(m.ArchivedAt), nullMS(m.SnoozedUntil), severityOr(m.Severity), nullMS(m.DeliveredAt)}
}

// severityOr is the stored severity: "none" for "".
func severityOr(s string) string {
	if s == "" {
		return store.SeverityNone
	}
	return s
}

// nullString is NULL for "".
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// insertMessage writes a message once per (job, target): a re-run adds nothing. An
// in-app message inserted is added to counts, which the caller applies.
func insertMessage(ctx context.Context, q querier, m *store.Message, counts *pendingCounts) error {
	res, err := q.ExecContext(ctx, "INSERT INTO messages ("+messageCols+") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,"+
		" $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32,"+
		" $33, $34, $35, $36, $37, $38, $39) ON CONFLICT DO NOTHING", messageValues(m)...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 1 && m.Channel == "in_app" && !m.Deleted && counts != nil {
		counts.add(m)
	}
	return nil
}

// inboxFilter is the WHERE clause of a subscriber's in-app messages. On
// SQLite the unary + keeps the planner on the subscriber's feed index: left
// to itself it walked the environment's messages_env_created index (newest
// first) until it had a page, through every message of the environment for
// a subscriber with a small inbox (80 ms against 0.2 ms at 100,000 messages).
func (db *DB) inboxFilter(a *args, scope store.Scope, subscriberID string) string {
	return "subscriber_id = " + a.add(subscriberID) + " AND " + db.d.unindexed + "environment_id = " + a.add(scope.EnvironmentID) +
		" AND channel = 'in_app' AND deleted = false"
}

// byIDsFilter is inboxFilter for statements that name message ids. On
// SQLite the unary + keeps the planner on the ids, off the subscriber's
// whole feed index (43 ms against 1 ms at 100,000 messages) and off the
// environment's messages_env_created (which it chose for bound parameters:
// every message of the environment, seconds at 1,000,000).
func (db *DB) byIDsFilter(a *args, scope store.Scope, subscriberID string, ids []string) string {
	return db.d.unindexed + "subscriber_id = " + a.add(subscriberID) + " AND " + db.d.unindexed + "environment_id = " + a.add(scope.EnvironmentID) +
		" AND channel = 'in_app' AND deleted = false AND id IN (" + a.list(ids) + ")"
}

// payloadCondition compares the payload value at a path with a JSON value.
func (db *DB) payloadCondition(a *args, c store.PayloadCondition) string {
	return db.jsonCondition(a, "payload", c)
}

// jsonCondition compares the value at a path of a JSON column with a JSON
// value.
func (db *DB) jsonCondition(a *args, col string, c store.PayloadCondition) string {
	return db.d.jsonEquals(a, col, c)
}

// activeFilter keeps the messages in a subscriber's inbox proper: neither
// archived nor snoozed. The v1 feed and unseen count show only those.
var activeFilter = store.InboxFilter{Archived: new(bool), Snoozed: new(bool)}

// MessageFeed implements store.Inbox.
func (db *DB) MessageFeed(ctx context.Context, p *store.FeedParams) (store.FeedPage, error) {
	var page store.FeedPage
	counts, err := db.settledCounts(ctx, p.Scope, p.SubscriberID, p.Now)
	if err != nil {
		return page, err
	}
	var a args
	f := activeFilter
	f.Read, f.Seen = p.Read, p.Seen
	where := db.inboxFilter(&a, p.Scope, p.SubscriberID) + db.filterConditions(&a, &f)
	for _, c := range p.Payload {
		where += " AND " + db.payloadCondition(&a, c)
	}
	countArgs := slices.Clone(a)
	rows, err := db.r.QueryContext(ctx, "SELECT "+messageCols+" FROM messages WHERE "+where+
		" ORDER BY created_at DESC, id DESC LIMIT "+strconv.Itoa(p.Limit+1)+" OFFSET "+strconv.Itoa(p.Page*p.Limit), a...)
	if err != nil {
		return page, fmt.Errorf("sqlstore: feed: %w", err)
	}
	if page.Messages, err = scanAll(rows, nil, scanMessage); err != nil {
		return page, err
	}
	if len(page.Messages) > p.Limit {
		page.HasMore, page.Messages = true, page.Messages[:p.Limit]
	}
	if p.Page == 0 && !page.HasMore {
		page.TotalCount = len(page.Messages)
		return page, nil
	}
	if len(p.Payload) == 0 {
		page.TotalCount = counts.sumMatching(&f)
		return page, nil
	}
	err = db.r.QueryRowContext(ctx, "SELECT count(*) FROM messages WHERE "+where, countArgs...).Scan(&page.TotalCount)
	return page, err
}

// markChanges are the state changes of each markAs value.
var markChanges = map[string]string{
	store.MarkRead:   changeMarkRead,
	store.MarkUnread: changeMarkUnread,
	store.MarkSeen:   store.InboxSeen,
	store.MarkUnseen: changeMarkUnseen,
}

// MessageMarkAs implements store.Inbox.
func (db *DB) MessageMarkAs(ctx context.Context, p *store.MessageMarkAsParams) ([]store.Message, error) {
	scope, subscriberID, ids, markAs, now := p.Scope, p.SubscriberID, p.IDs, p.MarkAs, p.Now
	kind, ok := markChanges[markAs]
	if !ok {
		return nil, fmt.Errorf("sqlstore: unknown markAs %q", markAs)
	}
	out := []store.Message{}
	if len(ids) == 0 {
		return out, nil
	}
	err := db.inboxTx(ctx, scope, subscriberID, now, func(tx *sql.Tx, counts *pendingCounts) error {
		sel := db.subscriberSelection(scope, subscriberID, nil, ids)
		if _, err := db.changeState(ctx, tx, kind, sel, time.Time{}, now, counts); err != nil {
			return err
		}
		var a args
		rows, err := tx.QueryContext(ctx, "SELECT "+messageCols+" FROM messages WHERE "+
			db.byIDsFilter(&a, scope, subscriberID, ids), a...)
		if err != nil {
			return err
		}
		out, err = scanAll(rows, nil, scanMessage)
		return err
	})
	if err != nil {
		return nil, err
	}
	// Answer in the order the client listed the ids.
	slices.SortFunc(out, func(x, y store.Message) int { return slices.Index(ids, x.ID) - slices.Index(ids, y.ID) })
	if out == nil {
		out = []store.Message{}
	}
	return out, nil
}

// MessageMarkAll implements store.Inbox.
func (db *DB) MessageMarkAll(ctx context.Context, p *store.MessageMarkAllParams) (int, error) {
	scope, subscriberID, markAs, now := p.Scope, p.SubscriberID, p.MarkAs, p.Now
	kind, ok := markChanges[markAs]
	if !ok {
		return 0, fmt.Errorf("sqlstore: unknown markAs %q", markAs)
	}
	f := store.InboxFilter{Seen: new(bool)}
	if markAs == store.MarkRead {
		f = store.InboxFilter{Read: new(bool)}
	}
	var n int
	err := db.inboxTx(ctx, scope, subscriberID, now, func(tx *sql.Tx, counts *pendingCounts) error {
		var err error
		n, err = db.changeState(ctx, tx, kind, db.subscriberSelection(scope, subscriberID, &f, nil), time.Time{}, now, counts)
		return err
	})
	return n, err
}

// MessageUnseenCount implements store.Inbox: the unseen messages of the
// inbox proper (neither archived nor snoozed).
func (db *DB) MessageUnseenCount(ctx context.Context, p *store.MessageUnseenCountParams) (int, error) {
	counts, err := db.settledCounts(ctx, p.Scope, p.SubscriberID, p.Now)
	f := activeFilter
	f.Seen = new(bool)
	return counts.sumMatching(&f), err
}

// MessageSetAction implements store.Inbox.
func (db *DB) MessageSetAction(ctx context.Context, p *store.MessageSetActionParams) (store.Message, error) {
	scope, subscriberID, messageID, now := p.Scope, p.SubscriberID, p.MessageID, p.Now
	var out store.Message
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var a args
		m, err := scanMessage(tx.QueryRowContext(ctx, "SELECT "+messageCols+" FROM messages WHERE "+
			db.byIDsFilter(&a, scope, subscriberID, []string{messageID})+db.d.forUpdate, a...))
		if err != nil {
			return err
		}
		var cta map[string]json.RawMessage
		if err := json.Unmarshal([]byte(orJSON(m.CTA, "{}")), &cta); err != nil || cta == nil {
			cta = map[string]json.RawMessage{}
		}
		// The new status and result join the buttons the message was created with.
		merged := map[string]json.RawMessage{}
		if prev, ok := cta["action"]; ok {
			_ = json.Unmarshal(prev, &merged)
		}
		var next map[string]json.RawMessage
		if err := json.Unmarshal(p.Action, &next); err != nil {
			return fmt.Errorf("sqlstore: action: %w", err)
		}
		for k, v := range next {
			merged[k] = v
		}
		cta["action"], _ = json.Marshal(merged)
		enc, _ := json.Marshal(cta)
		out, err = scanMessage(tx.QueryRowContext(ctx, "UPDATE messages SET cta = $1, updated_at = $2 WHERE id = $3 RETURNING "+
			messageCols, string(enc), ms(now), messageID))
		return err
	})
	return out, err
}

// MessageDelete implements store.Inbox.
func (db *DB) MessageDelete(ctx context.Context, p *store.MessageDeleteParams) error {
	scope, messageID, now := p.Scope, p.MessageID, p.Now
	var subscriberID, channel string
	err := db.r.QueryRowContext(ctx, "SELECT subscriber_id, channel FROM messages WHERE environment_id = $1 AND id = $2"+
		" AND deleted = false", scope.EnvironmentID, messageID).Scan(&subscriberID, &channel)
	if err != nil {
		return notFound(err)
	}
	if channel != "in_app" { // not in the inbox counts
		return db.inTx(ctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, "UPDATE messages SET deleted = true, updated_at = $1 WHERE id = $2"+
				" AND environment_id = $3 AND deleted = false", ms(now), messageID, scope.EnvironmentID)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return store.ErrNotFound
			}
			return nil
		})
	}
	return db.inboxTx(ctx, scope, subscriberID, now, func(tx *sql.Tx, counts *pendingCounts) error {
		n, err := db.changeState(ctx, tx, store.InboxDelete, db.subscriberSelection(scope, subscriberID, nil, []string{messageID}),
			time.Time{}, now, counts)
		if err == nil && n == 0 {
			err = store.ErrNotFound
		}
		return err
	})
}

// NotificationGet implements store.Inbox.
func (db *DB) NotificationGet(ctx context.Context, scope store.Scope, id string) (store.NotificationDetail, error) {
	n, err := scanNotification(db.r.QueryRowContext(ctx, "SELECT "+notificationCols+
		" FROM notifications WHERE environment_id = $1 AND id = $2", scope.EnvironmentID, id))
	if err != nil {
		return store.NotificationDetail{}, err
	}
	out, err := db.notificationDetails(ctx, []store.Notification{n})
	if err != nil {
		return store.NotificationDetail{}, err
	}
	return out[0], nil
}

// notificationDetails loads the subscriber, workflow, jobs and execution
// details of notifications, a query per kind.
func (db *DB) notificationDetails(ctx context.Context, ns []store.Notification) ([]store.NotificationDetail, error) {
	var nIDs, sIDs, wIDs []string
	for _, n := range ns {
		nIDs, sIDs, wIDs = append(nIDs, n.ID), append(sIDs, n.SubscriberID), append(wIDs, n.WorkflowID)
	}
	subs, err := db.subscribersByID(ctx, db.r, slices.Compact(slices.Sorted(slices.Values(sIDs))))
	if err != nil {
		return nil, err
	}
	wfs, err := db.workflowsByID(ctx, db.r, slices.Compact(slices.Sorted(slices.Values(wIDs))))
	if err != nil {
		return nil, err
	}
	jobs := map[string][]store.Job{}
	var a args
	rows, err := db.r.QueryContext(ctx, "SELECT "+jobReadCols+" FROM jobs WHERE notification_id IN ("+a.list(nIDs)+
		") ORDER BY step_index, created_at, id", a...)
	if err := eachRow(rows, err, func(r rowScanner) error {
		j, err := scanJob(r)
		if err == nil {
			jobs[j.NotificationID] = append(jobs[j.NotificationID], j)
		}
		return err
	}); err != nil {
		return nil, err
	}
	details := map[string][]store.ExecutionDetail{}
	a = nil
	rows, err = db.r.QueryContext(ctx, "SELECT "+detailReadCols+" FROM execution_details WHERE notification_id IN ("+
		a.list(nIDs)+") ORDER BY created_at, id", a...)
	if err := eachRow(rows, err, func(r rowScanner) error {
		d, err := scanDetail(r)
		if err == nil {
			details[d.JobID] = append(details[d.JobID], d)
		}
		return err
	}); err != nil {
		return nil, err
	}
	out := make([]store.NotificationDetail, len(ns))
	for i, n := range ns {
		out[i] = store.NotificationDetail{Notification: n, Subscriber: subs[n.SubscriberID], Workflow: wfs[n.WorkflowID],
			Jobs: jobs[n.ID], Details: details}
	}
	return out, nil
}

// NotificationList implements store.Inbox.
func (db *DB) NotificationList(ctx context.Context, p *store.NotificationListParams) ([]store.NotificationDetail, bool, error) {
	var a args
	where := []string{"environment_id = " + a.add(p.EnvironmentID)}
	if len(p.Channels) > 0 {
		var ors []string
		for _, c := range p.Channels {
			ors = append(ors, "channels LIKE "+a.add(`%"`+c+`"%`))
		}
		where = append(where, "("+strings.Join(ors, " OR ")+")")
	}
	if len(p.WorkflowIDs) > 0 {
		where = append(where, "workflow_id IN (SELECT id FROM workflows WHERE environment_id = $1 AND (id IN ("+
			a.list(p.WorkflowIDs)+") OR workflow_key IN ("+a.list(p.WorkflowIDs)+")))")
	}
	if len(p.Emails) > 0 {
		where = append(where, "subscriber_id IN (SELECT id FROM subscribers WHERE environment_id = $1 AND email IN ("+a.list(p.Emails)+"))")
	}
	if len(p.SubscriberIDs) > 0 {
		where = append(where, "subscriber_id IN (SELECT id FROM subscribers WHERE environment_id = $1 AND subscriber_id IN ("+
			a.list(p.SubscriberIDs)+"))")
	}
	if p.TransactionID != "" {
		where = append(where, "transaction_id = "+a.add(p.TransactionID))
	}
	if p.After != nil {
		where = append(where, "created_at >= "+a.add(ms(*p.After)))
	}
	if p.Before != nil {
		where = append(where, "created_at <= "+a.add(ms(*p.Before)))
	}
	if p.Status != "" {
		cond, err := triggerStatusWhere(&a, p.Status)
		if err != nil {
			return nil, false, err
		}
		where = append(where, cond)
	}
	rows, err := db.r.QueryContext(ctx, "SELECT "+notificationCols+" FROM notifications WHERE "+strings.Join(where, " AND ")+
		" ORDER BY created_at DESC, id DESC LIMIT "+strconv.Itoa(p.Limit+1)+" OFFSET "+strconv.Itoa(p.Page*p.Limit), a...)
	ns, err := scanAll(rows, err, scanNotification)
	if err != nil {
		return nil, false, fmt.Errorf("sqlstore: notifications: %w", err)
	}
	more := len(ns) > p.Limit
	if more {
		ns = ns[:p.Limit]
	}
	if len(ns) == 0 {
		return []store.NotificationDetail{}, false, nil
	}
	out, err := db.notificationDetails(ctx, ns)
	return out, more, err
}
