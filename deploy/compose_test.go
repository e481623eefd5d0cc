package deploy

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// composeFile is what the checks read of deploy/compose.yaml.
type composeFile struct {
	Services map[string]struct {
		Image string `yaml:"image"`
		Build struct {
			Context    string `yaml:"context"`
			Dockerfile string `yaml:"dockerfile"`
		} `yaml:"build"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Ports       []string          `yaml:"ports"`
		DependsOn   map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
		Healthcheck struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

var composeVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}`)

// interpolate does Compose's ${VAR}, ${VAR:-default} and ${VAR:?error} with
// env as the environment.
func interpolate(text string, env map[string]string) (string, error) {
	var missing error
	out := composeVar.ReplaceAllStringFunc(text, func(m string) string {
		g := composeVar.FindStringSubmatch(m)
		v, set := env[g[1]]
		if strings.HasPrefix(g[2], ":") && v == "" {
			set = false
		}
		switch {
		case set:
			return v
		case strings.HasSuffix(g[2], "-"):
			return g[3]
		case strings.HasSuffix(g[2], "?"):
			missing = fmt.Errorf("required variable %s is missing a value: %s", g[1], g[3])
		}
		return ""
	})
	return out, missing
}

// TestCompose checks deploy/compose.yaml against the contract and against
// the Dockerfile it builds: herald waits for a healthy PostgreSQL named by its
// service, keeps its secret, and reaches the outside on 0.0.0.0.
func TestCompose(t *testing.T) {
	t.Parallel()
	raw := string(readFile(t, "deploy/compose.yaml"))
	_, err := interpolate(raw, nil)
	require.ErrorContains(t, err, "HERALD_SECRET", "without HERALD_SECRET, compose refuses to start")
	text, err := interpolate(raw, map[string]string{"HERALD_SECRET": "s3cret", "POSTGRES_PASSWORD": "pw"})
	require.NoError(t, err)
	var f composeFile
	require.NoError(t, yaml.Unmarshal([]byte(text), &f))

	pg, ok := f.Services["postgres"]
	require.True(t, ok, "a postgres service")
	require.True(t, strings.HasPrefix(pg.Image, "postgres:"), pg.Image)
	require.NotEmpty(t, pg.Healthcheck.Test)
	namedVolumeAt := func(volumes []string, dir string) bool {
		for _, v := range volumes {
			name, target, _ := strings.Cut(v, ":")
			if _, named := f.Volumes[name]; named && strings.TrimSuffix(target, ":rw") == dir {
				return true
			}
		}
		return false
	}
	require.True(t, namedVolumeAt(pg.Volumes, "/var/lib/postgresql/data"), "PostgreSQL's data in a named volume")

	h, ok := f.Services["herald"]
	require.True(t, ok, "a herald service")
	require.Equal(t, "service_healthy", h.DependsOn["postgres"].Condition)

	stages := parseDockerfile(t, string(readFile(t, "Dockerfile")))
	final := stages[len(stages)-1]
	require.Equal(t, "..", h.Build.Context, "built from the repository's Dockerfile")
	_, err = os.Stat(filepath.Join(root, "deploy", h.Build.Context, h.Build.Dockerfile)) // relative to the compose file
	require.NoError(t, err)
	_, hc, _ := strings.Cut(final.all("HEALTHCHECK")[0], "CMD ")
	require.Equal(t, append([]string{"CMD"}, execForm(t, hc)...), h.Healthcheck.Test, "the image's own health check")

	u, err := url.Parse(h.Environment["HERALD_DATABASE_URL"])
	require.NoError(t, err)
	require.Equal(t, "postgres", u.Scheme)
	require.Equal(t, "postgres", u.Hostname(), "the postgres service")
	pw, _ := u.User.Password()
	require.Equal(t, pg.Environment["POSTGRES_USER"], u.User.Username())
	require.Equal(t, pg.Environment["POSTGRES_PASSWORD"], pw)
	require.Equal(t, "/"+pg.Environment["POSTGRES_DB"], u.Path)

	require.Equal(t, "s3cret", h.Environment["HERALD_SECRET"])
	require.True(t, namedVolumeAt(h.Volumes, final.env(t)["HERALD_DATA_DIR"]), "Herald's data directory in a named volume")

	host, port, err := net.SplitHostPort(h.Environment["HERALD_ADDR"])
	require.NoError(t, err)
	require.Equal(t, "0.0.0.0", host)
	published := false
	for _, p := range h.Ports {
		published = published || strings.HasSuffix(p, ":"+port)
	}
	require.True(t, published, "HERALD_ADDR's port %s is published", port)

	// Compose itself, where its plugin is installed (not on CI's machines).
	if out, err := exec.Command("docker", "compose", "version").CombinedOutput(); err != nil {
		t.Logf("docker compose is not installed, its own check skipped: %s", strings.TrimSpace(string(out)))
		return
	}
	cmd := exec.Command("docker", "compose", "-f", "compose.yaml", "config", "--quiet")
	cmd.Env = append(os.Environ(), "HERALD_SECRET=s3cret")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "docker compose config: %s", out)
}
