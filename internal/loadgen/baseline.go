package loadgen

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/store"
)

// The baseline is pgbench for Herald's trigger path: on a fresh store of
// the same kind, migrated by Herald, each client runs, one after the other,
// the transaction a one-recipient trigger commits and the transaction its
// in-app delivery commits, as raw SQL on database/sql over the pools Herald
// opens (one writer on SQLite, 32 connections on PostgreSQL). What Herald
// does around them — HTTP, authentication, rendering templates, loading
// the claimed job's notification, subscriber and workflow, waking workers,
// realtime events — is what the ratio Herald/baseline measures.
//
// The trigger transaction: find the subscriber, then insert the
// transactions row, the notification, its queued job and the job's "Step
// queued" detail (on PostgreSQL in one statement of data-modifying CTEs, as
// sqlstore's Trigger does). The delivery transaction: claim the oldest due
// job (UPDATE … RETURNING, FOR UPDATE SKIP LOCKED on PostgreSQL), insert its
// message, mark the job completed, insert the "In-app message created"
// detail, and add one to the subscriber's inbox counter (upsert).

// BaselineConfig is one baseline run.
type BaselineConfig struct {
	Clients     int
	Duration    time.Duration
	Subscribers int
	// Group > 1 runs the grouped baseline (baseline_group.go): each client
	// commits Group triggers with their in-app deliveries a transaction.
	Group int
}

// BaselineReport is what a baseline run measured.
type BaselineReport struct {
	Dialect              string
	Clients, Subscribers int
	Group                int
	Took                 time.Duration
	Triggers             int // trigger transactions committed
	Messages             int // delivery transactions committed, a message each
	// EmptyClaims are delivery transactions that found no due job: on
	// PostgreSQL a claim's snapshot may hold only jobs others claimed
	// since (Herald's workers then wait for the next wake-up).
	EmptyClaims             int
	TriggersPerSecond       float64
	MessagesPerSecond       float64
	RowsPerSecond           float64 // rows inserted, updated or upserted
	TriggerTx, DeliveryTx   Summary
	Errors                  map[string]int
	StoredMessages, Counted int // the messages table and the inbox counters at the end
}

// rowsPerTrigger and rowsPerMessage are the rows each transaction writes.
const rowsPerTrigger, rowsPerMessage = 4, 5

// rowsPerGroupedTrigger are the rows a trigger of the grouped baseline
// writes: transaction, notification, job, two details, message, counter.
const rowsPerGroupedTrigger = 7

// ErrNotEmpty refuses a baseline on a store that holds data.
var ErrNotEmpty = errors.New("loadgen: the baseline writes test rows: give it an empty database")

