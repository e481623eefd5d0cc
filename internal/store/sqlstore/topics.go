package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

const topicCols = "id, organization_id, environment_id, topic_key, name, data, created_at, updated_at"

func scanTopic(row interface{ Scan(...any) error }) (store.Topic, error) {
	var t store.Topic
	var data sql.NullString
	var created, updated int64
	if err := row.Scan(&t.ID, &t.OrganizationID, &t.EnvironmentID, &t.Key, &t.Name, &data, &created, &updated); err != nil {
		return t, notFound(err)
	}
	if data.Valid {
		t.Data = store.JSON(data.String)
	}
	t.CreatedAt, t.UpdatedAt = fromMS(created), fromMS(updated)
	return t, nil
}

// TopicGet implements store.Topics.
func (db *DB) TopicGet(ctx context.Context, scope store.Scope, key string) (store.Topic, error) {
	return scanTopic(db.r.QueryRowContext(ctx, "SELECT "+topicCols+" FROM topics WHERE environment_id = $1 AND topic_key = $2",
		scope.EnvironmentID, key))
}

// TopicUpsert implements store.Topics.
func (db *DB) TopicUpsert(ctx context.Context, p *store.TopicUpsertParams) (store.Topic, bool, error) {
	var out store.Topic
	var created bool
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, created, err = db.upsertTopic(ctx, tx, p)
		return err
	})
	return out, created, err
}

// upsertTopic finds the topic of p.Key, locked, and changes it; or creates it.
func (db *DB) upsertTopic(ctx context.Context, tx *sql.Tx, p *store.TopicUpsertParams) (store.Topic, bool, error) {
	for range 2 {
		t, err := scanTopic(tx.QueryRowContext(ctx, "SELECT "+topicCols+" FROM topics WHERE environment_id = $1 AND topic_key = $2"+
			db.d.forUpdate, p.EnvironmentID, p.Key))
		switch {
		case err == nil:
			if p.FailIfExists {
				return t, false, store.ErrConflict
			}
			if !p.Name.Set && !p.DataSet {
				return t, false, nil
			}
			if p.Name.Set {
				t.Name = p.Name.Value
			}
			if p.DataSet {
				t.Data = p.Data
			}
			t.UpdatedAt = p.Now
			_, err := tx.ExecContext(ctx, "UPDATE topics SET name = $1, data = $2, updated_at = $3 WHERE id = $4",
				t.Name, nullJSON(t.Data), ms(t.UpdatedAt), t.ID)
			return t, false, err
		case !errors.Is(err, store.ErrNotFound):
			return t, false, err
		case p.UpdateOnly:
			return t, false, store.ErrNotFound
		}
		t = store.Topic{ID: id.NewAt(p.Now), OrganizationID: p.OrganizationID, EnvironmentID: p.EnvironmentID, Key: p.Key,
			Name: p.Name.Value, Data: p.Data, CreatedAt: p.Now, UpdatedAt: p.Now}
		res, err := tx.ExecContext(ctx, "INSERT INTO topics ("+topicCols+") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"+
			" ON CONFLICT DO NOTHING", t.ID, t.OrganizationID, t.EnvironmentID, t.Key, t.Name, nullJSON(t.Data), ms(t.CreatedAt),
			ms(t.UpdatedAt))
		if err != nil {
			return t, false, err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return t, true, nil
		}
		// Created meanwhile by another transaction: update that one.
	}
	return store.Topic{}, false, store.ErrConflict
}

// TopicDelete implements store.Topics.
func (db *DB) TopicDelete(ctx context.Context, scope store.Scope, key string) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		var topicID string
		if err := tx.QueryRowContext(ctx, "SELECT id FROM topics WHERE environment_id = $1 AND topic_key = $2"+db.d.forUpdate,
			scope.EnvironmentID, key).Scan(&topicID); err != nil {
			return notFound(err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM topic_subscriptions WHERE topic_id = $1", topicID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM topics WHERE id = $1", topicID)
		return err
	})
}

// membersOf resolves the members' subscriberIds to subscribers; the
// unknown ones are listed in order, once.
func (db *DB) membersOf(ctx context.Context, q querier, scope store.Scope, members []store.TopicMember) (map[string]store.Subscriber, []string, error) {
	var ids []string
	for _, m := range members {
		if !slices.Contains(ids, m.SubscriberID) {
			ids = append(ids, m.SubscriberID)
		}
	}
	found := map[string]store.Subscriber{}
	if len(ids) > 0 {
		var a args
		rows, err := q.QueryContext(ctx, "SELECT "+subscriberCols+" FROM subscribers WHERE environment_id = "+a.add(scope.EnvironmentID)+
			" AND deleted = false AND subscriber_id IN ("+a.list(ids)+")", a...)
		if err := eachRow(rows, err, func(r rowScanner) error {
			s, err := scanSubscriber(r)
			if err == nil {
				found[s.SubscriberID] = s
			}
			return err
		}); err != nil {
			return nil, nil, err
		}
	}
	var unknown []string
	for _, sid := range ids {
		if _, ok := found[sid]; !ok {
			unknown = append(unknown, sid)
		}
	}
	return found, unknown, nil
}

