package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/herald-notify/herald/internal/store"
)

const integrationCols = "id, organization_id, environment_id, provider_id, channel, kind, name, identifier, credentials," +
	" configurations, conditions, active, is_primary, deleted, deleted_at, deleted_by, created_at, updated_at, secret_configurations"

func (db *DB) scanIntegration(row interface{ Scan(...any) error }) (store.Integration, error) {
	var in store.Integration
	var creds, confs, conds, secretConfs string
	var deletedAt sql.NullInt64
	var created, updated int64
	err := row.Scan(&in.ID, &in.OrganizationID, &in.EnvironmentID, &in.ProviderID, &in.Channel, &in.Kind, &in.Name,
		&in.Identifier, &creds, &confs, &conds, &in.Active, &in.Primary, &in.Deleted, &deletedAt, &in.DeletedBy,
		&created, &updated, &secretConfs)
	if err != nil {
		return in, notFound(err)
	}
	if in.Credentials, err = db.open(creds); err != nil {
		return in, fmt.Errorf("sqlstore: integration %s credentials: %w", in.ID, err)
	}
	secrets, err := db.open(secretConfs)
	if err != nil {
		return in, fmt.Errorf("sqlstore: integration %s configurations: %w", in.ID, err)
	}
	if in.Configurations, err = mergeConfigurations(confs, secrets); err != nil {
		return in, fmt.Errorf("sqlstore: integration %s configurations: %w", in.ID, err)
	}
	in.Conditions = store.JSON(conds)
	in.DeletedAt = fromNullMS(deletedAt)
	in.CreatedAt, in.UpdatedAt = fromMS(created), fromMS(updated)
	return in, nil
}

// seal encrypts v for a column; nothing stays the empty string.
func (db *DB) seal(v store.JSON) string {
	if len(v) == 0 {
		return ""
	}
	return db.sealer.Seal(v)
}

// open decrypts what seal wrote.
func (db *DB) open(sealed string) (store.JSON, error) {
	if sealed == "" {
		return nil, nil
	}
	plain, err := db.sealer.Open(sealed)
	return store.JSON(plain), err
}

func orJSON(v store.JSON, def string) string {
	if len(v) == 0 {
		return def
	}
	return string(v)
}

// lockPrimaries serializes the transactions that decide an environment's
// primary integrations: their check-then-write would otherwise leave two
// primaries on PostgreSQL (SQLite has one writer already). NO KEY UPDATE
// does not block the foreign-key checks of rows referencing the environment.
func (db *DB) lockPrimaries(ctx context.Context, tx *sql.Tx, environmentID string) error {
	return db.d.lock(ctx, tx, "SELECT 1 FROM environments WHERE id = $1 FOR NO KEY UPDATE", environmentID)
}

// demotePrimaries makes every other integration of the channel not
// primary, at in.UpdatedAt.
func (db *DB) demotePrimaries(ctx context.Context, tx *sql.Tx, in *store.Integration) error {
	_, err := tx.ExecContext(ctx, "UPDATE integrations SET is_primary = false, updated_at = $1"+
		" WHERE environment_id = $2 AND channel = $3 AND is_primary = true AND id <> $4",
		ms(in.UpdatedAt), in.EnvironmentID, in.Channel, in.ID)
	return err
}

func (db *DB) integrationInsert(ctx context.Context, tx *sql.Tx, in *store.Integration) error {
	if !in.Active {
		in.Primary = false
	} else if in.Channel != "" {
		if err := db.lockPrimaries(ctx, tx, in.EnvironmentID); err != nil {
			return err
		}
		var hasPrimary bool
		if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM integrations WHERE environment_id = $1 AND channel = $2"+
			" AND is_primary = true AND deleted = false)", in.EnvironmentID, in.Channel).Scan(&hasPrimary); err != nil {
			return err
		}
		if in.Primary && hasPrimary {
			if err := db.demotePrimaries(ctx, tx, in); err != nil {
				return err
			}
		}
		in.Primary = in.Primary || !hasPrimary
	}
	confs, secrets := splitConfigurations(in.Configurations)
	_, err := tx.ExecContext(ctx, "INSERT INTO integrations ("+integrationCols+") VALUES"+
		" ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)",
		in.ID, in.OrganizationID, in.EnvironmentID, in.ProviderID, in.Channel, in.Kind, in.Name, in.Identifier,
		db.seal(in.Credentials), confs, orJSON(in.Conditions, "[]"), in.Active, in.Primary,
		in.Deleted, nullMS(in.DeletedAt), in.DeletedBy, ms(in.CreatedAt), ms(in.UpdatedAt), db.seal(secrets))
	if db.d.unique(err) {
		return store.ErrConflict
	}
	return err
}

// IntegrationCreate implements store.Integrations.
func (db *DB) IntegrationCreate(ctx context.Context, in *store.Integration) error {
	return db.inTx(ctx, func(tx *sql.Tx) error { return db.integrationInsert(ctx, tx, in) })
}

// IntegrationGet implements store.Integrations.
func (db *DB) IntegrationGet(ctx context.Context, scope store.Scope, id string) (store.Integration, error) {
	return db.scanIntegration(db.r.QueryRowContext(ctx, "SELECT "+integrationCols+
		" FROM integrations WHERE environment_id = $1 AND id = $2 AND deleted = false", scope.EnvironmentID, id))
}

