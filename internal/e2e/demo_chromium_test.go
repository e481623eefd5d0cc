package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/nodetest"
	"github.com/herald-notify/herald/internal/testdb"
)

// demoClientDir is the Node project of the demo inbox page and its
// headless Chromium test.
var demoClientDir = filepath.Join("..", "..", "clients", "demo-inbox")

// chromiumPath is Debian's chromium, which .ci/run installs.
const chromiumPath = "/usr/bin/chromium"

const demoAPIKey = "hk_demo_page_test_0123456789abcdef"

// TestDemoInboxChromium builds herald, runs `herald serve` as a newcomer
// does (a fresh store of each kind, the demo page on by default) and opens
// /demo/ in headless Chromium with clients/demo-inbox/browser-test.mjs: the
// bell counts the notification triggered before the page opened, the list
// shows it, a click marks it read (the bell counts 0, Herald stored it read),
// and a trigger while the page is open arrives live (the bell counts 1, the
// list announces and shows it). Skipped without chromium unless CI=true.
func TestDemoInboxChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("builds herald and runs a browser")
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI=true: %v", chromiumPath, err)
		}
		t.Skipf("%s not found; apt-get install chromium to run the demo page's browser test", chromiumPath)
	}
	node, npm, goTool := nodetest.RequireTool(t, "node"), nodetest.RequireTool(t, "npm"), nodetest.RequireTool(t, "go")
	nodetest.NpmCI(t, npm, demoClientDir)

	bin := filepath.Join(t.TempDir(), "herald")
	build := exec.Command(goTool, "build", "-o", bin, "../../cmd/herald")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	for _, kind := range testdb.Kinds { // one after the other: a browser each is enough for this box
		t.Run(kind, func(t *testing.T) {
			databaseURL := ""
			if kind == "postgres" {
				databaseURL = testdb.NewPostgresSchema(t)
			}
			base := startHeraldBinary(t, bin, databaseURL)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "browser-test.mjs")
			cmd.Dir = demoClientDir
			cmd.Env = append(os.Environ(), "HERALD_URL="+base, "HERALD_API_KEY="+demoAPIKey, "CHROMIUM="+chromiumPath, "NO_COLOR=1")
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("browser-test.mjs did not finish within 90 s; its output:\n%s", out)
			}
			require.NoError(t, err, "browser-test.mjs failed (%s); its output:\n%s", kind, out)
			t.Logf("browser-test.mjs (%s):\n%s", kind, out)
		})
	}
}

// startHeraldBinary runs `herald serve` on a free loopback port with a new
// data directory (SQLite, or PostgreSQL at databaseURL) and returns its URL.
func startHeraldBinary(t *testing.T, bin, databaseURL string) string {
	t.Helper()
	return startDashboardHerald(t, bin, []string{"HERALD_DATA_DIR=" + t.TempDir(), "HERALD_DATABASE_URL=" + databaseURL,
		"HERALD_SECRET=", "HERALD_API_KEY=" + demoAPIKey})
}
