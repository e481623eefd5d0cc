package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

const workflowCols = "id, organization_id, environment_id, workflow_key, name, description, tags, active, critical, severity," +
	" preferences, payload_schema, steps, deleted, last_triggered_at, created_at, updated_at, origin"

func scanWorkflow(row interface{ Scan(...any) error }) (store.Workflow, error) {
	var w store.Workflow
	var tags, prefs, steps string
	var schema sql.NullString
	var last sql.NullInt64
	var created, updated int64
	err := row.Scan(&w.ID, &w.OrganizationID, &w.EnvironmentID, &w.Key, &w.Name, &w.Description, &tags, &w.Active,
		&w.Critical, &w.Severity, &prefs, &schema, &steps, &w.Deleted, &last, &created, &updated, &w.Origin)
	if err != nil {
		return w, notFound(err)
	}
	if err := json.Unmarshal([]byte(tags), &w.Tags); err != nil {
		return w, fmt.Errorf("sqlstore: workflow %s tags: %w", w.ID, err)
	}
	if err := json.Unmarshal([]byte(steps), &w.Steps); err != nil {
		return w, fmt.Errorf("sqlstore: workflow %s steps: %w", w.ID, err)
	}
	w.Preferences = store.JSON(prefs)
	if schema.Valid {
		w.PayloadSchema = store.JSON(schema.String)
	}
	w.LastTriggeredAt = fromNullMS(last)
	w.CreatedAt, w.UpdatedAt = fromMS(created), fromMS(updated)
	return w, nil
}

func marshalText(v any, empty string) string {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return empty
	}
	return string(b)
}

// WorkflowCreate implements store.Workflows.
func (db *DB) WorkflowCreate(ctx context.Context, w *store.Workflow) error {
	defer db.workflows.clear()
	return db.gated(ctx, func(q querier) error { return db.workflowInsert(ctx, q, w) })
}

func (db *DB) workflowInsert(ctx context.Context, q querier, w *store.Workflow) error {
	_, err := q.ExecContext(ctx, "INSERT INTO workflows ("+workflowCols+") VALUES"+
		" ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)",
		w.ID, w.OrganizationID, w.EnvironmentID, w.Key, w.Name, w.Description, marshalText(w.Tags, "[]"), w.Active,
		w.Critical, w.Severity, orJSON(w.Preferences, "{}"), nullJSON(w.PayloadSchema), marshalText(w.Steps, "[]"),
		w.Deleted, nullMS(w.LastTriggeredAt), ms(w.CreatedAt), ms(w.UpdatedAt), w.Origin)
	if db.d.unique(err) {
		return store.ErrConflict
	}
	return err
}

// WorkflowGet implements store.Workflows (cached for workflowCacheTTL).
func (db *DB) WorkflowGet(ctx context.Context, scope store.Scope, idOrKey string) (store.Workflow, error) {
	key, now := scope.EnvironmentID+"\x00"+idOrKey, time.Now()
	if w, ok := db.workflows.get(key, now); ok {
		return w, nil
	}
	w, err := workflowGet(ctx, db.r, scope, idOrKey)
	if err == nil {
		db.workflows.put(key, w, now)
	}
	return w, err
}

// workflowGet reads an undeleted workflow by key or id on q.
func workflowGet(ctx context.Context, q querier, scope store.Scope, idOrKey string) (store.Workflow, error) {
	return scanWorkflow(q.QueryRowContext(ctx, "SELECT "+workflowCols+" FROM workflows WHERE environment_id = $1"+
		" AND deleted = false AND (workflow_key = $2 OR id = $2) ORDER BY (workflow_key = $2) DESC LIMIT 1", scope.EnvironmentID, idOrKey))
}

