package e2e

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/nodetest"
	"github.com/herald-notify/herald/internal/testdb"
)

// dashboardClientDir is the Node project of the dashboard's browser test.
var dashboardClientDir = filepath.Join("..", "..", "clients", "dashboard-test")

const (
	dashboardAPIKey   = "hk_dashboard_test_0123456789abcdef"
	dashboardEmail    = "ada@example.com"
	dashboardPassword = "correct horse battery staple"
)

// TestDashboardChromium builds herald, runs `herald serve` on a fresh store
// of each kind, makes an account with `herald user create --password-stdin`
// and drives /dashboard/ in headless Chromium with
// clients/dashboard-test/browser-test.mjs: sign-in (wrong, then right),
// navigation, the environment switch, a step's preview and edit, a test
// trigger in Activity with its execution details, a code-first workflow
// synced from clients/bridge-app (marked in the list, its page, a control
// edited, the bridge's preview), the other pages, API key masking,
// sign-out, the 401 and cross-origin 403 of the dashboard's own requests
// replayed, and axe-core on every page; then firefox-test.mjs runs the
// same checks in Firefox ESR (the steps both share are in
// clients/dashboard-test/steps.mjs). Skipped without chromium (and the
// Firefox part without firefox-esr) unless CI=true. SCREENSHOT_DIR keeps
// the pages' screenshots.
func TestDashboardChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("builds herald and runs a browser")
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI=true: %v", chromiumPath, err)
		}
		t.Skipf("%s not found; apt-get install chromium to run the dashboard's browser test", chromiumPath)
	}
	node, npm, goTool := nodetest.RequireTool(t, "node"), nodetest.RequireTool(t, "npm"), nodetest.RequireTool(t, "go")
	nodetest.NpmCI(t, npm, dashboardClientDir)

	bin := filepath.Join(t.TempDir(), "herald")
	out, err := exec.Command(goTool, "build", "-o", bin, "../../cmd/herald").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	for _, kind := range testdb.Kinds { // one after the other: a browser each is enough for this box
		t.Run(kind, func(t *testing.T) {
			env := []string{"HERALD_DATA_DIR=" + t.TempDir(), "HERALD_DATABASE_URL=", "HERALD_SECRET=", "HERALD_API_KEY=" + dashboardAPIKey,
				"HERALD_ALLOW_PRIVATE_NETWORKS=true"} // Send test reaches the browser test's local fake
			if kind == "postgres" {
				env[1] = "HERALD_DATABASE_URL=" + testdb.NewPostgresSchema(t)
			}
			base := startDashboardHerald(t, bin, env)
			create := exec.Command(bin, "user", "create", "--email", dashboardEmail, "--password-stdin")
			create.Env = append(os.Environ(), env...)
			create.Stdin = strings.NewReader(dashboardPassword + "\n")
			out, err := create.CombinedOutput()
			require.NoError(t, err, "herald user create: %s", out)

			ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "browser-test.mjs")
			cmd.Dir = dashboardClientDir
			cmd.Env = append(os.Environ(), "HERALD_URL="+base, "HERALD_API_KEY="+dashboardAPIKey, "HERALD_EMAIL="+dashboardEmail,
				"HERALD_PASSWORD="+dashboardPassword, "CHROMIUM="+chromiumPath, "NO_COLOR=1",
				"BRIDGE_URL="+nodetest.StartBridgeApp(t, dashboardAPIKey)) // a code-first workflow's app (issue 28)
			if dir := os.Getenv("SCREENSHOT_DIR"); dir != "" {
				cmd.Env = append(cmd.Env, "SCREENSHOT_DIR="+filepath.Join(dir, kind))
			}
			out, err = cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("browser-test.mjs did not finish in time; its output:\n%s", out)
			}
			require.NoError(t, err, "browser-test.mjs failed (%s); its output:\n%s", kind, out)
			t.Logf("browser-test.mjs (%s):\n%s", kind, out)

			// The same front end in Firefox (firefox-test.mjs): the first load,
			// the keyboard, the pages, a preview, edit and save, a test trigger
			// in Activity (live, filters), the environment switch, a
			// subscriber, a topic, integrations with Send test, API keys, a
			// layout preview, a 375 px screen, replayed 401/403, sign-out.
			if _, err := os.Stat(firefoxPath); err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatalf("%s is required under CI=true: %v", firefoxPath, err)
				}
				t.Logf("%s not found: the Firefox check is skipped (apt-get install firefox-esr)", firefoxPath)
				return
			}
			ff := exec.CommandContext(ctx, node, "firefox-test.mjs")
			ff.Dir = dashboardClientDir
			ff.Env = append(os.Environ(), "HERALD_URL="+base, "HERALD_API_KEY="+dashboardAPIKey, "HERALD_EMAIL="+dashboardEmail,
				"HERALD_PASSWORD="+dashboardPassword, "FIREFOX="+firefoxPath, "NO_COLOR=1")
			out, err = ff.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("firefox-test.mjs did not finish in time; its output:\n%s", out)
			}
			require.NoError(t, err, "firefox-test.mjs failed (%s); its output:\n%s", kind, out)
			t.Logf("firefox-test.mjs (%s):\n%s", kind, out)
		})
	}
}

// firefoxPath is Debian's Firefox ESR, which .ci/run installs.
const firefoxPath = "/usr/bin/firefox-esr"

// startDashboardHerald runs `herald serve` on a free loopback port with the
// given environment (store, data directory, API key) and returns its URL.
func startDashboardHerald(t *testing.T, bin string, env []string) string {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--log-level", "warn")
	cmd.Env = append(os.Environ(), env...)
	detach(cmd)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var logs bytes.Buffer
	var logMu sync.Mutex
	cmd.Stderr = &lockedWriter{w: &logs, mu: &logMu}
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() {
		defer close(done)
		cmd.Wait() //nolint:errcheck
	}()
	t.Cleanup(func() {
		cmd.Process.Kill() //nolint:errcheck
		<-done
		if t.Failed() {
			logMu.Lock()
			t.Logf("herald log:\n%s", logs.String())
			logMu.Unlock()
		}
	})
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`is running at (http://\S+)`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		io.Copy(io.Discard, stdout) //nolint:errcheck
	}()
	select {
	case base := <-addr:
		return base
	case <-done:
		t.Fatal("herald serve exited")
	case <-time.After(60 * time.Second):
		t.Fatal("herald serve did not start")
	}
	return ""
}
