package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFirstStartKeysStayOffTheStreams runs the real binary the way a service
// manager does — no terminal, standard output and the JSON log collected —
// and checks that neither stream carries a first-start API key: they are in
// a file of the data directory that only its owner can read.
func TestFirstStartKeysStayOffTheStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := heraldBinary(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--log-format", "json", "--log-level", "info")
	cmd.Env = append(os.Environ(), "HERALD_DATA_DIR="+dir, "HERALD_DATABASE_URL=", "HERALD_API_KEY=", "HERALD_SECRET=")
	detach(cmd)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var logs syncBuffer
	cmd.Stderr = &logs
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() {
		defer close(done)
		cmd.Wait() //nolint:errcheck
	}()
	t.Cleanup(func() {
		cmd.Process.Kill() //nolint:errcheck
		<-done
	})
	var out syncBuffer
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			out.Write([]byte(sc.Text() + "\n")) //nolint:errcheck
		}
	}()
	path := filepath.Join(dir, keysFileName)
	exited := func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	require.Eventually(t, func() bool { return exited() || strings.Contains(out.String(), path) },
		60*time.Second, 10*time.Millisecond, "no word of the keys file")
	require.False(t, exited(), "herald serve exited: %s", logs.String())
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), keysFileName) }, 10*time.Second, 10*time.Millisecond)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Len(t, regexp.MustCompile(`hk_[0-9a-f]{64}`).FindAllString(string(b), -1), 2)
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	require.NotContains(t, out.String(), "hk_")
	require.NotContains(t, logs.String(), "hk_")
}
