// Package app assembles Herald from its configuration: it resolves the
// server secret, opens and migrates the store, and creates the first
// organization on an empty store. cmd/herald only wires flags to it.
package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/config"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/tenant"
)

// App is an opened Herald: its store and keys.
type App struct {
	Config config.Config
	Store  *sqlstore.DB
	Keys   *secret.Keys
}

// Open resolves the secret and opens (migrating) the configured store. It
// refuses a configuration that must not start, and a server secret that
// does not open the values the store encrypted (ErrSecretChanged).
func Open(ctx context.Context, cfg config.Config) (*App, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sec, err := resolveSecret(cfg)
	if err != nil {
		return nil, err
	}
	keys, err := secret.Derive(sec)
	if err != nil {
		return nil, err
	}
	db, err := openStore(ctx, cfg, keys)
	if err != nil {
		return nil, err
	}
	if err := db.SecretCheck(ctx); err != nil {
		db.Close()
		if errors.Is(err, sqlstore.ErrSecretMismatch) {
			return nil, secretChanged(cfg)
		}
		return nil, err
	}
	// Rows written before secret configuration fields were sealed.
	if _, err := db.IntegrationSealSecrets(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := keepKeyCopy(ctx, db, cfg.APIKey); err != nil {
		db.Close()
		return nil, err
	}
	return &App{Config: cfg, Store: db, Keys: keys}, nil
}

// keepKeyCopy keeps an encrypted copy of the configured API key
// (HERALD_API_KEY) when the store has that key without one, as it has when
// the key was created before migration 0013: the key then signs inbox
// subscriberHash values from the start.
func keepKeyCopy(ctx context.Context, db *sqlstore.DB, key string) error {
	if key == "" {
		return nil
	}
	k, _, err := db.APIKeyGetByHash(ctx, secret.HashAPIKey(key))
	if errors.Is(err, store.ErrNotFound) || (err == nil && k.Sealed) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("app: looking up HERALD_API_KEY: %w", err)
	}
	return db.APIKeyKeepCopy(ctx, k.ID, key)
}

// ErrSecretChanged is returned by Open when the server secret does not open
// the values the store encrypted.
var ErrSecretChanged = errors.New("the server secret was changed")

func secretChanged(cfg config.Config) error {
	source := "HERALD_SECRET (--secret)"
	if cfg.Secret == "" {
		source = "the server secret in " + cfg.SecretPath()
	}
	return fmt.Errorf("app: %w: %s does not decrypt the credentials this store encrypted with its previous secret."+
		" Start Herald with the previous secret, or re-encrypt the store: stop every Herald process of this store, then run"+
		" `herald secret rotate --old <previous secret> --new <new secret>` with the same --data-dir/--database-url", ErrSecretChanged, source)
}

func openStore(ctx context.Context, cfg config.Config, keys *secret.Keys) (*sqlstore.DB, error) {
	switch {
	case cfg.Postgres():
		return sqlstore.OpenPostgres(ctx, cfg.DatabaseURL, keys)
	case cfg.DatabaseURL != "":
		return nil, fmt.Errorf("app: --database-url must be a postgres:// URL (leave it empty for the embedded SQLite store)")
	}
	return sqlstore.OpenSQLite(ctx, cfg.SQLitePath(), keys)
}

// Rotation is what RotateSecret did.
type Rotation struct {
	sqlstore.RotateStats
	// SecretFile is the data directory's secret file when RotateSecret
	// replaced the old secret in it with the new one, else empty.
	SecretFile string
}

