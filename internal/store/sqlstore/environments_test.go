package sqlstore_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

var identifierRE = regexp.MustCompile(`^app_[0-9a-f]{20}$`)

// TestEnvironmentIdentifiers: every environment gets its own public
// application identifier, which finds it; an organization lists its own.
func TestEnvironmentIdentifiers(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		require.Regexp(t, identifierRE, tn.EnvA.Identifier)
		require.Regexp(t, identifierRE, tn.EnvB.Identifier)
		require.NotEqual(t, tn.EnvA.Identifier, tn.EnvB.Identifier)
		require.False(t, tn.EnvA.InboxHMACDisabled, "subscriberHash is required by default")

		for _, env := range []store.Environment{tn.EnvA, tn.EnvB} {
			got, err := db.EnvironmentGetByIdentifier(ctx, env.Identifier)
			require.NoError(t, err)
			require.Equal(t, env, got)
		}
		for _, unknown := range []string{"", "app_00000000000000000000", tn.EnvA.ID, strings.ToUpper(tn.EnvA.Identifier)} {
			_, err := db.EnvironmentGetByIdentifier(ctx, unknown)
			require.ErrorIs(t, err, store.ErrNotFound, unknown)
		}

		other := otherOrganization(t, db)
		list, err := db.EnvironmentList(ctx, tn.Org.ID)
		require.NoError(t, err)
		require.Equal(t, []store.Environment{tn.EnvA, tn.EnvB}, list)
		list, err = db.EnvironmentList(ctx, other.OrganizationID)
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.Equal(t, other.EnvironmentID, list[0].ID)
		list, err = db.EnvironmentList(ctx, id.New())
		require.NoError(t, err)
		require.Empty(t, list)

		_, err = db.Writer().ExecContext(ctx, "UPDATE environments SET identifier = $1 WHERE id = $2", tn.EnvA.Identifier, tn.EnvB.ID)
		require.Error(t, err, "identifiers are unique")
	})
}

