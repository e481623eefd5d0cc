package sqlstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

const signingKey = "whsec_PLAINTEXT_SIGNING_KEY_7"

func keys(t *testing.T, s string) *secret.Keys {
	t.Helper()
	k, err := secret.Derive(s)
	require.NoError(t, err)
	return k
}

// forEachReopenable runs fn on each store, with a function that opens the
// same database with other keys.
func forEachReopenable(t *testing.T, k *secret.Keys, fn func(t *testing.T, db *sqlstore.DB, reopen func(sqlstore.Sealer) *sqlstore.DB)) {
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			db, reopen := testdb.Reopenable(t, kind, k)
			fn(t, db, reopen)
		})
	}
}

// TestIntegrationSecretConfigurations: a configurations object's secret
// fields are sealed at rest apart from the others, and come back in clear.
func TestIntegrationSecretConfigurations(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		in := newIntegration(tn.A, "twilio", "sms", "sms-main", true, 0)
		in.Configurations = store.JSON(`{"inboundWebhookEnabled":true,"inboundWebhookSigningKey":"` + signingKey + `"}`)
		in = create(t, db, in)

		require.JSONEq(t, string(in.Configurations), string(get(t, db, tn.A, in.ID).Configurations))
		public := rawString(t, db, "SELECT configurations FROM integrations WHERE id = $1", in.ID)
		require.JSONEq(t, `{"inboundWebhookEnabled":true}`, public, "only the public fields are in the clear")
		sealed := rawString(t, db, "SELECT secret_configurations FROM integrations WHERE id = $1", in.ID)
		require.NotEmpty(t, sealed)
		require.NotContains(t, sealed, signingKey)
		require.NotContains(t, sealed, "inboundWebhookSigningKey")

		list, err := db.IntegrationList(t.Context(), &store.IntegrationListParams{OrganizationID: tn.Org.ID})
		require.NoError(t, err)
		for _, it := range list {
			if it.ID == in.ID {
				require.JSONEq(t, string(in.Configurations), string(it.Configurations))
			}
		}
		primary, err := db.IntegrationSetPrimary(t.Context(), &store.IntegrationSetPrimaryParams{Scope: tn.A, ID: in.ID,
			Now: tn.Clock.Now()})
		require.NoError(t, err)
		require.JSONEq(t, string(in.Configurations), string(primary.Configurations))

		// Updating without the secret field drops it; a configurations
		// object without secrets is kept as it was written.
		in.Configurations = store.JSON(`{"inboundWebhookEnabled":false}`)
		require.NoError(t, db.IntegrationUpdate(t.Context(), &in))
		require.JSONEq(t, `{"inboundWebhookEnabled":false}`, string(get(t, db, tn.A, in.ID).Configurations))
		require.Empty(t, rawString(t, db, "SELECT secret_configurations FROM integrations WHERE id = $1", in.ID))
		in.Configurations = store.JSON(`{"inboundWebhookSigningKey":"` + signingKey + `"}`)
		require.NoError(t, db.IntegrationUpdate(t.Context(), &in))
		require.JSONEq(t, string(in.Configurations), string(get(t, db, tn.A, in.ID).Configurations))
		require.JSONEq(t, `{}`, rawString(t, db, "SELECT configurations FROM integrations WHERE id = $1", in.ID))
	})
}

// TestIntegrationSealSecrets: rows written before secret fields were sealed
// keep them in the clear; they read the same, and the sweep at start seals
// them once.
func TestIntegrationSealSecrets(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		in := create(t, db, newIntegration(tn.A, "twilio", "sms", "legacy", true, 0))
		other := create(t, db, newIntegration(tn.A, "sendgrid", "email", "plain", true, time.Second))
		legacy := `{"inboundWebhookEnabled":true,"inboundWebhookSigningKey":"` + signingKey + `"}`
		_, err := db.Writer().Exec("UPDATE integrations SET configurations = $1 WHERE id = $2", legacy, in.ID)
		require.NoError(t, err)
		require.JSONEq(t, legacy, string(get(t, db, tn.A, in.ID).Configurations), "read as before")

		n, err := db.IntegrationSealSecrets(t.Context())
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.JSONEq(t, `{"inboundWebhookEnabled":true}`, rawString(t, db, "SELECT configurations FROM integrations WHERE id = $1", in.ID))
		require.NotContains(t, rawString(t, db, "SELECT secret_configurations FROM integrations WHERE id = $1", in.ID), signingKey)
		got := get(t, db, tn.A, in.ID)
		require.JSONEq(t, legacy, string(got.Configurations))
		require.JSONEq(t, string(in.Credentials), string(got.Credentials), "credentials untouched")
		require.JSONEq(t, `{}`, string(get(t, db, tn.A, other.ID).Configurations), "others untouched")

		n, err = db.IntegrationSealSecrets(t.Context())
		require.NoError(t, err)
		require.Zero(t, n, "nothing left to seal")
	})
}

// TestSecretCheck: the first start records a check value; a store opened
// with another secret is refused, also when it has no check value yet but
// holds sealed credentials (written by a Herald that had none).
func TestSecretCheck(t *testing.T) {
	t.Parallel()
	old, other := keys(t, "old-secret-0123456789abcdef"), keys(t, "other-secret-0123456789abcdef")
	forEachReopenable(t, old, func(t *testing.T, db *sqlstore.DB, reopen func(sqlstore.Sealer) *sqlstore.DB) {
		tn := setup(t, db)
		create(t, db, newIntegration(tn.A, "sendgrid", "email", "mail", true, 0))
		require.Zero(t, count(t, db, "SELECT count(*) FROM settings"))

		// A store sealed before check values existed: the sealed values tell.
		require.ErrorIs(t, reopen(other).SecretCheck(t.Context()), sqlstore.ErrSecretMismatch)
		require.Zero(t, count(t, db, "SELECT count(*) FROM settings"), "no check value written by a wrong secret")

		require.NoError(t, db.SecretCheck(t.Context()))
		require.Equal(t, 1, count(t, db, "SELECT count(*) FROM settings"))
		require.NoError(t, db.SecretCheck(t.Context()), "again")
		require.NoError(t, reopen(old).SecretCheck(t.Context()), "the same secret, another process")

		// With the check value, even a store without sealed values tells.
		_, err := db.Writer().Exec("UPDATE integrations SET credentials = ''")
		require.NoError(t, err)
		require.ErrorIs(t, reopen(other).SecretCheck(t.Context()), sqlstore.ErrSecretMismatch)
	})
}

