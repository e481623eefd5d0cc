package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// packed is an archive of db and secret (none when nil), and its manifest.
func packed(t testing.TB, db, secret []byte) ([]byte, Manifest) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db")
	require.NoError(t, os.WriteFile(path, db, 0o600))
	m := Manifest{HeraldVersion: "test", CreatedAt: time.Date(2031, 3, 14, 15, 9, 26, 0, time.UTC), Dialect: "sqlite", SchemaVersion: 22}
	var buf bytes.Buffer
	require.NoError(t, Pack(&buf, &m, path, secret))
	return buf.Bytes(), m
}

// unpackInto unpacks b into a new directory and checks that nothing was
// written outside it, nor anything but the archive's known files in it.
func unpackInto(t testing.TB, b []byte) (string, Manifest, error) {
	t.Helper()
	parent := t.TempDir()
	dir := filepath.Join(parent, "d")
	require.NoError(t, os.Mkdir(dir, 0o700))
	m, err := Unpack(bytes.NewReader(b), dir)
	require.Equal(t, []string{"d"}, names(t, parent), "nothing written beside the directory")
	for _, n := range names(t, dir) {
		require.Contains(t, []string{DatabaseName, SecretName}, n)
		info, statErr := os.Lstat(filepath.Join(dir, n))
		require.NoError(t, statErr)
		require.True(t, info.Mode().IsRegular(), n)
		require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), n)
	}
	return dir, m, err
}

func names(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestPackUnpackRoundTrip(t *testing.T) {
	t.Parallel()
	db := bytes.Repeat([]byte("SQLite format 3\x00 pages of the database "), 50_000)
	for _, secret := range [][]byte{[]byte("0123456789abcdef0123456789abcdef\n"), nil} {
		b, packedManifest := packed(t, db, secret)
		require.Less(t, len(b), len(db)/10, "compressed")
		dir, m, err := unpackInto(t, b)
		require.NoError(t, err)
		require.Equal(t, packedManifest, m)
		require.Equal(t, FormatVersion, m.Format)
		require.Equal(t, int64(len(db)), m.Database.Size)
		got, err := os.ReadFile(filepath.Join(dir, DatabaseName))
		require.NoError(t, err)
		require.Equal(t, db, got)
		if secret == nil {
			require.Nil(t, m.Secret)
			require.NoFileExists(t, filepath.Join(dir, SecretName))
			continue
		}
		got, err = os.ReadFile(filepath.Join(dir, SecretName))
		require.NoError(t, err)
		require.Equal(t, secret, got)
	}
}

// entry is one tar entry of a crafted archive.
type entry struct {
	hdr  tar.Header
	data []byte
}

func file(name string, data []byte) entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(data)), Mode: 0o600}, data: data}
}

// craft writes entries as a gzipped tar; a header's Size is written as it
// is, whatever the data's length.
func craft(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		hdr := e.hdr
		require.NoError(t, tw.WriteHeader(&hdr))
		if len(e.data) > 0 {
			tw.Write(e.data) //nolint:errcheck // a short entry is the point of some cases
		}
	}
	tw.Flush() //nolint:errcheck
	gz.Close()
	return buf.Bytes()
}

// paxEntry is a PAX extended header (type 'x') of records for the next
// entry, written as raw bytes: tar.Writer drops GNU sparse records.
func paxEntry(t testing.TB, records map[string]string) []byte {
	t.Helper()
	var data strings.Builder
	for k, v := range records {
		rec := " " + k + "=" + v + "\n"
		n := len(rec)
		for len(strconv.Itoa(n))+len(rec) != n {
			n = len(strconv.Itoa(n)) + len(rec)
		}
		data.WriteString(strconv.Itoa(n) + rec)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "pax", Size: int64(data.Len()), Format: tar.FormatUSTAR}))
	_, err := tw.Write([]byte(data.String()))
	require.NoError(t, err)
	require.NoError(t, tw.Flush())
	b := buf.Bytes()
	b[156] = tar.TypeXHeader
	copy(b[148:156], "        ")
	sum := 0
	for _, c := range b[:512] {
		sum += int(c)
	}
	copy(b[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

func manifestOf(t testing.TB, m Manifest) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

func fileOf(b []byte) *File {
	sum := sha256.Sum256(b)
	return &File{Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])}
}

