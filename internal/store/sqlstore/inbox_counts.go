package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/herald-notify/herald/internal/store"
)

// Inbox counts (migration 0005) keep, per subscriber, the number of in-app
// messages in each (read, seen) bucket. Every change to a message's flags or
// existence adjusts them in the same transaction.

// bucketColumn names the count column of a (read, seen) pair.
func bucketColumn(read, seen bool) string {
	switch {
	case !read && !seen:
		return "unread_unseen"
	case !read:
		return "unread_seen"
	case !seen:
		return "read_unseen"
	}
	return "read_seen"
}

// bucketDelta is a change to a subscriber's counts.
type bucketDelta map[string]int

func (d bucketDelta) move(fromRead, fromSeen, toRead, toSeen bool) {
	from, to := bucketColumn(fromRead, fromSeen), bucketColumn(toRead, toSeen)
	if from != to {
		d[from]--
		d[to]++
	}
}

// applyCounts adds delta to a subscriber's counts, creating the row.
func applyCounts(ctx context.Context, q querier, environmentID, subscriberID string, delta bucketDelta) error {
	cols := []string{"unread_unseen", "unread_seen", "read_unseen", "read_seen"}
	var sets []string
	vals := make([]any, 0, 6)
	vals = append(vals, subscriberID, environmentID)
	for i, c := range cols {
		vals = append(vals, delta[c])
		if delta[c] != 0 {
			sets = append(sets, fmt.Sprintf("%s = inbox_counts.%s + $%d", c, c, i+3))
		}
	}
	if len(sets) == 0 {
		return nil
	}
	_, err := q.ExecContext(ctx, "INSERT INTO inbox_counts (subscriber_id, environment_id, unread_unseen, unread_seen,"+
		" read_unseen, read_seen) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (subscriber_id) DO UPDATE SET "+
		strings.Join(sets, ", "), vals...)
	return err
}

// countFromBuckets answers a feed's count for the read/seen filters.
func (db *DB) countFromBuckets(ctx context.Context, environmentID, subscriberID string, read, seen *bool) (int, error) {
	var terms []string
	for _, r := range []bool{false, true} {
		for _, s := range []bool{false, true} {
			if (read == nil || *read == r) && (seen == nil || *seen == s) {
				terms = append(terms, bucketColumn(r, s))
			}
		}
	}
	var n int
	err := db.r.QueryRowContext(ctx, "SELECT coalesce(sum("+strings.Join(terms, " + ")+"), 0) FROM inbox_counts"+
		" WHERE subscriber_id = $1 AND environment_id = $2", subscriberID, environmentID).Scan(&n)
	return n, err
}

// RebuildInboxCounts recomputes every subscriber's counts from the messages
// (after bulk loads that bypass the normal write path).
func (db *DB) RebuildInboxCounts(ctx context.Context) error {
	return db.inTxFn(ctx, func(q querier) error {
		if _, err := q.ExecContext(ctx, "DELETE FROM inbox_counts"); err != nil {
			return err
		}
		_, err := q.ExecContext(ctx, "INSERT INTO inbox_counts (subscriber_id, environment_id, unread_unseen, unread_seen,"+
			" read_unseen, read_seen) SELECT subscriber_id, min(environment_id),"+
			" sum(CASE WHEN NOT read AND NOT seen THEN 1 ELSE 0 END), sum(CASE WHEN NOT read AND seen THEN 1 ELSE 0 END),"+
			" sum(CASE WHEN read AND NOT seen THEN 1 ELSE 0 END), sum(CASE WHEN read AND seen THEN 1 ELSE 0 END)"+
			" FROM messages WHERE channel = 'in_app' AND deleted = false GROUP BY subscriber_id")
		return err
	})
}

// pendingCounts gathers the count changes of a transaction's new messages,
// applied at its end in subscriber order: transactions touching the same
// subscribers then lock their count rows in one order and cannot deadlock.
type pendingCounts struct {
	env    map[string]string
	deltas map[string]bucketDelta
}

func (p *pendingCounts) add(m *store.Message) {
	if p.deltas == nil {
		p.env, p.deltas = map[string]string{}, map[string]bucketDelta{}
	}
	d, ok := p.deltas[m.SubscriberID]
	if !ok {
		d = bucketDelta{}
		p.deltas[m.SubscriberID], p.env[m.SubscriberID] = d, m.EnvironmentID
	}
	d[bucketColumn(m.Read, m.Seen)]++
}

func (p *pendingCounts) apply(ctx context.Context, q querier) error {
	subs := make([]string, 0, len(p.deltas))
	for s := range p.deltas {
		subs = append(subs, s)
	}
	slices.Sort(subs)
	for _, s := range subs {
		if err := applyCounts(ctx, q, p.env[s], s, p.deltas[s]); err != nil {
			return err
		}
	}
	return nil
}