// Baseline runs the baseline on a's store, which must be empty (freshly
// migrated): it creates an organization, a workflow and the subscribers.
func Baseline(ctx context.Context, a *app.App, cfg BaselineConfig) (*BaselineReport, error) {
	if cfg.Clients <= 0 {
		cfg.Clients = DefaultClients
	}
	if cfg.Duration <= 0 {
		cfg.Duration = DefaultDuration
	}
	if cfg.Subscribers <= 0 {
		cfg.Subscribers = DefaultSubscribers
	}
	b, err := newBaseline(ctx, a, cfg.Subscribers)
	if err != nil {
		return nil, err
	}
	r := &BaselineReport{Dialect: b.dialect, Clients: cfg.Clients, Subscribers: cfg.Subscribers, Group: max(cfg.Group, 1)}
	var triggers, messages, empty atomic.Int64
	var trigTx, delivTx latencies
	var errs errorCounts
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(cfg.Duration)
	var next atomic.Int64
	for range cfg.Clients {
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil && r.Group > 1 {
				group := make([]baselineSubscriber, r.Group)
				for i := range group {
					group[i] = b.subs[int((next.Add(1)-1)%int64(len(b.subs)))]
				}
				t0 := time.Now()
				if err := b.triggerGroup(ctx, group); err != nil {
					errs.add("group: " + clip([]byte(err.Error())))
					continue
				}
				trigTx.add(time.Since(t0))
				triggers.Add(int64(r.Group))
				messages.Add(int64(r.Group))
			}
			for time.Now().Before(end) && ctx.Err() == nil && r.Group == 1 {
				sub := b.subs[int((next.Add(1)-1)%int64(len(b.subs)))]
				t0 := time.Now()
				if err := b.trigger(ctx, sub); err != nil {
					errs.add("trigger: " + clip([]byte(err.Error())))
					continue
				}
				trigTx.add(time.Since(t0))
				triggers.Add(1)
				t0 = time.Now()
				claimed, err := b.deliver(ctx)
				switch {
				case err != nil:
					errs.add("delivery: " + clip([]byte(err.Error())))
				case !claimed:
					empty.Add(1)
				default:
					delivTx.add(time.Since(t0))
					messages.Add(1)
				}
			}
		})
	}
	wg.Wait()
	r.Took = time.Since(start)
	r.Triggers, r.Messages, r.EmptyClaims = int(triggers.Load()), int(messages.Load()), int(empty.Load())
	r.TriggersPerSecond = float64(r.Triggers) / r.Took.Seconds()
	r.MessagesPerSecond = float64(r.Messages) / r.Took.Seconds()
	r.RowsPerSecond = float64(rowsPerTrigger*r.Triggers+rowsPerMessage*r.Messages) / r.Took.Seconds()
	if r.Group > 1 {
		r.RowsPerSecond = float64(rowsPerGroupedTrigger*r.Triggers) / r.Took.Seconds()
	}
	r.TriggerTx, r.DeliveryTx, r.Errors = trigTx.summary(), delivTx.summary(), errs.snapshot()
	if err := b.db.QueryRowContext(ctx, "SELECT count(*) FROM messages WHERE environment_id = $1", b.scope.EnvironmentID).
		Scan(&r.StoredMessages); err != nil {
		return r, err
	}
	if err := b.db.QueryRowContext(ctx, "SELECT coalesce(sum(unread_unseen), 0) FROM inbox_counts WHERE environment_id = $1",
		b.scope.EnvironmentID).Scan(&r.Counted); err != nil {
		return r, err
	}
	return r, nil
}

// ErrorCount is the number of failed transactions and of messages the
// tables do not hold as counted.
func (r *BaselineReport) ErrorCount() int {
	n := sum(r.Errors)
	if r.StoredMessages != r.Messages || r.Counted != r.Messages {
		n++
	}
	return n
}

// Print writes the report as Report.Print does.
func (r *BaselineReport) Print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k string, v any) { fmt.Fprintf(tw, "%s\t%v\n", k, v) }
	row("baseline store", r.Dialect)
	row("run", fmt.Sprintf("%d subscribers, %d clients for %s", r.Subscribers, r.Clients, seconds(r.Took)))
	if r.Group > 1 {
		row("group", fmt.Sprintf("%d triggers with their in-app deliveries a transaction", r.Group))
	}
	row("trigger transactions", r.Triggers)
	row("delivery transactions", r.Messages)
	row("baseline triggers/s", rate(r.TriggersPerSecond))
	row("baseline messages/s", rate(r.MessagesPerSecond))
	row("baseline rows/s", rate(r.RowsPerSecond))
	if r.Group > 1 {
		row("group transaction", r.TriggerTx)
	} else {
		row("trigger transaction", r.TriggerTx)
	}
	row("delivery transaction", r.DeliveryTx)
	row("empty claims", r.EmptyClaims)
	row("messages stored, counted", fmt.Sprintf("%d, %d", r.StoredMessages, r.Counted))
	row("errors", r.ErrorCount())
	for k, v := range r.Errors {
		row(fmt.Sprintf("  %d ×", v), k)
	}
	return tw.Flush()
}

// baseline is the prepared store of a baseline run.
type baseline struct {
	db       *sql.DB
	dialect  string
	scope    store.Scope
	workflow store.Workflow
	subs     []baselineSubscriber
}