// TestSecretRotate: every sealed value is re-encrypted in one go, and the
// store then opens with the new secret only; the wrong old secret changes
// nothing.
func TestSecretRotate(t *testing.T) {
	t.Parallel()
	old, next := keys(t, "old-secret-0123456789abcdef"), keys(t, "new-secret-0123456789abcdef")
	forEachReopenable(t, old, func(t *testing.T, db *sqlstore.DB, reopen func(sqlstore.Sealer) *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		require.NoError(t, db.SecretCheck(ctx))
		withSecret := newIntegration(tn.A, "twilio", "sms", "sms", true, 0)
		withSecret.Configurations = store.JSON(`{"inboundWebhookEnabled":true,"inboundWebhookSigningKey":"` + signingKey + `"}`)
		withSecret = create(t, db, withSecret)
		deleted := create(t, db, newIntegration(tn.B, "sendgrid", "email", "gone", true, time.Second))
		require.NoError(t, db.IntegrationDelete(ctx, &store.IntegrationDeleteParams{Scope: tn.B, ID: deleted.ID, DeletedBy: "me",
			Now: tn.Clock.Now()}))
		bare := newIntegration(tn.A, "svc", "in_app", "inbox", true, 2*time.Second)
		bare.Credentials = nil
		bare = create(t, db, bare)
		legacy := create(t, db, newIntegration(tn.B, "plivo", "sms", "legacy", true, 3*time.Second))
		legacyConfs := `{"inboundWebhookSigningKey":"legacy-key"}`
		_, err := db.Writer().Exec("UPDATE integrations SET configurations = $1 WHERE id = $2", legacyConfs, legacy.ID)
		require.NoError(t, err)
		// Stored answers: a session's (sealed) and an API key's (in the clear).
		for _, k := range []struct{ key, body string }{{"session", old.Seal([]byte(`{"credentials":{"apiKey":"x"}}`))}, {"apikey", `{"ok":true}`}} {
			_, started, err := db.IdempotencyBegin(ctx, &store.IdempotencyBeginParams{Scope: tn.A, Key: k.key, RequestHash: "h", Now: base})
			require.NoError(t, err)
			require.True(t, started)
			require.NoError(t, db.IdempotencyFinish(ctx, &store.IdempotencyFinishParams{Scope: tn.A, Key: k.key, Status: 201,
				Body: []byte(k.body)}))
		}
		before := rawString(t, db, "SELECT credentials FROM integrations WHERE id = $1", withSecret.ID)

		// The wrong old secret: refused, nothing changed.
		_, err = db.SecretRotate(ctx, next, next)
		require.ErrorIs(t, err, sqlstore.ErrSecretMismatch)
		require.Equal(t, before, rawString(t, db, "SELECT credentials FROM integrations WHERE id = $1", withSecret.ID))

		st, err := db.SecretRotate(ctx, old, next)
		require.NoError(t, err)
		require.Equal(t, sqlstore.RotateStats{Integrations: 4, IdempotentResponses: 1}, st)

		require.ErrorIs(t, reopen(old).SecretCheck(ctx), sqlstore.ErrSecretMismatch, "the old secret no longer opens the store")
		rotated := reopen(next)
		require.NoError(t, rotated.SecretCheck(ctx))
		got := get(t, rotated, tn.A, withSecret.ID)
		require.JSONEq(t, string(withSecret.Credentials), string(got.Credentials))
		require.JSONEq(t, string(withSecret.Configurations), string(got.Configurations))
		require.Empty(t, get(t, rotated, tn.A, bare.ID).Credentials)
		got = get(t, rotated, tn.B, legacy.ID)
		require.JSONEq(t, legacyConfs, string(got.Configurations))
		require.NotContains(t, rawString(t, db, "SELECT configurations FROM integrations WHERE id = $1", legacy.ID), "legacy-key",
			"a secret left in the clear is sealed on the way")
		var deletedCreds string
		require.NoError(t, rotated.Reader().QueryRow("SELECT credentials FROM integrations WHERE id = $1", deleted.ID).Scan(&deletedCreds))
		plain, err := next.Open(deletedCreds)
		require.NoError(t, err, "deleted integrations are re-encrypted too")
		require.JSONEq(t, string(deleted.Credentials), string(plain))

		rec, started, err := rotated.IdempotencyBegin(ctx, &store.IdempotencyBeginParams{Scope: tn.A, Key: "session",
			RequestHash: "h", Now: base})
		require.NoError(t, err)
		require.False(t, started)
		plain, err = next.Open(string(rec.Body))
		require.NoError(t, err)
		require.JSONEq(t, `{"credentials":{"apiKey":"x"}}`, string(plain))
		rec, _, err = rotated.IdempotencyBegin(ctx, &store.IdempotencyBeginParams{Scope: tn.A, Key: "apikey", RequestHash: "h", Now: base})
		require.NoError(t, err)
		require.JSONEq(t, `{"ok":true}`, string(rec.Body), "answers in the clear are left alone")
	})
}