// RotateSecret re-encrypts every value the store sealed with oldSecret so
// that it opens with newSecret, in one transaction. When the store's secret
// is the one generated into the data directory (no HERALD_SECRET) and it
// is oldSecret, the file then holds newSecret. Every Herald process of the
// store should be stopped first: one still running would keep encrypting
// with the old secret.
func RotateSecret(ctx context.Context, cfg config.Config, oldSecret, newSecret string) (Rotation, error) {
	if oldSecret == newSecret {
		return Rotation{}, errors.New("app: --old and --new are the same secret")
	}
	oldKeys, err := secret.Derive(oldSecret)
	if err != nil {
		return Rotation{}, fmt.Errorf("--old: %w", err)
	}
	newKeys, err := secret.Derive(newSecret)
	if err != nil {
		return Rotation{}, fmt.Errorf("--new: %w", err)
	}
	db, err := openStore(ctx, cfg, oldKeys)
	if err != nil {
		return Rotation{}, err
	}
	defer db.Close()
	st, err := db.SecretRotate(ctx, oldKeys, newKeys)
	if errors.Is(err, sqlstore.ErrSecretMismatch) {
		return Rotation{}, fmt.Errorf("app: --old does not decrypt this store's values; nothing was changed (%w)", err)
	}
	if err != nil {
		return Rotation{}, err
	}
	r := Rotation{RotateStats: st}
	if cfg.Secret == "" {
		if b, err := os.ReadFile(cfg.SecretPath()); err == nil && strings.TrimSpace(string(b)) == oldSecret {
			if err := replaceFile(cfg.SecretPath(), newSecret+"\n"); err != nil {
				return r, fmt.Errorf("app: the store was re-encrypted, but %s still holds the old secret: %w", cfg.SecretPath(), err)
			}
			r.SecretFile = cfg.SecretPath()
		}
	}
	return r, nil
}

// replaceFile writes content to path atomically, readable by its owner only.
func replaceFile(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".secret-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Close closes the store.
func (a *App) Close() error { return a.Store.Close() }

// resolveSecret returns HERALD_SECRET, or the secret kept in the data
// directory, generating it on first start.
func resolveSecret(cfg config.Config) (string, error) {
	if cfg.Secret != "" {
		return cfg.Secret, nil
	}
	b, err := os.ReadFile(cfg.SecretPath())
	if err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("app: reading the secret: %w", err)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return "", fmt.Errorf("app: %w", err)
	}
	sec := secret.Generate()
	f, err := os.OpenFile(cfg.SecretPath(), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return resolveSecret(cfg) // another process won the race
	}
	if err != nil {
		return "", fmt.Errorf("app: writing the secret: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(sec + "\n"); err != nil {
		return "", fmt.Errorf("app: writing the secret: %w", err)
	}
	return sec, f.Sync()
}

// Environments created on first start.
var firstEnvironments = []string{"development", "production"}

// FirstStart is what Bootstrap created.
type FirstStart struct {
	// Keys maps environment name to its new API key (shown only now).
	Keys map[string]string
}

// Bootstrap creates, on an empty store, the organization, its owner, the
// development and production environments with an API key each, and the
// built-in in-app integration of each. It returns nil when the store was not empty.
func (a *App) Bootstrap(ctx context.Context) (*FirstStart, error) {
	now := time.Now().UTC()
	org := store.Organization{ID: id.New(), Name: "Herald", CreatedAt: now}
	p := store.BootstrapParams{
		Organization: org,
		Owner:        store.Member{ID: id.New(), OrganizationID: org.ID, Email: "owner@localhost", Role: "owner", CreatedAt: now},
	}
	fs := &FirstStart{Keys: map[string]string{}}
	parent := "" // production is made from development
	for _, name := range firstEnvironments {
		key := secret.NewAPIKey()
		if name == "development" && a.Config.APIKey != "" {
			key = a.Config.APIKey
		}
		fs.Keys[name] = key
		env := tenant.NewEnvironment(org.ID, name, parent, key, now)
		parent = env.Environment.ID
		p.Environments = append(p.Environments, env.Environment)
		p.APIKeys = append(p.APIKeys, env.APIKeys...)
		p.Integrations = append(p.Integrations, env.Integrations...)
	}
	created, err := a.Store.Bootstrap(ctx, &p)
	if err != nil || !created {
		return nil, err
	}
	return fs, nil
}

// NewKeyRecord is the stored form of a new API key (tenant.NewKeyRecord).
func NewKeyRecord(environmentID, key string, now time.Time) store.APIKey {
	return tenant.NewKeyRecord(environmentID, key, now)
}
