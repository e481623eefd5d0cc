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

// JobResumeDue implements store.Pipeline: due delayed jobs complete and
// queue their next step, in one transaction.
func (db *DB) JobResumeDue(ctx context.Context, now time.Time) (int, error) {
	n := 0
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, "UPDATE jobs SET status = 'completed', updated_at = $1 WHERE id IN"+
			" (SELECT id FROM jobs WHERE status = 'delayed' AND run_at <= $1 ORDER BY run_at LIMIT 500"+db.skipLocked()+")"+
			" RETURNING id, notification_id, environment_id, step_index, type, provider_id, digest, created_at", ms(now))
		if err != nil {
			return err
		}
		type due struct {
			job     store.Job
			digest  sql.NullString
			created int64
		}
		var dues []due
		for rows.Next() {
			var d due
			if err := rows.Scan(&d.job.ID, &d.job.NotificationID, &d.job.EnvironmentID, &d.job.StepIndex, &d.job.Type,
				&d.job.ProviderID, &d.digest, &d.created); err != nil {
				rows.Close()
				return err
			}
			dues = append(dues, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		details := make([]store.ExecutionDetail, 0, len(dues))
		next := make([]queuedNext, 0, len(dues))
		for _, d := range dues {
			// The next step keeps its notification's place in the queue (its
			// trigger time), ahead of the events triggered since: a closed
			// window's message is not late behind a backlog of new work.
			next = append(next, queuedNext{notificationID: d.job.NotificationID, stepIndex: d.job.StepIndex + 1, runAt: fromMS(d.created)})
			text := "Delay finished"
			if d.job.Type == "digest" {
				var m struct {
					Events []json.RawMessage `json:"events"`
				}
				_ = json.Unmarshal([]byte(d.digest.String), &m)
				text = fmt.Sprintf("Digest window closed with %d events", len(m.Events))
			}
			details = append(details, store.ExecutionDetail{ID: id.NewAt(now), JobID: d.job.ID, NotificationID: d.job.NotificationID,
				EnvironmentID: d.job.EnvironmentID, Status: "Success", Source: "Internal", Detail: text,
				ProviderID: d.job.ProviderID, CreatedAt: now})
		}
		n = len(dues)
		if err := db.queueSteps(ctx, tx, next, now); err != nil {
			return err
		}
		return db.insertDetailsBatched(ctx, tx, details)
	})
	return n, err
}

func (db *DB) skipLocked() string {
	if db.d.name == "postgres" {
		return " FOR UPDATE SKIP LOCKED"
	}
	return ""
}

// DigestJoin implements store.Pipeline.
func (db *DB) DigestJoin(ctx context.Context, p *store.DigestJoinParams) (store.DigestJoinResult, error) {
	res, err := db.DigestJoinMany(ctx, []*store.DigestJoinParams{p})
	if err != nil {
		return store.DigestJoinResult{}, err
	}
	return res[0], nil
}

// DigestJoinMany implements store.Pipeline: the events of a whole batch in
// one transaction. On PostgreSQL a transaction-scoped advisory lock per
// digest key serializes the decisions of one window across workers, taken
// in key order so that two batches cannot deadlock; SQLite's single writer
// serializes them by itself.
func (db *DB) DigestJoinMany(ctx context.Context, ps []*store.DigestJoinParams) ([]store.DigestJoinResult, error) {
	results := make([]store.DigestJoinResult, len(ps))
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(digestLockKey(ps[a]), digestLockKey(ps[b])) })
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		for _, i := range order {
			p := ps[i]
			join := db.digestJoin
			if db.d.name == "postgres" {
				join = db.digestJoinPostgres
			}
			res, err := join(ctx, tx, p)
			if err != nil {
				return err
			}
			results[i] = res
		}
		return nil
	})
	return results, err
}

func digestLockKey(p *store.DigestJoinParams) string {
	j := p.Job
	return j.EnvironmentID + "|" + j.WorkflowID + "|" + j.SubscriberID + "|" + j.StepID + "|" + p.Key
}

