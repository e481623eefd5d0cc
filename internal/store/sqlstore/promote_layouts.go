package sqlstore

import (
	"context"
	"time"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// layoutPromoter promotes layouts: name, whether it is the default,
// isTranslationEnabled and control values, with their translations. A
// layout published as the default takes the flag from the target's
// previous default (at most one per environment); a publish deletes the
// target's default when the source lacks it.
type layoutPromoter struct{}

func (layoutPromoter) resources(ctx context.Context, q querier, environmentID string) ([]store.Resource, error) {
	rows, err := q.QueryContext(ctx, "SELECT "+layoutCols+" FROM layouts WHERE environment_id = $1", environmentID)
	ls, err := scanAll(rows, err, scanLayout)
	if err != nil {
		return nil, err
	}
	tr, err := translationParts(ctx, q, environmentID, store.TranslationLayout)
	if err != nil {
		return nil, err
	}
	out := make([]store.Resource, len(ls))
	for i, l := range ls {
		out[i] = withTranslations(store.Resource{Kind: store.ResourceLayout, Key: l.Key, ID: l.ID, Name: l.Name, UpdatedAt: l.UpdatedAt,
			Content: canonical(map[string]any{"name": l.Name, "isDefault": l.IsDefault, "isTranslationEnabled": l.IsTranslationEnabled,
				"controlValues": decoded(l.ControlValues)})}, tr)
	}
	return out, nil
}

func (layoutPromoter) publish(ctx context.Context, db *DB, q querier, target store.Scope, src, dst *store.Resource, now time.Time) (string, error) {
	var targetID string
	switch {
	case src == nil:
		l, err := scanLayout(q.QueryRowContext(ctx, "SELECT "+layoutCols+" FROM layouts WHERE environment_id = $1 AND id = $2",
			target.EnvironmentID, dst.ID))
		if err != nil {
			return "", err
		}
		return dst.ID, db.layoutDeleteIn(ctx, q, target, l, now)
	default:
		l, err := scanLayout(q.QueryRowContext(ctx, "SELECT "+layoutCols+" FROM layouts WHERE id = $1", src.ID))
		if err != nil {
			return "", err
		}
		if l.IsDefault {
			if _, err := q.ExecContext(ctx, "UPDATE layouts SET is_default = false, updated_at = $1 WHERE environment_id = $2"+
				" AND is_default", ms(now), target.EnvironmentID); err != nil {
				return "", err
			}
		}
		if dst == nil {
			targetID = id.NewAt(now)
			_, err = q.ExecContext(ctx, "INSERT INTO layouts ("+layoutCols+") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)",
				targetID, target.OrganizationID, target.EnvironmentID, l.Key, l.Name, l.IsDefault, l.IsTranslationEnabled,
				nullJSON(l.ControlValues), ms(now))
		} else {
			targetID = dst.ID
			_, err = q.ExecContext(ctx, "UPDATE layouts SET name = $1, is_default = $2, translations = $3, control_values = $4,"+
				" updated_at = $5 WHERE environment_id = $6 AND id = $7", l.Name, l.IsDefault, l.IsTranslationEnabled,
				nullJSON(l.ControlValues), ms(now), target.EnvironmentID, dst.ID)
		}
		if db.d.unique(err) {
			err = store.ErrConflict
		}
		if err != nil {
			return "", err
		}
	}
	return targetID, publishTranslations(ctx, q, target, store.TranslationLayout, src, dst, now)
}
