package sqlstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// bootstrapParams is a complete first start: an organization, its owner, two
// environments with a key and an in-app integration each.
func bootstrapParams(name string) *store.BootstrapParams {
	org := store.Organization{ID: id.New(), Name: name, CreatedAt: base}
	p := &store.BootstrapParams{
		Organization: org,
		Owner:        store.Member{ID: id.New(), OrganizationID: org.ID, Email: "owner@example.com", Role: "owner", CreatedAt: base},
	}
	for i, envName := range []string{"development", "production"} {
		env := store.Environment{ID: id.New(), OrganizationID: org.ID, Name: envName, CreatedAt: base.Add(time.Duration(i) * time.Millisecond)}
		p.Environments = append(p.Environments, env)
		p.APIKeys = append(p.APIKeys, store.APIKey{ID: id.New(), EnvironmentID: env.ID, Hash: secret.HashAPIKey(secret.NewAPIKey()), Prefix: "hk_", CreatedAt: base})
		p.Integrations = append(p.Integrations, store.Integration{
			ID: id.New(), OrganizationID: org.ID, EnvironmentID: env.ID, ProviderID: "svc", Channel: "in_app",
			Kind: "delivery", Name: "Inbox", Identifier: "inbox", Active: true, Primary: true, CreatedAt: base, UpdatedAt: base,
		})
	}
	return p
}

func TestBootstrap(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		p := bootstrapParams("First")
		created, err := db.Bootstrap(ctx, p)
		require.NoError(t, err)
		require.True(t, created)

		again := bootstrapParams("Second")
		created, err = db.Bootstrap(ctx, again)
		require.NoError(t, err)
		require.False(t, created, "a store with an organization is not bootstrapped again")
		require.Equal(t, 1, count(t, db, "SELECT count(*) FROM organizations"))
		require.Equal(t, 2, count(t, db, "SELECT count(*) FROM environments"))
		require.Equal(t, 2, count(t, db, "SELECT count(*) FROM api_keys"))
		require.Equal(t, 2, count(t, db, "SELECT count(*) FROM integrations"))

		owner, err := db.MemberGetOwner(ctx, p.Organization.ID)
		require.NoError(t, err)
		require.Equal(t, p.Owner, owner)
		_, err = db.MemberGetOwner(ctx, again.Organization.ID)
		require.ErrorIs(t, err, store.ErrNotFound)

		for i, env := range p.Environments {
			got, err := db.EnvironmentGetByName(ctx, env.Name)
			require.NoError(t, err)
			require.Equal(t, env, got)
			got, err = db.EnvironmentGetByID(ctx, env.ID)
			require.NoError(t, err)
			require.Equal(t, env, got)

			k, kenv, err := db.APIKeyGetByHash(ctx, p.APIKeys[i].Hash)
			require.NoError(t, err)
			require.Equal(t, p.APIKeys[i], k)
			require.Equal(t, env, kenv)

			ins, err := db.IntegrationList(ctx, &store.IntegrationListParams{OrganizationID: p.Organization.ID, EnvironmentID: env.ID})
			require.NoError(t, err)
			require.Len(t, ins, 1)
			require.True(t, ins[0].Primary)
			require.True(t, ins[0].Active)
		}
		_, err = db.EnvironmentGetByName(ctx, "staging")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = db.EnvironmentGetByID(ctx, id.New())
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

func TestBootstrapConcurrent(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		const n = 8
		results := make([]bool, n)
		errs := parallel(n, func(i int) error {
			var err error
			results[i], err = db.Bootstrap(t.Context(), bootstrapParams("Org"))
			return err
		})
		created := 0
		for i := range n {
			require.NoError(t, errs[i])
			if results[i] {
				created++
			}
		}
		require.Equal(t, 1, created)
		require.Equal(t, 1, count(t, db, "SELECT count(*) FROM organizations"))
		require.Equal(t, 2, count(t, db, "SELECT count(*) FROM environments"))
		require.Equal(t, 1, count(t, db, "SELECT count(*) FROM members"))
	})
}

func TestAPIKeys(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		keyA1 := store.APIKey{ID: id.New(), EnvironmentID: tn.EnvA.ID, Hash: secret.HashAPIKey("key-a1"), Prefix: "key-a1", CreatedAt: base}
		keyA2 := store.APIKey{ID: id.New(), EnvironmentID: tn.EnvA.ID, Hash: secret.HashAPIKey("key-a2"), Prefix: "key-a2", CreatedAt: base.Add(time.Second)}
		keyB := store.APIKey{ID: id.New(), EnvironmentID: tn.EnvB.ID, Hash: secret.HashAPIKey("key-b"), Prefix: "key-b", CreatedAt: base}
		for _, k := range []store.APIKey{keyA1, keyA2, keyB} {
			require.NoError(t, db.APIKeyCreate(ctx, &k))
		}
		dup := keyB
		dup.ID = id.New()
		require.Error(t, db.APIKeyCreate(ctx, &dup), "a hash is unique")

		k, env, err := db.APIKeyGetByHash(ctx, keyA2.Hash)
		require.NoError(t, err)
		require.Equal(t, keyA2, k)
		require.Equal(t, tn.EnvA, env)
		_, _, err = db.APIKeyGetByHash(ctx, secret.HashAPIKey("unknown"))
		require.ErrorIs(t, err, store.ErrNotFound)

		list, err := db.APIKeyList(ctx, tn.EnvA.ID)
		require.NoError(t, err)
		require.Equal(t, []store.APIKey{keyA1, keyA2}, list, "oldest first, only this environment")

		// Revoking through another environment finds nothing and changes nothing.
		require.ErrorIs(t, db.APIKeyRevoke(ctx, &store.APIKeyRevokeParams{EnvironmentID: tn.EnvB.ID, ID: keyA1.ID,
			Now: tn.Clock.Now()}), store.ErrNotFound)
		_, _, err = db.APIKeyGetByHash(ctx, keyA1.Hash)
		require.NoError(t, err)

		tn.Clock.Advance(time.Minute)
		require.NoError(t, db.APIKeyRevoke(ctx, &store.APIKeyRevokeParams{EnvironmentID: tn.EnvA.ID, ID: keyA1.ID, Now: tn.Clock.Now()}))
		_, _, err = db.APIKeyGetByHash(ctx, keyA1.Hash)
		require.ErrorIs(t, err, store.ErrNotFound, "a revoked key no longer authenticates")
		require.ErrorIs(t, db.APIKeyRevoke(ctx, &store.APIKeyRevokeParams{EnvironmentID: tn.EnvA.ID, ID: keyA1.ID,
			Now: tn.Clock.Now()}), store.ErrNotFound, "already revoked")
		require.ErrorIs(t, db.APIKeyRevoke(ctx, &store.APIKeyRevokeParams{EnvironmentID: tn.EnvA.ID, ID: id.New(),
			Now: tn.Clock.Now()}), store.ErrNotFound)

		list, err = db.APIKeyList(ctx, tn.EnvA.ID)
		require.NoError(t, err)
		require.Len(t, list, 2)
		require.NotNil(t, list[0].RevokedAt)
		require.True(t, list[0].RevokedAt.Equal(base.Add(time.Minute)))
		require.Nil(t, list[1].RevokedAt)
		_, _, err = db.APIKeyGetByHash(ctx, keyA2.Hash)
		require.NoError(t, err, "other keys stay valid")
	})
}