// WorkflowList implements store.Workflows.
func (db *DB) WorkflowList(ctx context.Context, p *store.WorkflowListParams) ([]store.Workflow, int, error) {
	var a args
	where := "environment_id = " + a.add(p.EnvironmentID) + " AND deleted = false"
	if p.Active {
		where += " AND active = true"
	}
	if p.Query != "" {
		c1, v1 := db.d.substring("name", "$"+fmt.Sprint(len(a)+1), p.Query)
		a = append(a, v1)
		c2, v2 := db.d.substring("workflow_key", "$"+fmt.Sprint(len(a)+1), p.Query)
		a = append(a, v2)
		where += " AND (" + c1 + " OR " + c2 + ")"
	}
	var total int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM workflows WHERE "+where, a...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.r.QueryContext(ctx, "SELECT "+workflowCols+" FROM workflows WHERE "+where+
		" ORDER BY created_at DESC, id DESC LIMIT "+strconv.Itoa(p.Limit)+" OFFSET "+strconv.Itoa(p.Offset), a...)
	out, err := scanAll(rows, err, scanWorkflow)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// WorkflowUpdate implements store.Workflows.
func (db *DB) WorkflowUpdate(ctx context.Context, w *store.Workflow) error {
	defer db.workflows.clear()
	return db.gated(ctx, func(q querier) error { return db.workflowWrite(ctx, q, w) })
}

func (db *DB) workflowWrite(ctx context.Context, q querier, w *store.Workflow) error {
	res, err := q.ExecContext(ctx, "UPDATE workflows SET workflow_key = $1, name = $2, description = $3, tags = $4,"+
		" active = $5, critical = $6, severity = $7, preferences = $8, payload_schema = $9, steps = $10, updated_at = $11"+
		" WHERE environment_id = $12 AND id = $13 AND deleted = false",
		w.Key, w.Name, w.Description, marshalText(w.Tags, "[]"), w.Active, w.Critical, w.Severity,
		orJSON(w.Preferences, "{}"), nullJSON(w.PayloadSchema), marshalText(w.Steps, "[]"), ms(w.UpdatedAt),
		w.EnvironmentID, w.ID)
	if db.d.unique(err) {
		return store.ErrConflict
	}
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// WorkflowDelete implements store.Workflows.
func (db *DB) WorkflowDelete(ctx context.Context, p *store.WorkflowDeleteParams) error {
	defer db.workflows.clear()
	res, err := db.exec(ctx, "UPDATE workflows SET deleted = true, updated_at = $1 WHERE environment_id = $2"+
		" AND id = $3 AND deleted = false", ms(p.Now), p.EnvironmentID, p.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// workflowsByID loads workflows (deleted ones too: their runs still need them).
func (db *DB) workflowsByID(ctx context.Context, q querier, ids []string) (map[string]store.Workflow, error) {
	out := map[string]store.Workflow{}
	if len(ids) == 0 {
		return out, nil
	}
	var a args
	rows, err := q.QueryContext(ctx, "SELECT "+workflowCols+" FROM workflows WHERE "+db.inList(&a, "id", ids), db.planned(a)...)
	if err := eachRow(rows, err, func(r rowScanner) error {
		w, err := scanWorkflow(r)
		if err == nil {
			out[w.ID] = w
		}
		return err
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// list adds each value and returns their placeholders joined by commas.
// inList is a condition that col is one of values; run its statement with
// db.planned(a). On PostgreSQL the values go as one array, and the statement
// is planned for them at each execution: a cached generic plan made while a
// table was small (or never analyzed) either compared an IN list of
// parameters value by value with every row it scanned (a 100-value list
// over 10,000 subscribers: 70–200 ms) or hashed the list and scanned a
// table grown since. Planned with the values, an IN list is hashed or
// probed through the index, whichever the table's size calls for. Such
// look-ups are short to plan; the statements that write keep their cached
// plans.
func (db *DB) inList(a *args, col string, values []string) string {
	return db.d.inList(a, col, values)
}

// planned are a statement's arguments with, on PostgreSQL, the instruction
// to plan it for them (an unnamed statement, its description cached).
func (db *DB) planned(a args) []any {
	return db.d.planned(a)
}

func (a *args) list(values []string) string {
	ph := make([]string, len(values))
	for i, v := range values {
		ph[i] = a.add(v)
	}
	return strings.Join(ph, ", ")
}
