// Package app assembles Herald from its configuration: it resolves the
// server secret, opens and migrates the store, and creates the first
// organization on an empty store. cmd/herald only wires flags to it.
package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/config"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
)

// App is an opened Herald: its store and keys.
type App struct {
	Config config.Config
	Store  *sqlstore.DB
	Keys   *secret.Keys
}

// Open resolves the secret and opens (migrating) the configured store.
func Open(ctx context.Context, cfg config.Config) (*App, error) {
	sec, err := resolveSecret(cfg)
	if err != nil {
		return nil, err
	}
	keys, err := secret.Derive(sec)
	if err != nil {
		return nil, err
	}
	var db *sqlstore.DB
	if cfg.Postgres() {
		db, err = sqlstore.OpenPostgres(ctx, cfg.DatabaseURL, keys)
	} else if cfg.DatabaseURL != "" {
		return nil, fmt.Errorf("app: --database-url must be a postgres:// URL (leave it empty for the embedded SQLite store)")
	} else {
		db, err = sqlstore.OpenSQLite(ctx, cfg.SQLitePath(), keys)
	}
	if err != nil {
		return nil, err
	}
	return &App{Config: cfg, Store: db, Keys: keys}, nil
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
	for _, name := range firstEnvironments {
		env := store.Environment{ID: id.New(), OrganizationID: org.ID, Name: name, CreatedAt: now}
		key := secret.NewAPIKey()
		if name == "development" && a.Config.APIKey != "" {
			key = a.Config.APIKey
		}
		fs.Keys[name] = key
		p.Environments = append(p.Environments, env)
		p.APIKeys = append(p.APIKeys, NewKeyRecord(env.ID, key, now))
		p.Integrations = append(p.Integrations, store.Integration{
			ID: id.New(), OrganizationID: org.ID, EnvironmentID: env.ID, ProviderID: provider.InAppProvider,
			Channel: string(provider.InApp), Kind: string(provider.Delivery), Name: "Herald Inbox",
			Identifier: "herald-inbox", Active: true, Primary: true, CreatedAt: now, UpdatedAt: now,
		})
	}
	created, err := a.Store.Bootstrap(ctx, &p)
	if err != nil || !created {
		return nil, err
	}
	return fs, nil
}

// NewKeyRecord is the stored form of a new API key.
func NewKeyRecord(environmentID, key string, now time.Time) store.APIKey {
	return store.APIKey{ID: id.New(), EnvironmentID: environmentID, Hash: secret.HashAPIKey(key), Prefix: key[:min(len(key), 7)], CreatedAt: now}
}
