package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

const subscriberCols = "id, organization_id, environment_id, subscriber_id, first_name, last_name, email, phone, avatar," +
	" locale, timezone, data, channels, is_online, last_online_at, version, deleted, created_at, updated_at"

func scanSubscriber(row interface{ Scan(...any) error }) (store.Subscriber, error) {
	var s store.Subscriber
	var data sql.NullString
	var channels string
	var online sql.NullBool
	var lastOnline sql.NullInt64
	var created, updated int64
	err := row.Scan(&s.ID, &s.OrganizationID, &s.EnvironmentID, &s.SubscriberID, &s.FirstName, &s.LastName, &s.Email,
		&s.Phone, &s.Avatar, &s.Locale, &s.Timezone, &data, &channels, &online, &lastOnline, &s.Version, &s.Deleted,
		&created, &updated)
	if err != nil {
		return s, notFound(err)
	}
	if data.Valid {
		s.Data = store.JSON(data.String)
	}
	if err := json.Unmarshal([]byte(channels), &s.Channels); err != nil {
		return s, fmt.Errorf("sqlstore: subscriber %s channels: %w", s.ID, err)
	}
	if online.Valid {
		s.IsOnline = &online.Bool
	}
	s.LastOnlineAt = fromNullMS(lastOnline)
	s.CreatedAt, s.UpdatedAt = fromMS(created), fromMS(updated)
	return s, nil
}

func nullJSON(v store.JSON) any {
	if v == nil {
		return nil
	}
	return string(v)
}

// SubscriberUpsert implements store.Subscribers. Creation and update are one
// statement (gated), so concurrent creates of one subscriberId yield one
// subscriber.
func (db *DB) SubscriberUpsert(ctx context.Context, p *store.SubscriberUpsertParams) (s store.Subscriber, created bool, err error) {
	err = db.gated(ctx, func(q querier) error {
		s, created, err = db.subscriberUpsert(ctx, q, p, p.Now)
		return err
	})
	return s, created, err
}

// querier is what both *sql.DB and *sql.Tx offer.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (db *DB) subscriberUpsert(ctx context.Context, q querier, p *store.SubscriberUpsertParams, at time.Time) (store.Subscriber, bool, error) {
	now := ms(at)
	fields := []struct {
		col string
		f   store.Field
	}{
		{"first_name", p.FirstName}, {"last_name", p.LastName}, {"email", p.Email}, {"phone", p.Phone},
		{"avatar", p.Avatar}, {"locale", p.Locale}, {"timezone", p.Timezone},
	}
	var a args
	var sets []string
	for _, f := range fields {
		if f.f.Set {
			sets = append(sets, f.col+" = "+a.add(f.f.Value))
		}
	}
	if p.DataSet {
		sets = append(sets, "data = "+a.add(nullJSON(p.Data)))
	}
	sets = append(sets, "version = subscribers.version + 1", "updated_at = "+a.add(now))

	if p.UpdateOnly {
		stmt := "UPDATE subscribers SET " + strings.Join(sets, ", ") + " WHERE environment_id = " + a.add(p.EnvironmentID) +
			" AND subscriber_id = " + a.add(p.SubscriberID) + " AND deleted = false RETURNING " + subscriberCols
		s, err := scanSubscriber(q.QueryRowContext(ctx, stmt, a...))
		return s, false, err
	}

	if p.FailIfExists {
		// DO NOTHING binds none of the update's arguments, and PostgreSQL
		// rejects a statement with an unused parameter ($1 of unknown type).
		a = nil
	}
	newID := id.New()
	cols := []string{"id", "organization_id", "environment_id", "subscriber_id", "data", "channels", "version", "deleted", "created_at", "updated_at"}
	vals := []string{a.add(newID), a.add(p.OrganizationID), a.add(p.EnvironmentID), a.add(p.SubscriberID),
		a.add(nullJSON(p.Data)), "'[]'", "0", "false", a.add(now), a.add(now)}
	for _, f := range fields {
		cols = append(cols, f.col)
		vals = append(vals, a.add(f.f.Value))
	}
	stmt := "INSERT INTO subscribers (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(vals, ", ") + ")" +
		" ON CONFLICT (environment_id, subscriber_id) WHERE deleted = false DO "
	if p.FailIfExists {
		stmt += "NOTHING"
	} else {
		stmt += "UPDATE SET " + strings.Join(sets, ", ")
	}
	s, err := scanSubscriber(q.QueryRowContext(ctx, stmt+" RETURNING "+subscriberCols, a...))
	if p.FailIfExists && errors.Is(err, store.ErrNotFound) {
		return s, false, store.ErrConflict
	}
	return s, err == nil && s.ID == newID, err
}