// digestJoinPostgres is digestJoin in fewer round trips, for a server
// across the network: the key's advisory lock and the lease check in one
// statement; the merge into an open window (found and appended to) in
// another; the merged job, its notification, its later steps and its
// detail in a third (data-modifying CTEs). Opening a window takes the
// general path.
func (db *DB) digestJoinPostgres(ctx context.Context, tx *sql.Tx, p *store.DigestJoinParams) (store.DigestJoinResult, error) {
	var res store.DigestJoinResult
	j := p.Job
	var attempts int
	err := tx.QueryRowContext(ctx, "SELECT j.attempts FROM jobs j, pg_advisory_xact_lock(hashtext($1)) l"+
		" WHERE j.id = $2 AND j.status = 'running' FOR UPDATE OF j", digestLockKey(p), j.ID).Scan(&attempts)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && attempts != j.Attempts) {
		return res, nil // the lease was lost: another worker runs this job
	}
	if err != nil {
		return res, err
	}
	res.Applied = true
	var leaderID, leaderNotification string
	err = tx.QueryRowContext(ctx, "UPDATE jobs SET digest = jsonb_set(coalesce(digest, '{}')::jsonb, '{events}',"+
		" coalesce(digest::jsonb -> 'events', '[]'::jsonb) || jsonb_build_array(CAST($1 AS jsonb)))::text, updated_at = $2"+
		" WHERE id = (SELECT id FROM jobs WHERE environment_id = $3 AND workflow_id = $4 AND subscriber_id = $5"+
		" AND step_id = $6 AND digest_key = $7 AND status = 'delayed' AND id <> $8 ORDER BY run_at, id LIMIT 1 FOR UPDATE)"+
		" RETURNING id, notification_id", string(eventOf(p)), ms(p.Now), j.EnvironmentID, j.WorkflowID, j.SubscriberID,
		j.StepID, p.Key, j.ID).Scan(&leaderID, &leaderNotification)
	if errors.Is(err, sql.ErrNoRows) {
		return db.digestJoin(ctx, tx, p) // no open window: open one (or backoff)
	}
	if err != nil {
		return res, err
	}
	now := ms(p.Now)
	detailID := id.NewAt(p.Now)
	_, err = tx.ExecContext(ctx, "WITH s AS (UPDATE jobs SET status = 'merged', lease_until = NULL, digest_key = $1,"+
		" digest = $2, updated_at = $3 WHERE id = $4 RETURNING notification_id, step_index),"+
		" n AS (UPDATE notifications SET digested_notification_id = $5, updated_at = $3 WHERE id = $6),"+
		" k AS (UPDATE jobs SET status = 'skipped', updated_at = $3 WHERE notification_id = $6 AND step_index > $7"+
		" AND status = 'pending')"+
		" INSERT INTO execution_details ("+detailCols+") VALUES ($8, $4, $6, $9, 'Success', 'Internal', $10, $11, false, $12, NULL, $3)",
		p.Key, digestMetadata(p.Metadata, nil), now, j.ID, leaderNotification, j.NotificationID, j.StepIndex,
		detailID, j.EnvironmentID, "Merged into the digest of notification "+leaderNotification, j.Attempts > 1, j.ProviderID)
	if err != nil {
		return res, fmt.Errorf("sqlstore: digest merge: %w", err)
	}
	res.Outcome, res.LeaderNotificationID = store.DigestMerged, leaderNotification
	return res, nil
}

// digestJoin places one event, inside the caller's transaction (and, on
// PostgreSQL, the key's advisory lock, which digestJoinPostgres took).
func (db *DB) digestJoin(ctx context.Context, tx *sql.Tx, p *store.DigestJoinParams) (store.DigestJoinResult, error) {
	var res store.DigestJoinResult
	j := p.Job
	err := func() error {
		// Still ours? A lost lease means another worker runs this job now.
		var attempts int
		err := tx.QueryRowContext(ctx, "SELECT attempts FROM jobs WHERE id = $1 AND status = 'running'"+db.d.forUpdate, j.ID).Scan(&attempts)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && attempts != j.Attempts) {
			return nil
		}
		if err != nil {
			return err
		}
		res.Applied = true
		var leaderID, leaderNotification, leaderDigest string
		err = tx.QueryRowContext(ctx, "SELECT id, notification_id, coalesce(digest, '{}') FROM jobs WHERE environment_id = $1"+
			" AND workflow_id = $2 AND subscriber_id = $3 AND step_id = $4 AND digest_key = $5 AND status = 'delayed'"+
			" AND id <> $6 ORDER BY run_at, id LIMIT 1"+db.d.forUpdate,
			j.EnvironmentID, j.WorkflowID, j.SubscriberID, j.StepID, p.Key, j.ID).Scan(&leaderID, &leaderNotification, &leaderDigest)
		switch {
		case err == nil:
			return db.digestMerge(ctx, tx, p, &res, leaderID, leaderNotification, leaderDigest)
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		if p.Backoff > 0 {
			var recent bool
			if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM jobs WHERE environment_id = $1 AND workflow_id = $2"+
				" AND subscriber_id = $3 AND step_id = $4 AND digest_key = $5 AND type = 'digest' AND id <> $6 AND created_at >= $7)",
				j.EnvironmentID, j.WorkflowID, j.SubscriberID, j.StepID, p.Key, j.ID, ms(p.Now.Add(-p.Backoff))).Scan(&recent); err != nil {
				return err
			}
			if !recent {
				return db.digestFinish(ctx, tx, p, &res, store.DigestImmediate)
			}
		}
		return db.digestFinish(ctx, tx, p, &res, store.DigestLeader)
	}()
	return res, err
}

