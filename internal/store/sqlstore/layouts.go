package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

const layoutCols = "id, organization_id, environment_id, layout_key, name, is_default, translations, control_values," +
	" created_at, updated_at"

func scanLayout(row rowScanner) (store.Layout, error) {
	var l store.Layout
	var values sql.NullString
	var created, updated int64
	err := row.Scan(&l.ID, &l.OrganizationID, &l.EnvironmentID, &l.Key, &l.Name, &l.IsDefault, &l.IsTranslationEnabled,
		&values, &created, &updated)
	if err != nil {
		return l, notFound(err)
	}
	if values.Valid {
		l.ControlValues = store.JSON(values.String)
	}
	l.CreatedAt, l.UpdatedAt = fromMS(created), fromMS(updated)
	return l, nil
}

// LayoutCreate implements store.Layouts. Whether the layout is the default
// is decided in its INSERT; two concurrent first layouts meet the unique
// index of defaults, and the loser is written again as not the default.
func (db *DB) LayoutCreate(ctx context.Context, l *store.Layout) error {
	insert := func(mayBeDefault bool) (bool, error) {
		def := "false"
		if mayBeDefault {
			def = "NOT EXISTS (SELECT 1 FROM layouts WHERE environment_id = $3 AND is_default)"
		}
		return execRow(ctx, db, func(r rowScanner) (bool, error) {
			var d bool
			return d, r.Scan(&d)
		}, "INSERT INTO layouts ("+layoutCols+") VALUES ($1, $2, $3, $4, $5, "+def+", $6, $7, $8, $9) RETURNING is_default",
			l.ID, l.OrganizationID, l.EnvironmentID, l.Key, l.Name, l.IsTranslationEnabled, nullJSON(l.ControlValues),
			ms(l.CreatedAt), ms(l.UpdatedAt))
	}
	d, err := insert(true)
	if db.d.unique(err) {
		d, err = insert(false)
	}
	if db.d.unique(err) {
		return store.ErrConflict
	}
	if err != nil {
		return err
	}
	l.IsDefault = d
	return nil
}

// LayoutGet implements store.Layouts.
func (db *DB) LayoutGet(ctx context.Context, scope store.Scope, idOrKey string) (store.Layout, error) {
	return scanLayout(db.r.QueryRowContext(ctx, "SELECT "+layoutCols+" FROM layouts WHERE environment_id = $1"+
		" AND (layout_key = $2 OR id = $2) ORDER BY (layout_key = $2) DESC LIMIT 1", scope.EnvironmentID, idOrKey))
}

// layoutOrder are the columns a list may be ordered by.
var layoutOrder = map[string]string{"createdAt": "created_at", "updatedAt": "updated_at", "name": "name"}

// LayoutList implements store.Layouts.
func (db *DB) LayoutList(ctx context.Context, p *store.LayoutListParams) ([]store.Layout, int, error) {
	var a args
	where := "environment_id = " + a.add(p.EnvironmentID)
	if p.Query != "" {
		q := strings.ToLower(p.Query)
		c1, v1 := db.d.substring("lower(name)", "$"+strconv.Itoa(len(a)+1), q)
		a = append(a, v1)
		c2, v2 := db.d.substring("lower(layout_key)", "$"+strconv.Itoa(len(a)+1), q)
		a = append(a, v2)
		where += " AND (" + c1 + " OR " + c2 + ")"
	}
	var total int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM layouts WHERE "+where, a...).Scan(&total); err != nil {
		return nil, 0, err
	}
	col, ok := layoutOrder[p.OrderBy]
	if !ok {
		col = "created_at"
	}
	dir := " ASC"
	if p.Desc {
		dir = " DESC"
	}
	rows, err := db.r.QueryContext(ctx, "SELECT "+layoutCols+" FROM layouts WHERE "+where+" ORDER BY "+col+dir+", id"+dir+
		" LIMIT "+strconv.Itoa(p.Limit)+" OFFSET "+strconv.Itoa(p.Offset), a...)
	out, err := scanAll(rows, err, scanLayout)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// LayoutUpdate implements store.Layouts.
