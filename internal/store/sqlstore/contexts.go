package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

const contextCols = "id, organization_id, environment_id, ctx_type, ctx_id, data, created_at, updated_at"

func scanContext(row rowScanner) (store.Context, error) {
	var c store.Context
	var data string
	var created, updated int64
	if err := row.Scan(&c.ID, &c.OrganizationID, &c.EnvironmentID, &c.Type, &c.ContextID, &data, &created, &updated); err != nil {
		return c, notFound(err)
	}
	c.Data, c.CreatedAt, c.UpdatedAt = store.JSON(data), fromMS(created), fromMS(updated)
	return c, nil
}

func (db *DB) contextGet(ctx context.Context, q querier, scope store.Scope, typ, cid, lock string) (store.Context, error) {
	return scanContext(q.QueryRowContext(ctx, "SELECT "+contextCols+" FROM contexts WHERE environment_id = $1 AND ctx_type = $2"+
		" AND ctx_id = $3"+lock, scope.EnvironmentID, typ, cid))
}

// ContextGet implements store.Contexts.
func (db *DB) ContextGet(ctx context.Context, scope store.Scope, typ, contextID string) (store.Context, error) {
	return db.contextGet(ctx, db.r, scope, typ, contextID, "")
}

// insertContext creates the context of ref unless its type:id exists; it
// reports whether it did.
func insertContext(ctx context.Context, q querier, scope store.Scope, ref store.ContextRef, now time.Time) (store.Context, bool, error) {
	c := store.Context{ID: id.NewAt(now), OrganizationID: scope.OrganizationID, EnvironmentID: scope.EnvironmentID, Type: ref.Type,
		ContextID: ref.ContextID, Data: ref.Data, CreatedAt: now, UpdatedAt: now}
	if len(c.Data) == 0 {
		c.Data = store.JSON(`{}`)
	}
	res, err := q.ExecContext(ctx, "INSERT INTO contexts ("+contextCols+") VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING",
		c.ID, c.OrganizationID, c.EnvironmentID, c.Type, c.ContextID, string(c.Data), ms(now), ms(now))
	if err != nil {
		return c, false, err
	}
	n, _ := res.RowsAffected()
	return c, n == 1, nil
}

// ContextCreate implements store.Contexts.
func (db *DB) ContextCreate(ctx context.Context, p *store.ContextCreateParams) (store.Context, error) {
	var c store.Context
	err := db.gated(ctx, func(q querier) error {
		var created bool
		var err error
		c, created, err = insertContext(ctx, q, p.Scope, p.ContextRef, p.Now)
		if err == nil && !created {
			err = store.ErrConflict
		}
		return err
	})
	return c, err
}

// ContextUpdate implements store.Contexts.
func (db *DB) ContextUpdate(ctx context.Context, p *store.ContextUpdateParams) (store.Context, error) {
	var c store.Context
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		if c, err = db.contextGet(ctx, tx, p.Scope, p.Type, p.ContextID, db.d.forUpdate); err != nil {
			return err
		}
		c.Data, c.UpdatedAt = p.Data, p.Now
		_, err = tx.ExecContext(ctx, "UPDATE contexts SET data = $1, updated_at = $2 WHERE id = $3", string(c.Data), ms(c.UpdatedAt), c.ID)
		return err
	})
	return c, err
}

// ContextDelete implements store.Contexts.
func (db *DB) ContextDelete(ctx context.Context, scope store.Scope, typ, contextID string) error {
	res, err := db.exec(ctx, "DELETE FROM contexts WHERE environment_id = $1 AND ctx_type = $2 AND ctx_id = $3",
		scope.EnvironmentID, typ, contextID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// ContextList implements store.Contexts.
func (db *DB) ContextList(ctx context.Context, p *store.ContextListParams) ([]store.Context, bool, int, error) {
	var a args
	filter := "environment_id = " + a.add(p.EnvironmentID)
	if p.Type != "" {
		filter += " AND ctx_type = " + a.add(p.Type)
	}
	if p.ContextID != "" {
		filter += " AND ctx_id = " + a.add(p.ContextID)
	}
	if p.Search != "" {
		cond, arg := db.d.substring("(ctx_type || ':' || ctx_id)", "$"+strconv.Itoa(len(a)+1), p.Search)
		filter += " AND " + cond
		a = append(a, arg)
	}
	var total int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM contexts WHERE "+filter+" LIMIT "+
		strconv.Itoa(store.TotalCountCap)+") c", a...).Scan(&total); err != nil {
		return nil, false, 0, err
	}
	where, order, reverse := pageClause(&a, "id", p.TopicPage)
	rows, err := db.r.QueryContext(ctx, "SELECT "+contextCols+" FROM contexts WHERE "+filter+where+order, a...)
	out, err := scanAll(rows, err, scanContext)
	if err != nil {
		return nil, false, 0, err
	}
	out, more := trimPage(out, p.Limit, reverse)
	return out, more, total, nil
}

// ContextResolve implements store.Contexts. The contexts that exist are
// read without the write gate; only a trigger naming a new one writes.
func (db *DB) ContextResolve(ctx context.Context, p *store.ContextResolveParams) ([]store.Context, error) {
	out := make([]store.Context, len(p.Refs))
	var missing []int
	for i, ref := range p.Refs {
		c, err := db.ContextGet(ctx, p.Scope, ref.Type, ref.ContextID)
		switch {
		case err == nil:
			out[i] = c
		case errors.Is(err, store.ErrNotFound):
			missing = append(missing, i)
		default:
			return nil, err
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		for _, i := range missing {
			ref := p.Refs[i]
			c, created, err := insertContext(ctx, tx, p.Scope, ref, p.Now)
			if err != nil {
				return err
			}
			if !created { // created meanwhile: used as stored
				if c, err = db.contextGet(ctx, tx, p.Scope, ref.Type, ref.ContextID, ""); err != nil {
					return err
				}
			}
			out[i] = c
		}
		return nil
	})
	return out, err
}

// contextKeysCondition holds when a message's notification was triggered
// with exactly the context keys given (sorted, joined): one look-up by
// primary key per message considered (the condition is in a statement on
// messages, not aliased). An in-app message whose trigger retention purged
// keeps its keys itself (messages.context_keys, retention.go).
func contextKeysCondition(a *args, keys string) string {
	ph := a.add(keys)
	return "(messages.context_keys = " + ph + " OR messages.context_keys IS NULL AND EXISTS (SELECT 1 FROM notifications" +
		" WHERE notifications.id = messages.notification_id AND notifications.context_keys = " + ph + "))"
}
