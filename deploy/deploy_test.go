package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// root is the repository's root, seen from this package's directory.
const root = ".."

// tool finds a program the checks run: first in the repository's .bin/
// (where .ci/run builds helm), then on PATH. A missing one skips the test,
// and fails it under CI=true.
func tool(t *testing.T, name string) string {
	t.Helper()
	if p, err := filepath.Abs(filepath.Join(root, ".bin", name)); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed (.ci/run builds helm into .bin/; systemd-analyze comes with Debian's systemd)", name)
	}
	t.Skipf("%s is not installed", name)
	return ""
}

var (
	buildOnce sync.Once
	buildDir  string
	binPath   string
	buildErr  error
)

// heraldBinary builds cmd/herald once per test binary (as cmd/herald's tests
// do, so the build cache serves both).
func heraldBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "herald-deploy-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "herald")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/herald")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// readFile reads a file of the repository.
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	require.NoError(t, err)
	return b
}
