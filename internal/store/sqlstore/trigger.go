package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// Column types of the rows a trigger inserts, for the casts PostgreSQL needs
// when values come through a VALUES list.
var (
	notificationTypes = []string{"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "JSONB", "TEXT", "TEXT", "TEXT", "TEXT",
		"TEXT", "TEXT", "BIGINT", "BIGINT", "TEXT", "TEXT"}
	jobTypes = []string{"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "INTEGER", "TEXT", "TEXT", "TEXT",
		"BIGINT", "BIGINT", "INTEGER", "TEXT", "TEXT", "TEXT", "INTEGER", "BIGINT", "BIGINT"}
	detailTypes = []string{"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "BOOLEAN", "BOOLEAN", "TEXT", "TEXT", "BIGINT"}
)

// triggerRows are the rows one trigger writes.
type triggerRows struct {
	notifications, jobs, details [][]any
	// waiting counts the jobs written for the workers: queued or delayed.
	waiting int
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
//
// A first step run at trigger time (inApp, see store.TriggerParams.InApp)
// is written as it ended, with its details ("Step queued" first); its message is the caller's to write. The next step is queued
// when the outcome continues the workflow, the later ones skipped when it
// says so.
func (r *triggerRows) add(p *store.TriggerParams, n store.Notification, plan *store.DigestJoinParams, place digestPlacement,
	inApp *store.JobOutcome) {
	now := ms(p.Now)
	var digested any
	if n.DigestedNotificationID != "" {
		digested = n.DigestedNotificationID
	}
	r.notifications = append(r.notifications, []any{n.ID, n.OrganizationID, n.EnvironmentID, n.WorkflowID, n.SubscriberID,
		n.TransactionID, orJSON(n.Payload, "{}"), orJSON(n.Overrides, "{}"), nullJSON(n.Actor), nullJSON(n.To),
		marshalText(n.Tags, "[]"), marshalText(n.Channels, "[]"), digested, now, now, nullJSON(n.Contexts), n.ContextKeys})
	for i, s := range p.Workflow.Steps {
		status := store.JobPending
		if i == 0 {
			status = store.JobQueued
		}
		jobID, provider := id.NewAt(p.Now), p.ProviderFor(s.Type)
		runAt := now
		var digest, digestKey any
		var placed *store.ExecutionDetail
		attempts, failure := 0, ""
		if inApp != nil {
			switch {
			case i == 0:
				jobID, provider, status, attempts, failure = inApp.Job.ID, inApp.Job.ProviderID, inApp.Status, 1, inApp.Error
			case inApp.SkipRest:
				status = store.JobSkipped
			case inApp.ContinueWorkflow && i == 1:
				status = store.JobQueued
			}
		}
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
		if status == store.JobQueued || status == store.JobDelayed {
			r.waiting++
		}
		r.jobs = append(r.jobs, []any{jobID, n.OrganizationID, n.EnvironmentID, n.ID, n.SubscriberID, n.WorkflowID,
			n.TransactionID, s.ID, i, s.Type, provider, status, runAt, nil, attempts, digest, digestKey, failure, 0, now, now})
		switch {
		case placed != nil:
			r.details = append(r.details, detailRow(*placed))
		case inApp != nil && i == 0:
			for _, d := range inApp.Details {
				r.details = append(r.details, detailRow(d))
			}
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
func (db *DB) TriggerCancel(ctx context.Context, p *store.TriggerCancelParams) (int, error) {
	scope, transactionID, now := p.Scope, p.TransactionID, p.Now
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
		return db.insertDetailsBatched(ctx, tx, details)
	})
	return int(n), err
}
