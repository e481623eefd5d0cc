package main

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/loadgen"
)

// TestBenchAgainstTheBinary runs `herald bench` against `herald serve` in
// another process, as internal/bench/load/run.sh does, for a second.
func TestBenchAgainstTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	env, _ := serveStore(t, "sqlite")
	s := startServer(t, heraldBinary(t), env)
	out, err := run(t, "bench", "--url", s.base, "--api-key", testAPIKey, "--duration", "1s", "--subscribers", "20",
		"--clients", "4", "--probes", "1", "--feed-duration", "300ms", "--pid", strconv.Itoa(s.cmd.Process.Pid))
	require.NoError(t, err, out)
	require.Regexp(t, `(?m)^errors\s+0$`, out)
	require.Regexp(t, `(?m)^delivered messages/s\s+[1-9]`, out)
	require.Regexp(t, `(?m)^server memory\s+peak \(VmHWM\) [1-9]`, out)

	_, err = run(t, "bench", "--url", s.base, "--api-key", "hk_wrong_0123456789abcdef", "--duration", "100ms", "--subscribers", "1")
	require.ErrorContains(t, err, "creating the workflow: POST /v2/workflows: status 401")
}

// TestBenchBaselineCommand runs the baseline on an empty SQLite store of a
// data directory, then refuses to run it again there.
func TestBenchBaselineCommand(t *testing.T) {
	t.Parallel()
	flags := []string{"--data-dir", t.TempDir(), "--database-url", ""}
	out, err := run(t, append(flags, "bench", "baseline", "--duration", "300ms", "--clients", "4", "--subscribers", "10")...)
	require.NoError(t, err, out)
	require.Regexp(t, `(?m)^baseline store\s+sqlite$`, out)
	require.Regexp(t, `(?m)^baseline messages/s\s+[1-9]`, out)
	require.Regexp(t, `(?m)^errors\s+0$`, out)
	m := regexp.MustCompile(`(?m)^messages stored, counted\s+(\d+), (\d+)$`).FindStringSubmatch(out)
	require.Len(t, m, 3, out)
	require.Equal(t, m[1], m[2])

	_, err = run(t, append(flags, "bench", "baseline", "--duration", "100ms")...)
	require.ErrorIs(t, err, loadgen.ErrNotEmpty)
}
