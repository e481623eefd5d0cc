package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/config"
	"github.com/herald-notify/herald/internal/testdb"
)

// runIn runs the CLI with standard input.
func runIn(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := command(&out, &errOut)
	cmd.Reader = strings.NewReader(stdin)
	err := cmd.Run(context.Background(), append([]string{"herald"}, args...))
	return out.String(), err
}

// TestCLIUser: accounts are created with the password from standard input
// only, listed, re-passworded and deleted, on both stores; the store keeps
// an Argon2id hash, never the password.
func TestCLIUser(t *testing.T) {
	t.Parallel()
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			flags := []string{"--data-dir", t.TempDir()}
			if kind == "postgres" {
				flags = append(flags, "--database-url", testdb.NewPostgresSchema(t))
			}
			cli := func(stdin string, args ...string) (string, error) { return runIn(t, stdin, append(flags, args...)...) }

			out, err := cli("", "user", "list")
			require.NoError(t, err)
			require.NotContains(t, out, "@")

			out, err = cli("first password\n", "user", "create", "--email", "Ada@Example.com", "--password-stdin")
			require.NoError(t, err)
			require.Contains(t, out, "ada@example.com")
			_, err = cli("first password\n", "user", "create", "--email", "ada@example.com", "--password-stdin")
			require.ErrorContains(t, err, "exists already")
			_, err = cli("first password\n", "user", "create", "--email", "bob@example.com")
			require.ErrorContains(t, err, "--password-stdin", "never a password argument")
			_, err = cli("short\n", "user", "create", "--email", "bob@example.com", "--password-stdin")
			require.ErrorContains(t, err, "8 to 1024 bytes")
			_, err = cli("long enough\n", "user", "create", "--email", "not an address", "--password-stdin")
			require.ErrorContains(t, err, "not an e-mail address")

			out, err = cli("", "user", "list")
			require.NoError(t, err)
			require.Contains(t, out, "ada@example.com")
			require.NotContains(t, out, "first password")

			_, err = cli("second password\r\n", "user", "set-password", "--email", "ADA@example.com", "--password-stdin")
			require.NoError(t, err)
			_, err = cli("second password\n", "user", "set-password", "--email", "nobody@example.com", "--password-stdin")
			require.Error(t, err)

			_, err = cli("", "user", "delete", "--email", "ada@example.com")
			require.NoError(t, err)
			_, err = cli("", "user", "delete", "--email", "ada@example.com")
			require.Error(t, err, "deleted already")
			out, err = cli("", "user", "list")
			require.NoError(t, err)
			require.NotContains(t, out, "ada@example.com")
		})
	}
}

// TestServePrintsDashboard: serve names the dashboard and, while no
// account exists, how to create one; /dashboard/ answers.
func TestServePrintsDashboard(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out, logs syncBuffer
	base := startServe(t, config.Config{Addr: "127.0.0.1:0", DataDir: dir, Role: "all", LogLevel: "warn"}, testConsole(&out, &logs, nil))
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "Dashboard: "+base+"/dashboard/") }, 10e9, 10e6)
	require.Contains(t, out.String(), "herald --data-dir "+dir+" user create --email you@example.com --password-stdin")
	res, err := http.Get(base + "/dashboard/")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	res, err = http.Get(base + "/dashboard/api/env/development/v2/workflows")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
}
