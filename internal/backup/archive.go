// Package backup owns `herald backup` and `herald restore` of the embedded
// SQLite store: the archive (a gzipped tar of a manifest, a snapshot of the
// database and the data directory's secret), writing it without ever
// leaving a partial file under its name, and unpacking it strictly — known
// entries only, sizes and digests as the manifest says — so that a hostile
// file can neither write outside the target directory nor crash Herald.
package backup

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// FormatVersion is the archive format this Herald writes and reads.
const FormatVersion = 1

// The archive's entries, in their order: the manifest, the database, and
// the secret when the backup holds one.
const (
	ManifestName = "manifest.json"
	DatabaseName = "herald.db"
	SecretName   = "secret"
)

// Bounds of what an archive may hold.
const (
	maxManifestSize = 64 << 10
	// MaxDatabaseSize bounds the database an archive may hold (1 TiB).
	MaxDatabaseSize = 1 << 40
	maxSecretSize   = 4 << 10
)

// ErrBadArchive is returned for a file that is not a backup this Herald
// can restore; the error says what is wrong with it.
var ErrBadArchive = errors.New("not a Herald backup")

// Manifest is the archive's first entry: what it holds.
type Manifest struct {
	// Format is the archive format (FormatVersion).
	Format int `json:"format"`
	// HeraldVersion is the version of the herald that wrote it.
	HeraldVersion string `json:"heraldVersion"`
	// CreatedAt is when the backup was taken.
	CreatedAt time.Time `json:"createdAt"`
	// Dialect is the store's database: "sqlite".
	Dialect string `json:"dialect"`
	// SchemaVersion is the highest migration the database holds.
	SchemaVersion int `json:"schemaVersion"`
	// Database is the database entry.
	Database File `json:"database"`
	// Secret is the secret entry; nil when the server ran with HERALD_SECRET.
	Secret *File `json:"secret,omitempty"`
}

// File is the size and SHA-256 digest (hex) of an entry.
type File struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Pack writes the archive of the database file at dbPath and the secret
// (none when nil) to w, filling m's Format, Database and Secret.
func Pack(w io.Writer, m *Manifest, dbPath string, secret []byte) error {
	db, err := os.Open(dbPath)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer db.Close()
	h := sha256.New()
	n, err := io.Copy(h, db)
	if err != nil {
		return fmt.Errorf("backup: reading the snapshot: %w", err)
	}
	m.Format = FormatVersion
	m.Database = File{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}
	m.Secret = nil
	if secret != nil {
		sum := sha256.Sum256(secret)
		m.Secret = &File{Size: int64(len(secret)), SHA256: hex.EncodeToString(sum[:])}
	}
	if _, err := db.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	// The fastest level: a database compresses well at any level, and a
	// slower one would only lengthen the backup.
	gz, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	tw := tar.NewWriter(gz)
	entry := func(name string, size int64, r io.Reader) error {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o600, ModTime: m.CreatedAt, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := io.CopyN(tw, r, size); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	err = entry(ManifestName, int64(len(manifest)), bytes.NewReader(manifest))
	if err == nil {
		err = entry(DatabaseName, n, bufio.NewReaderSize(db, 1<<20))
	}
	if err == nil && secret != nil {
		err = entry(SecretName, int64(len(secret)), bytes.NewReader(secret))
	}
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	if err != nil {
		return fmt.Errorf("backup: writing the archive: %w", err)
	}
	return nil
}

// Unpack reads an archive from r into dir, an existing directory, as the
// files DatabaseName and SecretName (when the archive holds one), each
// created new with mode 0600, and returns its manifest. Anything else than
// the entries and sizes the manifest announces, in their order, with their
// digests, is refused with ErrBadArchive; after an error dir may hold part
// of the files, and the caller discards it.
func Unpack(r io.Reader, dir string) (Manifest, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	gz, err := gzip.NewReader(br)
	if err != nil {
		return Manifest{}, bad("not a gzip file: %v", err)
	}
	gz.Multistream(false)
	tr := tar.NewReader(gz)

	hdr, err := next(tr, ManifestName, -1)
	if err != nil {
		return Manifest{}, err
	}
	if hdr.Size <= 0 || hdr.Size > maxManifestSize {
		return Manifest{}, bad("the manifest has %d bytes (at most %d)", hdr.Size, maxManifestSize)
	}
	raw, err := io.ReadAll(tr)
	if err != nil {
		return Manifest{}, bad("reading the manifest: %v", err)
	}
	m, err := parseManifest(raw)
	if err != nil {
		return Manifest{}, err
	}
	if _, err := next(tr, DatabaseName, m.Database.Size); err != nil {
		return m, err
	}
	if err := extract(tr, filepath.Join(dir, DatabaseName), m.Database); err != nil {
		return m, err
	}
	if m.Secret != nil {
		if _, err := next(tr, SecretName, m.Secret.Size); err != nil {
			return m, err
		}
		if err := extract(tr, filepath.Join(dir, SecretName), *m.Secret); err != nil {
			return m, err
		}
	}
	if hdr, err := tr.Next(); err != io.EOF {
		if err == nil {
			return m, bad("unexpected entry %q", hdr.Name)
		}
		return m, bad("after its entries: %v", err)
	}
	// The end of the compressed stream, checksum included, and nothing after it.
	if _, err := io.Copy(io.Discard, io.LimitReader(gz, 1<<20)); err != nil {
		return m, bad("the compressed stream is damaged: %v", err)
	}
	if _, err := gz.Read(make([]byte, 1)); err != io.EOF {
		return m, bad("data after the archive's end")
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return m, bad("data after the compressed stream")
	}
	return m, nil
}

// next reads the next entry's header and checks that it is the regular file
// name with size bytes (any size when size < 0).
func next(tr *tar.Reader, name string, size int64) (*tar.Header, error) {
	hdr, err := tr.Next()
	if err == io.EOF {
		return nil, bad("the archive ends before its %s entry", name)
	}
	if err != nil {
		return nil, bad("reading the %s entry: %v", name, err)
	}
	if hdr.Name != name {
		return nil, bad("entry %q where %q was expected", hdr.Name, name)
	}
	if hdr.Typeflag != tar.TypeReg {
		return nil, bad("entry %q is not a regular file", hdr.Name)
	}
	// A sparse file's holes cost nothing in the archive: a small file could
	// unpack into a huge one.
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return nil, bad("entry %q is a sparse file", hdr.Name)
		}
	}
	if size >= 0 && hdr.Size != size {
		return nil, bad("entry %q has %d bytes where the manifest says %d", hdr.Name, hdr.Size, size)
	}
	return hdr, nil
}