// TestEnvironmentUpdate: the HMAC setting changes at once, for look-ups by
// key too (the key cache carries the environment).
func TestEnvironmentUpdate(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		key := store.APIKey{ID: id.New(), EnvironmentID: tn.EnvA.ID, Hash: secret.HashAPIKey("k"), Prefix: "k", Key: "k", CreatedAt: base}
		require.NoError(t, db.APIKeyCreate(ctx, &key))
		_, env, err := db.APIKeyGetByHash(ctx, key.Hash) // cached now
		require.NoError(t, err)
		require.False(t, env.InboxHMACDisabled)

		got, err := db.EnvironmentUpdate(ctx, &store.EnvironmentUpdateParams{ID: tn.EnvA.ID, InboxHMACDisabled: ptr(true)})
		require.NoError(t, err)
		want := tn.EnvA
		want.InboxHMACDisabled = true
		require.Equal(t, want, got)
		got, err = db.EnvironmentGetByID(ctx, tn.EnvA.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)
		_, env, err = db.APIKeyGetByHash(ctx, key.Hash)
		require.NoError(t, err)
		require.True(t, env.InboxHMACDisabled, "not the cached environment")
		got, err = db.EnvironmentGetByID(ctx, tn.EnvB.ID)
		require.NoError(t, err)
		require.False(t, got.InboxHMACDisabled, "the other environment is untouched")

		got, err = db.EnvironmentUpdate(ctx, &store.EnvironmentUpdateParams{ID: tn.EnvA.ID})
		require.NoError(t, err)
		require.Equal(t, want, got, "nothing to change")
		got, err = db.EnvironmentUpdate(ctx, &store.EnvironmentUpdateParams{ID: tn.EnvA.ID, InboxHMACDisabled: ptr(false)})
		require.NoError(t, err)
		require.Equal(t, tn.EnvA, got)
		_, err = db.EnvironmentUpdate(ctx, &store.EnvironmentUpdateParams{ID: id.New(), InboxHMACDisabled: ptr(true)})
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = db.EnvironmentUpdate(ctx, &store.EnvironmentUpdateParams{ID: id.New()})
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

// TestAPIKeySigningKeys: a key created in the clear is kept encrypted and
// signs; a key without a copy (created before migration 0013) signs once a
// copy is kept; revoked keys and other environments' never do.
func TestAPIKeySigningKeys(t *testing.T) {
	t.Parallel()
	k := keys(t, "signing-secret-0123456789abcdef")
	forEachReopenable(t, k, func(t *testing.T, db *sqlstore.DB, reopen func(sqlstore.Sealer) *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		mk := func(env store.Environment, key string, at time.Duration, keep bool) store.APIKey {
			rec := store.APIKey{ID: id.New(), EnvironmentID: env.ID, Hash: secret.HashAPIKey(key), Prefix: key[:3], CreatedAt: base.Add(at)}
			if keep {
				rec.Key = key
			}
			require.NoError(t, db.APIKeyCreate(ctx, &rec))
			require.Equal(t, keep, rec.Sealed)
			return rec
		}
		first := mk(tn.EnvA, "hk_first", 0, true)
		old := mk(tn.EnvA, "hk_old", time.Second, false)
		revoked := mk(tn.EnvA, "hk_revoked", 2*time.Second, true)
		mk(tn.EnvB, "hk_other_env", 0, true)
		require.NotContains(t, rawString(t, db, "SELECT sealed_key FROM api_keys WHERE id = $1", first.ID), "hk_first")
		require.NoError(t, db.APIKeyRevoke(ctx, &store.APIKeyRevokeParams{EnvironmentID: tn.EnvA.ID, ID: revoked.ID, Now: tn.Clock.Now()}))

		got, _, err := db.APIKeyGetByHash(ctx, first.Hash)
		require.NoError(t, err)
		require.True(t, got.Sealed)
		require.Empty(t, got.Key, "the key is never read back")
		got, _, err = db.APIKeyGetByHash(ctx, old.Hash)
		require.NoError(t, err)
		require.False(t, got.Sealed)
		signing, err := db.APIKeySigningKeys(ctx, tn.EnvA.ID)
		require.NoError(t, err)
		require.Equal(t, []string{"hk_first"}, signing)

		require.NoError(t, db.APIKeyKeepCopy(ctx, old.ID, "hk_old"))
		require.NoError(t, db.APIKeyKeepCopy(ctx, old.ID, "hk_something_else"), "a kept copy is not replaced")
		got, _, err = db.APIKeyGetByHash(ctx, old.Hash)
		require.NoError(t, err)
		require.True(t, got.Sealed, "not the cached key")
		signing, err = db.APIKeySigningKeys(ctx, tn.EnvA.ID)
		require.NoError(t, err)
		require.Equal(t, []string{"hk_first", "hk_old"}, signing, "oldest first; the revoked key is not among them")
		signing, err = db.APIKeySigningKeys(ctx, id.New())
		require.NoError(t, err)
		require.Empty(t, signing)

		_, err = reopen(keys(t, "another-secret-0123456789abcdef")).APIKeySigningKeys(ctx, tn.EnvA.ID)
		require.ErrorIs(t, err, sqlstore.ErrSecretMismatch)
	})
}

// TestSecretRotateAPIKeys: rotating the server secret re-encrypts the key
// copies (revoked ones too), and the secret check tells a wrong secret by
// them when they are the only sealed values.
func TestSecretRotateAPIKeys(t *testing.T) {
	t.Parallel()
	old, next := keys(t, "old-secret-0123456789abcdef"), keys(t, "new-secret-0123456789abcdef")
	forEachReopenable(t, old, func(t *testing.T, db *sqlstore.DB, reopen func(sqlstore.Sealer) *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		for i, key := range []string{"hk_a", "hk_b"} {
			rec := store.APIKey{ID: id.New(), EnvironmentID: tn.EnvA.ID, Hash: secret.HashAPIKey(key), Prefix: "hk_", Key: key,
				CreatedAt: base.Add(time.Duration(i) * time.Second)}
			require.NoError(t, db.APIKeyCreate(ctx, &rec))
			if i == 1 {
				require.NoError(t, db.APIKeyRevoke(ctx, &store.APIKeyRevokeParams{EnvironmentID: tn.EnvA.ID, ID: rec.ID,
					Now: tn.Clock.Now()}))
			}
		}
		require.ErrorIs(t, reopen(next).SecretCheck(ctx), sqlstore.ErrSecretMismatch, "the key copies tell a wrong secret")
		require.NoError(t, db.SecretCheck(ctx))

		st, err := db.SecretRotate(ctx, old, next)
		require.NoError(t, err)
		require.Equal(t, sqlstore.RotateStats{APIKeys: 2}, st)
		rotated := reopen(next)
		require.NoError(t, rotated.SecretCheck(ctx))
		signing, err := rotated.APIKeySigningKeys(ctx, tn.EnvA.ID)
		require.NoError(t, err)
		require.Equal(t, []string{"hk_a"}, signing)
		var sealed string
		require.NoError(t, rotated.Reader().QueryRowContext(ctx, "SELECT sealed_key FROM api_keys WHERE hash = $1",
			secret.HashAPIKey("hk_b")).Scan(&sealed))
		plain, err := next.Open(sealed)
		require.NoError(t, err, "revoked keys' copies are re-encrypted too")
		require.Equal(t, "hk_b", string(plain))
	})
}

// TestMigration0013: a store written before migration 0013 gets an
// identifier for each of its environments, HMAC required, and keys without
// copies (which do not sign until a copy is kept).
func TestMigration0013(t *testing.T) {
	t.Parallel()
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var raw *sql.DB
			var open func() (*sqlstore.DB, error)
			var err error
			switch kind {
			case "sqlite":
				path := filepath.Join(t.TempDir(), "herald.db")
				raw, err = sql.Open("sqlite", "file:"+path)
				open = func() (*sqlstore.DB, error) { return sqlstore.OpenSQLite(ctx, path, testdb.Keys(t)) }
			case "postgres":
				u := testdb.NewPostgresSchema(t)
				raw, err = sql.Open("pgx", u)
				open = func() (*sqlstore.DB, error) { return sqlstore.OpenPostgres(ctx, u, testdb.Keys(t)) }
			}
			require.NoError(t, err)
			defer raw.Close()
			raw.SetMaxOpenConns(1)
			migrateUpTo(t, raw, kind, 12)
			org, keyID := id.New(), id.New()
			envs := []string{id.New(), id.New(), id.New()}
			_, err = raw.ExecContext(ctx, "INSERT INTO organizations (id, name, created_at) VALUES ($1, 'Org', 0)", org)
			require.NoError(t, err)
			for i, e := range envs {
				_, err = raw.ExecContext(ctx, "INSERT INTO environments (id, organization_id, name, created_at) VALUES ($1, $2, $3, $4)",
					e, org, "env-"+strconv.Itoa(i), i)
				require.NoError(t, err)
			}
			_, err = raw.ExecContext(ctx, "INSERT INTO api_keys (id, environment_id, hash, prefix, created_at) VALUES ($1, $2, $3, 'hk_', 0)",
				keyID, envs[0], secret.HashAPIKey("hk_before"))
			require.NoError(t, err)

			db, err := open()
			require.NoError(t, err)
			t.Cleanup(func() { db.Close() })
			list, err := db.EnvironmentList(ctx, org)
			require.NoError(t, err)
			require.Len(t, list, 3)
			seen := map[string]bool{}
			for _, e := range list {
				require.Regexp(t, identifierRE, e.Identifier)
				require.False(t, seen[e.Identifier], "identifiers differ")
				seen[e.Identifier] = true
				require.False(t, e.InboxHMACDisabled)
				got, err := db.EnvironmentGetByIdentifier(ctx, e.Identifier)
				require.NoError(t, err)
				require.Equal(t, e, got)
			}
			k, _, err := db.APIKeyGetByHash(ctx, secret.HashAPIKey("hk_before"))
			require.NoError(t, err)
			require.False(t, k.Sealed, "a key from before has no copy")
			signing, err := db.APIKeySigningKeys(ctx, envs[0])
			require.NoError(t, err)
			require.Empty(t, signing)
			require.NoError(t, db.APIKeyKeepCopy(ctx, keyID, "hk_before"))
			signing, err = db.APIKeySigningKeys(ctx, envs[0])
			require.NoError(t, err)
			require.Equal(t, []string{"hk_before"}, signing)
		})
	}
}

// migrateUpTo applies the migrations of a dialect up to version last, as an
// older Herald did, recording them as applied.
func migrateUpTo(t *testing.T, raw *sql.DB, kind string, last int) {
	t.Helper()
	_, err := raw.Exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)")
	require.NoError(t, err)
	for _, name := range migrationNames(t, kind) {
		num, _, _ := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		require.NoError(t, err)
		if v > last {
			continue
		}
		text, err := os.ReadFile(filepath.Join("migrations", kind, name))
		require.NoError(t, err)
		_, err = raw.Exec(string(text))
		require.NoError(t, err, name)
		_, err = raw.Exec("INSERT INTO schema_migrations (version, applied_at) VALUES ($1, 0)", v)
		require.NoError(t, err)
	}
}