func (db *DB) LayoutUpdate(ctx context.Context, l *store.Layout) error {
	res, err := db.exec(ctx, "UPDATE layouts SET name = $1, translations = $2, control_values = $3, updated_at = $4"+
		" WHERE environment_id = $5 AND id = $6", l.Name, l.IsTranslationEnabled, nullJSON(l.ControlValues), ms(l.UpdatedAt),
		l.EnvironmentID, l.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// LayoutDelete implements store.Layouts.
func (db *DB) LayoutDelete(ctx context.Context, p *store.LayoutDeleteParams) error {
	defer db.workflows.clear()
	return db.inTxFn(ctx, func(q querier) error {
		l, err := scanLayout(q.QueryRowContext(ctx, "SELECT "+layoutCols+" FROM layouts WHERE environment_id = $1 AND id = $2",
			p.EnvironmentID, p.ID))
		if err != nil {
			return err
		}
		if l.IsDefault {
			return fmt.Errorf("layout %s is the default: %w", l.Key, store.ErrConflict)
		}
		return db.layoutDeleteIn(ctx, q, p.Scope, l, p.Now)
	})
}

// layoutDeleteIn deletes a layout with its translations and removes its
// Key from the layoutId of the environment's e-mail steps that name it, in
// q's transaction (a publish deletes the default too).
func (db *DB) layoutDeleteIn(ctx context.Context, q querier, scope store.Scope, l store.Layout, now time.Time) error {
	if _, err := q.ExecContext(ctx, "DELETE FROM layouts WHERE id = $1", l.ID); err != nil {
		return err
	}
	// Its translations go with it (a new layout of that layoutId starts without any).
	if _, err := q.ExecContext(ctx, "DELETE FROM translations WHERE environment_id = $1 AND resource_type = $2"+
		" AND resource_id = $3", scope.EnvironmentID, store.TranslationLayout, l.Key); err != nil {
		return err
	}
	wfs, err := db.layoutUsers(ctx, q, scope, l.Key)
	if err != nil {
		return err
	}
	for _, w := range wfs {
		for i := range w.Steps {
			s := &w.Steps[i]
			if usesLayout(*s, l.Key) {
				delete(s.ControlValues, "layoutId")
				s.ControlOrder = slices.DeleteFunc(s.ControlOrder, func(k string) bool { return k == "layoutId" })
			}
		}
		if _, err := q.ExecContext(ctx, "UPDATE workflows SET steps = $1, updated_at = $2 WHERE id = $3",
			marshalText(w.Steps, "[]"), ms(now), w.ID); err != nil {
			return err
		}
	}
	return nil
}

// LayoutUsage implements store.Layouts.
func (db *DB) LayoutUsage(ctx context.Context, scope store.Scope, key string) ([]store.LayoutUse, error) {
	wfs, err := db.layoutUsers(ctx, db.r, scope, key)
	if err != nil {
		return nil, err
	}
	out := make([]store.LayoutUse, 0, len(wfs))
	for _, w := range wfs {
		out = append(out, store.LayoutUse{WorkflowKey: w.Key, Name: w.Name})
	}
	return out, nil
}

// layoutUsers are the environment's workflows with an e-mail step whose
// controls' layoutId is key, by name: the text of their steps holds the key
// as a JSON string, which narrows them in SQL.
func (db *DB) layoutUsers(ctx context.Context, q querier, scope store.Scope, key string) ([]store.Workflow, error) {
	quoted, _ := json.Marshal(key)
	var a args
	where := "environment_id = " + a.add(scope.EnvironmentID) + " AND deleted = false"
	c, v := db.d.substring("steps", "$"+strconv.Itoa(len(a)+1), string(quoted))
	a = append(a, v)
	rows, err := q.QueryContext(ctx, "SELECT "+workflowCols+" FROM workflows WHERE "+where+" AND "+c+
		" ORDER BY name, id", a...)
	all, err := scanAll(rows, err, scanWorkflow)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(w store.Workflow) bool {
		return !slices.ContainsFunc(w.Steps, func(s store.Step) bool { return usesLayout(s, key) })
	}), nil
}

func usesLayout(s store.Step, key string) bool {
	id, _ := s.ControlValues["layoutId"].(string)
	return s.Type == "email" && id == key
}
