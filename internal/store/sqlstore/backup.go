package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Snapshots of the SQLite database for `herald backup` (internal/backup): a
// consistent copy taken beside a server that keeps writing, and the checks a
// copy passes before it is archived and again before it is restored.

// ErrSnapshotUnsupported is returned for a store whose backups are its
// database's own tools' work: PostgreSQL's.
var ErrSnapshotUnsupported = errors.New("herald backup copies the embedded SQLite store only:" +
	" back PostgreSQL up with pg_dump (pg_dump --format=custom --file herald.dump URL) and restore it with pg_restore," +
	" and keep the server secret (HERALD_SECRET) with the dump: the restored store opens only with it")

// ErrNotSnapshot is returned by CheckSnapshot for a file that is not a
// sound Herald database, or one made by a newer Herald.
var ErrNotSnapshot = errors.New("sqlstore: not a Herald database this version can restore")

// Snapshot describes a checked copy of a SQLite database.
type Snapshot struct {
	// SchemaVersion is the highest migration the copy holds.
	SchemaVersion int
	// SecretChecked is set when the copy's secret check value opened with
	// the sealer given (a copy of a store that never started has none).
	SecretChecked bool
}

// Snapshot writes a consistent copy of the store's database to out, a file
// that must not exist yet, and checks it (CheckSnapshot). On PostgreSQL it
// returns ErrSnapshotUnsupported.
func (db *DB) Snapshot(ctx context.Context, out string, sealer Sealer) (Snapshot, error) {
	if db.d.snapshot == "" {
		return Snapshot{}, ErrSnapshotUnsupported
	}
	var seq int
	var name, path string
	if err := db.r.QueryRowContext(ctx, "PRAGMA database_list").Scan(&seq, &name, &path); err != nil {
		return Snapshot{}, fmt.Errorf("sqlstore: %w", err)
	}
	return SnapshotSQLite(ctx, path, out, sealer)
}

// SnapshotSQLite writes a consistent copy of the SQLite database at path to
// out, a file that must not exist yet: the dialect's snapshot statement
// (VACUUM INTO), one read transaction on a connection of its own, which in
// WAL mode holds back no writer — a server may keep writing the file — and
// sees every transaction committed before it began. It never creates,
// migrates or writes path. The copy is then checked (CheckSnapshot).
func SnapshotSQLite(ctx context.Context, path, out string, sealer Sealer) (Snapshot, error) {
	if info, err := os.Stat(path); err != nil || !info.Mode().IsRegular() {
		return Snapshot{}, fmt.Errorf("sqlstore: no Herald database at %s", path)
	}
	if _, err := os.Lstat(out); !errors.Is(err, fs.ErrNotExist) {
		return Snapshot{}, fmt.Errorf("sqlstore: %s exists already", out)
	}
	// mode=rw: a file that vanished is an error, never a new database.
	src, err := sql.Open("sqlite", "file:"+path+"?mode=rw&_pragma=busy_timeout(10000)")
	if err != nil {
		return Snapshot{}, fmt.Errorf("sqlstore: %w", err)
	}
	defer src.Close()
	src.SetMaxOpenConns(1)
	if _, err := src.ExecContext(ctx, sqliteDialect.snapshot, out); err != nil {
		return Snapshot{}, fmt.Errorf("sqlstore: copying %s: %w", path, err)
	}
	return CheckSnapshot(ctx, out, sealer)
}

// CheckSnapshot opens the SQLite file at path read-only, as immutable (it
// writes nothing beside it), and checks that it is sound (PRAGMA
// quick_check), that it is a Herald database whose migrations this Herald
// knows all of (else ErrNotSnapshot), and, with a sealer, that its secret
// check value opens with it (else ErrSecretMismatch).
func CheckSnapshot(ctx context.Context, path string, sealer Sealer) (Snapshot, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		return Snapshot{}, fmt.Errorf("sqlstore: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var problems []string
	rows, err := db.QueryContext(ctx, "PRAGMA quick_check")
	if err := eachRow(rows, err, func(r rowScanner) error {
		var line string
		if err := r.Scan(&line); err != nil {
			return err
		}
		if line != "ok" && len(problems) < 5 {
			problems = append(problems, line)
		}
		return nil
	}); err != nil {
		return Snapshot{}, fmt.Errorf("%w: %v", ErrNotSnapshot, err)
	}
	if len(problems) > 0 {
		return Snapshot{}, fmt.Errorf("%w: the database is damaged: %s", ErrNotSnapshot, strings.Join(problems, "; "))
	}
	// Herald's own tables, not views: a crafted file's view could run long.
	var tables int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('schema_migrations', 'settings')").
		Scan(&tables); err != nil || tables != 2 {
		return Snapshot{}, fmt.Errorf("%w: it has no Herald tables", ErrNotSnapshot)
	}
	known, err := migrationVersions(sqliteDialect.name)
	if err != nil {
		return Snapshot{}, err
	}
	var snap Snapshot
	rows, err = db.QueryContext(ctx, "SELECT version FROM schema_migrations")
	if err := eachRow(rows, err, func(r rowScanner) error {
		var v int
		if err := r.Scan(&v); err != nil {
			return err
		}
		if !slices.Contains(known, v) {
			return fmt.Errorf("%w: it holds migration %d, made by a newer Herald: restore it with that version or a later one", ErrNotSnapshot, v)
		}
		snap.SchemaVersion = max(snap.SchemaVersion, v)
		return nil
	}); err != nil {
		if errors.Is(err, ErrNotSnapshot) {
			return Snapshot{}, err
		}
		return Snapshot{}, fmt.Errorf("%w: %v", ErrNotSnapshot, err)
	}
	if snap.SchemaVersion == 0 {
		return Snapshot{}, fmt.Errorf("%w: it holds no migration", ErrNotSnapshot)
	}
	if sealer == nil {
		return snap, nil
	}
	var check string
	err = db.QueryRowContext(ctx, "SELECT value FROM settings WHERE name = $1", settingSecretCheck).Scan(&check)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return snap, nil
	case err != nil:
		return Snapshot{}, fmt.Errorf("%w: %v", ErrNotSnapshot, err)
	}
	if err := checkOpens(sealer, check); err != nil {
		return Snapshot{}, err
	}
	snap.SecretChecked = true
	return snap, nil
}

// migrationVersions lists the embedded migrations' versions of a dialect.
func migrationVersions(dialect string) ([]int, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations/"+dialect)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: %w", err)
	}
	var out []int
	for _, e := range entries {
		num, _, _ := strings.Cut(e.Name(), "_")
		if v, err := strconv.Atoi(num); err == nil {
			out = append(out, v)
		}
	}
	return out, nil
}