// parseManifest decodes and validates the manifest.
func parseManifest(raw []byte) (Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, bad("the manifest: %v", err)
	}
	if dec.More() {
		return m, bad("the manifest holds more than one JSON value")
	}
	switch {
	case m.Format > FormatVersion:
		return m, bad("archive format %d, written by a newer Herald (this one reads format %d): restore it with that version",
			m.Format, FormatVersion)
	case m.Format != FormatVersion:
		return m, bad("archive format %d (this Herald reads format %d)", m.Format, FormatVersion)
	case m.Dialect != "sqlite":
		return m, bad("a backup of a %q store (herald restore restores SQLite)", m.Dialect)
	case m.SchemaVersion <= 0:
		return m, bad("schema version %d", m.SchemaVersion)
	}
	if err := m.Database.check(DatabaseName, MaxDatabaseSize); err != nil {
		return m, err
	}
	if m.Secret != nil {
		if err := m.Secret.check(SecretName, maxSecretSize); err != nil {
			return m, err
		}
	}
	return m, nil
}

func (f File) check(name string, maxSize int64) error {
	if f.Size <= 0 || f.Size > maxSize {
		return bad("the manifest gives %s %d bytes (1 to %d)", name, f.Size, maxSize)
	}
	if b, err := hex.DecodeString(f.SHA256); err != nil || len(b) != sha256.Size {
		return bad("the manifest gives %s no SHA-256 digest", name)
	}
	return nil
}

// extract writes the current entry to path, a new file of mode 0600, and
// checks its digest; the file is synced to disk.
func extract(tr *tar.Reader, path string, want File) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(f, h), 1<<20)
	if _, err := io.CopyN(bw, tr, want.Size); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return bad("the archive is truncated in its %s entry", filepath.Base(path))
		}
		var pe *os.PathError
		if errors.As(err, &pe) {
			return fmt.Errorf("backup: %w", err)
		}
		return bad("reading its %s entry: %v", filepath.Base(path), err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if hex.EncodeToString(h.Sum(nil)) != want.SHA256 {
		return bad("the %s entry does not match its digest: the file is damaged", filepath.Base(path))
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return f.Close()
}

func bad(format string, a ...any) error {
	return fmt.Errorf("backup: %w: %s", ErrBadArchive, fmt.Sprintf(format, a...))
}
