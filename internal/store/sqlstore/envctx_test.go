package sqlstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

func TestEnvironmentVariables(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		now := tn.Clock.Now()
		v, err := db.EnvironmentVariableCreate(ctx, &store.EnvironmentVariableCreateParams{Scope: tn.A, Key: "API_TOKEN", Type: "string",
			IsSecret: true, Values: []store.EnvironmentVariableValue{{EnvironmentID: tn.EnvA.ID, Value: "s3cret-a"}}, Now: now})
		require.NoError(t, err)
		require.Equal(t, []store.EnvironmentVariableValue{{EnvironmentID: tn.EnvA.ID, Value: "s3cret-a"}}, v.Values)
		_, err = db.EnvironmentVariableCreate(ctx, &store.EnvironmentVariableCreateParams{Scope: tn.B, Key: "API_TOKEN", Type: "string", Now: now})
		require.ErrorIs(t, err, store.ErrConflict, "keys are organization-wide")

		// Sealed at rest: the clear value is nowhere in the table.
		var stored string
		require.NoError(t, db.Reader().QueryRowContext(ctx, "SELECT value FROM environment_variable_values").Scan(&stored))
		require.NotContains(t, stored, "s3cret")

		// Values merge by environment.
		v, err = db.EnvironmentVariableUpdate(ctx, &store.EnvironmentVariableUpdateParams{Scope: tn.A, Key: "API_TOKEN",
			Values: []store.EnvironmentVariableValue{{EnvironmentID: tn.EnvB.ID, Value: "s3cret-b"}}, Now: now})
		require.NoError(t, err)
		require.Len(t, v.Values, 2)
		got, err := db.EnvironmentVariableValues(ctx, tn.EnvB.ID)
		require.NoError(t, err)
		require.Equal(t, map[string]string{"API_TOKEN": "s3cret-b"}, got)
		got, err = db.EnvironmentVariableValues(ctx, tn.EnvA.ID)
		require.NoError(t, err)
		require.Equal(t, map[string]string{"API_TOKEN": "s3cret-a"}, got)

		// No longer secret: stored in the clear, read alike.
		v, err = db.EnvironmentVariableUpdate(ctx, &store.EnvironmentVariableUpdateParams{Scope: tn.A, Key: "API_TOKEN",
			IsSecret: new(bool), NewKey: ptr("TOKEN"), Now: now})
		require.NoError(t, err)
		require.Equal(t, "TOKEN", v.Key)
		require.False(t, v.IsSecret)
		got, err = db.EnvironmentVariableValues(ctx, tn.EnvA.ID)
		require.NoError(t, err)
		require.Equal(t, map[string]string{"TOKEN": "s3cret-a"}, got)

		_, err = db.EnvironmentVariableCreate(ctx, &store.EnvironmentVariableCreateParams{Scope: tn.A, Key: "BASE_URL", Type: "string", Now: now})
		require.NoError(t, err)
		_, err = db.EnvironmentVariableUpdate(ctx, &store.EnvironmentVariableUpdateParams{Scope: tn.A, Key: "BASE_URL", NewKey: ptr("TOKEN"), Now: now})
		require.ErrorIs(t, err, store.ErrConflict)
		list, err := db.EnvironmentVariableList(ctx, tn.A, "url")
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.Equal(t, "BASE_URL", list[0].Key)

		// Another organization sees none of it.
		other := otherOrganization(t, db)
		_, err = db.EnvironmentVariableGet(ctx, other, "TOKEN")
		require.ErrorIs(t, err, store.ErrNotFound)
		list, err = db.EnvironmentVariableList(ctx, other, "")
		require.NoError(t, err)
		require.Empty(t, list)
		require.ErrorIs(t, db.EnvironmentVariableDelete(ctx, other, "TOKEN"), store.ErrNotFound)

		require.NoError(t, db.EnvironmentVariableDelete(ctx, tn.A, "TOKEN"))
		_, err = db.EnvironmentVariableGet(ctx, tn.A, "TOKEN")
		require.ErrorIs(t, err, store.ErrNotFound)
		got, err = db.EnvironmentVariableValues(ctx, tn.EnvA.ID)
		require.NoError(t, err)
		require.Empty(t, got)
	})
}

