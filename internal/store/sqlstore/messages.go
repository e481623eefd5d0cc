package sqlstore

import (
	"context"
	"strconv"

	"github.com/herald-notify/herald/internal/store"
)

// MessageList implements store.Inbox: one page, newest first, and the total
// counted up to store.TotalCountCap.
func (db *DB) MessageList(ctx context.Context, p *store.MessageListParams) ([]store.Message, int, error) {
	var a args
	where := "environment_id = " + a.add(p.EnvironmentID) + " AND deleted = false"
	if p.Channel != "" {
		where += " AND channel = " + a.add(p.Channel)
	}
	if p.SubscriberID != "" {
		where += " AND subscriber_id = " + a.add(p.SubscriberID)
	}
	if len(p.TransactionIDs) > 0 {
		where += " AND transaction_id IN (" + a.list(p.TransactionIDs) + ")"
	}
	if p.ContextKeys != nil {
		where += " AND " + contextKeysCondition(&a, *p.ContextKeys)
	}
	var total int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM messages WHERE "+where+" LIMIT "+
		strconv.Itoa(store.TotalCountCap)+") c", a...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.r.QueryContext(ctx, "SELECT "+messageCols+" FROM messages WHERE "+where+
		" ORDER BY created_at DESC, id DESC LIMIT "+strconv.Itoa(p.Limit)+" OFFSET "+strconv.Itoa(p.Page*p.Limit), a...)
	out, err := scanAll(rows, err, scanMessage)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}
