package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// The dashboard's Analytics: an environment's messages by UTC day and
// channel, by outcome, in one statement over an index of its own
// (migration 0026, messages_analytics) that holds every column the count
// reads, so no message row is read. A day is the creation time in
// milliseconds divided by msPerDay (integer division in both dialects).
// The creation time is bounded twice, by the same days: as milliseconds,
// which PostgreSQL's index (environment_id, created_at, …) seeks by before
// hashing the few groups, and as days, which SQLite's index on the day
// (environment_id, created_at / 86400000, channel, …) seeks by, reading the
// groups in order without sorting the rows. An `opened` message is one
// whose job has an execution detail of that webhookStatus (delivery
// events): the environment's since the first day, read once through
// execution_details_webhook and probed by job as a hashed set.
const messageDailyCountsQuery = `
SELECT created_at / 86400000, channel, count(*),
  sum(CASE WHEN status = 'sent' THEN 1 ELSE 0 END),
  sum(CASE WHEN status = 'error' THEN 1 ELSE 0 END),
  sum(CASE WHEN delivered_at IS NOT NULL OR channel = 'in_app' AND status = 'sent' THEN 1 ELSE 0 END),
  sum(CASE WHEN channel <> 'in_app' AND job_id IN (SELECT job_id FROM execution_details
    WHERE environment_id = $1 AND webhook_status = 'opened' AND created_at >= $2) THEN 1 ELSE 0 END)
FROM messages
WHERE environment_id = $1 AND created_at >= $2 AND created_at < $3
  AND created_at / 86400000 >= $4 AND created_at / 86400000 < $5
GROUP BY created_at / 86400000, channel
ORDER BY 1, 2`

const msPerDay = int64(24 * time.Hour / time.Millisecond)

// maxAnalyticsDays bounds MessageDailyCountsParams.Days.
const maxAnalyticsDays = 366

var _ store.Analytics = (*DB)(nil)

// MessageDailyCounts implements store.Analytics on the read pool: oldest
// day first, channels in name order.
func (db *DB) MessageDailyCounts(ctx context.Context, p *store.MessageDailyCountsParams) ([]store.MessageDayCount, error) {
	if p.Days < 1 || p.Days > maxAnalyticsDays {
		return nil, fmt.Errorf("sqlstore: message daily counts: %d days, not 1 to %d", p.Days, maxAnalyticsDays)
	}
	last := ms(p.Now) / msPerDay
	first := last - int64(p.Days) + 1
	rows, err := db.r.QueryContext(ctx, messageDailyCountsQuery, p.EnvironmentID, first*msPerDay, (last+1)*msPerDay, first, last+1)
	out, err := scanAll(rows, err, func(r rowScanner) (store.MessageDayCount, error) {
		var c store.MessageDayCount
		var day int64
		err := r.Scan(&day, &c.Channel, &c.Messages, &c.Sent, &c.Failed, &c.Delivered, &c.Opened)
		c.Day = fromMS(day * msPerDay)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlstore: message daily counts: %w", err)
	}
	return out, nil
}
