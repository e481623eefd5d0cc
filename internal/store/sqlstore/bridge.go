package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// BridgeSync implements store.Bridges in one transaction: a read of the
// environment's workflows, the conflict check before any write, then the
// upserts, the deletes and the bridge URL.
func (db *DB) BridgeSync(ctx context.Context, p *store.BridgeSyncParams) ([]store.Workflow, error) {
	defer db.workflows.clear()
	var out []store.Workflow
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, "SELECT "+workflowCols+" FROM workflows WHERE environment_id = $1 AND deleted = false",
			p.EnvironmentID)
		existing, err := scanAll(rows, err, func(r rowScanner) (store.Workflow, error) { return scanWorkflow(r) })
		if err != nil {
			return fmt.Errorf("sqlstore: bridge sync: %w", err)
		}
		byKey := make(map[string]store.Workflow, len(existing))
		for _, w := range existing {
			byKey[w.Key] = w
		}
		listed := make(map[string]bool, len(p.Workflows))
		for _, d := range p.Workflows {
			if old, ok := byKey[d.Key]; ok && old.Origin != store.OriginBridge {
				return &store.ErrMadeElsewhere{Key: d.Key}
			}
			listed[d.Key] = true
		}
		out = make([]store.Workflow, 0, len(p.Workflows))
		for _, d := range p.Workflows {
			w := syncedWorkflow(p, d, byKey)
			if _, ok := byKey[d.Key]; ok {
				err = db.workflowWrite(ctx, tx, &w)
			} else {
				err = db.workflowInsert(ctx, tx, &w)
			}
			if err != nil {
				return fmt.Errorf("sqlstore: bridge sync of %s: %w", d.Key, err)
			}
			out = append(out, w)
		}
		for _, w := range existing {
			if w.Origin == store.OriginBridge && !listed[w.Key] {
				if _, err := tx.ExecContext(ctx, "UPDATE workflows SET deleted = true, updated_at = $1 WHERE id = $2",
					ms(p.Now), w.ID); err != nil {
					return fmt.Errorf("sqlstore: bridge sync: deleting %s: %w", w.Key, err)
				}
			}
		}
		res, err := tx.ExecContext(ctx, "UPDATE environments SET bridge_url = $1 WHERE id = $2 AND organization_id = $3",
			p.BridgeURL, p.EnvironmentID, p.OrganizationID)
		if err != nil {
			return fmt.Errorf("sqlstore: bridge sync: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	db.keys.clear() // cached environments carry their bridge URL
	return out, nil
}

// syncedWorkflow is a discovered workflow as stored: the _id, settings and
// step _ids and control values of the synced workflow of its key, if any.
func syncedWorkflow(p *store.BridgeSyncParams, d store.Workflow, byKey map[string]store.Workflow) store.Workflow {
	w := store.Workflow{ID: id.NewAt(p.Now), OrganizationID: p.OrganizationID, EnvironmentID: p.EnvironmentID, Active: true,
		Severity: "none", CreatedAt: p.Now}
	old, had := byKey[d.Key]
	if had {
		w = old
	}
	w.Key, w.Name, w.Description, w.Tags, w.PayloadSchema = d.Key, d.Name, d.Description, d.Tags, d.PayloadSchema
	if w.Tags == nil {
		w.Tags = []string{}
	}
	w.Origin, w.UpdatedAt = store.OriginBridge, p.Now
	steps := map[string]store.Step{}
	for _, s := range old.Steps {
		steps[s.StepID] = s
	}
	w.Steps = make([]store.Step, len(d.Steps))
	for i, s := range d.Steps {
		if prev, ok := steps[s.StepID]; ok && prev.Type == s.Type {
			s.ID, s.ControlValues, s.ControlOrder = prev.ID, prev.ControlValues, prev.ControlOrder
		} else {
			s.ID, s.ControlValues, s.ControlOrder = id.NewAt(p.Now), nil, nil
		}
		if s.Name == "" {
			s.Name = s.StepID
		}
		w.Steps[i] = s
	}
	return w
}