// SubscriberGet implements store.Subscribers.
func (db *DB) SubscriberGet(ctx context.Context, scope store.Scope, subscriberID string) (store.Subscriber, error) {
	return scanSubscriber(db.r.QueryRowContext(ctx, "SELECT "+subscriberCols+
		" FROM subscribers WHERE environment_id = $1 AND subscriber_id = $2 AND deleted = false", scope.EnvironmentID, subscriberID))
}

// SubscriberDelete implements store.Subscribers.
func (db *DB) SubscriberDelete(ctx context.Context, p *store.SubscriberDeleteParams) error {
	res, err := db.exec(ctx, "UPDATE subscribers SET deleted = true, updated_at = $1"+
		" WHERE environment_id = $2 AND subscriber_id = $3 AND deleted = false", ms(p.Now), p.EnvironmentID, p.SubscriberID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

var orderColumns = map[store.SubscriberOrder]string{
	store.OrderByID: "id", store.OrderByCreatedAt: "created_at", store.OrderByUpdatedAt: "updated_at",
}

// SubscriberSearch implements store.Subscribers.
func (db *DB) SubscriberSearch(ctx context.Context, p *store.SubscriberSearchParams) (store.SubscriberSearchResult, error) {
	var res store.SubscriberSearchResult
	col, ok := orderColumns[p.OrderBy]
	if !ok {
		return res, fmt.Errorf("sqlstore: unknown order %q", p.OrderBy)
	}
	var a args
	where := []string{"environment_id = " + a.add(p.EnvironmentID), "deleted = false"}
	if p.SubscriberID != nil {
		where = append(where, "subscriber_id = "+a.add(*p.SubscriberID))
	}
	for _, f := range []struct {
		col string
		v   *string
	}{
		{"email", p.Email}, {"phone", p.Phone},
		{"(coalesce(first_name, '') || ' ' || coalesce(last_name, ''))", p.Name},
	} {
		if f.v != nil {
			if f.col == "email" {
				if cond, ok := db.d.emailWords(&a, *f.v); ok {
					where = append(where, cond)
					continue
				}
			}
			cond, arg := db.d.substring(f.col, "$"+fmt.Sprint(len(a)+1), *f.v)
			a = append(a, arg)
			where = append(where, cond)
		}
	}
	filterArgs := slices.Clone(a)
	filter := strings.Join(where, " AND ")

	// Walking backwards (before a cursor) reads in the opposite order and
	// reverses the page afterwards.
	cursor, backwards := p.After, false
	if p.Before != nil {
		cursor, backwards = p.Before, true
	}
	desc := p.Descending != backwards
	if cursor != nil {
		op := ">"
		if desc {
			op = "<"
		}
		if p.IncludeCursor {
			op += "="
		}
		if col == "id" {
			where = append(where, "id "+op+" "+a.add(cursor.ID))
		} else {
			where = append(where, "("+col+", id) "+op+" ("+a.add(cursor.Key)+", "+a.add(cursor.ID)+")")
		}
	}
	dir := " ASC"
	if desc {
		dir = " DESC"
	}
	order := col + dir
	if col != "id" {
		order += ", id" + dir
	}
	q := "SELECT " + subscriberCols + " FROM subscribers WHERE " + strings.Join(where, " AND ") +
		" ORDER BY " + order + " LIMIT " + strconv.Itoa(p.Limit+1)
	rows, err := db.r.QueryContext(ctx, q, a...)
	if res.Subscribers, err = scanAll(rows, err, scanSubscriber); err != nil {
		return res, fmt.Errorf("sqlstore: search: %w", err)
	}
	more := len(res.Subscribers) > p.Limit
	if more {
		res.Subscribers = res.Subscribers[:p.Limit]
	}
	if backwards {
		slices.Reverse(res.Subscribers)
	}
	if n := len(res.Subscribers); n > 0 {
		first, last := cursorOf(p.OrderBy, res.Subscribers[0]), cursorOf(p.OrderBy, res.Subscribers[n-1])
		switch {
		case backwards:
			res.Next = &last
			if more {
				res.Previous = &first
			}
		default:
			if more {
				res.Next = &last
			}
			if cursor != nil {
				res.Previous = &first
			}
		}
	}

	// The count ignores the cursor; a first page that holds everything
	// already knows it.
	if cursor == nil && !more {
		res.TotalCount = len(res.Subscribers)
		return res, nil
	}
	var n int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM subscribers WHERE "+filter+
		fmt.Sprintf(" LIMIT %d) t", store.TotalCountCap+1), filterArgs...).Scan(&n); err != nil {
		return res, fmt.Errorf("sqlstore: search count: %w", err)
	}
	res.TotalCount, res.TotalCountCapped = min(n, store.TotalCountCap), n > store.TotalCountCap
	return res, nil
}

func cursorOf(order store.SubscriberOrder, s store.Subscriber) store.Cursor {
	c := store.Cursor{Order: order, ID: s.ID}
	switch order {
	case store.OrderByCreatedAt:
		c.Key = ms(s.CreatedAt)
	case store.OrderByUpdatedAt:
		c.Key = ms(s.UpdatedAt)
	}
	return c
}

// SubscriberChannelUpdate implements store.Subscribers.
func (db *DB) SubscriberChannelUpdate(ctx context.Context, p *store.ChannelUpdate) (store.Subscriber, error) {
	return db.subscriberChannelsChange(ctx, p.Scope, p.SubscriberID, p.Now, func(chs []store.ChannelSettings) ([]store.ChannelSettings, error) {
		in := p.Channel
		i := slices.IndexFunc(chs, func(c store.ChannelSettings) bool { return c.IntegrationID == in.IntegrationID })
		if i < 0 {
			chs = append(chs, store.ChannelSettings{ProviderID: in.ProviderID, IntegrationID: in.IntegrationID})
			i = len(chs) - 1
		}
		cur := &chs[i]
		cur.ProviderID, cur.IntegrationIdentifier = in.ProviderID, in.IntegrationIdentifier
		if p.Replace {
			cur.Credentials = in.Credentials
		} else {
			mergeCredentials(&cur.Credentials, in.Credentials)
		}
		if p.MaxDeviceTokens > 0 && len(cur.Credentials.DeviceTokens) > p.MaxDeviceTokens {
			return nil, store.ErrTooManyTokens
		}
		return chs, nil
	})
}

// mergeCredentials overwrites the sent fields and appends new device tokens.
func mergeCredentials(dst *store.ChannelCredentials, src store.ChannelCredentials) {
	for _, f := range []struct{ d, s *string }{
		{&dst.WebhookURL, &src.WebhookURL}, {&dst.Channel, &src.Channel}, {&dst.AlertUID, &src.AlertUID},
		{&dst.Title, &src.Title}, {&dst.ImageURL, &src.ImageURL}, {&dst.State, &src.State},
		{&dst.ExternalURL, &src.ExternalURL},
	} {
		if *f.s != "" {
			*f.d = *f.s
		}
	}
	for _, t := range src.DeviceTokens {
		if !slices.Contains(dst.DeviceTokens, t) {
			dst.DeviceTokens = append(dst.DeviceTokens, t)
		}
	}
}

// SubscriberChannelDelete implements store.Subscribers.
func (db *DB) SubscriberChannelDelete(ctx context.Context, p *store.SubscriberChannelDeleteParams) (store.Subscriber, error) {
	return db.subscriberChannelsChange(ctx, p.Scope, p.SubscriberID, p.Now, func(chs []store.ChannelSettings) ([]store.ChannelSettings, error) {
		return slices.DeleteFunc(chs, func(c store.ChannelSettings) bool { return c.ProviderID == p.ProviderID }), nil
	})
}

// subscriberChannelsChange is a locked read-modify-write of one subscriber's
// channels, at now.
func (db *DB) subscriberChannelsChange(ctx context.Context, scope store.Scope, subscriberID string, now time.Time,
	change func([]store.ChannelSettings) ([]store.ChannelSettings, error)) (store.Subscriber, error) {
	var out store.Subscriber
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var rowID, raw string
		err := tx.QueryRowContext(ctx, "SELECT id, channels FROM subscribers WHERE environment_id = $1 AND subscriber_id = $2"+
			" AND deleted = false"+db.d.forUpdate, scope.EnvironmentID, subscriberID).Scan(&rowID, &raw)
		if err != nil {
			return notFound(err)
		}
		var chs []store.ChannelSettings
		if err := json.Unmarshal([]byte(raw), &chs); err != nil {
			return fmt.Errorf("sqlstore: subscriber %s channels: %w", rowID, err)
		}
		chs, err = change(chs)
		if err != nil {
			return err
		}
		if chs == nil {
			chs = []store.ChannelSettings{}
		}
		enc, err := json.Marshal(chs)
		if err != nil {
			return err
		}
		out, err = scanSubscriber(tx.QueryRowContext(ctx, "UPDATE subscribers SET channels = $1, version = version + 1,"+
			" updated_at = $2 WHERE id = $3 RETURNING "+subscriberCols, string(enc), ms(now), rowID))
		return err
	})
	return out, err
}

