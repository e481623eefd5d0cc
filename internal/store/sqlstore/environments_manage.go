package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/herald-notify/herald/internal/store"
)

// EnvironmentCreate implements store.Promotion.
func (db *DB) EnvironmentCreate(ctx context.Context, p *store.EnvironmentCreateParams) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := environmentInsert(ctx, tx, &p.Environment); err != nil {
			return err
		}
		for i := range p.APIKeys {
			if err := db.apiKeyInsert(ctx, tx, &p.APIKeys[i]); err != nil {
				return err
			}
		}
		for i := range p.Integrations {
			if err := db.integrationInsert(ctx, tx, &p.Integrations[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if db.d.unique(err) {
		return store.ErrConflict
	}
	if err != nil {
		return fmt.Errorf("sqlstore: creating an environment: %w", err)
	}
	return nil
}

// EnvironmentDelete implements store.Promotion: the environment's row stays
// (its data refers to it) under a name of its own, so that the name can be
// used again.
func (db *DB) EnvironmentDelete(ctx context.Context, p *store.EnvironmentDeleteParams) error {
	defer db.keys.clear()
	return db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE environments SET deleted_at = $1, name = name || ' (deleted ' || id || ')'"+
			" WHERE id = $2 AND organization_id = $3 AND deleted_at IS NULL", ms(p.Now), p.ID, p.OrganizationID)
		if err != nil {
			return fmt.Errorf("sqlstore: deleting an environment: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM integrations WHERE environment_id = $1", p.ID); err != nil {
			return fmt.Errorf("sqlstore: deleting an environment's integrations: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM webhook_endpoints WHERE environment_id = $1", p.ID); err != nil {
			return fmt.Errorf("sqlstore: deleting an environment's webhook endpoints: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE api_keys SET revoked_at = $1 WHERE environment_id = $2 AND revoked_at IS NULL",
			ms(p.Now), p.ID); err != nil {
			return fmt.Errorf("sqlstore: revoking an environment's keys: %w", err)
		}
		return nil
	})
}

// WorkflowTags implements store.Promotion.
func (db *DB) WorkflowTags(ctx context.Context, scope store.Scope) ([]string, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT tags FROM workflows WHERE environment_id = $1 AND deleted = false", scope.EnvironmentID)
	seen := map[string]bool{}
	if err := eachRow(rows, err, func(r rowScanner) error {
		var raw string
		if err := r.Scan(&raw); err != nil {
			return err
		}
		var tags []string
		if err := json.Unmarshal([]byte(raw), &tags); err != nil {
			return err
		}
		for _, t := range tags {
			if t != "" {
				seen[t] = true
			}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("sqlstore: workflow tags: %w", err)
	}
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	slices.Sort(out)
	return out, nil
}
