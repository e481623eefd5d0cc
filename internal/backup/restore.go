package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/herald-notify/herald/internal/config"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store/sqlstore"
)

// ErrNotEmpty is returned when the restore's data directory has an entry.
var ErrNotEmpty = errors.New("is not empty")

// Restored is what Restore did.
type Restored struct {
	// DataDir is the data directory restored into.
	DataDir string
	// Manifest is the archive's manifest.
	Manifest Manifest
	// SecretChecked is set when the restored secret (or HERALD_SECRET)
	// opened the database's sealed values.
	SecretChecked bool
}

// Restore unpacks the backup at from into cfg's data directory, which must
// be absent or empty (else ErrNotEmpty, and it is left as it was). The files
// are unpacked and checked (Unpack, sqlstore.CheckSnapshot: a sound Herald
// database whose migrations this Herald knows, opened by the archived secret,
// or by cfg's HERALD_SECRET when the archive holds none) in a new directory
// beside the data directory, which then takes its name — or, into an empty
// existing data directory, the files are moved in. Nothing opens the store.
func Restore(ctx context.Context, cfg config.Config, from string) (Restored, error) {
	if cfg.Postgres() || cfg.DatabaseURL != "" {
		return Restored{}, errors.New("restore: herald restore restores the embedded SQLite store: restore a PostgreSQL dump with pg_restore")
	}
	dir := filepath.Clean(cfg.DataDir)
	exists, err := emptyOrAbsent(dir)
	if err != nil {
		return Restored{}, err
	}
	f, err := os.Open(from)
	if err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return Restored{}, fmt.Errorf("restore: %s is not a file", from)
	}

	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	work, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".restore-")
	if err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	defer os.RemoveAll(work) // gone by then when it became the data directory
	m, err := Unpack(ctxReader{ctx, f}, work)
	if ctx.Err() != nil {
		return Restored{}, fmt.Errorf("restore: interrupted, nothing restored: %w", ctx.Err())
	}
	if err != nil {
		return Restored{}, fmt.Errorf("restore: %s: %w", from, err)
	}
	sealer, err := restoredKeys(cfg, work, m)
	if err != nil {
		return Restored{}, err
	}
	snap, err := sqlstore.CheckSnapshot(ctx, filepath.Join(work, DatabaseName), sealer)
	if errors.Is(err, sqlstore.ErrSecretMismatch) {
		if m.Secret != nil {
			return Restored{}, fmt.Errorf("restore: %s: the archived secret does not open the archived database", from)
		}
		return Restored{}, errors.New("restore: HERALD_SECRET does not open the archived database: give the secret of the server the backup was taken from")
	}
	if err != nil {
		return Restored{}, fmt.Errorf("restore: %s: %w", from, err)
	}
	if snap.SchemaVersion != m.SchemaVersion {
		return Restored{}, fmt.Errorf("restore: %s: %w: the database's schema version is %d, the manifest says %d",
			from, ErrBadArchive, snap.SchemaVersion, m.SchemaVersion)
	}
	if err := place(work, dir, exists); err != nil {
		return Restored{}, err
	}
	return Restored{DataDir: dir, Manifest: m, SecretChecked: snap.SecretChecked}, nil
}

// emptyOrAbsent reports whether dir exists, and refuses one with an entry,
// or something else than a directory.
func emptyOrAbsent(dir string) (exists bool, err error) {
	info, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("restore: %w", err)
	}
	if !info.IsDir() {
		return false, fmt.Errorf("restore: %s is not a directory", dir)
	}
	d, err := os.Open(dir)
	if err != nil {
		return false, fmt.Errorf("restore: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(1)
	if len(names) > 0 {
		return true, fmt.Errorf("restore: the data directory %s %w (it holds %s): restore into a new or empty directory", dir, ErrNotEmpty, names[0])
	}
	if err != nil && err != io.EOF {
		return true, fmt.Errorf("restore: %w", err)
	}
	return true, nil
}

// restoredKeys are the keys of the restored server's secret: the archived
// one, else HERALD_SECRET; nil when there is neither (nothing to check).
func restoredKeys(cfg config.Config, work string, m Manifest) (sqlstore.Sealer, error) {
	sec := cfg.Secret
	if m.Secret != nil {
		b, err := os.ReadFile(filepath.Join(work, SecretName))
		if err != nil {
			return nil, fmt.Errorf("restore: %w", err)
		}
		sec = strings.TrimSpace(string(b))
	}
	if sec == "" {
		return nil, nil
	}
	keys, err := secret.Derive(sec)
	if err != nil {
		return nil, fmt.Errorf("restore: %w: the archived secret: %v", ErrBadArchive, err)
	}
	return keys, nil
}

// place makes the checked files of work the data directory dir: work is
// renamed dir when there is none, else its files move into the empty dir,
// each under a name that must still be free.
func place(work, dir string, exists bool) error {
	if !exists {
		if err := os.Rename(work, dir); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		return syncDir(filepath.Dir(dir))
	}
	if _, err := emptyOrAbsent(dir); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	for _, name := range []string{DatabaseName, SecretName} {
		err := linkNew(filepath.Join(work, name), filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) && name == SecretName {
			continue // a backup without the secret
		}
		if errors.Is(err, ErrExists) {
			return fmt.Errorf("restore: %s %w: another process is writing the data directory", filepath.Join(dir, name), ErrExists)
		}
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
	}
	return syncDir(dir)
}
