package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/testdb"
)

// jsClientDir is the Node project that drives the official @novu/js Inbox client.
var jsClientDir = filepath.Join("..", "..", "clients", "novu-js-test")

// TestNovuJSClient runs clients/novu-js-test/run.mjs — the browser Inbox
// client of the established service, @novu/js, in Node — against Herald on
// each store: the client opens its session (new and existing subscribers,
// unread counts, the errors of a wrong or missing subscriberHash and of an
// unknown application identifier) exactly as it does in a page, then lists,
// counts and changes the subscriber's notifications (every single and bulk
// state change) and reads and updates its preferences with the client's own
// methods, checking each result. Every response is validated against
// Herald's OpenAPI document too.
func TestNovuJSClient(t *testing.T) {
	node, npm := requireTool(t, "node"), requireTool(t, "npm")
	npmCI(t, npm, jsClientDir)

	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			base, key, problems := startHerald(t, kind)

			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "run.mjs")
			cmd.Dir = jsClientDir
			cmd.Env = append(os.Environ(), "HERALD_URL="+base, "HERALD_API_KEY="+key, "NO_COLOR=1")
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("run.mjs did not finish within 60 s; its output:\n%s", out)
			}
			require.NoError(t, err, "run.mjs failed against Herald (%s); its output:\n%s", kind, out)
			t.Logf("run.mjs (%s):\n%s", kind, out)
			for _, p := range problems() {
				t.Error(p)
			}
		})
	}
}
