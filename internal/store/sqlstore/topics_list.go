package sqlstore

import (
	"context"
	"database/sql"
	"slices"
	"strconv"

	"github.com/herald-notify/herald/internal/store"
)

// pageClause orders and bounds an id-ordered page; reverse says the rows
// come back in the opposite order (a page before a cursor) and must be turned.
func pageClause(a *args, col string, p store.TopicPage) (where, order string, reverse bool) {
	desc := p.Descending
	switch {
	case p.After != "" && !desc, p.Before != "" && desc:
		cur := p.After + p.Before
		where, order = " AND "+col+" > "+a.add(cur), " ORDER BY "+col+" ASC"
	case p.After != "" || p.Before != "":
		cur := p.After + p.Before
		where, order = " AND "+col+" < "+a.add(cur), " ORDER BY "+col+" DESC"
	case desc:
		order = " ORDER BY " + col + " DESC"
	default:
		order = " ORDER BY " + col + " ASC"
	}
	// A page before the cursor is read towards it, then turned.
	reverse = p.Before != ""
	return where, order + " LIMIT " + strconv.Itoa(p.Limit+1), reverse
}

// trimPage cuts the extra row read to tell whether more follow, and turns
// a page read backwards.
func trimPage[T any](rows []T, limit int, reverse bool) ([]T, bool) {
	more := len(rows) > limit
	rows = rows[:min(len(rows), limit)]
	if reverse {
		slices.Reverse(rows)
	}
	return rows, more
}

// TopicList implements store.Topics.
func (db *DB) TopicList(ctx context.Context, p *store.TopicListParams) ([]store.Topic, bool, int, error) {
	var a args
	filter := "environment_id = " + a.add(p.EnvironmentID)
	for _, f := range []struct{ col, v string }{{"topic_key", p.Key}, {"name", p.Name}} {
		if f.v != "" {
			cond, arg := db.d.substring(f.col, "$"+strconv.Itoa(len(a)+1), f.v)
			filter += " AND " + cond
			a = append(a, arg)
		}
	}
	var total int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM topics WHERE "+filter+" LIMIT "+
		strconv.Itoa(store.TotalCountCap)+") c", a...).Scan(&total); err != nil {
		return nil, false, 0, err
	}
	where, order, reverse := pageClause(&a, "id", p.TopicPage)
	rows, err := db.r.QueryContext(ctx, "SELECT "+topicCols+" FROM topics WHERE "+filter+where+order, a...)
	out, err := scanAll(rows, err, scanTopic)
	if err != nil {
		return nil, false, 0, err
	}
	out, more := trimPage(out, p.Limit, reverse)
	return out, more, total, nil
}

// TopicSubscriptionList implements store.Topics.
func (db *DB) TopicSubscriptionList(ctx context.Context, p *store.TopicSubscriptionListParams) ([]store.TopicSubscription, bool, int, error) {
	t, err := db.TopicGet(ctx, p.Scope, p.Key)
	if err != nil {
		return nil, false, 0, err
	}
	var a args
	filter := "ts.topic_id = " + a.add(t.ID)
	if p.SubscriberID != "" {
		filter += " AND s.subscriber_id = " + a.add(p.SubscriberID)
	}
	var total int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM topic_subscriptions ts JOIN subscribers s"+
		" ON s.id = ts.subscriber_id WHERE "+filter+" LIMIT "+strconv.Itoa(store.TotalCountCap)+") c", a...).Scan(&total); err != nil {
		return nil, false, 0, err
	}
	where, order, reverse := pageClause(&a, "ts.id", p.TopicPage)
	rows, err := db.r.QueryContext(ctx, "SELECT ts.id, ts.identifier, ts.created_at, ts.updated_at, s.subscriber_id"+
		" FROM topic_subscriptions ts JOIN subscribers s ON s.id = ts.subscriber_id WHERE "+filter+where+order, a...)
	var subs []store.TopicSubscription
	var sids []string
	if err := eachRow(rows, err, func(r rowScanner) error {
		sub := store.TopicSubscription{Topic: t}
		var created, updated int64
		var sid string
		if err := r.Scan(&sub.ID, &sub.Identifier, &created, &updated, &sid); err != nil {
			return err
		}
		sub.CreatedAt, sub.UpdatedAt = fromMS(created), fromMS(updated)
		sub.Subscriber.SubscriberID = sid
		subs, sids = append(subs, sub), append(sids, sid)
		return nil
	}); err != nil {
		return nil, false, 0, err
	}
	subs, more := trimPage(subs, p.Limit, reverse)
	found, err := db.SubscriberGetMany(ctx, p.Scope, sids)
	if err != nil {
		return nil, false, 0, err
	}
	out := make([]store.TopicSubscription, 0, len(subs))
	for _, sub := range subs {
		if s, ok := found[sub.Subscriber.SubscriberID]; ok {
			sub.Subscriber = s
		}
		out = append(out, sub)
	}
	return out, more, total, nil
}

// SubscriberTopicList implements store.Topics.
func (db *DB) SubscriberTopicList(ctx context.Context, p *store.SubscriberTopicListParams) ([]store.TopicSubscription, bool, int, error) {
	s, err := db.SubscriberGet(ctx, p.Scope, p.SubscriberID)
	if err != nil {
		return nil, false, 0, err
	}
	var a args
	filter := "ts.subscriber_id = " + a.add(s.ID) + " AND ts.environment_id = " + a.add(p.EnvironmentID)
	if p.Key != "" {
		cond, arg := db.d.substring("t.topic_key", "$"+strconv.Itoa(len(a)+1), p.Key)
		filter += " AND " + cond
		a = append(a, arg)
	}
	from := " FROM topic_subscriptions ts JOIN topics t ON t.id = ts.topic_id WHERE "
	var total int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1"+from+filter+" LIMIT "+
		strconv.Itoa(store.TotalCountCap)+") c", a...).Scan(&total); err != nil {
		return nil, false, 0, err
	}
	where, order, reverse := pageClause(&a, "ts.id", p.TopicPage)
	rows, err := db.r.QueryContext(ctx, "SELECT ts.id, ts.identifier, ts.created_at, ts.updated_at, t.id, t.organization_id,"+
		" t.environment_id, t.topic_key, t.name, t.data, t.created_at, t.updated_at"+from+filter+where+order, a...)
	out, err := scanAll(rows, err, func(r rowScanner) (store.TopicSubscription, error) {
		sub := store.TopicSubscription{Subscriber: s}
		var created, updated, tCreated, tUpdated int64
		var data sql.NullString
		t := &sub.Topic
		if err := r.Scan(&sub.ID, &sub.Identifier, &created, &updated, &t.ID, &t.OrganizationID, &t.EnvironmentID, &t.Key,
			&t.Name, &data, &tCreated, &tUpdated); err != nil {
			return sub, err
		}
		if data.Valid {
			t.Data = store.JSON(data.String)
		}
		sub.CreatedAt, sub.UpdatedAt, t.CreatedAt, t.UpdatedAt = fromMS(created), fromMS(updated), fromMS(tCreated), fromMS(tUpdated)
		return sub, nil
	})
	if err != nil {
		return nil, false, 0, err
	}
	out, more := trimPage(out, p.Limit, reverse)
	return out, more, total, nil
}