func TestUnpackRefusesHostileArchives(t *testing.T) {
	t.Parallel()
	db := []byte("the database")
	sec := []byte("0123456789abcdef0123456789abcdef")
	good := Manifest{Format: 1, HeraldVersion: "x", Dialect: "sqlite", SchemaVersion: 22, Database: *fileOf(db), Secret: fileOf(sec)}
	with := func(change func(m *Manifest)) []byte {
		m := good
		change(&m)
		return manifestOf(t, m)
	}
	man := manifestOf(t, good)
	valid, _ := packed(t, db, sec)
	symlink := entry{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: DatabaseName, Linkname: "/etc/passwd"}}
	dirEntry := entry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: DatabaseName, Mode: 0o700}}
	hardlink := entry{hdr: tar.Header{Typeflag: tar.TypeLink, Name: SecretName, Linkname: "../../x"}}
	damaged := slices.Clone(db)
	damaged[0] ^= 1
	var trailing bytes.Buffer
	trailing.Write(valid)
	trailing.WriteString("more")
	secondStream := append(slices.Clone(valid), craft(t, file("../evil", []byte("x")))...)

	// A sparse database: 1 GiB of holes in a few hundred bytes.
	sparse := func() []byte {
		var raw bytes.Buffer
		tw := tar.NewWriter(&raw)
		big := with(func(m *Manifest) { m.Database.Size = 1 << 30 })
		require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: ManifestName, Size: int64(len(big))}))
		_, err := tw.Write(big)
		require.NoError(t, err)
		require.NoError(t, tw.Flush())
		raw.Write(paxEntry(t, map[string]string{"GNU.sparse.major": "0", "GNU.sparse.minor": "1", "GNU.sparse.name": DatabaseName,
			"GNU.sparse.size": strconv.Itoa(1 << 30), "GNU.sparse.numblocks": "1", "GNU.sparse.map": "0,0"}))
		tw = tar.NewWriter(&raw)
		require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "herald.db.sparse", Format: tar.FormatUSTAR}))
		require.NoError(t, tw.Close())
		var out bytes.Buffer
		gz := gzip.NewWriter(&out)
		gz.Write(raw.Bytes()) //nolint:errcheck
		gz.Close()
		return out.Bytes()
	}()

	for _, tc := range []struct {
		name    string
		archive []byte
		want    string
	}{
		{"sparse database", sparse, `entry "herald.db" is a sparse file`},
		{"empty file", nil, "not a gzip file"},
		{"not an archive", []byte("hello, this is not a backup"), "not a gzip file"},
		{"gzip of no tar", func() []byte {
			var b bytes.Buffer
			gz := gzip.NewWriter(&b)
			gz.Write(bytes.Repeat([]byte("x"), 2000)) //nolint:errcheck
			gz.Close()
			return b.Bytes()
		}(), "manifest"},
		{"empty tar", craft(t), "ends before its manifest.json"},
		{"traversal first", craft(t, file("../evil", []byte("x"))), `"../evil"`},
		{"traversal after the manifest", craft(t, file(ManifestName, man), file("../../etc/cron.d/x", db)), `"../../etc/cron.d/x"`},
		{"absolute name", craft(t, file(ManifestName, man), file("/tmp/herald.db", db)), `"/tmp/herald.db"`},
		{"name under a directory", craft(t, file(ManifestName, man), file("sub/herald.db", db)), `"sub/herald.db"`},
		{"symlink database", craft(t, file(ManifestName, man), symlink), "not a regular file"},
		{"directory database", craft(t, file(ManifestName, man), dirEntry), "not a regular file"},
		{"hard-link secret", craft(t, file(ManifestName, man), file(DatabaseName, db), hardlink), "not a regular file"},
		{"unknown entry", craft(t, file(ManifestName, man), file(DatabaseName, db), file(SecretName, sec), file("extra", db)), `unexpected entry "extra"`},
		{"entries out of order", craft(t, file(ManifestName, man), file(SecretName, sec), file(DatabaseName, db)), `"secret" where "herald.db"`},
		{"duplicate database", craft(t, file(ManifestName, with(func(m *Manifest) { m.Secret = nil })), file(DatabaseName, db), file(DatabaseName, db)),
			`unexpected entry "herald.db"`},
		{"missing secret", craft(t, file(ManifestName, man), file(DatabaseName, db)), "ends before its secret"},
		{"huge manifest", craft(t, entry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: ManifestName, Size: 1 << 40}}), "the manifest has 1099511627776 bytes"},
		{"huge database", craft(t, file(ManifestName, with(func(m *Manifest) { m.Database.Size = 1 << 50 })),
			entry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: DatabaseName, Size: 1 << 50}}), "herald.db 1125899906842624 bytes"},
		{"huge secret", craft(t, file(ManifestName, with(func(m *Manifest) { m.Secret.Size = 1 << 20 }))), "secret 1048576 bytes"},
		{"empty database", craft(t, file(ManifestName, with(func(m *Manifest) { m.Database = *fileOf(nil) }))), "herald.db 0 bytes"},
		{"size unlike the manifest", craft(t, file(ManifestName, man), file(DatabaseName, append(slices.Clone(db), 'x'))), "13 bytes where the manifest says 12"},
		{"truncated database", craft(t, file(ManifestName, man), entry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: DatabaseName, Size: 12}, data: db[:5]}),
			"truncated"},
		{"damaged database", craft(t, file(ManifestName, man), file(DatabaseName, damaged), file(SecretName, sec)), "does not match its digest"},
		{"newer format", craft(t, file(ManifestName, with(func(m *Manifest) { m.Format = 2 }))), "written by a newer Herald"},
		{"format zero", craft(t, file(ManifestName, with(func(m *Manifest) { m.Format = 0 }))), "archive format 0"},
		{"postgres", craft(t, file(ManifestName, with(func(m *Manifest) { m.Dialect = "postgres" }))), `"postgres" store`},
		{"no schema version", craft(t, file(ManifestName, with(func(m *Manifest) { m.SchemaVersion = 0 }))), "schema version 0"},
		{"no digest", craft(t, file(ManifestName, with(func(m *Manifest) { m.Database.SHA256 = "abc" }))), "no SHA-256"},
		{"unknown manifest field", craft(t, file(ManifestName, []byte(`{"format":1,"extra":true}`))), `unknown field "extra"`},
		{"two manifests in one", craft(t, file(ManifestName, append(slices.Clone(man), man...))), "more than one JSON value"},
		{"manifest not JSON", craft(t, file(ManifestName, []byte("\x00\x01"))), "the manifest"},
		{"data after the archive", trailing.Bytes(), "after the compressed stream"},
		{"a second gzip stream", secondStream, "after the compressed stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := unpackInto(t, tc.archive)
			require.ErrorIs(t, err, ErrBadArchive)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestUnpackTruncated: every cut of a valid archive is refused.
func TestUnpackTruncated(t *testing.T) {
	t.Parallel()
	valid, _ := packed(t, bytes.Repeat([]byte("database page "), 10_000), []byte("0123456789abcdef0123456789abcdef"))
	for cut := 0; cut < len(valid); cut += max(1, len(valid)/97) {
		_, _, err := unpackInto(t, valid[:cut])
		require.ErrorIs(t, err, ErrBadArchive, "cut at %d of %d", cut, len(valid))
	}
	_, _, err := unpackInto(t, valid)
	require.NoError(t, err)
}

// FuzzRestoreArchive: whatever the bytes, Unpack answers an error or the
// archive's files, writes nothing outside its directory and never panics.
func FuzzRestoreArchive(f *testing.F) {
	db := []byte("SQLite format 3\x00 a small database")
	sec := []byte("0123456789abcdef0123456789abcdef")
	valid, _ := packed(f, db, sec)
	noSecret, _ := packed(f, db, nil)
	m := Manifest{Format: 1, Dialect: "sqlite", SchemaVersion: 1, Database: *fileOf(db)}
	f.Add(valid)
	f.Add(noSecret)
	f.Add(valid[:len(valid)/2])
	f.Add(craft(f, file(ManifestName, manifestOf(f, m)), file("../"+DatabaseName, db)))
	f.Add(craft(f, file(ManifestName, manifestOf(f, m)), file(DatabaseName, db), file("extra", db)))
	f.Add(craft(f, entry{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: ManifestName, Linkname: "/"}}))
	f.Add([]byte("not an archive"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir, m, err := unpackInto(t, b)
		if err != nil {
			require.ErrorIs(t, err, ErrBadArchive)
			return
		}
		info, statErr := os.Stat(filepath.Join(dir, DatabaseName))
		require.NoError(t, statErr)
		require.Equal(t, m.Database.Size, info.Size())
		if m.Secret == nil {
			require.NoFileExists(t, filepath.Join(dir, SecretName))
		}
	})
}
