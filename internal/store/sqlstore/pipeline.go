package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

const notificationCols = "id, organization_id, environment_id, workflow_id, subscriber_id, transaction_id, payload, overrides," +
	" actor, recipient, tags, channels, digested_notification_id, created_at, updated_at"

func scanNotification(row interface{ Scan(...any) error }) (store.Notification, error) {
	var n store.Notification
	var payload, overrides, tags, channels string
	var actor, to, digested sql.NullString
	var created, updated int64
	err := row.Scan(&n.ID, &n.OrganizationID, &n.EnvironmentID, &n.WorkflowID, &n.SubscriberID, &n.TransactionID,
		&payload, &overrides, &actor, &to, &tags, &channels, &digested, &created, &updated)
	if err != nil {
		return n, notFound(err)
	}
	n.Payload, n.Overrides = store.JSON(payload), store.JSON(overrides)
	if actor.Valid {
		n.Actor = store.JSON(actor.String)
	}
	if to.Valid {
		n.To = store.JSON(to.String)
	}
	if err := json.Unmarshal([]byte(tags), &n.Tags); err != nil {
		return n, fmt.Errorf("sqlstore: notification %s tags: %w", n.ID, err)
	}
	if err := json.Unmarshal([]byte(channels), &n.Channels); err != nil {
		return n, fmt.Errorf("sqlstore: notification %s channels: %w", n.ID, err)
	}
	n.DigestedNotificationID = digested.String
	n.CreatedAt, n.UpdatedAt = fromMS(created), fromMS(updated)
	return n, nil
}

const jobCols = "id, organization_id, environment_id, notification_id, subscriber_id, workflow_id, transaction_id, step_id," +
	" step_index, type, provider_id, status, run_at, lease_until, attempts, digest, digest_key, error," +
	" schedule_extensions_count, created_at, updated_at"

// jobReadCols are jobCols and the columns a trigger leaves to the workers.
const jobReadCols = jobCols + ", integration_id, delivery"

func scanJob(row interface{ Scan(...any) error }) (store.Job, error) {
	var j store.Job
	var runAt, created, updated int64
	var lease sql.NullInt64
	var digest, digestKey, integration, delivery sql.NullString
	err := row.Scan(&j.ID, &j.OrganizationID, &j.EnvironmentID, &j.NotificationID, &j.SubscriberID, &j.WorkflowID,
		&j.TransactionID, &j.StepID, &j.StepIndex, &j.Type, &j.ProviderID, &j.Status, &runAt, &lease, &j.Attempts,
		&digest, &digestKey, &j.Error, &j.ScheduleExtensionsCount, &created, &updated, &integration, &delivery)
	if err != nil {
		return j, notFound(err)
	}
	j.IntegrationID = integration.String
	if delivery.Valid {
		j.Delivery = store.JSON(delivery.String)
	}
	j.RunAt, j.LeaseUntil = fromMS(runAt), fromNullMS(lease)
	if digest.Valid {
		j.Digest = store.JSON(digest.String)
	}
	if digestKey.Valid {
		j.DigestKey = &digestKey.String
	}
	j.CreatedAt, j.UpdatedAt = fromMS(created), fromMS(updated)
	return j, nil
}

const detailCols = "id, job_id, notification_id, environment_id, status, source, detail, is_retry, is_test, provider_id, raw, created_at"

func scanDetail(row interface{ Scan(...any) error }) (store.ExecutionDetail, error) {
	var d store.ExecutionDetail
	var provider sql.NullString
	var created int64
	err := row.Scan(&d.ID, &d.JobID, &d.NotificationID, &d.EnvironmentID, &d.Status, &d.Source, &d.Detail, &d.IsRetry,
		&d.IsTest, &provider, &d.Raw, &created)
	d.ProviderID, d.CreatedAt = provider.String, fromMS(created)
	return d, notFound(err)
}

// insertDetails writes execution details in one statement.
func insertDetails(ctx context.Context, q querier, ds []store.ExecutionDetail) error {
	if len(ds) == 0 {
		return nil
	}
	var a args
	rows := make([]string, len(ds))
	for i, d := range ds {
		var provider any
		if d.ProviderID != "" {
			provider = d.ProviderID
		}
		rows[i] = "(" + strings.Join([]string{a.add(d.ID), a.add(d.JobID), a.add(d.NotificationID), a.add(d.EnvironmentID),
			a.add(d.Status), a.add(d.Source), a.add(d.Detail), a.add(d.IsRetry), a.add(d.IsTest), a.add(provider),
			a.add(d.Raw), a.add(ms(d.CreatedAt))}, ", ") + ")"
	}
	_, err := q.ExecContext(ctx, "INSERT INTO execution_details ("+detailCols+") VALUES "+strings.Join(rows, ", "), a...)
	return err
}

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
			return db.insertTriggerPostgres(ctx, tx, p, rows)
		}
		for _, t := range []struct {
			table, cols string
			rows        [][]any
		}{{"notifications", notificationCols, rows.notifications}, {"jobs", jobCols, rows.jobs},
			{"execution_details", detailCols, rows.details}} {
			if err := db.insertRows(ctx, tx, t.table, t.cols, t.rows); err != nil {
				return err
			}
		}
		return nil
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
		n = int64(len(details))
		return insertDetails(ctx, tx, details)
	})
	return int(n), err
}