// TopicSubscribe implements store.Topics.
func (db *DB) TopicSubscribe(ctx context.Context, p *store.TopicSubscribeParams) (store.TopicChange, error) {
	scope, key, members, now := p.Scope, p.Key, p.Members, p.Now
	var out store.TopicChange
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		t, _, err := db.upsertTopic(ctx, tx, &store.TopicUpsertParams{Scope: scope, Key: key, Now: now})
		if err != nil {
			return err
		}
		subs, unknown, err := db.membersOf(ctx, tx, scope, members)
		if err != nil {
			return err
		}
		out = store.TopicChange{Topic: t, Unknown: unknown, Subscriptions: []store.TopicSubscription{}}
		done := map[[2]string]bool{}
		for _, m := range members {
			s, ok := subs[m.SubscriberID]
			k := [2]string{m.SubscriberID, m.Identifier}
			if !ok || done[k] {
				continue
			}
			done[k] = true
			if _, err := tx.ExecContext(ctx, "INSERT INTO topic_subscriptions (id, environment_id, topic_id, subscriber_id, identifier,"+
				" created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT DO NOTHING",
				id.NewAt(now), scope.EnvironmentID, t.ID, s.ID, m.Identifier, ms(now)); err != nil {
				return err
			}
			sub := store.TopicSubscription{Topic: t, Subscriber: s, Identifier: m.Identifier}
			var created, updated int64
			if err := tx.QueryRowContext(ctx, "SELECT id, created_at, updated_at FROM topic_subscriptions"+
				" WHERE topic_id = $1 AND subscriber_id = $2 AND identifier = $3", t.ID, s.ID, m.Identifier).Scan(&sub.ID, &created, &updated); err != nil {
				return err
			}
			sub.CreatedAt, sub.UpdatedAt = fromMS(created), fromMS(updated)
			out.Subscriptions = append(out.Subscriptions, sub)
		}
		return nil
	})
	return out, err
}

// TopicUnsubscribe implements store.Topics.
func (db *DB) TopicUnsubscribe(ctx context.Context, p *store.TopicUnsubscribeParams) (store.TopicChange, error) {
	scope, key, members := p.Scope, p.Key, p.Members
	var out store.TopicChange
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		t, err := scanTopic(tx.QueryRowContext(ctx, "SELECT "+topicCols+" FROM topics WHERE environment_id = $1 AND topic_key = $2"+
			db.d.forUpdate, scope.EnvironmentID, key))
		if err != nil {
			return err
		}
		subs, unknown, err := db.membersOf(ctx, tx, scope, members)
		if err != nil {
			return err
		}
		out = store.TopicChange{Topic: t, Unknown: unknown, Subscriptions: []store.TopicSubscription{}}
		for _, m := range members {
			s, ok := subs[m.SubscriberID]
			if !ok {
				continue
			}
			q := "DELETE FROM topic_subscriptions WHERE topic_id = $1 AND subscriber_id = $2"
			a := []any{t.ID, s.ID}
			if m.Identifier != "" {
				q += " AND identifier = $3"
				a = append(a, m.Identifier)
			}
			rows, err := tx.QueryContext(ctx, q+" RETURNING id, identifier, created_at, updated_at", a...)
			removed, err := scanAll(rows, err, func(r rowScanner) (store.TopicSubscription, error) {
				sub := store.TopicSubscription{Topic: t, Subscriber: s}
				var created, updated int64
				err := r.Scan(&sub.ID, &sub.Identifier, &created, &updated)
				sub.CreatedAt, sub.UpdatedAt = fromMS(created), fromMS(updated)
				return sub, err
			})
			if err != nil {
				return err
			}
			out.Subscriptions = append(out.Subscriptions, removed...)
			if len(removed) == 0 && !slices.Contains(out.NotMembers, m.SubscriberID) {
				out.NotMembers = append(out.NotMembers, m.SubscriberID)
			}
		}
		return nil
	})
	return out, err
}

// TopicMembership implements store.Topics.
func (db *DB) TopicMembership(ctx context.Context, p *store.TopicMembershipParams) (store.TopicSubscription, error) {
	t, err := db.TopicGet(ctx, p.Scope, p.Key)
	if err != nil {
		return store.TopicSubscription{}, err
	}
	s, err := db.SubscriberGet(ctx, p.Scope, p.SubscriberID)
	if err != nil {
		return store.TopicSubscription{}, err
	}
	sub := store.TopicSubscription{Topic: t, Subscriber: s}
	var created, updated int64
	err = db.r.QueryRowContext(ctx, "SELECT id, identifier, created_at, updated_at FROM topic_subscriptions"+
		" WHERE topic_id = $1 AND subscriber_id = $2 ORDER BY identifier LIMIT 1", t.ID, s.ID).Scan(&sub.ID, &sub.Identifier, &created, &updated)
	if err != nil {
		return sub, notFound(err)
	}
	sub.CreatedAt, sub.UpdatedAt = fromMS(created), fromMS(updated)
	return sub, nil
}
