package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/config"
)

// run runs the CLI with args and returns its standard output.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := command(&out, &errOut).Run(context.Background(), append([]string{"herald"}, args...))
	return out.String(), err
}

func TestCLIKeysTokenMigrateVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	flags := []string{"--data-dir", dir}

	out, err := run(t, append(flags, "migrate")...)
	require.NoError(t, err)
	require.Contains(t, out, "migrations applied (sqlite)")

	key, err := run(t, append(flags, "keys", "create", "--environment", "production")...)
	require.NoError(t, err)
	key = strings.TrimSpace(key)
	require.Regexp(t, `^hk_[0-9a-f]{64}$`, key, "create prints only the key")

	list, err := run(t, append(flags, "keys", "list", "--environment", "production")...)
	require.NoError(t, err)
	require.NotContains(t, list, key, "listings never show a whole key")
	require.Contains(t, list, key[:7])
	ids := regexp.MustCompile(`(?m)^([0-9a-f]{24})\s+` + regexp.QuoteMeta(key[:7])).FindStringSubmatch(list)
	require.Len(t, ids, 2, list)

	_, err = run(t, append(flags, "keys", "revoke", "--environment", "production", ids[1])...)
	require.NoError(t, err)
	list, err = run(t, append(flags, "keys", "list", "--environment", "production")...)
	require.NoError(t, err)
	require.Regexp(t, ids[1]+`\s+\S+\s+\S+\s+20\d\d-`, list, "revoked time shown")
	_, err = run(t, append(flags, "keys", "revoke", "--environment", "production", ids[1])...)
	require.Error(t, err, "revoking twice")
	_, err = run(t, append(flags, "keys", "create", "--environment", "staging")...)
	require.Error(t, err, "unknown environment")

	tok, err := run(t, append(flags, "token", "--environment", "development", "--ttl", "5m")...)
	require.NoError(t, err)
	a, err := app.Open(context.Background(), config.Config{DataDir: dir})
	require.NoError(t, err)
	defer a.Close()
	sess, err := a.Keys.VerifySession(strings.TrimSpace(tok))
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(5*time.Minute), sess.ExpiresAt, time.Minute)

	out, err = run(t, "version")
	require.NoError(t, err)
	require.Contains(t, out, "herald ")

	_, err = run(t, append(flags, "--database-url", "mysql://x", "migrate")...)
	require.Error(t, err)
}

// TestServeFirstStart runs `herald serve` in process: the banner names the
// URL and the keys, /health answers, and SIGTERM-style cancellation stops it.
func TestServeFirstStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, config.Config{Addr: "127.0.0.1:0", DataDir: dir, Role: "all", APIKey: "hk_fixed_for_scripts_123",
			LogLevel: "error"}, &out)
	}()
	var base string
	require.Eventually(t, func() bool {
		m := regexp.MustCompile(`running at (http://[0-9.:]+)`).FindStringSubmatch(out.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	}, 10*time.Second, 10*time.Millisecond)
	banner := out.String()
	require.Contains(t, banner, "hk_fixed_for_scripts_123", "HERALD_API_KEY becomes the development key")
	require.Contains(t, banner, "curl -s -X POST "+base+"/v2/subscribers")
	require.Regexp(t, `production\s+hk_[0-9a-f]{64}`, banner)

	res, err := http.Get(base + "/health")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 200, res.StatusCode)

	req, _ := http.NewRequest("GET", base+"/v2/subscribers", nil)
	req.Header.Set("Authorization", "ApiKey hk_fixed_for_scripts_123")
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 200, res.StatusCode)

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	secret, err := os.Stat(dir + "/secret")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), secret.Mode().Perm())
}

// TestServeWorkerRole: a worker process answers /health only.
func TestServeWorkerRole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, config.Config{Addr: "127.0.0.1:0", DataDir: dir, Role: "worker", LogLevel: "error"}, &out)
	}()
	var base string
	require.Eventually(t, func() bool {
		m := regexp.MustCompile(`running at (http://[0-9.:]+)`).FindStringSubmatch(out.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	}, 10*time.Second, 10*time.Millisecond)
	require.Contains(t, out.String(), "role worker")
	res, err := http.Get(base + "/health")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 200, res.StatusCode)
	res, err = http.Get(base + "/v2/subscribers")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 404, res.StatusCode, "no API on a worker")
	cancel()
	require.NoError(t, <-done)

	err = serve(context.Background(), config.Config{Addr: "127.0.0.1:0", DataDir: dir, Role: "both"}, &out)
	require.ErrorContains(t, err, "--role must be all, api or worker")
}