// JobClaim implements store.Pipeline: one statement leases the due jobs
// (FOR UPDATE SKIP LOCKED on PostgreSQL; SQLite has one writer anyway).
func (db *DB) JobClaim(ctx context.Context, limit int, lease time.Duration, now time.Time) ([]store.Claimed, error) {
	skip := ""
	if db.d.name == "postgres" {
		skip = " FOR UPDATE SKIP LOCKED"
	}
	jobs, err := db.claimRows(ctx, limit, lease, now, skip)
	if err != nil || len(jobs) == 0 {
		return nil, err
	}
	// On SQLite's single writer a queued job that waited is a sign the API
	// crowds the workers out: it raises the write gate's urgency as late
	// timed work does. PostgreSQL's writers run side by side; there it would
	// only throttle the API (see writeGate).
	if db.d.name == "sqlite" {
		for _, j := range jobs {
			db.noteDue(now, j.RunAt)
		}
	}
	// RETURNING has no order: run the batch oldest first.
	slices.SortFunc(jobs, func(a, b store.Job) int {
		if c := a.RunAt.Compare(b.RunAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return db.loadClaimed(ctx, jobs)
}

// claimRows leases the due jobs, holding the write gate only for that.
func (db *DB) claimRows(ctx context.Context, limit int, lease time.Duration, now time.Time, skip string) ([]store.Job, error) {
	if err := db.gate.acquire(ctx, true); err != nil {
		return nil, err
	}
	defer db.gate.release(true)
	rows, err := db.w.QueryContext(ctx, "UPDATE jobs SET status = 'running', lease_until = $1, attempts = attempts + 1,"+
		" updated_at = $2 WHERE id IN (SELECT id FROM jobs WHERE status = 'queued' AND run_at <= $2 ORDER BY run_at, id"+
		" LIMIT $3"+skip+") RETURNING "+jobReadCols, ms(now.Add(lease)), ms(now), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: claim: %w", err)
	}
	defer rows.Close()
	var jobs []store.Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, rows.Err()
}

// loadClaimed fetches the notifications, subscribers and workflows of jobs.
func (db *DB) loadClaimed(ctx context.Context, jobs []store.Job) ([]store.Claimed, error) {
	var nIDs, sIDs, wIDs []string
	seen := map[string]bool{}
	for _, j := range jobs {
		for _, x := range []struct {
			v   string
			dst *[]string
		}{{j.NotificationID, &nIDs}, {j.SubscriberID, &sIDs}, {j.WorkflowID, &wIDs}} {
			if !seen[x.v] {
				seen[x.v] = true
				*x.dst = append(*x.dst, x.v)
			}
		}
	}
	ns, err := db.notificationsByID(ctx, db.r, nIDs)
	if err != nil {
		return nil, err
	}
	subs, err := db.subscribersByID(ctx, db.r, sIDs)
	if err != nil {
		return nil, err
	}
	wfs, err := db.workflowsByID(ctx, db.r, wIDs)
	if err != nil {
		return nil, err
	}
	digests, err := db.finishedDigests(ctx, jobs)
	if err != nil {
		return nil, err
	}
	out := make([]store.Claimed, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, store.Claimed{Job: j, Notification: ns[j.NotificationID], Subscriber: subs[j.SubscriberID],
			Workflow: wfs[j.WorkflowID], Digest: digests[j.NotificationID]})
	}
	return out, nil
}

// finishedDigests returns, by notification, the metadata of the finished
// digest step that precedes the claimed jobs (only for jobs after step 0).
func (db *DB) finishedDigests(ctx context.Context, jobs []store.Job) (map[string]store.JSON, error) {
	out := map[string]store.JSON{}
	var ids []string
	for _, j := range jobs {
		if j.StepIndex > 0 && j.Type != "digest" {
			ids = append(ids, j.NotificationID)
		}
	}
	if len(ids) == 0 {
		return out, nil
	}
	var a args
	rows, err := db.r.QueryContext(ctx, "SELECT notification_id, digest FROM jobs WHERE "+db.inList(&a, "notification_id", ids)+
		" AND type = 'digest' AND status IN ('completed', 'skipped') AND digest IS NOT NULL ORDER BY step_index", db.planned(a)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var nid, d string
		if err := rows.Scan(&nid, &d); err != nil {
			return nil, err
		}
		out[nid] = store.JSON(d)
	}
	return out, rows.Err()
}

func (db *DB) notificationsByID(ctx context.Context, q querier, ids []string) (map[string]store.Notification, error) {
	out := map[string]store.Notification{}
	if len(ids) == 0 {
		return out, nil
	}
	var a args
	rows, err := q.QueryContext(ctx, "SELECT "+notificationCols+" FROM notifications WHERE "+db.inList(&a, "id", ids), db.planned(a)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		n, err := scanNotification(rows)
		if err != nil {
			return nil, err
		}
		out[n.ID] = n
	}
	return out, rows.Err()
}

// subscribersByID loads subscribers by _id, deleted ones included.
func (db *DB) subscribersByID(ctx context.Context, q querier, ids []string) (map[string]store.Subscriber, error) {
	out := map[string]store.Subscriber{}
	if len(ids) == 0 {
		return out, nil
	}
	var a args
	rows, err := q.QueryContext(ctx, "SELECT "+subscriberCols+" FROM subscribers WHERE "+db.inList(&a, "id", ids), db.planned(a)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		s, err := scanSubscriber(rows)
		if err != nil {
			return nil, err
		}
		out[s.ID] = s
	}
	return out, rows.Err()
}

// JobFinish implements store.Pipeline: all outcomes in one transaction, in a
// few statements per batch. The job rows are updated first, guarded by their
// lease (status running and the claimed attempt), so a worker whose lease was
// taken over writes nothing for that job.
func (db *DB) JobFinish(ctx context.Context, outcomes []store.JobOutcome, now time.Time) ([]bool, error) {
	applied := make([]bool, len(outcomes))
	err := db.inTxPipeline(ctx, func(tx *sql.Tx) error {
		updated, err := db.finishJobRows(ctx, tx, outcomes, now)
		if err != nil {
			return err
		}
		var msgs []*store.Message
		var details []store.ExecutionDetail
		var next []store.Job
		for i, o := range outcomes {
			if !o.Handled && !updated[o.Job.ID] {
				continue
			}
			applied[i] = true
			if o.Handled {
				continue
			}
			if o.SkipRest {
				if err := skipRest(ctx, tx, o.Job, now); err != nil {
					return err
				}
			}
			msgs = append(msgs, o.Messages...)
			details = append(details, o.Details...)
			if o.ContinueWorkflow {
				next = append(next, o.Job)
			}
		}
		var counts pendingCounts
		if err := db.insertMessages(ctx, tx, msgs, &counts); err != nil {
			return err
		}
		if err := db.insertDetailsBatched(ctx, tx, details); err != nil {
			return err
		}
		if err := db.queueNextMany(ctx, tx, next, now); err != nil {
			return err
		}
		return db.applyCounts(ctx, tx, &counts)
	})
	return applied, err
}

// rowsPerStatement bounds multi-row statements: modernc's SQLite driver
// slows with the square of a statement's arguments, PostgreSQL does not.
func (db *DB) rowsPerStatement() int {
	if db.d.name == "sqlite" {
		return 32
	}
	return 500
}

// finishJobRows writes the status of every outcome's job that is still
// leased under the claimed attempt, and returns the ids it updated.
func (db *DB) finishJobRows(ctx context.Context, tx *sql.Tx, outcomes []store.JobOutcome, now time.Time) (map[string]bool, error) {
	var todo []store.JobOutcome
	for _, o := range outcomes {
		if !o.Handled {
			todo = append(todo, o)
		}
	}
	updated := make(map[string]bool, len(todo))
	for start := 0; start < len(todo); start += db.rowsPerStatement() {
		chunk := todo[start:min(start+db.rowsPerStatement(), len(todo))]
		a := args{ms(now)}
		rows := make([]string, len(chunk))
		for i, o := range chunk {
			runAt := o.Job.RunAt
			if o.Status == store.JobQueued || o.Status == store.JobDelayed {
				runAt = o.RunAt
			}
			rows[i] = "(CAST(" + a.add(o.Job.ID) + " AS TEXT), CAST(" + a.add(o.Job.Attempts) + " AS BIGINT), CAST(" +
				a.add(o.Status) + " AS TEXT), CAST(" + a.add(o.Error) + " AS TEXT), CAST(" + a.add(ms(runAt)) +
				" AS BIGINT), CAST(" + a.add(nullJSON(o.Digest)) + " AS TEXT), CAST(" + a.add(nullString(o.IntegrationID)) +
				" AS TEXT), CAST(" + a.add(nullJSON(o.Delivery)) + " AS TEXT))"
		}
		res, err := tx.QueryContext(ctx, "WITH v(id, attempts, status, error, run_at, digest, integration_id, delivery) AS"+
			" (VALUES "+strings.Join(rows, ", ")+") UPDATE jobs SET status = v.status, lease_until = NULL, error = v.error,"+
			" run_at = v.run_at, updated_at = $1, digest = coalesce(v.digest, jobs.digest),"+
			" integration_id = coalesce(v.integration_id, jobs.integration_id), delivery = coalesce(v.delivery, jobs.delivery) FROM v"+
			" WHERE jobs.id = v.id AND jobs.status = 'running' AND jobs.attempts = v.attempts RETURNING jobs.id", a...)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: finish jobs: %w", err)
		}
		for res.Next() {
			var id string
			if err := res.Scan(&id); err != nil {
				res.Close()
				return nil, err
			}
			updated[id] = true
		}
		res.Close()
		if err := res.Err(); err != nil {
			return nil, err
		}
	}
	return updated, nil
}

// insertDetailsBatched writes execution details a chunk at a time.
func (db *DB) insertDetailsBatched(ctx context.Context, q querier, ds []store.ExecutionDetail) error {
	for start := 0; start < len(ds); start += db.rowsPerStatement() {
		if err := insertDetails(ctx, q, ds[start:min(start+db.rowsPerStatement(), len(ds))]); err != nil {
			return err
		}
	}
	return nil
}

// queuedNext names a pending step to queue and when it may run.
type queuedNext struct {
	notificationID string
	stepIndex      int
	runAt          time.Time
}

// queueNextMany queues the step after each job's, from now.
func (db *DB) queueNextMany(ctx context.Context, q querier, jobs []store.Job, now time.Time) error {
	next := make([]queuedNext, len(jobs))
	for i, j := range jobs {
		next[i] = queuedNext{notificationID: j.NotificationID, stepIndex: j.StepIndex + 1, runAt: now}
	}
	return db.queueSteps(ctx, q, next, now)
}

// queueSteps queues pending steps, a chunk per statement. A delay or digest
// step runs from now whatever runAt says: it measures its wait from when it
// was reached.
func (db *DB) queueSteps(ctx context.Context, q querier, steps []queuedNext, now time.Time) error {
	for start := 0; start < len(steps); start += db.rowsPerStatement() {
		chunk := steps[start:min(start+db.rowsPerStatement(), len(steps))]
		a := args{ms(now)}
		rows := make([]string, len(chunk))
		for i, st := range chunk {
			rows[i] = "(CAST(" + a.add(st.notificationID) + " AS TEXT), CAST(" + a.add(st.stepIndex) + " AS BIGINT), CAST(" +
				a.add(ms(st.runAt)) + " AS BIGINT))"
		}
		if _, err := q.ExecContext(ctx, "WITH v(notification_id, step_index, run_at) AS (VALUES "+strings.Join(rows, ", ")+")"+
			" UPDATE jobs SET status = 'queued', updated_at = $1,"+
			" run_at = CASE WHEN jobs.type IN ('delay', 'digest') THEN CAST($1 AS BIGINT) ELSE v.run_at END"+
			" FROM v WHERE jobs.notification_id = v.notification_id AND jobs.step_index = v.step_index"+
			" AND jobs.status = 'pending'", a...); err != nil {
			return fmt.Errorf("sqlstore: queue steps: %w", err)
		}
	}
	return nil
}

// skipRest marks the later steps of a job's notification skipped.
func skipRest(ctx context.Context, q querier, j store.Job, now time.Time) error {
	_, err := q.ExecContext(ctx, "UPDATE jobs SET status = 'skipped', updated_at = $1"+
		" WHERE notification_id = $2 AND step_index > $3 AND status = 'pending'", ms(now), j.NotificationID, j.StepIndex)
	return err
}

// JobRescue implements store.Pipeline.
func (db *DB) JobRescue(ctx context.Context, now time.Time) (int, error) {
	if err := db.gate.acquire(ctx, true); err != nil {
		return 0, err
	}
	defer db.gate.release(true)
	res, err := db.w.ExecContext(ctx, "UPDATE jobs SET status = 'queued', lease_until = NULL, run_at = $1, updated_at = $1"+
		" WHERE status = 'running' AND lease_until < $1", ms(now))
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// JobNextRunAt implements store.Pipeline.
func (db *DB) JobNextRunAt(ctx context.Context) (time.Time, error) {
	var v sql.NullInt64
	if err := db.r.QueryRowContext(ctx, "SELECT min(t) FROM (SELECT min(run_at) AS t FROM jobs WHERE status = 'queued'"+
		" UNION ALL SELECT min(run_at) FROM jobs WHERE status = 'delayed') m").Scan(&v); err != nil {
		return time.Time{}, err
	}
	if !v.Valid {
		return time.Time{}, nil
	}
	return fromMS(v.Int64), nil
}
