package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
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

// testConsole is a console whose terminal, when it has one, is a buffer.
func testConsole(out, log, tty *syncBuffer) console {
	c := console{out: out, log: log, terminal: func() io.WriteCloser { return nil }}
	if tty != nil {
		c.terminal = func() io.WriteCloser { return nopCloser{tty} }
	}
	return c
}

// startServe runs serve in process until the test ends and returns its URL.
func startServe(t *testing.T, cfg config.Config, con console) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, con) }()
	stopped := false
	t.Cleanup(func() {
		cancel()
		if !stopped {
			<-done
		}
	})
	re := regexp.MustCompile(`running at (http://[0-9.:]+)`)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(fmt.Sprint(con.out)); m != nil {
			return m[1]
		}
		select {
		case err := <-done:
			stopped = true
			t.Fatalf("serve stopped: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("serve did not start")
	return ""
}

// TestServeFirstStart runs `herald serve` in process: the banner names the
// URL, the keys go to the terminal only, /health answers, and SIGTERM-style
// cancellation stops it.
func TestServeFirstStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out, logs, tty syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, config.Config{Addr: "127.0.0.1:0", DataDir: dir, Role: "all", APIKey: "hk_fixed_for_scripts_123",
			LogLevel: "info", LogFormat: "json"}, testConsole(&out, &logs, &tty))
	}()
	var base string
	require.Eventually(t, func() bool {
		m := regexp.MustCompile(`running at (http://[0-9.:]+)`).FindStringSubmatch(out.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	}, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return strings.Contains(tty.String(), "Try it") }, 10*time.Second, 10*time.Millisecond)
	keys := tty.String()
	require.Contains(t, keys, "hk_fixed_for_scripts_123", "HERALD_API_KEY becomes the development key")
	require.Contains(t, keys, "curl -s -X POST "+base+"/v2/subscribers")
	prod := regexp.MustCompile(`production\s+(hk_[0-9a-f]{64})`).FindStringSubmatch(keys)
	require.NotNil(t, prod, keys)
	require.Contains(t, out.String(), base+"/openapi.json")

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
	for _, stream := range []string{out.String(), logs.String()} {
		require.NotContains(t, stream, "hk_fixed_for_scripts_123", "keys go to the terminal only")
		require.NotContains(t, stream, prod[1])
	}
	require.Contains(t, logs.String(), `"msg":"request"`, "the JSON log was written")
	require.NoFileExists(t, filepath.Join(dir, keysFileName))
}

// TestServeFirstStartWithoutTerminal: with no terminal (a service, a
// container, output redirected to a file), the first start's keys are
// written to a file only its owner can read; standard output and the JSON
// log name the file, never a key.
func TestServeFirstStartWithoutTerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out, logs syncBuffer
	cfg := config.Config{Addr: "127.0.0.1:0", DataDir: dir, Role: "all", LogLevel: "info", LogFormat: "json"}
	base := startServe(t, cfg, testConsole(&out, &logs, nil))
	path := filepath.Join(dir, keysFileName)
	require.Eventually(t, func() bool { return strings.Contains(out.String(), path) }, 10*time.Second, 10*time.Millisecond)

	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	keys := regexp.MustCompile(`(?m)^\s+(development|production)\s+(hk_[0-9a-f]{64})$`).FindAllStringSubmatch(string(b), -1)
	require.Len(t, keys, 2, "%s", b)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), keysFileName) }, 10*time.Second, 10*time.Millisecond)
	for _, k := range keys {
		require.NotContains(t, out.String(), k[2])
		require.NotContains(t, logs.String(), k[2])
	}
	require.NotContains(t, out.String()+logs.String(), "hk_")
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		require.True(t, json.Valid([]byte(line)), "the log stream stays JSON: %s", line)
	}

	req, _ := http.NewRequest("GET", base+"/v2/subscribers", nil)
	req.Header.Set("Authorization", "ApiKey "+keys[0][2])
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 200, res.StatusCode, "the key in the file works")
}

// TestServeRefusesShortAPIKey: HERALD_API_KEY shorter than 24 characters
// (or not printable) is refused at start, before anything is created.
func TestServeRefusesShortAPIKey(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{
		"hk_only_23_characters__":   "at least 24 characters, not 23",
		"x":                         "at least 24 characters, not 1",
		"hk_has a space_0123456789": "printable ASCII without spaces",
	} {
		dir := filepath.Join(t.TempDir(), "data")
		var out, logs syncBuffer
		err := serve(context.Background(), config.Config{Addr: "127.0.0.1:0", DataDir: dir, Role: "all", APIKey: key},
			testConsole(&out, &logs, nil))
		require.ErrorContains(t, err, "HERALD_API_KEY")
		require.ErrorContains(t, err, want)
		require.NotContains(t, err.Error(), key, "the refused key is not repeated")
		require.NoDirExists(t, dir, "nothing was created")
	}
}

// TestServeWorkerRole: a worker process answers /health, and /metrics with
// its token, only.
func TestServeWorkerRole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, config.Config{Addr: "127.0.0.1:0", DataDir: dir, Role: "worker", LogLevel: "error",
			MetricsToken: "worker-metrics-token"}, testConsole(&out, &out, nil))
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
	res, err = http.Get(base + "/metrics")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 401, res.StatusCode, "the metrics take the token")
	req, err := http.NewRequest("GET", base+"/metrics", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer worker-metrics-token")
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, 200, res.StatusCode)
	require.Contains(t, string(body), `herald_jobs{status="due",type="email"} 0`)
	require.Contains(t, string(body), `go_sql_open_connections{db_name="herald_write"}`)
	cancel()
	require.NoError(t, <-done)

	err = serve(context.Background(), config.Config{Addr: "127.0.0.1:0", DataDir: dir, Role: "both"}, testConsole(&out, &out, nil))
	require.ErrorContains(t, err, "--role must be all, api or worker")
}