// TestEnvironmentVariableSecretRotate: a secret value opens with the new
// server secret after a rotation.
func TestEnvironmentVariableSecretRotate(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		_, err := db.EnvironmentVariableCreate(ctx, &store.EnvironmentVariableCreateParams{Scope: tn.A, Key: "K", Type: "string",
			IsSecret: true, Values: []store.EnvironmentVariableValue{{EnvironmentID: tn.EnvA.ID, Value: "v"}}, Now: tn.Clock.Now()})
		require.NoError(t, err)
		from, err := secret.Derive("test-secret-0123456789abcdef")
		require.NoError(t, err)
		to, err := secret.Derive("another-secret-0123456789abcdef")
		require.NoError(t, err)
		st, err := db.SecretRotate(ctx, from, to)
		require.NoError(t, err)
		require.Equal(t, 1, st.Variables)
		var stored string
		require.NoError(t, db.Reader().QueryRowContext(ctx, "SELECT value FROM environment_variable_values").Scan(&stored))
		plain, err := to.Open(stored)
		require.NoError(t, err)
		require.Equal(t, "v", string(plain))
	})
}

func TestContexts(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		ref := store.ContextRef{Type: "tenant", ContextID: "acme", Data: store.JSON(`{"name":"Acme"}`)}
		c, err := db.ContextCreate(ctx, &store.ContextCreateParams{Scope: tn.A, ContextRef: ref, Now: tn.Clock.Now()})
		require.NoError(t, err)
		require.Equal(t, "tenant:acme", c.Key())
		_, err = db.ContextCreate(ctx, &store.ContextCreateParams{Scope: tn.A, ContextRef: ref, Now: tn.Clock.Now()})
		require.ErrorIs(t, err, store.ErrConflict)
		_, err = db.ContextCreate(ctx, &store.ContextCreateParams{Scope: tn.B, ContextRef: ref, Now: tn.Clock.Now()})
		require.NoError(t, err, "environment-scoped")

		// A trigger uses an existing context as stored and creates a missing one.
		got, err := db.ContextResolve(ctx, &store.ContextResolveParams{Scope: tn.A, Refs: []store.ContextRef{
			{Type: "tenant", ContextID: "acme", Data: store.JSON(`{"name":"ignored"}`)}, {Type: "project", ContextID: "x"}},
			Now: tn.Clock.Advance(1000)})
		require.NoError(t, err)
		require.JSONEq(t, `{"name":"Acme"}`, string(got[0].Data))
		require.JSONEq(t, `{}`, string(got[1].Data))
		_, err = db.ContextGet(ctx, tn.A, "project", "x")
		require.NoError(t, err)

		up, err := db.ContextUpdate(ctx, &store.ContextUpdateParams{Scope: tn.A, ContextRef: store.ContextRef{Type: "tenant",
			ContextID: "acme", Data: store.JSON(`{"plan":"pro"}`)}, Now: tn.Clock.Advance(1000)})
		require.NoError(t, err)
		require.JSONEq(t, `{"plan":"pro"}`, string(up.Data), "replaced, not merged")

		list, more, total, err := db.ContextList(ctx, &store.ContextListParams{Scope: tn.A, TopicPage: store.TopicPage{Limit: 1, Descending: true}})
		require.NoError(t, err)
		require.True(t, more)
		require.Equal(t, 2, total)
		require.Equal(t, "project:x", list[0].Key())
		list, _, total, err = db.ContextList(ctx, &store.ContextListParams{Scope: tn.A, TopicPage: store.TopicPage{Limit: 10}, Search: "t:ac"})
		require.NoError(t, err)
		require.Equal(t, 1, total)
		require.Equal(t, "tenant:acme", list[0].Key())
		list, _, _, err = db.ContextList(ctx, &store.ContextListParams{Scope: tn.A, TopicPage: store.TopicPage{Limit: 10}, Search: "%"})
		require.NoError(t, err)
		require.Empty(t, list, "search characters are literal")

		require.NoError(t, db.ContextDelete(ctx, tn.A, "tenant", "acme"))
		require.ErrorIs(t, db.ContextDelete(ctx, tn.A, "tenant", "acme"), store.ErrNotFound)
		_, err = db.ContextGet(ctx, tn.B, "tenant", "acme")
		require.NoError(t, err, "the other environment's context is left")
	})
}
