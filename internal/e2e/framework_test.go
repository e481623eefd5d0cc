package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/nodetest"
	"github.com/herald-notify/herald/internal/provider/email/sendgrid/sendgridfake"
	"github.com/herald-notify/herald/internal/testdb"
)

// frameworkE2EDir is the driver of TestFrameworkApp: it syncs the Novu
// Framework app (nodetest.StartBridgeApp) with the real novu CLI and
// triggers it with @novu/api.
var frameworkE2EDir = filepath.Join("..", "..", "clients", "framework-e2e")

// TestFrameworkApp is issue 28's end-to-end proof with the real npm
// packages, on each store: the @novu/framework 2.13.2 express app of
// clients/bridge-app (strictAuthentication, NOVU_SECRET_KEY = the
// development key) is synced into a running Herald by the real novu CLI
// 2.20.1 and triggered through @novu/api 3.19.1 (clients/framework-e2e's
// run.mjs: in-app content rendered by the framework, an e-mail, a
// digest→delay→in-app summary of 2 events, a step the app skips, bridge
// errors). From Go: the SendGrid wire fake received the e-mail with the
// subject and HTML of the app's step outputs and the step's provider
// override in its request body.
func TestFrameworkApp(t *testing.T) {
	node, npm := nodetest.RequireTool(t, "node"), nodetest.RequireTool(t, "npm")
	nodetest.NpmCI(t, npm, frameworkE2EDir)

	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			base, key, problems := startHeraldWith(t, kind, heraldOptions{AllowPrivate: true})
			mail := sendgridfake.New()
			t.Cleanup(mail.Close)
			createIntegration(t, base, key, map[string]any{"providerId": "sendgrid", "channel": "email",
				"identifier": "sendgrid-fake", "name": "SendGrid (fake)", "active": true, "credentials": mail.Credentials()})
			bridgeURL := nodetest.StartBridgeApp(t, key)

			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "run.mjs")
			cmd.Dir = frameworkE2EDir
			cmd.Env = append(os.Environ(), "HERALD_URL="+base, "HERALD_API_KEY="+key, "BRIDGE_URL="+bridgeURL, "NO_COLOR=1")
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("run.mjs did not finish within 60 s; its output:\n%s", out)
			}
			require.NoError(t, err, "run.mjs failed against Herald (%s); its output:\n%s", kind, out)
			t.Logf("run.mjs (%s):\n%s", kind, out)

			got := mail.Received()
			require.Len(t, got, 1, "one e-mail: welcome's follow-up (the one with a bad payload failed in the bridge)")
			require.Equal(t, "Still there, Ada?", got[0].Subject)
			require.Equal(t, "<p>Your welcome message is unread.</p>", got[0].HTML, "the step's body exactly, no layout")
			require.Len(t, got[0].To, 1)
			require.Regexp(t, `^ada\+.+@example\.com$`, got[0].To[0])
			var body map[string]any
			require.NoError(t, json.Unmarshal(got[0].Body, &body))
			require.Equal(t, []any{"welcome-follow-up"}, body["categories"], "the step's providers.sendgrid override")
			require.Equal(t, "herald-pool", body["ip_pool_name"], "the override's ipPoolName in SendGrid's casing: %s", got[0].Body)
			require.NotContains(t, body, "ipPoolName")
			require.Equal(t, "welcome", got[0].Header.Get("X-Herald-Bridge"), "the override's _passthrough.headers on SendGrid's request")
			require.Equal(t, "bridge", got[0].Query.Get("source"), "and its _passthrough.query on the request's URL")
			require.NotContains(t, body, "_passthrough")
			for _, p := range problems() {
				t.Error(p)
			}
		})
	}
}

// createIntegration creates an integration through Herald's API.
func createIntegration(t *testing.T, base, key string, body map[string]any) {
	t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, base+"/v1/integrations", bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Authorization", "ApiKey "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	require.Equal(t, http.StatusCreated, res.StatusCode, "POST /v1/integrations: %s", answer)
}
