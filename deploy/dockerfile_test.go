package deploy

import (
	"encoding/json"
	"net"
	"os/exec"
	"path"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// instruction is one Dockerfile instruction, its continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, COPY, …
	args string
}

// stage is a FROM and the instructions under it.
type stage struct {
	image, name string
	body        []instruction
}

func parseDockerfile(t *testing.T, text string) []stage {
	t.Helper()
	var stages []stage
	var cur strings.Builder
	flush := func() {
		line := strings.TrimSpace(cur.String())
		cur.Reset()
		if line == "" {
			return
		}
		cmd, args, _ := strings.Cut(line, " ")
		in := instruction{strings.ToUpper(cmd), strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			f = slices.DeleteFunc(f, func(s string) bool { return strings.HasPrefix(s, "--") })
			s := stage{image: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			}
			stages = append(stages, s)
			return
		}
		require.NotEmpty(t, stages, "%s before FROM", in.cmd)
		stages[len(stages)-1].body = append(stages[len(stages)-1].body, in)
	}
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			continue
		}
		if body, ok := strings.CutSuffix(trimmed, `\`); ok {
			cur.WriteString(body + " ")
			continue
		}
		cur.WriteString(trimmed)
		flush()
	}
	flush()
	return stages
}

// all returns the arguments of every cmd instruction of the stage.
func (s stage) all(cmd string) []string {
	var out []string
	for _, in := range s.body {
		if in.cmd == cmd {
			out = append(out, in.args)
		}
	}
	return out
}

// env is the stage's ENV settings (KEY=VALUE form).
func (s stage) env(t *testing.T) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, args := range s.all("ENV") {
		for _, kv := range strings.Fields(args) {
			k, v, ok := strings.Cut(kv, "=")
			require.True(t, ok, "ENV in KEY=VALUE form: %s", args)
			env[k] = strings.Trim(v, `"`)
		}
	}
	return env
}

// exec is an instruction's exec form (a JSON array).
func execForm(t *testing.T, args string) []string {
	t.Helper()
	var argv []string
	require.NoError(t, json.Unmarshal([]byte(args), &argv), "exec form (JSON array): %s", args)
	return argv
}

// copyArgs splits COPY's arguments into its flags, its sources and its destination.
func copyArgs(args string) (flags map[string]string, src []string, dest string) {
	flags = map[string]string{}
	f := strings.Fields(args)
	for len(f) > 0 && strings.HasPrefix(f[0], "--") {
		k, v, _ := strings.Cut(strings.TrimPrefix(f[0], "--"), "=")
		flags[k] = v
		f = f[1:]
	}
	return flags, f[:len(f)-1], f[len(f)-1]
}

