package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// Bootstrap implements store.Tenancy.
func (db *DB) Bootstrap(ctx context.Context, p *store.BootstrapParams) (bool, error) {
	created := false
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := db.d.lock(ctx, tx, "LOCK TABLE organizations IN SHARE ROW EXCLUSIVE MODE"); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM organizations").Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		o := p.Organization
		if _, err := tx.ExecContext(ctx, "INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)",
			o.ID, o.Name, ms(o.CreatedAt)); err != nil {
			return err
		}
		m := p.Owner
		if _, err := tx.ExecContext(ctx, "INSERT INTO members (id, organization_id, email, role, created_at) VALUES ($1, $2, $3, $4, $5)",
			m.ID, m.OrganizationID, m.Email, m.Role, ms(m.CreatedAt)); err != nil {
			return err
		}
		for i := range p.Environments {
			if err := environmentInsert(ctx, tx, &p.Environments[i]); err != nil {
				return err
			}
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
		created = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("sqlstore: bootstrap: %w", err)
	}
	return created, nil
}

// MemberGetOwner implements store.Tenancy.
func (db *DB) MemberGetOwner(ctx context.Context, organizationID string) (store.Member, error) {
	var m store.Member
	var created int64
	err := db.r.QueryRowContext(ctx, "SELECT id, organization_id, email, role, created_at FROM members"+
		" WHERE organization_id = $1 AND role = 'owner' ORDER BY created_at, id LIMIT 1", organizationID).
		Scan(&m.ID, &m.OrganizationID, &m.Email, &m.Role, &created)
	m.CreatedAt = fromMS(created)
	return m, notFound(err)
}

// apiKeyInsert writes a key, with an encrypted copy of it when k.Key is given.
func (db *DB) apiKeyInsert(ctx context.Context, tx *sql.Tx, k *store.APIKey) error {
	sealed := ""
	if k.Key != "" {
		sealed = db.sealer.Seal([]byte(k.Key))
	}
	_, err := tx.ExecContext(ctx, "INSERT INTO api_keys (id, environment_id, hash, prefix, sealed_key, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
		k.ID, k.EnvironmentID, k.Hash, k.Prefix, sealed, ms(k.CreatedAt))
	if err == nil {
		k.Sealed = sealed != ""
	}
	return err
}

// APIKeyCreate implements store.Tenancy.
func (db *DB) APIKeyCreate(ctx context.Context, k *store.APIKey) error {
	return db.inTx(ctx, func(tx *sql.Tx) error { return db.apiKeyInsert(ctx, tx, k) })
}

const apiKeyCols = "k.id, k.environment_id, k.hash, k.prefix, k.sealed_key <> '', k.created_at, k.revoked_at"

func scanAPIKey(row interface{ Scan(...any) error }, extra ...any) (store.APIKey, error) {
	var k store.APIKey
	var created int64
	var revoked sql.NullInt64
	err := row.Scan(append([]any{&k.ID, &k.EnvironmentID, &k.Hash, &k.Prefix, &k.Sealed, &created, &revoked}, extra...)...)
	k.CreatedAt, k.RevokedAt = fromMS(created), fromNullMS(revoked)
	return k, notFound(err)
}

type keyAndEnv struct {
	key store.APIKey
	env store.Environment
}

// APIKeyGetByHash implements store.Tenancy (cached for apiKeyCacheTTL).
func (db *DB) APIKeyGetByHash(ctx context.Context, hash string) (store.APIKey, store.Environment, error) {
	now := time.Now()
	if c, ok := db.keys.get(hash, now); ok {
		return c.key, c.env, nil
	}
	k, e, err := db.apiKeyGetByHash(ctx, hash)
	if err == nil {
		db.keys.put(hash, keyAndEnv{k, e}, now)
	}
	return k, e, err
}

func (db *DB) apiKeyGetByHash(ctx context.Context, hash string) (store.APIKey, store.Environment, error) {
	var e environmentRow
	k, err := scanAPIKey(db.r.QueryRowContext(ctx, "SELECT "+apiKeyCols+", "+environmentColsOf("e")+
		" FROM api_keys k JOIN environments e ON e.id = k.environment_id WHERE k.hash = $1 AND k.revoked_at IS NULL"+
		" AND e.deleted_at IS NULL", hash),
		e.dest()...)
	return k, e.environment(), err
}

// APIKeyList implements store.Tenancy.
func (db *DB) APIKeyList(ctx context.Context, environmentID string) ([]store.APIKey, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT "+apiKeyCols+" FROM api_keys k WHERE k.environment_id = $1 ORDER BY k.created_at, k.id", environmentID)
	return scanAll(rows, err, func(r rowScanner) (store.APIKey, error) { return scanAPIKey(r) })
}

// APIKeyRevoke implements store.Tenancy.
func (db *DB) APIKeyRevoke(ctx context.Context, p *store.APIKeyRevokeParams) error {
	defer db.keys.clear()
	res, err := db.exec(ctx, "UPDATE api_keys SET revoked_at = $1 WHERE environment_id = $2 AND id = $3 AND revoked_at IS NULL",
		ms(p.Now), p.EnvironmentID, p.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}