type baselineSubscriber struct{ id, subscriberID string }

func newBaseline(ctx context.Context, a *app.App, subscribers int) (*baseline, error) {
	first, err := a.Bootstrap(ctx)
	if err != nil {
		return nil, err
	}
	if first == nil {
		return nil, ErrNotEmpty
	}
	env, err := a.Store.EnvironmentGetByName(ctx, "development")
	if err != nil {
		return nil, err
	}
	b := &baseline{db: a.Store.Writer(), dialect: a.Store.Dialect(),
		scope: store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}}
	now := time.Now()
	b.workflow = store.Workflow{ID: id.New(), OrganizationID: env.OrganizationID, EnvironmentID: env.ID, Key: "herald-baseline",
		Name: "herald-baseline", Active: true, Severity: store.SeverityNone, CreatedAt: now, UpdatedAt: now,
		Steps: []store.Step{{ID: id.New(), StepID: "inbox", Name: "inbox", Type: "in_app",
			ControlValues: map[string]any{"subject": "Hi", "body": "Order shipped"}}}}
	if err := a.Store.WorkflowCreate(ctx, &b.workflow); err != nil {
		return nil, err
	}
	for start := 0; start < subscribers; start += 500 {
		p := store.SubscriberBulkUpsertParams{Scope: b.scope, Now: now}
		for i := start; i < min(start+500, subscribers); i++ {
			p.Items = append(p.Items, store.SubscriberUpsertParams{SubscriberID: fmt.Sprintf("baseline-%d", i)})
		}
		if _, err := a.Store.SubscriberBulkUpsert(ctx, &p); err != nil {
			return nil, err
		}
	}
	rows, err := b.db.QueryContext(ctx, "SELECT id, subscriber_id FROM subscribers WHERE environment_id = $1", env.ID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var s baselineSubscriber
		if err := rows.Scan(&s.id, &s.subscriberID); err != nil {
			return nil, err
		}
		b.subs = append(b.subs, s)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(b.subs) != subscribers {
		return nil, fmt.Errorf("loadgen: %d subscribers created, want %d", len(b.subs), subscribers)
	}
	return b, nil
}

// inTx runs fn in a transaction (on SQLite, BEGIN IMMEDIATE: Herald's
// writer DSN says _txlock=immediate).
func (b *baseline) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback() //nolint:errcheck
		return err
	}
	return tx.Commit()
}

// The columns of the rows, as sqlstore writes them.
const (
	notificationColumns = "id, organization_id, environment_id, workflow_id, subscriber_id, transaction_id, payload, overrides," +
		" actor, recipient, tags, channels, digested_notification_id, created_at, updated_at"
	jobColumns = "id, organization_id, environment_id, notification_id, subscriber_id, workflow_id, transaction_id, step_id," +
		" step_index, type, provider_id, status, run_at, lease_until, attempts, digest, digest_key, error," +
		" schedule_extensions_count, created_at, updated_at"
	detailColumns  = "id, job_id, notification_id, environment_id, status, source, detail, is_retry, is_test, provider_id, raw, created_at"
	messageColumns = "id, organization_id, environment_id, notification_id, job_id, subscriber_id, workflow_id," +
		" template_identifier, transaction_id, channel, provider_id, content, subject, avatar, cta, actor, payload, data, tags," +
		" overrides, status, read, seen, archived, last_read_at, last_seen_at, deleted, created_at, updated_at," +
		" target, integration_id, provider_message_id, error_text, delivery, first_seen_at, archived_at, snoozed_until, severity"
)

