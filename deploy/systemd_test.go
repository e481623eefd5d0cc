package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// unitSettings is a unit file's settings by section, each key's values in order.
func unitSettings(text string) map[string]map[string][]string {
	out := map[string]map[string][]string{}
	section := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
			out[section] = map[string][]string{}
		default:
			k, v, _ := strings.Cut(line, "=")
			out[section][k] = append(out[section][k], v)
		}
	}
	return out
}

// verifyUnit runs `systemd-analyze verify` on unit text, saved as
// herald.service in a directory of its own, and returns what it printed.
func verifyUnit(t *testing.T, analyze, text string) (string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "herald.service")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	return string(out), err
}

// TestSystemdUnit checks deploy/systemd/herald.service: its contract, and
// `systemd-analyze verify` accepting it without a word, its ExecStart= pointed
// at a built herald (the unit names /usr/local/bin/herald, not installed here).
func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	unit := string(readFile(t, "deploy/systemd/herald.service"))
	s := unitSettings(unit)
	svc := s["Service"]
	require.Equal(t, []string{"/usr/local/bin/herald serve"}, svc["ExecStart"])
	require.True(t, svc["DynamicUser"] != nil && svc["DynamicUser"][0] == "yes" || svc["User"] != nil && svc["User"][0] != "root",
		"a non-root user")
	require.Equal(t, []string{"herald"}, svc["StateDirectory"])
	require.Contains(t, svc["Environment"], "HERALD_DATA_DIR=/var/lib/herald", "the data directory is the state directory")
	require.Equal(t, []string{"on-failure"}, svc["Restart"])
	require.Equal(t, []string{"multi-user.target"}, s["Install"]["WantedBy"])

	analyze := tool(t, "systemd-analyze")
	bin := heraldBinary(t)
	runnable := regexp.MustCompile(`(?m)^ExecStart=/usr/local/bin/herald `).ReplaceAllString(unit, "ExecStart="+bin+" ")
	require.NotEqual(t, unit, runnable)
	out, err := verifyUnit(t, analyze, runnable)
	require.NoError(t, err, out)
	require.Empty(t, strings.TrimSpace(out), "systemd-analyze verify says nothing of the unit")

	// The check sees what it should: a misspelt setting and a missing binary.
	out, _ = verifyUnit(t, analyze, strings.Replace(runnable, "ProtectHome=yes", "ProtectHomes=yes", 1))
	require.Contains(t, out, "Unknown key 'ProtectHomes'")
	out, err = verifyUnit(t, analyze, unit)
	if _, statErr := os.Stat("/usr/local/bin/herald"); os.IsNotExist(statErr) {
		require.Error(t, err, "a missing binary fails verify")
		require.Contains(t, out, "/usr/local/bin/herald")
	}
}