// digestMetadata is the digest metadata with its events.
func digestMetadata(meta map[string]any, events []json.RawMessage) string {
	m := make(map[string]any, len(meta)+1)
	for k, v := range meta {
		m[k] = v
	}
	if events == nil {
		events = []json.RawMessage{}
	}
	m["events"] = events
	b, _ := json.Marshal(m)
	return string(b)
}

func eventOf(p *store.DigestJoinParams) json.RawMessage {
	if len(p.Event) == 0 {
		return json.RawMessage("{}")
	}
	return json.RawMessage(p.Event)
}

// digestMerge adds the event to the leader's window; this job is merged and
// the rest of its notification skipped.
func (db *DB) digestMerge(ctx context.Context, tx *sql.Tx, p *store.DigestJoinParams, res *store.DigestJoinResult,
	leaderID, leaderNotification, leaderDigest string) error {
	j := p.Job
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(leaderDigest), &m); err != nil || m == nil {
		m = map[string]json.RawMessage{}
	}
	var events []json.RawMessage
	_ = json.Unmarshal(m["events"], &events)
	events = append(events, eventOf(p))
	m["events"], _ = json.Marshal(events)
	enc, _ := json.Marshal(m)
	now := ms(p.Now)
	if _, err := tx.ExecContext(ctx, "UPDATE jobs SET digest = $1, updated_at = $2 WHERE id = $3", string(enc), now, leaderID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE jobs SET status = 'merged', lease_until = NULL, digest_key = $1, digest = $2,"+
		" updated_at = $3 WHERE id = $4", p.Key, digestMetadata(p.Metadata, nil), now, j.ID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE notifications SET digested_notification_id = $1, updated_at = $2 WHERE id = $3",
		leaderNotification, now, j.NotificationID); err != nil {
		return err
	}
	if err := skipRest(ctx, tx, j, p.Now); err != nil {
		return err
	}
	res.Outcome, res.LeaderNotificationID = store.DigestMerged, leaderNotification
	return insertDetails(ctx, tx, []store.ExecutionDetail{
		{ID: id.NewAt(p.Now), JobID: j.ID, NotificationID: j.NotificationID, EnvironmentID: j.EnvironmentID, Status: "Success",
			Source: "Internal", Detail: "Merged into the digest of notification " + leaderNotification, ProviderID: j.ProviderID,
			IsRetry: j.Attempts > 1, CreatedAt: p.Now},
	})
}

// digestFinish opens a window (leader: delayed until WindowEnd) or lets the
// event go at once (backoff: skipped, next step queued).
func (db *DB) digestFinish(ctx context.Context, tx *sql.Tx, p *store.DigestJoinParams, res *store.DigestJoinResult, outcome string) error {
	j := p.Job
	now := ms(p.Now)
	status, runAt, text := store.JobDelayed, p.WindowEnd, "Digest window opened until "+p.WindowEnd.UTC().Format(time.RFC3339)
	if outcome == store.DigestImmediate {
		status, runAt, text = store.JobSkipped, p.Now, "First event after a quiet period: sent at once (backoff)"
	}
	if _, err := tx.ExecContext(ctx, "UPDATE jobs SET status = $1, run_at = $2, lease_until = NULL, digest_key = $3, digest = $4,"+
		" updated_at = $5 WHERE id = $6", status, ms(runAt), p.Key,
		digestMetadata(p.Metadata, []json.RawMessage{eventOf(p)}), now, j.ID); err != nil {
		return err
	}
	if outcome == store.DigestImmediate {
		if err := db.queueSteps(ctx, tx, []queuedNext{{notificationID: j.NotificationID, stepIndex: j.StepIndex + 1, runAt: p.Now}}, p.Now); err != nil {
			return err
		}
	}
	res.Outcome, res.LeaderNotificationID = outcome, j.NotificationID
	return insertDetails(ctx, tx, []store.ExecutionDetail{
		{ID: id.NewAt(p.Now), JobID: j.ID, NotificationID: j.NotificationID, EnvironmentID: j.EnvironmentID, Status: "Success",
			Source: "Internal", Detail: text, ProviderID: j.ProviderID, IsRetry: j.Attempts > 1, CreatedAt: p.Now},
	})
}
