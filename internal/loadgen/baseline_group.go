package loadgen

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/store"
)

// The grouped baseline (BaselineConfig.Group > 1) is the raw SQL of what
// Herald writes for a group of one-recipient triggers of a one-step in-app
// workflow since in-app first steps run with their trigger group: one
// transaction a group, one multi-row statement a table — find the
// subscribers, claim the transactionIds, insert the notifications, their
// jobs already completed, the "Step queued" and "In-app message created"
// details and the messages, and add to the subscribers' inbox counters.
// It is the ceiling of Herald's trigger path on the store: no HTTP, no
// templates, no waiting for a group to form.

// triggerGroup commits n triggers to the subscribers from next with their
// in-app deliveries, in one transaction.
func (b *baseline) triggerGroup(ctx context.Context, subs []baselineSubscriber) error {
	now := time.Now()
	at := now.UnixMilli()
	w := &b.workflow
	step := w.Steps[0]
	var txRows, notifications, jobs, details, messages [][]any
	perSubscriber := map[string]int{}
	names := make([]any, 0, len(subs)+1)
	names = append(names, b.scope.EnvironmentID)
	for _, sub := range subs {
		tx, nID, jobID, mID := id.NewAt(now), id.NewAt(now), id.NewAt(now), id.NewAt(now)
		names = append(names, sub.subscriberID)
		txRows = append(txRows, []any{b.scope.EnvironmentID, tx, w.ID, at})
		notifications = append(notifications, []any{nID, b.scope.OrganizationID, b.scope.EnvironmentID, w.ID, sub.id, tx,
			`{"order":"A-1","items":[1,2,3],"when":"2026-11-23T10:00:00Z"}`, "{}", nil, `{"subscriberId":"` + sub.subscriberID + `"}`,
			"[]", `["in_app"]`, nil, at, at})
		jobs = append(jobs, []any{jobID, b.scope.OrganizationID, b.scope.EnvironmentID, nID, sub.id, w.ID, tx, step.ID, 0, step.Type,
			provider.InAppProvider, store.JobCompleted, at, nil, 1, nil, nil, "", 0, at, at})
		details = append(details,
			[]any{id.NewAt(now), jobID, nID, b.scope.EnvironmentID, "Pending", "Internal", "Step queued", false, false,
				provider.InAppProvider, nil, at},
			[]any{id.NewAt(now), jobID, nID, b.scope.EnvironmentID, "Success", "Internal", "In-app message created", false, false,
				provider.InAppProvider, `{"messageId":"` + mID + `"}`, at})
		messages = append(messages, []any{mID, b.scope.OrganizationID, b.scope.EnvironmentID, nID, jobID, sub.id, w.ID, w.Key, tx,
			"in_app", provider.InAppProvider, "Order A-1 (3 items) shipped on Nov 23", "Hi there", nil,
			`{"type":"redirect","data":{"url":"/orders/A-1"},"action":{"buttons":[{"type":"primary","content":"Track"}]}}`, nil,
			`{"order":"A-1","items":[1,2,3],"when":"2026-11-23T10:00:00Z"}`, nil, "[]", "{}", "sent", false, false, false, nil, nil,
			false, at, at, "", nil, nil, nil, nil, nil, nil, nil, store.SeverityNone})
		perSubscriber[sub.id]++
	}
	return b.inTx(ctx, func(q *sql.Tx) error {
		var found int
		if err := q.QueryRowContext(ctx, "SELECT count(*) FROM subscribers WHERE environment_id = $1 AND subscriber_id IN ("+
			placeholders(2, len(names)-1, nil)+") AND deleted = false", names...).Scan(&found); err != nil {
			return fmt.Errorf("subscribers: %w", err)
		}
		if err := insertValues(ctx, q, "transactions", "environment_id, transaction_id, workflow_id, created_at", txRows,
			" ON CONFLICT DO NOTHING"); err != nil {
			return err
		}
		for _, part := range []struct {
			table, cols string
			rows        [][]any
		}{{"notifications", notificationColumns, notifications}, {"jobs", jobColumns, jobs},
			{"execution_details", detailColumns, details}, {"messages", messageColumns, messages}} {
			if err := insertValues(ctx, q, part.table, part.cols, part.rows, ""); err != nil {
				return err
			}
		}
		// In subscriber order, as Herald's counter upserts: concurrent
		// groups then take the counter rows' locks in one order.
		counted := slices.Sorted(maps.Keys(perSubscriber))
		counts := make([][]any, 0, len(counted))
		for _, sub := range counted {
			counts = append(counts, []any{sub, b.scope.EnvironmentID, perSubscriber[sub]})
		}
		conflict := "(subscriber_id, state, tags)"
		if b.dialect == "postgres" {
			conflict = "(subscriber_id, state, md5(tags))"
		}
		var ph []string
		var args []any
		for _, c := range counts {
			ph = append(ph, fmt.Sprintf("($%d, 0, '[]', $%d, CAST($%d AS INTEGER), 0, 0, 0)", len(args)+1, len(args)+2, len(args)+3))
			args = append(args, c...)
		}
		if _, err := q.ExecContext(ctx, "INSERT INTO inbox_counts (subscriber_id, state, tags, environment_id, unread_unseen,"+
			" unread_seen, read_unseen, read_seen) VALUES "+strings.Join(ph, ", ")+" ON CONFLICT "+conflict+
			" DO UPDATE SET unread_unseen = inbox_counts.unread_unseen + excluded.unread_unseen", args...); err != nil {
			return fmt.Errorf("inbox counts: %w", err)
		}
		return nil
	})
}

// insertValues inserts rows with one INSERT … VALUES statement.
func insertValues(ctx context.Context, q *sql.Tx, table, cols string, rows [][]any, tail string) error {
	var sb strings.Builder
	args := make([]any, 0, len(rows)*len(rows[0]))
	sb.WriteString("INSERT INTO " + table + " (" + cols + ") VALUES ")
	for i, r := range rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("(" + placeholders(len(args)+1, len(r), nil) + ")")
		args = append(args, r...)
	}
	if _, err := q.ExecContext(ctx, sb.String()+tail, args...); err != nil {
		return fmt.Errorf("%s: %w", table, err)
	}
	return nil
}