// shellWords splits a RUN line into words, expanding $NAME from vars.
func shellWords(line string, vars map[string]string) []string {
	line = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`).ReplaceAllStringFunc(line, func(m string) string {
		return vars[strings.Trim(m, "${}")]
	})
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// TestDockerfile checks the image's contract without a Docker engine: the
// builder on go.mod's Go, a static build, and a final stage that runs
// `herald serve` as a non-root user, reachable from outside, its data on a
// volume it may write, with `herald healthcheck` as its health check.
func TestDockerfile(t *testing.T) {
	t.Parallel()
	stages := parseDockerfile(t, string(readFile(t, "Dockerfile")))
	require.GreaterOrEqual(t, len(stages), 2, "a multi-stage build")
	build, final := stages[0], stages[len(stages)-1]

	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(readFile(t, "go.mod"))
	require.NotNil(t, goVersion)
	require.Equal(t, "golang:"+string(goVersion[1]), build.image, "the builder's Go is go.mod's")
	require.NotEmpty(t, build.name)

	// The build: CGO_ENABLED=0 go build … -o OUT ./cmd/herald. Its flags
	// and package are checked by `go build -n` (which builds nothing).
	var buildLine string
	for _, run := range build.all("RUN") {
		if strings.Contains(run, "go build") {
			buildLine = run
		}
	}
	require.NotEmpty(t, buildLine, "the builder runs go build")
	words := shellWords(buildLine, map[string]string{"TARGETOS": runtime.GOOS, "TARGETARCH": runtime.GOARCH, "VERSION": "test"})
	var env []string
	for len(words) > 0 && strings.Contains(words[0], "=") {
		env, words = append(env, words[0]), words[1:]
	}
	require.Contains(t, env, "CGO_ENABLED=0", "a static binary for a minimal image")
	require.Equal(t, []string{"go", "build"}, words[:2])
	out := words[slices.Index(words, "-o")+1]
	require.Equal(t, "./cmd/herald", words[len(words)-1])
	goBuild := exec.Command("go", append([]string{"build", "-n"}, words[2:]...)...)
	goBuild.Dir = root
	goBuild.Env = append(goBuild.Environ(), env...)
	msg, err := goBuild.CombinedOutput()
	require.NoError(t, err, "%s\n%s", buildLine, msg)

	// The final stage: no toolchain, the binary from the builder.
	require.NotContains(t, final.image, "golang")
	var binary string
	for _, c := range final.all("COPY") {
		flags, src, dest := copyArgs(c)
		if flags["from"] == build.name && slices.Equal(src, []string{out}) {
			binary = dest
		}
	}
	require.NotEmpty(t, binary, "the final stage copies %s from %s", out, build.name)

	users := final.all("USER")
	require.Len(t, users, 1)
	uid, _, _ := strings.Cut(users[0], ":")
	require.Regexp(t, `^[0-9]+$`, uid, "a numeric user, which Kubernetes' runAsNonRoot can verify")
	require.NotEqual(t, "0", uid, "not root")

	vars := final.env(t)
	host, port, err := net.SplitHostPort(vars["HERALD_ADDR"])
	require.NoError(t, err, "HERALD_ADDR")
	require.Equal(t, "0.0.0.0", host, "reachable from outside the container")
	require.Contains(t, strings.Fields(strings.Join(final.all("EXPOSE"), " ")), port, "EXPOSE HERALD_ADDR's port")

	dataDir := vars["HERALD_DATA_DIR"]
	require.NotEmpty(t, dataDir)
	volumes := final.all("VOLUME")
	require.Len(t, volumes, 1)
	require.Equal(t, dataDir, strings.Trim(volumes[0], `[]" `), "the volume is the data directory")
	// The data directory is made in the builder and copied owned by USER:
	// a new named volume mounted there takes that owner.
	owned := false
	for _, c := range final.all("COPY") {
		flags, src, dest := copyArgs(c)
		chownUID, _, _ := strings.Cut(flags["chown"], ":")
		if chownUID != uid || !strings.HasPrefix(dataDir, dest) || len(src) != 1 {
			continue
		}
		made := path.Join(src[0], strings.TrimPrefix(dataDir, dest))
		for _, run := range build.all("RUN") {
			if strings.Contains(run, "mkdir -p "+made) {
				owned = true
			}
		}
	}
	require.True(t, owned, "%s is made in the builder and copied with --chown=%s", dataDir, uid)

	hc := final.all("HEALTHCHECK")
	require.Len(t, hc, 1)
	_, cmd, ok := strings.Cut(hc[0], "CMD ")
	require.True(t, ok, "HEALTHCHECK … CMD")
	require.Equal(t, []string{binary, "healthcheck"}, execForm(t, cmd))

	entry, cmds := final.all("ENTRYPOINT"), final.all("CMD")
	require.Len(t, entry, 1)
	require.Len(t, cmds, 1)
	argv := append(execForm(t, entry[0]), execForm(t, cmds[0])...)
	require.Equal(t, []string{binary, "serve"}, argv)

	// The built herald has the commands the image runs.
	bin := heraldBinary(t)
	for _, sub := range []string{"serve", "healthcheck"} {
		help, err := exec.Command(bin, sub, "--help").CombinedOutput()
		require.NoError(t, err, "herald %s --help: %s", sub, help)
	}
}

// TestDockerignore: the build context keeps what the builder copies.
func TestDockerignore(t *testing.T) {
	t.Parallel()
	stages := parseDockerfile(t, string(readFile(t, "Dockerfile")))
	var needed []string
	for _, c := range stages[0].all("COPY") {
		_, src, _ := copyArgs(c)
		needed = append(needed, src...)
	}
	require.NotEmpty(t, needed)
	for _, line := range strings.Split(string(readFile(t, ".dockerignore")), "\n") {
		line = strings.Trim(strings.TrimSpace(line), "/")
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "!") {
			continue
		}
		for _, n := range needed {
			ok, err := path.Match(line, strings.Trim(n, "./"))
			require.NoError(t, err)
			require.False(t, ok, ".dockerignore's %q leaves %s out of the build context", line, n)
		}
	}
}
