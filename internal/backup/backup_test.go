package backup_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/backup"
	"github.com/herald-notify/herald/internal/config"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
)

const credentials = `{"apiKey":"SG.sealed-before-the-backup","from":"noreply@example.com"}`

// started is a data directory whose store is open, as a running server's
// is: bootstrapped, with an integration whose credentials are sealed.
type started struct {
	cfg      config.Config
	key      string // the development environment's API key
	envID    string
	integrID string
}

func start(t *testing.T, serverSecret string) started {
	t.Helper()
	ctx := context.Background()
	cfg := config.Config{DataDir: filepath.Join(t.TempDir(), "data"), Secret: serverSecret}
	a, err := app.Open(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	first, err := a.Bootstrap(ctx)
	require.NoError(t, err)
	env, err := a.Store.EnvironmentGetByName(ctx, "development")
	require.NoError(t, err)
	now := time.Now().UTC()
	in := store.Integration{ID: id.New(), OrganizationID: env.OrganizationID, EnvironmentID: env.ID, ProviderID: "sendgrid",
		Channel: "email", Kind: "provider", Name: "SendGrid", Identifier: "sendgrid-backup", Credentials: store.JSON(credentials),
		Configurations: store.JSON(`{}`), Conditions: store.JSON(`[]`), Active: true, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, a.Store.IntegrationCreate(ctx, &in))
	return started{cfg: cfg, key: first.Keys["development"], envID: env.ID, integrID: in.ID}
}

// checkRestored opens the restored store as `herald serve` would and finds
// the key, the environment and the integration's credentials as they were.
func checkRestored(t *testing.T, s started, cfg config.Config) {
	t.Helper()
	ctx := context.Background()
	a, err := app.Open(ctx, cfg)
	require.NoError(t, err, "the restored store opens with its secret")
	defer a.Close()
	k, env, err := a.Store.APIKeyGetByHash(ctx, secret.HashAPIKey(s.key))
	require.NoError(t, err, "the same API key works")
	require.Equal(t, s.envID, k.EnvironmentID)
	in, err := a.Store.IntegrationGet(ctx, store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}, s.integrID)
	require.NoError(t, err)
	require.JSONEq(t, credentials, string(in.Credentials), "sealed credentials open")
}

// entries lists a directory's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestBackupRestoreRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := start(t, "")
	outDir := t.TempDir()
	out := filepath.Join(outDir, "herald.backup")
	b, err := backup.Create(ctx, s.cfg, out, "v-test")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(s.cfg.DataDir, "secret"), b.SecretFile)
	require.Equal(t, []string{"herald.backup"}, entries(t, outDir), "no temporary file left")
	info, err := os.Stat(out)
	require.NoError(t, err)
	require.Equal(t, b.Size, info.Size())
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "it holds the secret")
	require.Equal(t, "v-test", b.Manifest.HeraldVersion)
	require.Equal(t, "sqlite", b.Manifest.Dialect)
	require.Positive(t, b.Manifest.SchemaVersion)
	require.NotNil(t, b.Manifest.Secret)

	for _, existing := range []bool{false, true} {
		parent := t.TempDir()
		cfg := config.Config{DataDir: filepath.Join(parent, "restored")}
		if existing {
			require.NoError(t, os.Mkdir(cfg.DataDir, 0o755))
		}
		r, err := backup.Restore(ctx, cfg, out)
		require.NoError(t, err)
		require.True(t, r.SecretChecked, "the archived secret opened the archived database")
		require.Equal(t, b.Manifest, r.Manifest)
		require.Equal(t, []string{"restored"}, entries(t, parent), "no temporary directory left")
		require.Equal(t, []string{"herald.db", "secret"}, entries(t, cfg.DataDir))
		dir, err := os.Stat(cfg.DataDir)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), dir.Mode().Perm())
		for _, name := range []string{"herald.db", "secret"} {
			info, err := os.Stat(filepath.Join(cfg.DataDir, name))
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), name)
		}
		want, err := os.ReadFile(s.cfg.SecretPath())
		require.NoError(t, err)
		got, err := os.ReadFile(cfg.SecretPath())
		require.NoError(t, err)
		require.Equal(t, want, got)
		checkRestored(t, s, cfg)
	}
}

func TestBackupRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := start(t, "")

	t.Run("an existing --out is left as it was", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "taken")
		require.NoError(t, os.WriteFile(out, []byte("someone's file"), 0o644))
		_, err := backup.Create(ctx, s.cfg, out, "v")
		require.ErrorIs(t, err, backup.ErrExists)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		require.Equal(t, "someone's file", string(got))
		require.Equal(t, []string{"taken"}, entries(t, filepath.Dir(out)))
	})
	t.Run("a data directory without a database is not created", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "nothing-here")
		out := filepath.Join(t.TempDir(), "b")
		_, err := backup.Create(ctx, config.Config{DataDir: dir}, out, "v")
		require.ErrorContains(t, err, "no Herald database at "+filepath.Join(dir, "herald.db"))
		require.NoDirExists(t, dir)
		require.NoFileExists(t, out)
	})
	t.Run("a secret file that does not open the store", func(t *testing.T) {
		// The server runs with HERALD_SECRET; an old file lies beside it.
		other := start(t, "the-secret-the-server-runs-with")
		require.NoError(t, os.WriteFile(other.cfg.SecretPath(), []byte("an-old-secret-that-opens-nothing\n"), 0o600))
		out := filepath.Join(t.TempDir(), "b")
		cfg := other.cfg
		cfg.Secret = ""
		_, err := backup.Create(ctx, cfg, out, "v")
		require.ErrorContains(t, err, "does not open this store's credentials")
		require.NoFileExists(t, out)
		require.Empty(t, entries(t, filepath.Dir(out)))
	})
	t.Run("PostgreSQL: use pg_dump, nothing written", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		out := filepath.Join(t.TempDir(), "b")
		_, err := backup.Create(ctx, config.Config{DataDir: dir, DatabaseURL: "postgres://127.0.0.1:1/x"}, out, "v")
		require.ErrorIs(t, err, sqlstore.ErrSnapshotUnsupported)
		require.ErrorContains(t, err, "pg_dump")
		require.ErrorContains(t, err, "HERALD_SECRET")
		require.NoFileExists(t, out)
		require.NoDirExists(t, dir)
	})
}

// TestBackupWithServerSecret: a server run with HERALD_SECRET has no secret
// file; the backup holds none, and the restore checks the database against
// HERALD_SECRET when it is given.
func TestBackupWithServerSecret(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const serverSecret = "kept-by-the-operator-0123456789"
	s := start(t, serverSecret)
	require.NoFileExists(t, s.cfg.SecretPath())
	out := filepath.Join(t.TempDir(), "b")
	b, err := backup.Create(ctx, s.cfg, out, "v")
	require.NoError(t, err)
	require.Empty(t, b.SecretFile)
	require.Nil(t, b.Manifest.Secret)

	cfg := config.Config{DataDir: filepath.Join(t.TempDir(), "wrong")}
	cfg.Secret = "not-the-secret-of-that-server"
	_, err = backup.Restore(ctx, cfg, out)
	require.ErrorContains(t, err, "HERALD_SECRET does not open the archived database")
	require.NoDirExists(t, cfg.DataDir)

	cfg = config.Config{DataDir: filepath.Join(t.TempDir(), "unchecked")}
	r, err := backup.Restore(ctx, cfg, out)
	require.NoError(t, err)
	require.False(t, r.SecretChecked, "no secret to check with")
	require.Equal(t, []string{"herald.db"}, entries(t, cfg.DataDir))

	cfg = config.Config{DataDir: filepath.Join(t.TempDir(), "checked"), Secret: serverSecret}
	r, err = backup.Restore(ctx, cfg, out)
	require.NoError(t, err)
	require.True(t, r.SecretChecked)
	checkRestored(t, s, cfg)
}

func TestRestoreRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := start(t, "")
	out := filepath.Join(t.TempDir(), "b")
	_, err := backup.Create(ctx, s.cfg, out, "v")
	require.NoError(t, err)

	t.Run("a data directory with an entry is left as it was", func(t *testing.T) {
		for _, entry := range []string{"herald.db", "notes.txt", ".hidden"} {
			parent := t.TempDir()
			dir := filepath.Join(parent, "data")
			require.NoError(t, os.Mkdir(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, entry), []byte("mine"), 0o644))
			_, err := backup.Restore(ctx, config.Config{DataDir: dir}, out)
			require.ErrorIs(t, err, backup.ErrNotEmpty)
			require.Equal(t, []string{entry}, entries(t, dir))
			got, err := os.ReadFile(filepath.Join(dir, entry))
			require.NoError(t, err)
			require.Equal(t, "mine", string(got))
			require.Equal(t, []string{"data"}, entries(t, parent), "no temporary directory")
		}
	})
	t.Run("a file where the data directory goes", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "data")
		require.NoError(t, os.WriteFile(path, nil, 0o644))
		_, err := backup.Restore(ctx, config.Config{DataDir: path}, out)
		require.ErrorContains(t, err, "is not a directory")
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		_, err := backup.Restore(ctx, config.Config{DataDir: t.TempDir(), DatabaseURL: "postgres://127.0.0.1:1/x"}, out)
		require.ErrorContains(t, err, "pg_restore")
	})

	hostile := map[string][]byte{
		"not an archive": []byte("#!/bin/sh\nrm -rf /\n"),
		"truncated":      must(os.ReadFile(out))[:200],
	}
	// A sound archive of a file that is not a Herald database.
	notHerald := filepath.Join(t.TempDir(), "other.db")
	require.NoError(t, os.WriteFile(notHerald, bytes.Repeat([]byte("not SQLite "), 1000), 0o600))
	var buf bytes.Buffer
	require.NoError(t, backup.Pack(&buf, &backup.Manifest{Dialect: "sqlite", SchemaVersion: 1}, notHerald, nil))
	hostile["not a database"] = buf.Bytes()
	// A database made by a newer Herald: a migration this one does not know.
	newer := filepath.Join(t.TempDir(), "newer.db")
	a, err := app.Open(ctx, config.Config{DataDir: t.TempDir()})
	require.NoError(t, err)
	_, err = a.Store.Writer().Exec("INSERT INTO schema_migrations (version, applied_at) VALUES (9999, 0)")
	require.NoError(t, err)
	_, err = a.Store.Writer().Exec("VACUUM INTO $1", newer)
	require.NoError(t, err)
	a.Close()
	buf.Reset()
	require.NoError(t, backup.Pack(&buf, &backup.Manifest{Dialect: "sqlite", SchemaVersion: 9999}, newer, nil))
	hostile["a newer schema"] = buf.Bytes()
	// The manifest's schema version is not the database's.
	buf.Reset()
	require.NoError(t, backup.Pack(&buf, &backup.Manifest{Dialect: "sqlite", SchemaVersion: 1}, s.cfg.SQLitePath(), nil))
	hostile["a schema version unlike the database's"] = buf.Bytes()

	for name, archive := range hostile {
		t.Run(name, func(t *testing.T) {
			from := filepath.Join(t.TempDir(), "archive")
			require.NoError(t, os.WriteFile(from, archive, 0o600))
			parent := t.TempDir()
			dir := filepath.Join(parent, "data")
			_, err := backup.Restore(ctx, config.Config{DataDir: dir}, from)
			require.Error(t, err)
			require.Empty(t, entries(t, parent), "nothing restored, nothing left")
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
