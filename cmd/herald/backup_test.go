package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/testdb"
)

// TestBackupUnderLoadRestored is the proof: `herald backup` runs as
// a process of its own beside a `herald serve` that keeps taking triggers;
// the backup is restored into a new data directory and served without
// HERALD_SECRET and without HERALD_API_KEY; every trigger acknowledged
// before the backup started is checked there one by one, the same API key
// works, credentials sealed before the backup open, and a job that was
// waiting on a delay at backup time runs after the restore.
func TestBackupUnderLoadRestored(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := heraldBinary(t)
	dir := t.TempDir()
	env := []string{"HERALD_DATA_DIR=" + dir, "HERALD_DATABASE_URL=", "HERALD_SECRET="}
	s := startServer(t, bin, env)

	status, out := s.call(t, "POST", "/v2/workflows", map[string]any{"name": "Backed", "workflowId": "backed", "steps": []any{
		map[string]any{"name": "Note", "type": "in_app", "controlValues": map[string]any{"body": "backed {{payload.i}}"}},
	}})
	require.Equal(t, http.StatusCreated, status, "%v", out)
	status, out = s.call(t, "POST", "/v2/workflows", map[string]any{"name": "Later", "workflowId": "later", "steps": []any{
		map[string]any{"name": "Wait", "type": "delay", "controlValues": map[string]any{"amount": 8, "unit": "seconds"}},
		map[string]any{"name": "Note", "type": "in_app", "controlValues": map[string]any{"body": "after the delay"}},
	}})
	require.Equal(t, http.StatusCreated, status, "%v", out)
	const sealedKey = "SG.sealed-before-the-backup"
	status, out = s.call(t, "POST", "/v1/integrations", map[string]any{"providerId": "sendgrid", "channel": "email", "name": "SendGrid",
		"identifier": "sendgrid-backup", "active": true, "credentials": map[string]any{"apiKey": sealedKey, "from": "noreply@example.com"}})
	require.Equal(t, http.StatusCreated, status, "%v", out)
	status, out = s.call(t, "POST", "/v1/events/trigger", map[string]any{"name": "later", "to": "waiting", "transactionId": "waiting-1"})
	require.Equal(t, http.StatusCreated, status, "%v", out)

	// The load: triggers from four clients until the backup is done.
	type ack struct {
		tx string
		at time.Time
	}
	var (
		mu       sync.Mutex
		acks     []ack
		failures []string
	)
	stop := make(chan struct{})
	var load sync.WaitGroup
	for c := range 4 {
		load.Add(1)
		go func() {
			defer load.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				tx := fmt.Sprintf("load-%d-%d", c, i)
				code, err := s.post("/v1/events/trigger", map[string]any{"name": "backed", "to": fmt.Sprintf("sub-%d", i%13),
					"payload": map[string]any{"i": i}, "transactionId": tx})
				at := time.Now()
				mu.Lock()
				if err != nil || code != http.StatusCreated {
					failures = append(failures, fmt.Sprintf("%s: %d %v", tx, code, err))
				} else {
					acks = append(acks, ack{tx, at})
				}
				mu.Unlock()
			}
		}()
	}
	acked := func() int { mu.Lock(); defer mu.Unlock(); return len(acks) }
	require.Eventually(t, func() bool { return acked() >= 200 }, 60*time.Second, 5*time.Millisecond)

	archive := filepath.Join(t.TempDir(), "herald.backup")
	backup := exec.Command(bin, "backup", "--out", archive)
	backup.Env = append(os.Environ(), env...)
	started := time.Now()
	backupOut, err := backup.CombinedOutput()
	finished := time.Now()
	require.NoError(t, err, "%s", backupOut)
	require.Contains(t, string(backupOut), "wrote "+archive)
	require.Contains(t, string(backupOut), "with the server secret of "+filepath.Join(dir, "secret"))
	// A little more load after the backup, then stop it.
	n := acked()
	require.Eventually(t, func() bool { return acked() >= n+20 }, 30*time.Second, 5*time.Millisecond)
	close(stop)
	load.Wait()
	require.Empty(t, failures, "the server kept taking triggers")
	var before []string
	during := 0
	for _, a := range acks {
		switch {
		case a.at.Before(started):
			before = append(before, a.tx)
		case a.at.Before(finished):
			during++
		}
	}
	t.Logf("%d triggers acknowledged before the backup started, %d while it ran (%v), %d in all",
		len(before), during, finished.Sub(started).Round(time.Millisecond), len(acks))

	// The ids of the triggers acknowledged before the backup, from the
	// original store.
	orig, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "herald.db")+"?mode=ro&_pragma=busy_timeout(10000)")
	require.NoError(t, err)
	defer orig.Close()
	ids := map[string]string{}
	rows, err := orig.Query("SELECT transaction_id, id FROM notifications")
	require.NoError(t, err)
	for rows.Next() {
		var tx, id string
		require.NoError(t, rows.Scan(&tx, &id))
		ids[tx] = id
	}
	require.NoError(t, rows.Err())
	rows.Close()
	orig.Close()
	s.kill(t) // the original stops: the delayed job can only run in the restored copy

	// Refusals: an existing --out stays as it was.
	archived, err := os.ReadFile(archive)
	require.NoError(t, err)
	again := exec.Command(bin, "backup", "--out", archive)
	again.Env = append(os.Environ(), env...)
	againOut, err := again.CombinedOutput()
	require.Error(t, err, "%s", againOut)
	require.Contains(t, string(againOut), "exists already")
	now, err := os.ReadFile(archive)
	require.NoError(t, err)
	require.Equal(t, archived, now)

	restored := filepath.Join(t.TempDir(), "restored")
	restoreEnv := []string{"HERALD_DATA_DIR=" + restored, "HERALD_DATABASE_URL=", "HERALD_SECRET=", "HERALD_API_KEY="}
	restore := exec.Command(bin, "restore", "--from", archive)
	restore.Env = append(os.Environ(), restoreEnv...)
	restoreOut, err := restore.CombinedOutput()
	require.NoError(t, err, "%s", restoreOut)
	require.Contains(t, string(restoreOut), "restored into "+restored)
	require.Equal(t, []string{"herald.db", "secret"}, dirEntries(t, restored))
	// A second restore into it is refused, and leaves it as it was.
	restore = exec.Command(bin, "restore", "--from", archive)
	restore.Env = append(os.Environ(), restoreEnv...)
	restoreOut, err = restore.CombinedOutput()
	require.Error(t, err, "%s", restoreOut)
	require.Contains(t, string(restoreOut), "is not empty")
	require.Equal(t, []string{"herald.db", "secret"}, dirEntries(t, restored))

	// At backup time the delayed job was waiting: not finished, no message.
	snap, err := sql.Open("sqlite", "file:"+filepath.Join(restored, "herald.db")+"?mode=ro")
	require.NoError(t, err)
	var unfinished, messages int
	require.NoError(t, snap.QueryRow(`SELECT count(*) FROM jobs WHERE notification_id = $1 AND status <> 'completed'`,
		ids["waiting-1"]).Scan(&unfinished))
	require.NoError(t, snap.QueryRow(`SELECT count(*) FROM messages WHERE transaction_id = 'waiting-1'`).Scan(&messages))
	snap.Close()
	require.Positive(t, unfinished, "the delay was pending at backup time")
	require.Zero(t, messages)

	r := startServerEnv(t, bin, restoreEnv)
	for _, tx := range before {
		id := ids[tx]
		require.NotEmpty(t, id, "trigger %s was acknowledged, so committed", tx)
		status, out := r.call(t, "GET", "/v1/notifications/"+id, nil)
		require.Equal(t, http.StatusOK, status, "%s: %v", tx, out)
		require.Equal(t, tx, field(out, "transactionId"), "%s", tx)
	}
	t.Logf("%d of %d notifications of the original are in the backup", countRestored(t, r, ids), len(ids))

	// Sealed credentials open: a dashboard caller of the restored server
	// reads the integration's credentials.
	tok := exec.Command(bin, "token", "--environment", "development")
	tok.Env = append(os.Environ(), restoreEnv...)
	token, err := tok.Output()
	require.NoError(t, err)
	req, err := http.NewRequest("GET", r.base+"/v1/integrations", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
	require.Contains(t, string(body), `"apiKey":"`+sealedKey+`"`)

	// The job pending at backup time runs: its in-app message appears.
	require.Eventually(t, func() bool {
		status, out := r.call(t, "GET", "/v1/subscribers/waiting/notifications/feed", nil)
		return status == http.StatusOK && strings.Contains(fmt.Sprint(out), "after the delay")
	}, 30*time.Second, 100*time.Millisecond, "the delayed in-app message did not appear")
	require.NotContains(t, r.log(), "level=ERROR", "the restored server logged errors")
}

