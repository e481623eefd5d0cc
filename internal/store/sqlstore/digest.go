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
func (db *DB) JobResumeDue(ctx context.Context, now time.Time) ([]store.Job, error) {
	// Most passes find nothing due: one read says so, with no write
	// transaction (and, on SQLite, without the writer).
	var one int
	err := db.r.QueryRowContext(ctx, "SELECT 1 FROM jobs WHERE status = 'delayed' AND run_at <= $1 LIMIT 1", ms(now)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var completed []store.Job
	err = db.inTxPipeline(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, "UPDATE jobs SET status = 'completed', updated_at = $1 WHERE id IN"+
			" (SELECT id FROM jobs WHERE status = 'delayed' AND run_at <= $1 ORDER BY run_at LIMIT 500"+db.d.skipLocked+")"+
			" RETURNING id, notification_id, environment_id, step_index, type, provider_id, digest, created_at, run_at", ms(now))
		type due struct {
			job     store.Job
			digest  sql.NullString
			created int64
			runAt   int64
		}
		dues, err := scanAll(rows, err, func(r rowScanner) (due, error) {
			var d due
			return d, r.Scan(&d.job.ID, &d.job.NotificationID, &d.job.EnvironmentID, &d.job.StepIndex, &d.job.Type,
				&d.job.ProviderID, &d.digest, &d.created, &d.runAt)
		})
		if err != nil {
			return err
		}
		details := make([]store.ExecutionDetail, 0, len(dues))
		next := make([]queuedNext, 0, len(dues))
		completed = make([]store.Job, 0, len(dues))
		for _, d := range dues {
			db.noteDue(now, fromMS(d.runAt))
			d.job.Status, d.job.RunAt = store.JobCompleted, fromMS(d.runAt)
			completed = append(completed, d.job)
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
		if err := db.queueSteps(ctx, tx, next, now); err != nil {
			return err
		}
		return db.insertDetailsBatched(ctx, tx, details)
	})
	if err != nil {
		return nil, err
	}
	return completed, nil
}

// DigestJoinMany implements store.Pipeline: the claimed digest jobs of a
// batch are placed together, in one transaction and a few set-based
// statements whatever the batch's size (see placeDigests). A job whose lease
// was lost is left alone.
func (db *DB) DigestJoinMany(ctx context.Context, ps []*store.DigestJoinParams) ([]store.DigestJoinResult, error) {
	results := make([]store.DigestJoinResult, len(ps))
	err := db.inTxPipeline(ctx, func(tx *sql.Tx) error {
		live, err := db.leasedJobs(ctx, tx, ps)
		if err != nil {
			return err
		}
		var placed []*store.DigestJoinParams
		var at []int
		for i, p := range ps {
			if live[p.Job.ID] == p.Job.Attempts {
				placed, at = append(placed, p), append(at, i)
			}
		}
		places, err := db.placeDigests(ctx, tx, placed)
		if err != nil {
			return err
		}
		if err := db.writePlacedJobs(ctx, tx, placed, places); err != nil {
			return err
		}
		for k, i := range at {
			results[i] = store.DigestJoinResult{Outcome: places[k].outcome, LeaderNotificationID: places[k].leaderNotificationID,
				Status: placedStatus(places[k].outcome)}
		}
		return nil
	})
	return results, err
}

