package main

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/config"
)

// TestCLIEnvironment: `environment list` shows each environment's
// application identifier; `environment set --hmac` turns the subscriberHash
// requirement off and on.
func TestCLIEnvironment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	flags := []string{"--data-dir", dir}

	list, err := run(t, append(flags, "environment", "list")...)
	require.NoError(t, err)
	rows := regexp.MustCompile(`(?m)^(development|production)\s+(app_[0-9a-f]{20})\s+([0-9a-f]{24})\s+required$`).FindAllStringSubmatch(list, -1)
	require.Len(t, rows, 2, list)

	out, err := run(t, append(flags, "environment", "set", "--environment", "development", "--hmac=false")...)
	require.NoError(t, err)
	require.Contains(t, out, "development: subscriberHash not required")
	require.Contains(t, out, "local development only")
	require.Contains(t, out, rows[0][2], "the warning names the identifier")
	list, err = run(t, append(flags, "environment", "list")...)
	require.NoError(t, err)
	require.Regexp(t, `(?m)^development\s+`+rows[0][2]+`\s+\S+\s+not required`, list)
	require.Regexp(t, `(?m)^production\s+\S+\s+\S+\s+required$`, list)

	a, err := app.Open(context.Background(), config.Config{DataDir: dir})
	require.NoError(t, err)
	env, err := a.Store.EnvironmentGetByName(context.Background(), "development")
	require.NoError(t, err)
	require.True(t, env.InboxHMACDisabled)
	require.Equal(t, rows[0][2], env.Identifier)
	require.NoError(t, a.Close())

	out, err = run(t, append(flags, "environment", "set", "--environment", "development", "--hmac")...)
	require.NoError(t, err)
	require.Contains(t, out, "development: subscriberHash required")
	_, err = run(t, append(flags, "environment", "set", "--environment", "development")...)
	require.ErrorContains(t, err, "nothing to set")
	_, err = run(t, append(flags, "environment", "set", "--environment", "staging", "--hmac=false")...)
	require.Error(t, err)
}

// TestServeCORSOrigins: `herald serve --cors-origins` reaches the API, and a
// value that is no origin is refused at start.
func TestServeCORSOrigins(t *testing.T) {
	t.Parallel()
	var out, logs syncBuffer
	base := startServe(t, config.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Role: "all", LogLevel: "error",
		CORSOrigins: "https://app.example.com, http://localhost:5173"}, testConsole(&out, &logs, nil))
	for origin, want := range map[string]string{"http://localhost:5173": "http://localhost:5173", "https://evil.example.com": ""} {
		req, err := http.NewRequest("GET", base+"/health", nil)
		require.NoError(t, err)
		req.Header.Set("Origin", origin)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, want, res.Header.Get("Access-Control-Allow-Origin"), origin)
	}

	err := serve(context.Background(), config.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Role: "all", CORSOrigins: "app.example.com"},
		testConsole(&out, &logs, nil))
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "--cors-origins"), err.Error())
}

// TestConfiguredKeyCopiedAtStart: the key of HERALD_API_KEY, kept without
// an encrypted copy by a store written before migration 0013, gets one at
// start and signs inbox sessions from then on.
func TestConfiguredKeyCopiedAtStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := config.Config{DataDir: t.TempDir(), APIKey: "hk_fixed_for_scripts_123456"}
	a, err := app.Open(ctx, cfg)
	require.NoError(t, err)
	_, err = a.Bootstrap(ctx)
	require.NoError(t, err)
	_, err = a.Store.Writer().ExecContext(ctx, "UPDATE api_keys SET sealed_key = ''")
	require.NoError(t, err)
	env, err := a.Store.EnvironmentGetByName(ctx, "development")
	require.NoError(t, err)
	signing, err := a.Store.APIKeySigningKeys(ctx, env.ID)
	require.NoError(t, err)
	require.Empty(t, signing)
	require.NoError(t, a.Close())

	a, err = app.Open(ctx, cfg)
	require.NoError(t, err)
	defer a.Close()
	signing, err = a.Store.APIKeySigningKeys(ctx, env.ID)
	require.NoError(t, err)
	require.Equal(t, []string{cfg.APIKey}, signing)
}
