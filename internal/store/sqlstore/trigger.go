package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// errDuplicate rolls back a trigger whose transactionId was used before.
var errDuplicate = errors.New("sqlstore: duplicate transaction")

// Column types of the rows a trigger inserts, for the casts PostgreSQL needs
// when values come through a VALUES list.
var (
	notificationTypes = []string{"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "JSONB", "TEXT", "TEXT", "TEXT", "TEXT",
		"TEXT", "TEXT", "BIGINT", "BIGINT"}
	jobTypes = []string{"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "INTEGER", "TEXT", "TEXT", "TEXT",
		"BIGINT", "BIGINT", "INTEGER", "TEXT", "TEXT", "TEXT", "INTEGER", "BIGINT", "BIGINT"}
	detailTypes = []string{"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "BOOLEAN", "BOOLEAN", "TEXT", "TEXT", "BIGINT"}
)

// triggerRows are the rows one trigger writes.
type triggerRows struct {
	notifications, jobs, details [][]any
}

// Trigger implements store.Pipeline. On PostgreSQL, after the recipients
// are found or upserted, one statement claims the transactionId and writes
// every notification, job and execution detail (data-modifying CTEs): four
// round trips in all whatever the workflow. On SQLite, in process, the
// statements are plain.
func (db *DB) Trigger(ctx context.Context, p *store.TriggerParams) (store.TriggerResult, error) {
	var res store.TriggerResult
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		pg := db.d.name == "postgres"
		if !pg {
			r, err := tx.ExecContext(ctx, "INSERT INTO transactions (environment_id, transaction_id, workflow_id, created_at)"+
				" VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING", p.EnvironmentID, p.TransactionID, p.Workflow.ID, ms(p.Now))
			if err != nil {
				return err
			}
			if n, _ := r.RowsAffected(); n == 0 {
				return errDuplicate
			}
		}
		channels := make([]string, 0, len(p.Workflow.Steps))
		for _, s := range p.Workflow.Steps {
			channels = append(channels, s.Type)
		}
		var rows triggerRows
		notifications := make([]store.Notification, 0, len(p.Recipients))
		var plans []*store.DigestJoinParams
		known, err := db.knownSubscribers(ctx, tx, p)
		if err != nil {
			return err
		}
		for i, rcp := range p.Recipients {
			sub, ok := known[rcp.SubscriberID]
			if !ok || rcp.Upsert != nil {
				if sub, err = db.triggerSubscriber(ctx, tx, p, rcp); err != nil {
					return err
				}
				known[sub.SubscriberID] = sub
			}
			n := store.Notification{
				ID: id.NewAt(p.Now), OrganizationID: p.OrganizationID, EnvironmentID: p.EnvironmentID,
				WorkflowID: p.Workflow.ID, SubscriberID: sub.ID, TransactionID: p.TransactionID, Payload: p.Payload,
				Overrides: p.Overrides, Actor: p.Actor, Tags: p.Tags, Channels: channels, CreatedAt: p.Now, UpdatedAt: p.Now,
			}
			n.To, _ = json.Marshal(map[string]any{"subscriberId": sub.SubscriberID})
			notifications = append(notifications, n)
			if p.DigestPlans != nil {
				plans = append(plans, triggerDigestPlan(p, p.DigestPlans[i], n))
			}
		}
		places, err := db.placeTriggerDigests(ctx, tx, plans)
		if err != nil {
			return err
		}
		for i, n := range notifications {
			var plan *store.DigestJoinParams
			var place digestPlacement
			if plans != nil && plans[i] != nil {
				plan, place = plans[i], places[i]
				if place.outcome == store.DigestMerged {
					n.DigestedNotificationID = place.leaderNotificationID
				}
			}
			rows.add(p, n, plan, place)
			res.Notifications = append(res.Notifications, n)
		}
		if pg {
			if err := db.insertTriggerPostgres(ctx, tx, p, rows); err != nil {
				return err
			}
		} else {
			for _, t := range []struct {
				table, cols string
				rows        [][]any
			}{{"notifications", notificationCols, rows.notifications}, {"jobs", jobCols, rows.jobs},
				{"execution_details", detailCols, rows.details}} {
				if err := db.insertRows(ctx, tx, t.table, t.cols, t.rows); err != nil {
					return err
				}
			}
		}
		if len(p.Topics) == 0 && !p.Broadcast {
			return nil
		}
		direct := make([]string, 0, len(notifications))
		for _, n := range notifications {
			direct = append(direct, n.SubscriberID)
		}
		res.FanoutJobID, res.MissingTopics, err = db.insertFanout(ctx, tx, p, direct)
		return err
	})
	if errors.Is(err, errDuplicate) {
		return store.TriggerResult{Duplicate: true}, nil
	}
	if err == nil && len(p.Workflow.Steps) > 0 {
		db.notifyJobs()
	}
	return res, err
}