// leasedJobs returns the attempts of the jobs that are still running, locked.
func (db *DB) leasedJobs(ctx context.Context, tx *sql.Tx, ps []*store.DigestJoinParams) (map[string]int, error) {
	live := make(map[string]int, len(ps))
	for start := 0; start < len(ps); start += db.d.rowsPerStatement {
		var a args
		ids := make([]string, 0, db.d.rowsPerStatement)
		for _, p := range ps[start:min(start+db.d.rowsPerStatement, len(ps))] {
			ids = append(ids, p.Job.ID)
		}
		rows, err := tx.QueryContext(ctx, "SELECT id, attempts FROM jobs WHERE "+db.inList(&a, "id", ids)+" AND status = 'running'"+
			db.d.forUpdate, db.planned(a)...)
		if err := eachRow(rows, err, func(r rowScanner) error {
			var id string
			var attempts int
			if err := r.Scan(&id, &attempts); err != nil {
				return err
			}
			live[id] = attempts
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return live, nil
}

// digestPlacement is where placeDigests put one event.
type digestPlacement struct {
	outcome              string // store.DigestMerged, DigestLeader or DigestImmediate
	leaderNotificationID string
	// events are a leader's events: its own and those merged into it by the same batch.
	events []json.RawMessage
}

// digestWindow is an open window of one key during placeDigests.
type digestWindow struct {
	jobID, notificationID string
	end                   time.Time
	stored                string            // a window already in the table: its digest
	appended              []json.RawMessage // events this batch adds to a stored window
	leader                int               // a window this batch opens: its leader's index
}

// placeDigests decides where each event goes, in order of the time it
// reached its step: into the window of its key that was open then (merged),
// or, with none, into a window of its own (leader) — unless a backoff says a
// quiet period ends with it (immediate). It appends the merged events to the
// windows already in the table; the events' own jobs are the caller's to
// write (a trigger inserts them, a worker updates them). The caller's
// transaction holds the decisions together: on PostgreSQL a
// transaction-scoped advisory lock per key, taken in one order, serializes
// them across workers and triggers; SQLite's single writer does by itself.
func (db *DB) placeDigests(ctx context.Context, tx *sql.Tx, ps []*store.DigestJoinParams) ([]digestPlacement, error) {
	places := make([]digestPlacement, len(ps))
	if len(ps) == 0 {
		return places, nil
	}
	if err := db.lockDigestKeys(ctx, tx, ps); err != nil {
		return nil, err
	}
	windows, last, err := db.digestState(ctx, tx, ps)
	if err != nil {
		return nil, err
	}
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := ps[a].At.Compare(ps[b].At); c != 0 {
			return c
		}
		return strings.Compare(ps[a].Job.ID, ps[b].Job.ID)
	})
	for _, i := range order {
		p := ps[i]
		k := digestLockKey(p)
		var open *digestWindow
		for _, w := range windows[k] {
			if w.end.After(p.At) && (open == nil || w.end.Before(open.end)) {
				open = w
			}
		}
		switch {
		case open != nil:
			places[i] = digestPlacement{outcome: store.DigestMerged, leaderNotificationID: open.notificationID}
			if open.leader >= 0 {
				places[open.leader].events = append(places[open.leader].events, eventOf(p))
			} else {
				open.appended = append(open.appended, eventOf(p))
			}
		case p.Backoff > 0 && (last[k].IsZero() || last[k].Before(p.At.Add(-p.Backoff))):
			places[i] = digestPlacement{outcome: store.DigestImmediate, leaderNotificationID: p.Job.NotificationID,
				events: []json.RawMessage{eventOf(p)}}
		default:
			places[i] = digestPlacement{outcome: store.DigestLeader, leaderNotificationID: p.Job.NotificationID,
				events: []json.RawMessage{eventOf(p)}}
			windows[k] = append(windows[k], &digestWindow{jobID: p.Job.ID, notificationID: p.Job.NotificationID, end: p.WindowEnd, leader: i})
		}
		if p.At.After(last[k]) {
			last[k] = p.At
		}
	}
	return places, db.appendDigestEvents(ctx, tx, windows, ps[0].Now)
}

// lockDigestKeys takes the transaction-scoped lock of every key of ps (see
// dialect.lockKeys).
func (db *DB) lockDigestKeys(ctx context.Context, tx *sql.Tx, ps []*store.DigestJoinParams) error {
	names := make([]string, 0, len(ps))
	for _, p := range ps {
		names = append(names, digestLockKey(p))
	}
	return db.d.lockKeys(ctx, tx, "digest", names)
}

// digestGroup is the events of one workflow step of one environment.
type digestGroup struct {
	environmentID, workflowID, stepID string
	subscribers                       []string
	backoff                           bool
}

// digestState reads, for the events' keys, the windows open in the table
// (locked) and the creation time of each key's latest placed digest job (for
// backoff).
func (db *DB) digestState(ctx context.Context, tx *sql.Tx, ps []*store.DigestJoinParams) (map[string][]*digestWindow, map[string]time.Time, error) {
	groups := map[string]*digestGroup{}
	var names []string
	seen := map[string]bool{}
	for _, p := range ps {
		g := digestStep(p)
		if groups[g] == nil {
			groups[g] = &digestGroup{environmentID: p.Job.EnvironmentID, workflowID: p.Job.WorkflowID, stepID: p.Job.StepID}
			names = append(names, g)
		}
		if !seen[g+"|"+p.Job.SubscriberID] {
			seen[g+"|"+p.Job.SubscriberID] = true
			groups[g].subscribers = append(groups[g].subscribers, p.Job.SubscriberID)
		}
		groups[g].backoff = groups[g].backoff || p.Backoff > 0
	}
	slices.Sort(names)
	windows := map[string][]*digestWindow{}
	last := map[string]time.Time{}
	for _, name := range names {
		g := groups[name]
		for start := 0; start < len(g.subscribers); start += db.d.rowsPerStatement {
			subs := g.subscribers[start:min(start+db.d.rowsPerStatement, len(g.subscribers))]
			a := args{g.environmentID, g.workflowID, g.stepID}
			in := db.inList(&a, "subscriber_id", subs)
			rows, err := tx.QueryContext(ctx, "SELECT id, notification_id, subscriber_id, coalesce(digest_key, ''), run_at,"+
				" coalesce(digest, '{}') FROM jobs WHERE environment_id = $1 AND workflow_id = $2 AND step_id = $3"+
				" AND status = 'delayed' AND "+in+" ORDER BY id"+db.d.forUpdate, db.planned(a)...)
			if err := eachRow(rows, err, func(r rowScanner) error {
				var w digestWindow
				var sub, key string
				var end int64
				if err := r.Scan(&w.jobID, &w.notificationID, &sub, &key, &end, &w.stored); err != nil {
					return err
				}
				w.end, w.leader = fromMS(end), -1
				k := name + "|" + sub + "|" + key
				windows[k] = append(windows[k], &w)
				return nil
			}); err != nil {
				return nil, nil, fmt.Errorf("sqlstore: open digests: %w", err)
			}
			if !g.backoff {
				continue
			}
			rows, err = tx.QueryContext(ctx, "SELECT subscriber_id, digest_key, max(created_at) FROM jobs WHERE environment_id = $1"+
				" AND workflow_id = $2 AND step_id = $3 AND type = 'digest' AND digest_key IS NOT NULL AND "+in+""+
				" GROUP BY subscriber_id, digest_key", db.planned(a)...)
			if err := eachRow(rows, err, func(r rowScanner) error {
				var sub, key string
				var created int64
				if err := r.Scan(&sub, &key, &created); err != nil {
					return err
				}
				last[name+"|"+sub+"|"+key] = fromMS(created)
				return nil
			}); err != nil {
				return nil, nil, fmt.Errorf("sqlstore: recent digests: %w", err)
			}
		}
	}
	return windows, last, nil
}

// digestLockKey names the window key of an event: workflow step (see
// digestStep), subscriber and digestKey value.
func digestLockKey(p *store.DigestJoinParams) string {
	return digestStep(p) + "|" + p.Job.SubscriberID + "|" + p.Key
}

// digestStep names the workflow step of an event's digest in its environment.
func digestStep(p *store.DigestJoinParams) string {
	return p.Job.EnvironmentID + "|" + p.Job.WorkflowID + "|" + p.Job.StepID
}

// appendDigestEvents writes the events merged into windows already in the
// table, a chunk of windows per statement.
func (db *DB) appendDigestEvents(ctx context.Context, tx *sql.Tx, windows map[string][]*digestWindow, now time.Time) error {
	var rows [][]any
	for _, ws := range windows {
		for _, w := range ws {
			if w.leader >= 0 || len(w.appended) == 0 {
				continue
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(w.stored), &m); err != nil || m == nil {
				m = map[string]json.RawMessage{}
			}
			var events []json.RawMessage
			_ = json.Unmarshal(m["events"], &events)
			m["events"], _ = json.Marshal(append(events, w.appended...))
			enc, _ := json.Marshal(m)
			rows = append(rows, []any{w.jobID, string(enc)})
		}
	}
	return db.updateFrom(ctx, tx, "jobs", "id, digest", []string{"TEXT", "TEXT"}, "digest = v.digest", rows, now)
}

// updateFrom updates table's rows by id from rows (their columns cols of
// types), a chunk per statement: set assigns from v; updated_at is now.
func (db *DB) updateFrom(ctx context.Context, tx *sql.Tx, table, cols string, types []string, set string, rows [][]any, now time.Time) error {
	for start := 0; start < len(rows); start += db.d.rowsPerStatement {
		a := args{ms(now)}
		src, err := db.d.rowSource(&a, rows[start:min(start+db.d.rowsPerStatement, len(rows))], types)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "WITH v("+cols+") AS ("+src+") UPDATE "+table+" SET "+set+
			", updated_at = $1 FROM v WHERE "+table+".id = v.id", a...); err != nil {
			return fmt.Errorf("sqlstore: update %s: %w", table, err)
		}
	}
	return nil
}

