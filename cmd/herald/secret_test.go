package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/config"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/testdb"
)

const (
	firstSecret  = "first-secret-0123456789abcdef"
	secondSecret = "second-secret-0123456789abcdef"
	credential   = "SG.credential-sealed-at-rest"
)

// addIntegration stores an integration with credentials and a signing key.
func addIntegration(t *testing.T, cfg config.Config) string {
	t.Helper()
	ctx := context.Background()
	a, err := app.Open(ctx, cfg)
	require.NoError(t, err)
	defer a.Close()
	_, err = a.Bootstrap(ctx)
	require.NoError(t, err)
	env, err := a.Store.EnvironmentGetByName(ctx, "development")
	require.NoError(t, err)
	now := time.Now()
	in := store.Integration{ID: id.New(), OrganizationID: env.OrganizationID, EnvironmentID: env.ID, ProviderID: "sendgrid",
		Channel: "email", Kind: "delivery", Name: "Mail", Identifier: "mail", Credentials: store.JSON(`{"apiKey":"` + credential + `"}`),
		Configurations: store.JSON(`{"inboundWebhookSigningKey":"whsec_x"}`), Active: true, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, a.Store.IntegrationCreate(ctx, &in))
	return in.ID
}

// requireReadable opens the store with cfg and reads the integration back.
func requireReadable(t *testing.T, cfg config.Config, integrationID string) {
	t.Helper()
	ctx := context.Background()
	a, err := app.Open(ctx, cfg)
	require.NoError(t, err)
	defer a.Close()
	env, err := a.Store.EnvironmentGetByName(ctx, "development")
	require.NoError(t, err)
	in, err := a.Store.IntegrationGet(ctx, store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}, integrationID)
	require.NoError(t, err)
	require.JSONEq(t, `{"apiKey":"`+credential+`"}`, string(in.Credentials))
	require.JSONEq(t, `{"inboundWebhookSigningKey":"whsec_x"}`, string(in.Configurations))
}

// TestChangedSecretRefusedThenRotated, on each store: a changed HERALD_SECRET
// is refused at start with a message naming the fix (no 500s later);
// `herald secret rotate` re-encrypts the store, after which the new secret
// starts and the old one is refused; a wrong --old changes nothing.
func TestChangedSecretRefusedThenRotated(t *testing.T) {
	t.Parallel()
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			cfg := config.Config{DataDir: t.TempDir(), Secret: firstSecret}
			if kind == "postgres" {
				cfg.DatabaseURL = testdb.NewPostgresSchema(t)
			}
			storeFlags := []string{"--data-dir", cfg.DataDir}
			if cfg.DatabaseURL != "" {
				storeFlags = append(storeFlags, "--database-url", cfg.DatabaseURL)
			}
			iid := addIntegration(t, cfg)

			changed := cfg
			changed.Secret = secondSecret
			_, err := app.Open(context.Background(), changed)
			require.ErrorIs(t, err, app.ErrSecretChanged)
			var out, logs syncBuffer
			err = serve(context.Background(), config.Config{Addr: "127.0.0.1:0", DataDir: cfg.DataDir, DatabaseURL: cfg.DatabaseURL,
				Secret: secondSecret, Role: "all"}, testConsole(&out, &logs, nil))
			require.ErrorIs(t, err, app.ErrSecretChanged)
			require.ErrorContains(t, err, "HERALD_SECRET")
			require.ErrorContains(t, err, "herald secret rotate --old")
			require.NotContains(t, err.Error(), secondSecret, "the message never shows a secret")
			_, err = run(t, append(storeFlags, "--secret", secondSecret, "migrate")...)
			require.ErrorIs(t, err, app.ErrSecretChanged)

			// A wrong --old changes nothing.
			_, err = run(t, append(storeFlags, "secret", "rotate", "--old", "not-the-secret-0123456789", "--new", secondSecret)...)
			require.ErrorContains(t, err, "--old does not decrypt")
			requireReadable(t, cfg, iid)

			msg, err := run(t, append(storeFlags, "secret", "rotate", "--old", firstSecret, "--new", secondSecret)...)
			require.NoError(t, err)
			require.Contains(t, msg, "re-encrypted 3 integrations") // two built-in in-app integrations and ours
			require.Contains(t, msg, "and 2 API key copies")        // the first start's keys
			require.Contains(t, msg, "start every Herald process of this store with the new secret")
			requireReadable(t, changed, iid)
			_, err = app.Open(context.Background(), cfg)
			require.ErrorIs(t, err, app.ErrSecretChanged, "the old secret no longer starts")
		})
	}
}

// TestRotateGeneratedSecret: with the secret generated into the data
// directory (no HERALD_SECRET), rotating replaces it in the file. (Not
// parallel: it sets HERALD_NEW_SECRET.)
func TestRotateGeneratedSecret(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Config{DataDir: dir}
	iid := addIntegration(t, cfg)
	b, err := os.ReadFile(filepath.Join(dir, "secret"))
	require.NoError(t, err)
	generated := strings.TrimSpace(string(b))

	t.Setenv("HERALD_NEW_SECRET", secondSecret) // the new secret need not be on the command line
	msg, err := run(t, "--data-dir", dir, "secret", "rotate", "--old", generated)
	require.NoError(t, err)
	require.Contains(t, msg, filepath.Join(dir, "secret")+" now holds the new secret")
	b, err = os.ReadFile(filepath.Join(dir, "secret"))
	require.NoError(t, err)
	require.Equal(t, secondSecret+"\n", string(b))
	info, err := os.Stat(filepath.Join(dir, "secret"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	requireReadable(t, cfg, iid)

	_, err = run(t, "--data-dir", dir, "secret", "rotate", "--old", secondSecret, "--new", secondSecret)
	require.Error(t, err)
	_, err = run(t, "--data-dir", dir, "secret", "rotate", "--old", secondSecret, "--new", "short")
	require.ErrorContains(t, err, "--new")
	require.False(t, errors.Is(err, app.ErrSecretChanged))
}
