package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
)

// Environments: the tenant boundary, with the public application
// identifier of the inbox clients and the keys that sign their sessions.

const environmentCols = "id, organization_id, name, identifier, inbox_hmac_disabled, parent_id, color, created_at, bridge_url"

// environmentColsOf is environmentCols of the table aliased alias.
func environmentColsOf(alias string) string {
	cols := strings.Split(environmentCols, ", ")
	for i, c := range cols {
		cols[i] = alias + "." + c
	}
	return strings.Join(cols, ", ")
}

// environmentRow receives the columns of environmentCols.
type environmentRow struct {
	e          store.Environment
	identifier sql.NullString // NULL only for rows written around the store (tests)
	parent     sql.NullString
	created    int64
}

func (r *environmentRow) dest() []any {
	return []any{&r.e.ID, &r.e.OrganizationID, &r.e.Name, &r.identifier, &r.e.InboxHMACDisabled, &r.parent, &r.e.Color, &r.created,
		&r.e.BridgeURL}
}

func (r *environmentRow) environment() store.Environment {
	e := r.e
	e.Identifier, e.ParentID, e.CreatedAt = r.identifier.String, r.parent.String, fromMS(r.created)
	return e
}

func scanEnvironment(row interface{ Scan(...any) error }) (store.Environment, error) {
	var r environmentRow
	err := row.Scan(r.dest()...)
	return r.environment(), notFound(err)
}

// environmentInsert writes an environment, making its application
// identifier when it has none.
func environmentInsert(ctx context.Context, tx *sql.Tx, e *store.Environment) error {
	if e.Identifier == "" {
		e.Identifier = secret.NewApplicationIdentifier()
	}
	var parent any
	if e.ParentID != "" {
		parent = e.ParentID
	}
	_, err := tx.ExecContext(ctx, "INSERT INTO environments (id, organization_id, name, identifier, inbox_hmac_disabled, parent_id, color,"+
		" created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)", e.ID, e.OrganizationID, e.Name, e.Identifier, e.InboxHMACDisabled,
		parent, e.Color, ms(e.CreatedAt))
	return err
}

// EnvironmentGetByName implements store.Tenancy.
func (db *DB) EnvironmentGetByName(ctx context.Context, name string) (store.Environment, error) {
	return scanEnvironment(db.r.QueryRowContext(ctx, "SELECT "+environmentCols+
		" FROM environments WHERE name = $1 AND deleted_at IS NULL ORDER BY created_at, id LIMIT 1", name))
}

// EnvironmentGetByID implements store.Tenancy.
func (db *DB) EnvironmentGetByID(ctx context.Context, id string) (store.Environment, error) {
	return scanEnvironment(db.r.QueryRowContext(ctx, "SELECT "+environmentCols+" FROM environments WHERE id = $1 AND deleted_at IS NULL", id))
}

// EnvironmentGetByIdentifier implements store.Tenancy.
func (db *DB) EnvironmentGetByIdentifier(ctx context.Context, identifier string) (store.Environment, error) {
	return scanEnvironment(db.r.QueryRowContext(ctx, "SELECT "+environmentCols+" FROM environments WHERE identifier = $1 AND deleted_at IS NULL", identifier))
}

// EnvironmentList implements store.Tenancy.
func (db *DB) EnvironmentList(ctx context.Context, organizationID string) ([]store.Environment, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT "+environmentCols+" FROM environments WHERE organization_id = $1 AND deleted_at IS NULL ORDER BY created_at, id",
		organizationID)
	out, err := scanAll(rows, err, scanEnvironment)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: environments: %w", err)
	}
	return out, nil
}

// EnvironmentUpdate implements store.Tenancy. A name or identifier taken
// by another environment is ErrConflict.
func (db *DB) EnvironmentUpdate(ctx context.Context, p *store.EnvironmentUpdateParams) (store.Environment, error) {
	defer db.keys.clear() // the cached keys carry their environment
	var a args
	var set []string
	if p.InboxHMACDisabled != nil {
		set = append(set, "inbox_hmac_disabled = "+a.add(*p.InboxHMACDisabled))
	}
	for _, f := range []struct {
		col string
		v   *string
	}{{"name", p.Name}, {"identifier", p.Identifier}, {"color", p.Color}} {
		if f.v != nil {
			set = append(set, f.col+" = "+a.add(*f.v))
		}
	}
	if p.ParentID != nil {
		var parent any
		if *p.ParentID != "" {
			parent = *p.ParentID
		}
		set = append(set, "parent_id = "+a.add(parent))
	}
	if len(set) > 0 {
		res, err := db.exec(ctx, "UPDATE environments SET "+strings.Join(set, ", ")+" WHERE id = "+a.add(p.ID)+
			" AND deleted_at IS NULL", a...)
		if db.d.unique(err) {
			return store.Environment{}, store.ErrConflict
		}
		if err != nil {
			return store.Environment{}, fmt.Errorf("sqlstore: updating an environment: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.Environment{}, store.ErrNotFound
		}
	}
	return scanEnvironment(db.w.QueryRowContext(ctx, "SELECT "+environmentCols+" FROM environments WHERE id = $1 AND deleted_at IS NULL", p.ID))
}

// APIKeyKeepCopy implements store.Tenancy.
func (db *DB) APIKeyKeepCopy(ctx context.Context, id, key string) error {
	defer db.keys.clear()
	_, err := db.exec(ctx, "UPDATE api_keys SET sealed_key = $1 WHERE id = $2 AND sealed_key = ''",
		db.sealer.Seal([]byte(key)), id)
	if err != nil {
		return fmt.Errorf("sqlstore: keeping a copy of an API key: %w", err)
	}
	return nil
}

// APIKeySigningKeys implements store.Tenancy. A copy that does not open
// with the server secret is ErrSecretMismatch.
func (db *DB) APIKeySigningKeys(ctx context.Context, environmentID string) ([]string, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT id, sealed_key FROM api_keys"+
		" WHERE environment_id = $1 AND revoked_at IS NULL AND sealed_key <> '' ORDER BY created_at, id", environmentID)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: signing keys: %w", err)
	}
	var out []string
	if err := eachRow(rows, nil, func(r rowScanner) error {
		var id, sealed string
		if err := r.Scan(&id, &sealed); err != nil {
			return fmt.Errorf("sqlstore: signing keys: %w", err)
		}
		key, err := db.sealer.Open(sealed)
		if err != nil {
			return fmt.Errorf("%w: API key %s: %v", ErrSecretMismatch, id, err)
		}
		out = append(out, string(key))
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}