// IntegrationList implements store.Integrations.
func (db *DB) IntegrationList(ctx context.Context, p *store.IntegrationListParams) ([]store.Integration, error) {
	var a args
	q := "SELECT " + integrationCols + " FROM integrations WHERE organization_id = " + a.add(p.OrganizationID) + " AND deleted = false"
	if p.EnvironmentID != "" {
		q += " AND environment_id = " + a.add(p.EnvironmentID)
	}
	if p.ActiveOnly {
		q += " AND active = true"
	}
	if p.ProviderID != "" {
		q += " AND provider_id = " + a.add(p.ProviderID)
	}
	rows, err := db.r.QueryContext(ctx, q+" ORDER BY created_at, id", a...)
	return scanAll(rows, err, db.scanIntegration)
}

// IntegrationUpdate implements store.Integrations. A deactivated integration
// stops being primary; an activated one becomes primary of a channel without one.
func (db *DB) IntegrationUpdate(ctx context.Context, in *store.Integration) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if err := db.lockPrimaries(ctx, tx, in.EnvironmentID); err != nil {
			return err
		}
		// Primary is not the caller's to write (set-primary is): keep the
		// stored flag, so that a stale read cannot undo a concurrent set-primary.
		if err := tx.QueryRowContext(ctx, "SELECT is_primary FROM integrations WHERE environment_id = $1 AND id = $2"+
			" AND deleted = false", in.EnvironmentID, in.ID).Scan(&in.Primary); err != nil {
			return notFound(err)
		}
		if !in.Active {
			in.Primary = false
		} else if in.Channel != "" && !in.Primary {
			var hasPrimary bool
			if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM integrations WHERE environment_id = $1 AND channel = $2"+
				" AND is_primary = true AND deleted = false AND id <> $3)", in.EnvironmentID, in.Channel, in.ID).Scan(&hasPrimary); err != nil {
				return err
			}
			in.Primary = !hasPrimary
		}
		confs, secrets := splitConfigurations(in.Configurations)
		res, err := tx.ExecContext(ctx, "UPDATE integrations SET name = $1, identifier = $2, credentials = $3, configurations = $4,"+
			" conditions = $5, active = $6, is_primary = $7, updated_at = $8, secret_configurations = $9"+
			" WHERE environment_id = $10 AND id = $11 AND deleted = false",
			in.Name, in.Identifier, db.seal(in.Credentials), confs, orJSON(in.Conditions, "[]"),
			in.Active, in.Primary, ms(in.UpdatedAt), db.seal(secrets), in.EnvironmentID, in.ID)
		if db.d.unique(err) {
			return store.ErrConflict
		}
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		if in.Primary && in.Channel != "" {
			return db.demotePrimaries(ctx, tx, in)
		}
		return nil
	})
}

// IntegrationDelete implements store.Integrations.
func (db *DB) IntegrationDelete(ctx context.Context, p *store.IntegrationDeleteParams) error {
	res, err := db.exec(ctx, "UPDATE integrations SET deleted = true, deleted_at = $1, deleted_by = $2, active = false,"+
		" is_primary = false, updated_at = $1 WHERE environment_id = $3 AND id = $4 AND deleted = false",
		ms(p.Now), p.DeletedBy, p.EnvironmentID, p.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// IntegrationSetPrimary implements store.Integrations.
func (db *DB) IntegrationSetPrimary(ctx context.Context, p *store.IntegrationSetPrimaryParams) (store.Integration, error) {
	scope, id := p.Scope, p.ID
	var out store.Integration
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := db.lockPrimaries(ctx, tx, scope.EnvironmentID); err != nil {
			return err
		}
		in, err := db.scanIntegration(tx.QueryRowContext(ctx, "SELECT "+integrationCols+
			" FROM integrations WHERE environment_id = $1 AND id = $2 AND deleted = false"+db.d.forUpdate, scope.EnvironmentID, id))
		if err != nil {
			return err
		}
		now := ms(p.Now)
		if _, err := tx.ExecContext(ctx, "UPDATE integrations SET is_primary = false, updated_at = $1"+
			" WHERE environment_id = $2 AND channel = $3 AND is_primary = true AND id <> $4", now, scope.EnvironmentID, in.Channel, id); err != nil {
			return err
		}
		out, err = db.scanIntegration(tx.QueryRowContext(ctx, "UPDATE integrations SET is_primary = true, active = true,"+
			" updated_at = $1 WHERE id = $2 RETURNING "+integrationCols, now, id))
		return err
	})
	return out, err
}

// IntegrationForCredentials implements store.Integrations.
func (db *DB) IntegrationForCredentials(ctx context.Context, p *store.IntegrationForCredentialsParams) (store.Integration, error) {
	var a args
	q := "SELECT " + integrationCols + " FROM integrations WHERE environment_id = " + a.add(p.EnvironmentID) +
		" AND provider_id = " + a.add(p.ProviderID) + " AND active = true AND deleted = false"
	if p.Identifier != "" {
		q += " AND identifier = " + a.add(p.Identifier)
	}
	return db.scanIntegration(db.r.QueryRowContext(ctx, q+" ORDER BY is_primary DESC, created_at DESC, id DESC LIMIT 1", a...))
}
