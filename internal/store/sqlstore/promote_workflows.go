package sqlstore

import (
	"context"
	"time"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// workflowPromoter promotes workflows: everything but their ids, their
// times and when they last ran, with their translations; steps keep their
// _id in the target when the target's step of that stepId has the same type.
type workflowPromoter struct{}

func (workflowPromoter) resources(ctx context.Context, q querier, environmentID string) ([]store.Resource, error) {
	rows, err := q.QueryContext(ctx, "SELECT "+workflowCols+" FROM workflows WHERE environment_id = $1 AND deleted = false", environmentID)
	wfs, err := scanAll(rows, err, scanWorkflow)
	if err != nil {
		return nil, err
	}
	tr, err := translationParts(ctx, q, environmentID, store.TranslationWorkflow)
	if err != nil {
		return nil, err
	}
	out := make([]store.Resource, len(wfs))
	for i, w := range wfs {
		out[i] = withTranslations(workflowResource(w), tr)
	}
	return out, nil
}

// workflowResource is a workflow in its comparable form.
func workflowResource(w store.Workflow) store.Resource {
	tags := w.Tags
	if tags == nil {
		tags = []string{}
	}
	r := store.Resource{Kind: store.ResourceWorkflow, Key: w.Key, ID: w.ID, Name: w.Name, UpdatedAt: w.UpdatedAt,
		Content: canonical(map[string]any{"name": w.Name, "description": w.Description, "tags": tags, "active": w.Active,
			"critical": w.Critical, "severity": w.Severity, "preferences": decoded(w.Preferences),
			"payloadSchema": decoded(w.PayloadSchema)})}
	for _, s := range w.Steps {
		values := s.ControlValues
		if values == nil {
			values = map[string]any{}
		}
		r.Parts = append(r.Parts, store.ResourcePart{Kind: store.PartStep, Key: s.StepID, Name: s.Name, Type: s.Type,
			Content: canonical(map[string]any{"controlValues": values, "controlOrder": s.ControlOrder})})
	}
	return r
}

func (p workflowPromoter) publish(ctx context.Context, db *DB, q querier, target store.Scope, src, dst *store.Resource, now time.Time) (string, error) {
	targetID, err := p.write(ctx, db, q, target, src, dst, now)
	if err != nil {
		return "", err
	}
	return targetID, publishTranslations(ctx, q, target, store.TranslationWorkflow, src, dst, now)
}

func (workflowPromoter) write(ctx context.Context, db *DB, q querier, target store.Scope, src, dst *store.Resource, now time.Time) (string, error) {
	if src == nil {
		res, err := q.ExecContext(ctx, "UPDATE workflows SET deleted = true, updated_at = $1 WHERE environment_id = $2 AND id = $3",
			ms(now), target.EnvironmentID, dst.ID)
		if err == nil {
			if n, _ := res.RowsAffected(); n == 0 {
				err = store.ErrNotFound
			}
		}
		return dst.ID, err
	}
	ids := []string{src.ID}
	if dst != nil {
		ids = append(ids, dst.ID)
	}
	got, err := db.workflowsByID(ctx, q, ids)
	if err != nil {
		return "", err
	}
	w, ok := got[src.ID]
	if !ok {
		return "", store.ErrNotFound
	}
	w.OrganizationID, w.EnvironmentID, w.UpdatedAt, w.LastTriggeredAt = target.OrganizationID, target.EnvironmentID, now, nil
	if dst == nil {
		w.ID, w.CreatedAt = id.NewAt(now), now
		for i := range w.Steps {
			w.Steps[i].ID = id.New()
		}
		return w.ID, db.workflowInsert(ctx, q, &w)
	}
	old := got[dst.ID]
	kept := map[string]store.Step{}
	for _, s := range old.Steps {
		kept[s.StepID] = s
	}
	for i, s := range w.Steps {
		if prev, ok := kept[s.StepID]; ok && prev.Type == s.Type {
			w.Steps[i].ID = prev.ID
		} else {
			w.Steps[i].ID = id.New()
		}
	}
	w.ID, w.CreatedAt, w.LastTriggeredAt = old.ID, old.CreatedAt, old.LastTriggeredAt
	return w.ID, db.workflowWrite(ctx, q, &w)
}
