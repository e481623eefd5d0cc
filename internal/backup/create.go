package backup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/config"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store/sqlstore"
)

// ErrExists is returned when the backup's file, or a file of the restore's
// data directory, is there already: nothing is overwritten.
var ErrExists = errors.New("exists already")

// Created is what Create wrote.
type Created struct {
	// Path is the archive; Size its bytes.
	Path string
	Size int64
	// Manifest is the archive's manifest.
	Manifest Manifest
	// SecretFile is the data directory's secret file the archive holds;
	// empty when it holds none (the server runs with HERALD_SECRET).
	SecretFile string
}

// Create writes a backup of the SQLite store of cfg to out, a file that
// must not exist: a snapshot of the database taken beside the running
// server (sqlstore.SnapshotSQLite) and the data directory's secret file,
// unless cfg has a secret (HERALD_SECRET), which the backup then leaves to
// the operator. The secret that will open the restored store is checked
// against the snapshot first. The archive is written under a temporary
// name in out's directory, synced, and only then given its name. Create
// never creates the data directory or the database.
func Create(ctx context.Context, cfg config.Config, out, heraldVersion string) (Created, error) {
	switch {
	case cfg.Postgres():
		return Created{}, sqlstore.ErrSnapshotUnsupported
	case cfg.DatabaseURL != "":
		return Created{}, errors.New("backup: --database-url must be a postgres:// URL (leave it empty for the embedded SQLite store)")
	}
	if _, err := os.Lstat(out); !errors.Is(err, fs.ErrNotExist) {
		return Created{}, fmt.Errorf("backup: %s %w: choose another name, nothing was written", out, ErrExists)
	}
	if info, err := os.Stat(cfg.SQLitePath()); err != nil || !info.Mode().IsRegular() {
		return Created{}, fmt.Errorf("backup: no Herald database at %s (is --data-dir right?)", cfg.SQLitePath())
	}
	sec, sealer, secretFile, err := secretOf(cfg)
	if err != nil {
		return Created{}, err
	}

	// As of the start of the snapshot: it holds every commit before it.
	createdAt := time.Now().UTC().Truncate(time.Millisecond)
	work, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-")
	if err != nil {
		return Created{}, fmt.Errorf("backup: %w", err)
	}
	defer os.RemoveAll(work)
	snapPath := filepath.Join(work, DatabaseName)
	snap, err := sqlstore.SnapshotSQLite(ctx, cfg.SQLitePath(), snapPath, sealer)
	if errors.Is(err, sqlstore.ErrSecretMismatch) {
		if secretFile != "" {
			return Created{}, fmt.Errorf("backup: the secret in %s does not open this store's credentials: the server runs with"+
				" another secret (HERALD_SECRET?); run herald backup with that HERALD_SECRET", secretFile)
		}
		return Created{}, errors.New("backup: HERALD_SECRET does not open this store's credentials: give herald backup the server's secret")
	}
	if err != nil {
		return Created{}, fmt.Errorf("backup: %w", err)
	}

	m := Manifest{HeraldVersion: heraldVersion, CreatedAt: createdAt, Dialect: "sqlite", SchemaVersion: snap.SchemaVersion}
	archive := filepath.Join(work, "archive")
	if err := writeSynced(archive, func(w *bufio.Writer) error { return Pack(ctxWriter{ctx, w}, &m, snapPath, sec) }); err != nil {
		if ctx.Err() != nil {
			return Created{}, fmt.Errorf("backup: interrupted, nothing written: %w", ctx.Err())
		}
		return Created{}, err
	}
	if err := publish(archive, out); err != nil {
		return Created{}, err
	}
	info, err := os.Stat(out)
	if err != nil {
		return Created{}, fmt.Errorf("backup: %w", err)
	}
	return Created{Path: out, Size: info.Size(), Manifest: m, SecretFile: secretFile}, nil
}

// secretOf returns the secret file's content to archive (nil with
// HERALD_SECRET, or without a file), the keys to check the snapshot with
// (nil when there is no secret to check), and the file's path when archived.
func secretOf(cfg config.Config) ([]byte, sqlstore.Sealer, string, error) {
	if cfg.Secret != "" {
		keys, err := secret.Derive(cfg.Secret)
		if err != nil {
			return nil, nil, "", fmt.Errorf("backup: HERALD_SECRET: %w", err)
		}
		return nil, keys, "", nil
	}
	b, err := os.ReadFile(cfg.SecretPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, "", nil
	}
	if err != nil {
		return nil, nil, "", fmt.Errorf("backup: reading the secret: %w", err)
	}
	if len(b) > maxSecretSize {
		return nil, nil, "", fmt.Errorf("backup: %s is not a server secret (%d bytes)", cfg.SecretPath(), len(b))
	}
	keys, err := secret.Derive(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, nil, "", fmt.Errorf("backup: %s: %w", cfg.SecretPath(), err)
	}
	return b, keys, cfg.SecretPath(), nil
}

// writeSynced creates path (mode 0600, new), fills it with write and
// syncs it to disk.
func writeSynced(path string, write func(w *bufio.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("backup: writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return f.Close()
}

// publish gives the complete file tmp the name out and syncs out's directory.
func publish(tmp, out string) error {
	if err := linkNew(tmp, out); errors.Is(err, ErrExists) {
		return fmt.Errorf("backup: %s %w: choose another name, nothing was written", out, ErrExists)
	} else if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return syncDir(filepath.Dir(out))
}

// linkNew gives the file src the name dst too, never replacing a file
// there (ErrExists): a hard link, which fails when dst exists, or, where
// the file system has no links, a rename after a last look.
func linkNew(src, dst string) error {
	err := os.Link(src, dst)
	if errors.Is(err, fs.ErrExist) {
		return ErrExists
	}
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if _, statErr := os.Lstat(dst); !errors.Is(statErr, fs.ErrNotExist) {
		return ErrExists
	}
	return os.Rename(src, dst)
}

// syncDir makes the directory's entries durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("backup: syncing %s: %w", dir, err)
	}
	return nil
}

// ctxWriter and ctxReader stop a copy once ctx ends (an interrupted
// command): the temporary files are then removed.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