// PostgreSQL's casts of the VALUES lists (sqlstore's trigger.go).
var (
	notificationCasts = []string{"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "JSONB", "TEXT", "TEXT", "TEXT", "TEXT",
		"TEXT", "TEXT", "BIGINT", "BIGINT"}
	jobCasts = []string{"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "INTEGER", "TEXT", "TEXT", "TEXT",
		"BIGINT", "BIGINT", "INTEGER", "TEXT", "TEXT", "TEXT", "INTEGER", "BIGINT", "BIGINT"}
	detailCasts = []string{"TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "BOOLEAN", "BOOLEAN", "TEXT", "TEXT", "BIGINT"}
)

// placeholders returns "$from, …, $(from+n-1)", each cast when casts is set.
func placeholders(from, n int, casts []string) string {
	ph := make([]string, n)
	for i := range ph {
		ph[i] = fmt.Sprintf("$%d", from+i)
		if casts != nil {
			ph[i] = "CAST(" + ph[i] + " AS " + casts[i] + ")"
		}
	}
	return strings.Join(ph, ", ")
}

// trigger commits what a trigger to one subscriber commits.
func (b *baseline) trigger(ctx context.Context, sub baselineSubscriber) error {
	now := time.Now()
	at := now.UnixMilli()
	tx, nID, jobID := id.NewAt(now), id.NewAt(now), id.NewAt(now)
	w := &b.workflow
	step := w.Steps[0]
	head := []any{b.scope.EnvironmentID, tx, w.ID, at}
	notification := []any{nID, b.scope.OrganizationID, b.scope.EnvironmentID, w.ID, sub.id, tx,
		`{"order":"A-1","items":[1,2,3],"when":"2026-11-23T10:00:00Z"}`, "{}", nil, `{"subscriberId":"` + sub.subscriberID + `"}`,
		"[]", `["in_app"]`, nil, at, at}
	job := []any{jobID, b.scope.OrganizationID, b.scope.EnvironmentID, nID, sub.id, w.ID, tx, step.ID, 0, step.Type,
		provider.InAppProvider, store.JobQueued, at, nil, 0, nil, nil, "", 0, at, at}
	detail := []any{id.NewAt(now), jobID, nID, b.scope.EnvironmentID, "Pending", "Internal", "Step queued", false, false,
		provider.InAppProvider, nil, at}
	return b.inTx(ctx, func(q *sql.Tx) error {
		var found string
		if err := q.QueryRowContext(ctx, "SELECT id FROM subscribers WHERE environment_id = $1 AND subscriber_id = $2"+
			" AND deleted = false", b.scope.EnvironmentID, sub.subscriberID).Scan(&found); err != nil {
			return fmt.Errorf("subscriber: %w", err)
		}
		const claim = "INSERT INTO transactions (environment_id, transaction_id, workflow_id, created_at) VALUES ($1, $2, $3, $4)" +
			" ON CONFLICT DO NOTHING"
		if b.dialect == "postgres" {
			n := len(head)
			q1 := "WITH t AS (" + claim + " RETURNING 1)"
			args := head
			for i, part := range []struct {
				table, cols string
				row         []any
				casts       []string
			}{{"notifications", notificationColumns, notification, notificationCasts}, {"jobs", jobColumns, job, jobCasts},
				{"execution_details", detailColumns, detail, detailCasts}} {
				q1 += fmt.Sprintf(", w%d AS (INSERT INTO %s (%s) SELECT * FROM (VALUES (%s)) v WHERE EXISTS (SELECT 1 FROM t))",
					i, part.table, part.cols, placeholders(n+1, len(part.row), part.casts))
				n += len(part.row)
				args = append(args, part.row...)
			}
			var claimed int
			if err := q.QueryRowContext(ctx, q1+" SELECT count(*) FROM t", args...).Scan(&claimed); err != nil {
				return err
			}
			if claimed != 1 {
				return errors.New("transaction id taken")
			}
			return nil
		}
		if _, err := q.ExecContext(ctx, claim, head...); err != nil {
			return err
		}
		for _, part := range []struct {
			table, cols string
			row         []any
		}{{"notifications", notificationColumns, notification}, {"jobs", jobColumns, job}, {"execution_details", detailColumns, detail}} {
			if _, err := q.ExecContext(ctx, "INSERT INTO "+part.table+" ("+part.cols+") VALUES ("+
				placeholders(1, len(part.row), nil)+")", part.row...); err != nil {
				return fmt.Errorf("%s: %w", part.table, err)
			}
		}
		return nil
	})
}

// deliver commits what the in-app delivery of the oldest due job commits;
// false when no job was due.
func (b *baseline) deliver(ctx context.Context) (bool, error) {
	claimed := false
	err := b.inTx(ctx, func(q *sql.Tx) error {
		now := time.Now()
		at := now.UnixMilli()
		skip := ""
		if b.dialect == "postgres" {
			skip = " FOR UPDATE SKIP LOCKED"
		}
		var jobID, nID, subID, tx string
		var attempts int
		err := q.QueryRowContext(ctx, "UPDATE jobs SET status = 'running', lease_until = $1, attempts = attempts + 1,"+
			" updated_at = $2 WHERE id IN (SELECT id FROM jobs WHERE status = 'queued' AND run_at <= $2 ORDER BY run_at, id"+
			" LIMIT 1"+skip+") RETURNING id, notification_id, subscriber_id, transaction_id, attempts",
			now.Add(time.Minute).UnixMilli(), at).Scan(&jobID, &nID, &subID, &tx, &attempts)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		mID := id.NewAt(now)
		w := &b.workflow
		msg := []any{mID, b.scope.OrganizationID, b.scope.EnvironmentID, nID, jobID, subID, w.ID, w.Key, tx, "in_app",
			provider.InAppProvider, "Order A-1 (3 items) shipped on Nov 23", "Hi there", nil,
			`{"type":"redirect","data":{"url":"/orders/A-1"},"action":{"buttons":[{"type":"primary","content":"Track"}]}}`, nil,
			`{"order":"A-1","items":[1,2,3],"when":"2026-11-23T10:00:00Z"}`, nil, "[]", "{}", "sent", false, false, false, nil, nil,
			false, at, at, "", nil, nil, nil, nil, nil, nil, nil, store.SeverityNone}
		if _, err := q.ExecContext(ctx, "INSERT INTO messages ("+messageColumns+") VALUES ("+placeholders(1, len(msg), nil)+
			") ON CONFLICT DO NOTHING", msg...); err != nil {
			return fmt.Errorf("message: %w", err)
		}
		if _, err := q.ExecContext(ctx, "UPDATE jobs SET status = 'completed', lease_until = NULL, updated_at = $1"+
			" WHERE id = $2 AND status = 'running' AND attempts = $3", at, jobID, attempts); err != nil {
			return fmt.Errorf("job: %w", err)
		}
		if _, err := q.ExecContext(ctx, "INSERT INTO execution_details ("+detailColumns+") VALUES ("+placeholders(1, 12, nil)+")",
			id.NewAt(now), jobID, nID, b.scope.EnvironmentID, "Success", "Internal", "In-app message created", false, false,
			provider.InAppProvider, `{"messageId":"`+mID+`"}`, at); err != nil {
			return fmt.Errorf("detail: %w", err)
		}
		conflict := "(subscriber_id, state, tags)"
		if b.dialect == "postgres" {
			conflict = "(subscriber_id, state, md5(tags))"
		}
		if _, err := q.ExecContext(ctx, "INSERT INTO inbox_counts (subscriber_id, state, tags, environment_id, unread_unseen,"+
			" unread_seen, read_unseen, read_seen) VALUES ($1, 0, '[]', $2, 1, 0, 0, 0) ON CONFLICT "+conflict+
			" DO UPDATE SET unread_unseen = inbox_counts.unread_unseen + excluded.unread_unseen,"+
			" unread_seen = inbox_counts.unread_seen + excluded.unread_seen,"+
			" read_unseen = inbox_counts.read_unseen + excluded.read_unseen,"+
			" read_seen = inbox_counts.read_seen + excluded.read_seen", subID, b.scope.EnvironmentID); err != nil {
			return fmt.Errorf("inbox counts: %w", err)
		}
		claimed = true
		return nil
	})
	return claimed && err == nil, err
}
