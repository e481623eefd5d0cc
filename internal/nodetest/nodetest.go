// Package nodetest finds and prepares the Node.js tools that some tests run
// (the official SDKs, the Liquid oracle under clients/). It is for tests
// only: it imports package testing and is never linked into Herald.
package nodetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// NpmCITimeout bounds one NpmCI.
const NpmCITimeout = 3 * time.Minute

// RequireTool finds an executable (node, npm): the test skips without it,
// except under CI=true, where its absence is a failure.
func RequireTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI=true: %v", name, err)
		}
		t.Skipf("%s not found (%v); install Node.js 18+ to run this test", name, err)
	}
	return p
}

// NpmCI installs the locked dependencies of the Node project in dir (its
// committed package-lock.json), from the npm cache when it can. A failure
// skips the test (offline, say), except under CI=true, where it fails it.
//
// Test binaries of several packages run at once (go test ./...) and use
// the same projects: `npm ci` deletes node_modules before it writes it
// again, under another process that may be running the project. So the
// install holds an exclusive lock on the project (a file lock, across
// processes), and is skipped when node_modules was installed from this
// very lock file (its SHA-256 is stamped in node_modules).
func NpmCI(t testing.TB, npm, dir string) {
	t.Helper()
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatalf("npm ci in %s: %v", dir, err)
	}
	sum := sha256.Sum256(lock)
	want := hex.EncodeToString(sum[:])
	stamp := filepath.Join(dir, "node_modules", ".herald-installed-from")
	unlock, err := lockDir(dir)
	if err != nil {
		t.Fatalf("npm ci in %s: locking the project: %v", dir, err)
	}
	defer unlock()
	if got, err := os.ReadFile(stamp); err == nil && string(got) == want {
		return // installed from this lock file already
	}
	ctx, cancel := context.WithTimeout(context.Background(), NpmCITimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
		t.Skipf("npm ci in %s failed (offline?): %v\n%s", dir, err, out)
	}
	if err := os.WriteFile(stamp, []byte(want), 0o644); err != nil {
		t.Fatalf("npm ci in %s: %v", dir, err)
	}
}
