package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/testdb"
)

// The process-kill test builds the real binary, runs `herald serve`, kills
// it with SIGKILL while its workers are busy, starts it again on the same
// store, and checks that every acknowledged trigger yields its messages
// exactly once.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildDir  string
)

// heraldBinary builds cmd/herald once per test binary.
func heraldBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "herald-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "herald")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// server is a running `herald serve` process.
type server struct {
	cmd  *exec.Cmd
	base string
	done chan struct{}
	mu   sync.Mutex
	logs bytes.Buffer
}

// log returns what the process wrote to stderr.
func (s *server) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

const testAPIKey = "hk_kill_test_0123456789abcdef"

// startServer starts `herald serve` and waits until it listens.
func startServer(t *testing.T, bin string, env []string) *server {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--log-level", "warn")
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "HERALD_API_KEY="+testAPIKey)
	detach(cmd) // first-start keys go to a file of the data directory, not to a developer's terminal
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	s := &server{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = writerFunc(func(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.logs.Write(p) })
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill() //nolint:errcheck
			<-s.done
		}
		if t.Failed() {
			t.Logf("server log:\n%s", s.log())
		}
	})
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`is running at (http://\S+)`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		io.Copy(io.Discard, stdout) //nolint:errcheck
	}()
	go func() {
		defer close(s.done)
		s.cmd.Wait() //nolint:errcheck
	}()
	select {
	case s.base = <-addr:
	case <-s.done:
		t.Fatalf("herald serve exited: %s", s.log())
	case <-time.After(60 * time.Second):
		t.Fatal("herald serve did not start")
	}
	return s
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *server) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, s.cmd.Process.Kill())
	<-s.done
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// call sends one API request and decodes the JSON answer.
func (s *server) call(t *testing.T, method, path string, body any) (int, any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "ApiKey "+testAPIKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var out any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	return res.StatusCode, out
}

// TestKilledServerLosesNothing runs the kill test on SQLite and PostgreSQL.
func TestKilledServerLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := heraldBinary(t)
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			env, db := serveStore(t, kind)
			killAndRestart(t, bin, env, db)
		})
	}
}

// serveStore is the environment of a `herald serve` on a fresh store of
// the kind, and a connection of the test's own to that store.
func serveStore(t *testing.T, kind string) ([]string, *sql.DB) {
	t.Helper()
	dir := t.TempDir()
	env := []string{"HERALD_DATA_DIR=" + dir, "HERALD_DATABASE_URL="}
	var db *sql.DB
	var err error
	if kind == "postgres" {
		url := testdb.NewPostgresSchema(t)
		env[1] = "HERALD_DATABASE_URL=" + url
		db, err = sql.Open("pgx", url)
	} else {
		db, err = sql.Open("sqlite", "file:"+filepath.Join(dir, "herald.db")+"?_pragma=busy_timeout(10000)")
	}
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return env, db
}

func killAndRestart(t *testing.T, bin string, env []string, db *sql.DB) {
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		require.NoError(t, db.QueryRow(q, args...).Scan(&n), q)
		return n
	}
	const events, beforeKill = 300, 150

	s := startServer(t, bin, env)
	status, _ := s.call(t, "POST", "/v2/workflows", map[string]any{"name": "Killed", "workflowId": "killed", "steps": []any{
		map[string]any{"name": "One", "type": "in_app", "controlValues": map[string]any{"body": "one {{payload.i}}"}},
		map[string]any{"name": "Two", "type": "in_app", "controlValues": map[string]any{"body": "two {{payload.i}}"}},
	}})
	require.Equal(t, http.StatusCreated, status)
	acknowledged := 0
	trigger := func(i int) {
		status, out := s.call(t, "POST", "/v1/events/trigger", map[string]any{"name": "killed",
			"to": fmt.Sprintf("k-%d", i%7), "payload": map[string]any{"i": i}, "transactionId": fmt.Sprintf("tx-%d", i)})
		require.Equal(t, http.StatusCreated, status, "%v", out)
		require.Equal(t, "processed", out.(map[string]any)["status"])
		acknowledged++
	}
	for i := range beforeKill {
		trigger(i)
	}
	// The workers are busy with what the triggers queued: kill -9 now.
	s.kill(t)
	require.Equal(t, beforeKill, count("SELECT count(*) FROM notifications"), "every acknowledged trigger was committed")
	done := count("SELECT count(*) FROM messages")
	running := count("SELECT count(*) FROM jobs WHERE status = 'running'")
	t.Logf("killed with %d of %d messages created and %d jobs leased", done, 2*beforeKill, running)
	// The dead process's leases run 30 s; let them lapse instead of waiting.
	_, err := db.Exec("UPDATE jobs SET lease_until = 1 WHERE status = 'running'")
	require.NoError(t, err)

	s = startServer(t, bin, env)
	for i := beforeKill; i < events; i++ {
		trigger(i)
	}
	require.Eventually(t, func() bool { return count("SELECT count(*) FROM jobs WHERE status = 'completed'") == 2*events },
		60*time.Second, 20*time.Millisecond, "the restarted server did not finish its jobs")
	require.Equal(t, events, acknowledged)
	require.Equal(t, 2*events, count("SELECT count(*) FROM jobs"))
	require.Equal(t, 2*events, count("SELECT count(*) FROM messages"), "exactly one message per in_app job")
	require.Equal(t, 2*events, count("SELECT count(DISTINCT job_id) FROM messages"))
	for i := range events {
		tx := fmt.Sprintf("tx-%d", i)
		require.Equal(t, 2, count("SELECT count(*) FROM messages WHERE transaction_id = $1", tx), tx)
	}
	// The inbox shows them: each subscriber's feed counts its messages.
	status, out := s.call(t, "GET", "/v1/subscribers/k-0/notifications/feed?limit=1", nil)
	require.Equal(t, http.StatusOK, status)
	require.EqualValues(t, 2*((events+6)/7), out.(map[string]any)["totalCount"])
	require.NotContains(t, s.log(), "level=ERROR", "the restarted server logged errors")
	s.kill(t)
}
