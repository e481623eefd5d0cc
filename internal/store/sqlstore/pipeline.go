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

const notificationCols = "id, organization_id, environment_id, workflow_id, subscriber_id, transaction_id, payload, overrides," +
	" actor, recipient, tags, channels, digested_notification_id, created_at, updated_at, contexts, context_keys"

func scanNotification(row interface{ Scan(...any) error }) (store.Notification, error) {
	var n store.Notification
	var payload, overrides, tags, channels string
	var actor, to, digested, contexts sql.NullString
	var created, updated int64
	err := row.Scan(&n.ID, &n.OrganizationID, &n.EnvironmentID, &n.WorkflowID, &n.SubscriberID, &n.TransactionID,
		&payload, &overrides, &actor, &to, &tags, &channels, &digested, &created, &updated, &contexts, &n.ContextKeys)
	if err != nil {
		return n, notFound(err)
	}
	if contexts.Valid {
		n.Contexts = store.JSON(contexts.String)
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

// detailReadCols are detailCols and the columns that only some details
// have, which their writers leave out (webhook_status: delivery events).
const detailReadCols = detailCols + ", webhook_status"

// scanDetail scans a row of detailReadCols.
func scanDetail(row interface{ Scan(...any) error }) (store.ExecutionDetail, error) {
	var d store.ExecutionDetail
	var provider, webhookStatus sql.NullString
	var created int64
	err := row.Scan(&d.ID, &d.JobID, &d.NotificationID, &d.EnvironmentID, &d.Status, &d.Source, &d.Detail, &d.IsRetry,
		&d.IsTest, &provider, &d.Raw, &created, &webhookStatus)
	d.ProviderID, d.CreatedAt, d.WebhookStatus = provider.String, fromMS(created), webhookStatus.String
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
		" LIMIT "+strconv.Itoa(limit)+skip+") RETURNING "+jobReadCols, ms(now.Add(lease)), ms(now))
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

// loadClaimed fetches the notifications, subscribers, workflows and
// subscriber preferences of jobs, with one statement each.
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
	prefs, err := db.claimedPreferences(ctx, jobs)
	if err != nil {
		return nil, err
	}
	out := make([]store.Claimed, 0, len(jobs))
	for _, j := range jobs {
		c := store.Claimed{Job: j, Notification: ns[j.NotificationID], Subscriber: subs[j.SubscriberID],
			Workflow: wfs[j.WorkflowID], Digest: digests[j.NotificationID]}
		if channelSteps[j.Type] {
			c.Preferences = store.ChannelChoices{Global: prefs[[2]string{j.SubscriberID, ""}],
				Workflow: prefs[[2]string{j.SubscriberID, j.WorkflowID}]}
		}
		out = append(out, c)
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
			if o.SkipRest || o.CancelRest {
				status := store.JobSkipped
				if o.CancelRest {
					status = store.JobCanceled
				}
				if err := endRest(ctx, tx, o.Job, status, now); err != nil {
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
		noteSent(tx, msgs)
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
// leased under the claimed attempt, and returns the ids it updated. The
// lease check is written "(status = 'running') IS TRUE" so that PostgreSQL
// finds the jobs by primary key: with "status = 'running'" it may scan the
// partial index of running jobs instead, and under load that index holds
// the dead entries of every job finished since the last VACUUM (9 ms for a
// batch of 64 in the benchmark, instead of well under one).
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
		rows := make([][]any, len(chunk))
		for i, o := range chunk {
			runAt := o.Job.RunAt
			if o.Status == store.JobQueued || o.Status == store.JobDelayed {
				runAt = o.RunAt
			}
			rows[i] = []any{o.Job.ID, o.Job.Attempts, o.Status, o.Error, ms(runAt), nullJSON(o.Digest),
				nullString(o.IntegrationID), nullJSON(o.Delivery), nullJSON(o.Output)}
		}
		a := args{ms(now)}
		src, err := db.d.rowSource(&a, rows, finishTypes)
		if err != nil {
			return nil, err
		}
		res, err := tx.QueryContext(ctx, "WITH v(id, attempts, status, error, run_at, digest, integration_id, delivery, output) AS"+
			" ("+src+") UPDATE jobs SET status = v.status, lease_until = NULL, error = v.error,"+
			" run_at = v.run_at, updated_at = $1, digest = coalesce(v.digest, jobs.digest),"+
			" integration_id = coalesce(v.integration_id, jobs.integration_id), delivery = coalesce(v.delivery, jobs.delivery),"+
			" output = coalesce(v.output, jobs.output) FROM v"+
			" WHERE jobs.id = v.id AND (jobs.status = 'running') IS TRUE AND jobs.attempts = v.attempts RETURNING jobs.id", a...)
		ids, err := scanAll(res, err, func(r rowScanner) (string, error) {
			var id string
			return id, r.Scan(&id)
		})
		if err != nil {
			return nil, fmt.Errorf("sqlstore: finish jobs: %w", err)
		}
		for _, id := range ids {
			updated[id] = true
		}
	}
	return updated, nil
}

// finishTypes are the column types of finishJobRows' rows.
var finishTypes = []string{"TEXT", "BIGINT", "TEXT", "TEXT", "BIGINT", "TEXT", "TEXT", "TEXT", "TEXT"}

// insertDetailsBatched writes execution details a chunk at a time.
func (db *DB) insertDetailsBatched(ctx context.Context, q querier, ds []store.ExecutionDetail) error {
	for start := 0; start < len(ds); start += db.rowsPerStatement() {
		chunk := ds[start:min(start+db.rowsPerStatement(), len(ds))]
		rows := make([][]any, len(chunk))
		for i, d := range chunk {
			rows[i] = detailRow(d)
		}
		var a args
		stmt, err := db.insertFrom(&a, "execution_details", detailCols, rows, detailTypes)
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, stmt, a...); err != nil {
			return fmt.Errorf("sqlstore: insert details: %w", err)
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
		rows := make([][]any, len(chunk))
		for i, st := range chunk {
			rows[i] = []any{st.notificationID, st.stepIndex, ms(st.runAt)}
		}
		a := args{ms(now)}
		src, err := db.d.rowSource(&a, rows, queueTypes)
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, "WITH v(notification_id, step_index, run_at) AS ("+src+")"+
			" UPDATE jobs SET status = 'queued', updated_at = $1,"+
			" run_at = CASE WHEN jobs.type IN ('delay', 'digest') THEN CAST($1 AS BIGINT) ELSE v.run_at END"+
			" FROM v WHERE jobs.notification_id = v.notification_id AND jobs.step_index = v.step_index"+
			" AND jobs.status = 'pending'", a...); err != nil {
			return fmt.Errorf("sqlstore: queue steps: %w", err)
		}
	}
	return nil
}

// queueTypes are the column types of queueSteps' rows.
var queueTypes = []string{"TEXT", "BIGINT", "BIGINT"}

// endRest gives the later pending steps of a job's notification a final status (skipped, canceled).
func endRest(ctx context.Context, q querier, j store.Job, status string, now time.Time) error {
	_, err := q.ExecContext(ctx, "UPDATE jobs SET status = $4, updated_at = $1"+
		" WHERE notification_id = $2 AND step_index > $3 AND status = 'pending'", ms(now), j.NotificationID, j.StepIndex, status)
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