// TestBackupRefusesPostgres: on PostgreSQL `herald backup` says to use
// pg_dump and keep the secret, writes no file, and touches the database not
// at all (no migration ran on the empty schema).
func TestBackupRefusesPostgres(t *testing.T) {
	t.Parallel()
	url := testdb.NewPostgresSchema(t)
	dir := filepath.Join(t.TempDir(), "data")
	out := filepath.Join(t.TempDir(), "herald.backup")
	_, err := run(t, "--data-dir", dir, "--database-url", url, "backup", "--out", out)
	require.Error(t, err)
	require.Contains(t, err.Error(), "pg_dump")
	require.Contains(t, err.Error(), "HERALD_SECRET")
	require.NoFileExists(t, out)
	require.NoDirExists(t, dir)
	db, err := sql.Open("pgx", url)
	require.NoError(t, err)
	defer db.Close()
	var tables int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()").Scan(&tables))
	require.Zero(t, tables, "nothing written to the database")
}

// post sends one trigger-like request from any goroutine and returns the
// status (the test's require cannot run off its goroutine).
func (s *server) post(path string, body any) (int, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequest("POST", s.base+path, bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "ApiKey "+testAPIKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	io.Copy(io.Discard, res.Body) //nolint:errcheck
	return res.StatusCode, nil
}

// field is a top-level string field of a JSON answer, inside "data" when
// the answer is wrapped.
func field(v any, name string) string {
	m, _ := v.(map[string]any)
	if d, ok := m["data"].(map[string]any); ok {
		m = d
	}
	s, _ := m[name].(string)
	return s
}

// countRestored counts the original's notifications the restored server has.
func countRestored(t *testing.T, r *server, ids map[string]string) int {
	t.Helper()
	n := 0
	for _, id := range ids {
		if status, _ := r.call(t, "GET", "/v1/notifications/"+id, nil); status == http.StatusOK {
			n++
		}
	}
	return n
}

func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// startServerEnv starts `herald serve` with exactly env added to the
// test's environment (startServer adds HERALD_API_KEY) and waits until it
// listens.
func startServerEnv(t *testing.T, bin string, env []string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--log-level", "warn")
	cmd.Env = append(os.Environ(), env...)
	detach(cmd)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	s := &server{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = writerFunc(func(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.logs.Write(p) })
	require.NoError(t, cmd.Start())
	go func() {
		defer close(s.done)
		s.cmd.Wait() //nolint:errcheck
	}()
	t.Cleanup(func() {
		cancel()
		<-s.done
		if t.Failed() {
			t.Logf("restored server log:\n%s", s.log())
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
	select {
	case s.base = <-addr:
	case <-s.done:
		t.Fatalf("herald serve exited: %s", s.log())
	case <-time.After(60 * time.Second):
		t.Fatal("herald serve did not start")
	}
	return s
}