// placedStatus is the status a digest job gets from its placing: merged
// into a window, skipped when its event goes at once (backoff), delayed
// while its window is open.
func placedStatus(outcome string) string {
	switch outcome {
	case store.DigestMerged:
		return store.JobMerged
	case store.DigestImmediate:
		return store.JobSkipped
	default:
		return store.JobDelayed
	}
}

// placedJob is the row a placed digest job gets, and its execution detail.
func placedJob(p *store.DigestJoinParams, pl digestPlacement) (status string, runAt time.Time, digest string, detail store.ExecutionDetail) {
	j := p.Job
	detail = store.ExecutionDetail{ID: id.NewAt(p.Now), JobID: j.ID, NotificationID: j.NotificationID, EnvironmentID: j.EnvironmentID,
		Status: "Success", Source: "Internal", ProviderID: j.ProviderID, IsRetry: j.Attempts > 1, CreatedAt: p.Now}
	status = placedStatus(pl.outcome)
	switch pl.outcome {
	case store.DigestMerged:
		runAt, digest = j.RunAt, digestMetadata(p.Metadata, nil)
		detail.Detail = "Merged into the digest of notification " + pl.leaderNotificationID
	case store.DigestImmediate:
		runAt, digest = p.Now, digestMetadata(p.Metadata, pl.events)
		detail.Detail = "First event after a quiet period: sent at once (backoff)"
	default:
		runAt, digest = p.WindowEnd, digestMetadata(p.Metadata, pl.events)
		detail.Detail = "Digest window opened until " + p.WindowEnd.UTC().Format(time.RFC3339)
	}
	return status, runAt, digest, detail
}