// triggerDigestPlan completes the plan of the first step, a digest, of one
// notification with its job (nil when it is left to a worker).
func triggerDigestPlan(p *store.TriggerParams, planned *store.DigestJoinParams, n store.Notification) *store.DigestJoinParams {
	if planned == nil {
		return nil
	}
	plan := *planned
	s := p.Workflow.Steps[0]
	plan.Job = store.Job{ID: id.NewAt(p.Now), OrganizationID: n.OrganizationID, EnvironmentID: n.EnvironmentID,
		NotificationID: n.ID, SubscriberID: n.SubscriberID, WorkflowID: n.WorkflowID, TransactionID: n.TransactionID,
		StepID: s.ID, StepIndex: 0, Type: s.Type, ProviderID: p.ProviderFor(s.Type), RunAt: p.Now}
	plan.At, plan.Now = p.Now, p.Now
	return &plan
}

// placeTriggerDigests places the planned events (plans holds nil for the
// notifications left to a worker) and returns each one's placement.
func (db *DB) placeTriggerDigests(ctx context.Context, tx *sql.Tx, plans []*store.DigestJoinParams) ([]digestPlacement, error) {
	var planned []*store.DigestJoinParams
	var at []int
	for i, plan := range plans {
		if plan != nil {
			planned, at = append(planned, plan), append(at, i)
		}
	}
	placed, err := db.placeDigests(ctx, tx, planned)
	if err != nil {
		return nil, err
	}
	places := make([]digestPlacement, len(plans))
	for k, i := range at {
		places[i] = placed[k]
	}
	return places, nil
}

// add appends a notification with one job per step (the first queued, the
// rest pending) and a Pending "Step queued" detail per job. A first step
// placed at trigger time (plan) is written as placed, with the detail of its
// placement instead: a window's leader delayed until it closes; an event
// merged into a window, its later steps skipped (no detail: they never
// queued); an immediate event, its next step queued.
func (r *triggerRows) add(p *store.TriggerParams, n store.Notification, plan *store.DigestJoinParams, place digestPlacement) {
	now := ms(p.Now)
	var digested any
	if n.DigestedNotificationID != "" {
		digested = n.DigestedNotificationID
	}
	r.notifications = append(r.notifications, []any{n.ID, n.OrganizationID, n.EnvironmentID, n.WorkflowID, n.SubscriberID,
		n.TransactionID, orJSON(n.Payload, "{}"), orJSON(n.Overrides, "{}"), nullJSON(n.Actor), nullJSON(n.To),
		marshalText(n.Tags, "[]"), marshalText(n.Channels, "[]"), digested, now, now})
	for i, s := range p.Workflow.Steps {
		status := store.JobPending
		if i == 0 {
			status = store.JobQueued
		}
		jobID, provider := id.NewAt(p.Now), p.ProviderFor(s.Type)
		runAt := now
		var digest, digestKey any
		var placed *store.ExecutionDetail
		if plan != nil {
			switch {
			case i == 0:
				st, run, d, detail := placedJob(plan, place)
				jobID, status, runAt, digest, digestKey, placed = plan.Job.ID, st, ms(run), d, plan.Key, &detail
			case place.outcome == store.DigestMerged:
				status = store.JobSkipped
			case place.outcome == store.DigestImmediate && i == 1:
				status = store.JobQueued
			}
		}
		r.jobs = append(r.jobs, []any{jobID, n.OrganizationID, n.EnvironmentID, n.ID, n.SubscriberID, n.WorkflowID,
			n.TransactionID, s.ID, i, s.Type, provider, status, runAt, nil, 0, digest, digestKey, "", 0, now, now})
		switch {
		case placed != nil:
			r.details = append(r.details, detailRow(*placed))
		case status != store.JobSkipped:
			r.details = append(r.details, []any{id.NewAt(p.Now), jobID, n.ID, n.EnvironmentID, "Pending", "Internal",
				"Step queued", false, false, provider, nil, now})
		}
	}
}

// detailRow is an execution detail as a row of detailCols.
func detailRow(d store.ExecutionDetail) []any {
	var provider any
	if d.ProviderID != "" {
		provider = d.ProviderID
	}
	return []any{d.ID, d.JobID, d.NotificationID, d.EnvironmentID, d.Status, d.Source, d.Detail, d.IsRetry, d.IsTest,
		provider, d.Raw, ms(d.CreatedAt)}
}

