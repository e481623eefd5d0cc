package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// bulkUpsertRow is one subscriberId of a bulk upsert: its items merged in
// request order, and the id it gets if it is new.
type bulkUpsertRow struct {
	p     store.SubscriberUpsertParams
	first int // the index of its first item
	newID string
}

// attributes are the row's optional attributes in subscriberAttributeCols order.
func (r *bulkUpsertRow) attributes() []store.Field {
	p := &r.p
	return []store.Field{p.FirstName, p.LastName, p.Email, p.Phone, p.Avatar, p.Locale, p.Timezone}
}

// mask says which attributes the row sets: bit i for attribute i, the
// last bit for data. Rows of one mask share a statement.
func (r *bulkUpsertRow) mask() int {
	m := 0
	for i, f := range r.attributes() {
		if f.Set {
			m |= 1 << i
		}
	}
	if r.p.DataSet {
		m |= 1 << len(subscriberAttributeCols)
	}
	return m
}

// subscriberAttributeCols are the optional attribute columns, in the order
// of bulkUpsertRow.attributes.
var subscriberAttributeCols = []string{"first_name", "last_name", "email", "phone", "avatar", "locale", "timezone"}

// mergeUpsert applies the sent fields of later over p.
func mergeUpsert(p, later *store.SubscriberUpsertParams) {
	for _, f := range []struct{ dst, src *store.Field }{
		{&p.FirstName, &later.FirstName}, {&p.LastName, &later.LastName}, {&p.Email, &later.Email},
		{&p.Phone, &later.Phone}, {&p.Avatar, &later.Avatar}, {&p.Locale, &later.Locale}, {&p.Timezone, &later.Timezone},
	} {
		if f.src.Set {
			*f.dst = *f.src
		}
	}
	if later.DataSet {
		p.DataSet, p.Data = true, later.Data
	}
}

// SubscriberBulkUpsert implements store.Subscribers. The items of one
// subscriberId are merged first (a statement may not change a row twice),
// then the rows are upserted in subscriberId order, a multi-row INSERT … ON
// CONFLICT DO UPDATE per chunk of rows that set the same attributes — one
// statement per chunk in the usual case where every item sends the same
// fields. On PostgreSQL the transaction first takes an advisory lock per
// subscriberId, in one order, so that two bulk upserts naming the same
// subscribers run one after the other instead of deadlocking; the unique
// index keeps one subscriber per subscriberId whatever runs beside them.
func (db *DB) SubscriberBulkUpsert(ctx context.Context, p *store.SubscriberBulkUpsertParams) ([]bool, error) {
	created := make([]bool, len(p.Items))
	byID := map[string]*bulkUpsertRow{}
	var rows []*bulkUpsertRow
	for i := range p.Items {
		it := &p.Items[i]
		if r := byID[it.SubscriberID]; r != nil {
			mergeUpsert(&r.p, it)
			continue
		}
		r := &bulkUpsertRow{p: *it, first: i, newID: id.New()}
		byID[it.SubscriberID] = r
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return created, nil
	}
	slices.SortFunc(rows, func(a, b *bulkUpsertRow) int { return strings.Compare(a.p.SubscriberID, b.p.SubscriberID) })
	var masks []int
	groups := map[int][]*bulkUpsertRow{}
	for _, r := range rows {
		m := r.mask()
		if groups[m] == nil {
			masks = append(masks, m)
		}
		groups[m] = append(groups[m], r)
	}
	now := ms(p.Now)
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := db.lockSubscriberIDs(ctx, tx, p.EnvironmentID, rows); err != nil {
			return err
		}
		for _, m := range masks {
			g := groups[m]
			for start := 0; start < len(g); start += db.d.rowsPerStatement {
				chunk := g[start:min(start+db.d.rowsPerStatement, len(g))]
				if err := upsertSubscriberRows(ctx, tx, p.Scope, chunk, now, byID, created); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return created, nil
}

// upsertSubscriberRows upserts rows that all set the same attributes, in one
// statement, and marks in created the items whose subscriber it created.
func upsertSubscriberRows(ctx context.Context, tx *sql.Tx, scope store.Scope, rows []*bulkUpsertRow, now int64,
	byID map[string]*bulkUpsertRow, created []bool) error {
	a := args{scope.OrganizationID, scope.EnvironmentID, now}
	cols := append([]string{"id", "organization_id", "environment_id", "subscriber_id", "data", "channels", "version",
		"deleted", "created_at", "updated_at"}, subscriberAttributeCols...)
	values := make([]string, len(rows))
	for i, r := range rows {
		v := []string{a.add(r.newID), "$1", "$2", a.add(r.p.SubscriberID), a.add(nullJSON(r.p.Data)), "'[]'", "0", "false", "$3", "$3"}
		for _, f := range r.attributes() {
			v = append(v, a.add(f.Value))
		}
		values[i] = "(" + strings.Join(v, ", ") + ")"
	}
	var sets []string
	for i, f := range rows[0].attributes() {
		if f.Set {
			sets = append(sets, subscriberAttributeCols[i]+" = excluded."+subscriberAttributeCols[i])
		}
	}
	if rows[0].p.DataSet {
		sets = append(sets, "data = excluded.data")
	}
	sets = append(sets, "version = subscribers.version + 1", "updated_at = excluded.updated_at")
	res, err := tx.QueryContext(ctx, "INSERT INTO subscribers ("+strings.Join(cols, ", ")+") VALUES "+strings.Join(values, ", ")+
		" ON CONFLICT (environment_id, subscriber_id) WHERE deleted = false DO UPDATE SET "+strings.Join(sets, ", ")+
		" RETURNING id, subscriber_id", a...)
	if err := eachRow(res, err, func(s rowScanner) error {
		var rowID, sid string
		if err := s.Scan(&rowID, &sid); err != nil {
			return err
		}
		if r := byID[sid]; r != nil && r.newID == rowID {
			created[r.first] = true
		}
		return nil
	}); err != nil {
		return fmt.Errorf("sqlstore: bulk upsert: %w", err)
	}
	return nil
}

// lockSubscriberIDs takes a transaction-scoped lock per subscriberId of rows
// (see dialect.lockKeys).
func (db *DB) lockSubscriberIDs(ctx context.Context, tx *sql.Tx, environmentID string, rows []*bulkUpsertRow) error {
	names := make([]string, 0, len(rows))
	for _, r := range rows {
		names = append(names, "subscriber\x00"+environmentID+"\x00"+r.p.SubscriberID)
	}
	return db.d.lockKeys(ctx, tx, "subscriber", names)
}

// SubscriberSetOnline implements store.Subscribers: going offline records
// when the subscriber was last online; going online leaves that time as it was.
func (db *DB) SubscriberSetOnline(ctx context.Context, p *store.SubscriberOnlineParams) (store.Subscriber, error) {
	return execRow(ctx, db, scanSubscriber, "UPDATE subscribers SET is_online = $1,"+
		" last_online_at = CASE WHEN $1 THEN last_online_at ELSE $2 END, version = version + 1, updated_at = $2"+
		" WHERE environment_id = $3 AND subscriber_id = $4 AND deleted = false RETURNING "+subscriberCols,
		p.Online, ms(p.Now), p.EnvironmentID, p.SubscriberID)
}