// subscribersBySubscriberID reads the existing subscribers among the
// subscriberIds of an environment.
func (db *DB) subscribersBySubscriberID(ctx context.Context, q querier, environmentID string, ids []string) (map[string]store.Subscriber, error) {
	known := make(map[string]store.Subscriber, len(ids))
	for start := 0; start < len(ids); start += db.d.rowsPerStatement {
		a := args{environmentID}
		rows, err := q.QueryContext(ctx, "SELECT "+subscriberCols+" FROM subscribers WHERE environment_id = $1"+
			" AND "+db.inList(&a, "subscriber_id", ids[start:min(start+db.d.rowsPerStatement, len(ids))])+" AND deleted = false", db.planned(a)...)
		if err := eachRow(rows, err, func(r rowScanner) error {
			s, err := scanSubscriber(r)
			if err == nil {
				known[s.SubscriberID] = s
			}
			return err
		}); err != nil {
			return nil, err
		}
	}
	return known, nil
}

// SubscriberGetMany implements store.Subscribers.
func (db *DB) SubscriberGetMany(ctx context.Context, scope store.Scope, subscriberIDs []string) (map[string]store.Subscriber, error) {
	return db.subscribersBySubscriberID(ctx, db.r, scope.EnvironmentID, subscriberIDs)
}

// SubscriberTokensRemove implements store.Subscribers.
func (db *DB) SubscriberTokensRemove(ctx context.Context, p *store.SubscriberTokensRemoveParams) (int, error) {
	removed := 0
	_, err := db.subscriberChannelsChange(ctx, p.Scope, p.SubscriberID, p.Now, func(chs []store.ChannelSettings) ([]store.ChannelSettings, error) {
		for i := range chs {
			if chs[i].IntegrationID != p.IntegrationID {
				continue
			}
			before := len(chs[i].Credentials.DeviceTokens)
			chs[i].Credentials.DeviceTokens = slices.DeleteFunc(chs[i].Credentials.DeviceTokens,
				func(t string) bool { return slices.Contains(p.Tokens, t) })
			removed += before - len(chs[i].Credentials.DeviceTokens)
		}
		return chs, nil
	})
	return removed, err
}