// triggerFinished is the first-step job a trigger writes finished, if any
// (see store.TriggerResult.Finished): an in-app step run with the trigger
// (inApp), or a digest event (plan) its placing ends.
func triggerFinished(plan *store.DigestJoinParams, place digestPlacement, inApp *store.JobOutcome) (store.Job, bool) {
	var j store.Job
	switch {
	case inApp != nil:
		j = inApp.Job
		j.Status = inApp.Status
	case plan != nil:
		j = plan.Job
		j.Status = placedStatus(place.outcome)
	}
	return j, store.JobFinal(j.Status)
}

// writePlacedJobs writes the placed digest jobs a worker holds: their
// status, the merged notifications' leader and skipped later steps, the
// steps after an immediate event queued, and an execution detail each.
func (db *DB) writePlacedJobs(ctx context.Context, tx *sql.Tx, ps []*store.DigestJoinParams, places []digestPlacement) error {
	if len(ps) == 0 {
		return nil
	}
	now := ps[0].Now
	details := make([]store.ExecutionDetail, 0, len(ps))
	jobs := make([][]any, 0, len(ps))
	var next []queuedNext
	var merged [][]any
	var mergedIDs []string
	for i, p := range ps {
		status, runAt, digest, detail := placedJob(p, places[i])
		details = append(details, detail)
		jobs = append(jobs, []any{p.Job.ID, status, ms(runAt), p.Key, digest})
		switch places[i].outcome {
		case store.DigestMerged:
			merged = append(merged, []any{p.Job.NotificationID, places[i].leaderNotificationID})
			mergedIDs = append(mergedIDs, p.Job.NotificationID)
		case store.DigestImmediate:
			next = append(next, queuedNext{notificationID: p.Job.NotificationID, stepIndex: p.Job.StepIndex + 1, runAt: now})
		}
	}
	if err := db.updateFrom(ctx, tx, "jobs", "id, status, run_at, digest_key, digest",
		[]string{"TEXT", "TEXT", "BIGINT", "TEXT", "TEXT"}, "status = v.status, run_at = v.run_at, lease_until = NULL,"+
			" digest_key = v.digest_key, digest = v.digest", jobs, now); err != nil {
		return err
	}
	if err := db.updateFrom(ctx, tx, "notifications", "id, leader", []string{"TEXT", "TEXT"},
		"digested_notification_id = v.leader", merged, now); err != nil {
		return err
	}
	// The steps before a running digest are done: a merged notification's
	// pending jobs are the ones after it.
	for start := 0; start < len(mergedIDs); start += db.d.rowsPerStatement {
		a := args{ms(now)}
		if _, err := tx.ExecContext(ctx, "UPDATE jobs SET status = 'skipped', updated_at = $1 WHERE "+
			db.inList(&a, "notification_id", mergedIDs[start:min(start+db.d.rowsPerStatement, len(mergedIDs))])+
			" AND status = 'pending'", db.planned(a)...); err != nil {
			return fmt.Errorf("sqlstore: skip merged steps: %w", err)
		}
	}
	if err := db.queueSteps(ctx, tx, next, now); err != nil {
		return err
	}
	return db.insertDetailsBatched(ctx, tx, details)
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