// insertRows inserts rows into table, a chunk per statement.
func (db *DB) insertRows(ctx context.Context, q querier, table, cols string, rows [][]any) error {
	for start := 0; start < len(rows); start += db.rowsPerStatement() {
		var a args
		var vals []string
		for _, row := range rows[start:min(start+db.rowsPerStatement(), len(rows))] {
			ph := make([]string, len(row))
			for i, v := range row {
				ph[i] = a.add(v)
			}
			vals = append(vals, "("+strings.Join(ph, ", ")+")")
		}
		if _, err := q.ExecContext(ctx, "INSERT INTO "+table+" ("+cols+") VALUES "+strings.Join(vals, ", "), a...); err != nil {
			return fmt.Errorf("sqlstore: insert %s: %w", table, err)
		}
	}
	return nil
}

// castValues renders rows as a VALUES list whose every value is cast.
func castValues(a *args, rows [][]any, types []string) string {
	vals := make([]string, len(rows))
	for r, row := range rows {
		ph := make([]string, len(row))
		for i, v := range row {
			ph[i] = "CAST(" + a.add(v) + " AS " + types[i] + ")"
		}
		vals[r] = "(" + strings.Join(ph, ", ") + ")"
	}
	return strings.Join(vals, ", ")
}

// insertTriggerPostgres claims the transactionId and writes the trigger's
// rows in one statement; errDuplicate when the transactionId was used.
func (db *DB) insertTriggerPostgres(ctx context.Context, tx *sql.Tx, p *store.TriggerParams, rows triggerRows) error {
	a := args{p.EnvironmentID, p.TransactionID, p.Workflow.ID, ms(p.Now)}
	q := "WITH t AS (INSERT INTO transactions (environment_id, transaction_id, workflow_id, created_at)" +
		" VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING 1)"
	for i, part := range []struct {
		table, cols string
		rows        [][]any
		types       []string
	}{{"notifications", notificationCols, rows.notifications, notificationTypes}, {"jobs", jobCols, rows.jobs, jobTypes},
		{"execution_details", detailCols, rows.details, detailTypes}} {
		if len(part.rows) == 0 {
			continue
		}
		q += fmt.Sprintf(", w%d AS (INSERT INTO %s (%s) SELECT * FROM (VALUES %s) v WHERE EXISTS (SELECT 1 FROM t))",
			i, part.table, part.cols, castValues(&a, part.rows, part.types))
	}
	var claimed int
	if err := tx.QueryRowContext(ctx, q+" SELECT count(*) FROM t", a...).Scan(&claimed); err != nil {
		return fmt.Errorf("sqlstore: trigger: %w", err)
	}
	if claimed == 0 {
		return errDuplicate
	}
	return nil
}

// knownSubscribers finds the recipients named by subscriberId alone, in one
// statement per chunk.
func (db *DB) knownSubscribers(ctx context.Context, tx *sql.Tx, p *store.TriggerParams) (map[string]store.Subscriber, error) {
	var ids []string
	for _, r := range p.Recipients {
		if r.Upsert == nil {
			ids = append(ids, r.SubscriberID)
		}
	}
	return db.subscribersBySubscriberID(ctx, tx, p.EnvironmentID, ids)
}

// triggerSubscriber upserts the recipient: its fields when the trigger gave
// them, else a bare subscriber for a subscriberId knownSubscribers did not
// find (one created meanwhile is left as it is).
func (db *DB) triggerSubscriber(ctx context.Context, tx *sql.Tx, p *store.TriggerParams, r store.Recipient) (store.Subscriber, error) {
	up := r.Upsert
	if up == nil {
		up = &store.SubscriberUpsertParams{Scope: p.Scope, SubscriberID: r.SubscriberID}
	}
	up.Scope = p.Scope
	s, _, err := db.subscriberUpsert(ctx, tx, up, p.Now)
	return s, err
}

// TriggerCancel implements store.Pipeline.
func (db *DB) TriggerCancel(ctx context.Context, scope store.Scope, transactionID string) (int, error) {
	now := db.now()
	var n int64
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		fanouts, err := fanoutCancelRunning(ctx, tx, scope.EnvironmentID, transactionID, now)
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, "UPDATE jobs SET status = 'canceled', updated_at = $1 WHERE environment_id = $2"+
			" AND transaction_id = $3 AND status IN ('pending', 'queued', 'delayed') RETURNING id, notification_id, provider_id",
			ms(now), scope.EnvironmentID, transactionID)
		if err != nil {
			return err
		}
		var details []store.ExecutionDetail
		for rows.Next() {
			d := store.ExecutionDetail{ID: id.NewAt(now), EnvironmentID: scope.EnvironmentID, Status: "Warning", Source: "Internal",
				Detail: "Step canceled before it ran", CreatedAt: now}
			if err := rows.Scan(&d.JobID, &d.NotificationID, &d.ProviderID); err != nil {
				rows.Close()
				return err
			}
			details = append(details, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		n = int64(len(details)) + fanouts
		return insertDetails(ctx, tx, details)
	})
	return int(n), err
}
