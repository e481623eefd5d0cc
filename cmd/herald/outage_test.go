package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/testdb"
)

// The outage test (docs/operations.md, "A database that vanishes"): the real
// binary on PostgreSQL behind ../shared/tools/latproxy, which freezes — it
// forwards nothing and closes nothing, as a database host gone from the
// network — while triggers keep coming, then thaws with the connections of
// before dead for good. Every request must be answered within 10 s, /health
// must say 503 while frozen, Herald must serve again within 15 s of the
// thaw without a restart, and every acknowledged trigger must be delivered
// exactly once.

const (
	outageFreeze   = 10 * time.Second // how long the database is gone
	outageAnswer   = 10 * time.Second // the longest a request may wait for its answer
	outageRecovery = 15 * time.Second // the longest Herald may take to serve again after the thaw
)

// latproxy builds and starts ../shared/tools/latproxy in front of the local
// PostgreSQL, with its HTTP control; it returns the proxy's address and a
// function that posts a control command (freeze, thaw?old=dead).
func latproxy(t *testing.T) (string, func(cmd string)) {
	t.Helper()
	src := filepath.Join("..", "..", "..", "shared", "tools", "latproxy", "main.go")
	if _, err := os.Stat(src); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("latproxy is missing (%v): CI runs with ../shared beside the checkout", err)
		}
		t.Skipf("latproxy not found: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "latproxy")
	out, err := exec.Command("go", "build", "-o", bin, src).CombinedOutput()
	require.NoError(t, err, "%s", out)
	listen, control := freeAddr(t), freeAddr(t)
	pg, err := url.Parse(testdb.PostgresURL())
	require.NoError(t, err)
	cmd := exec.Command(bin, "-listen", listen, "-upstream", pg.Host, "-delay", "0", "-control", control)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill() //nolint:errcheck
		cmd.Wait()         //nolint:errcheck
	})
	require.Eventually(t, func() bool {
		res, err := http.Get("http://" + control + "/state")
		if err == nil {
			res.Body.Close()
		}
		return err == nil
	}, 10*time.Second, 50*time.Millisecond, "latproxy did not start: %s", &logs)
	post := func(c string) {
		res, err := http.Post("http://"+control+"/"+c, "", nil)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, c)
	}
	return listen, post
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// answer is one request of the outage test.
type answer struct {
	i              int
	sent, answered time.Time
	status         int // 0: no answer (an error)
	err            error
}

func TestDatabaseVanishes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary for about a minute")
	}
	t.Parallel()
	bin := heraldBinary(t)
	direct := testdb.NewPostgresSchema(t) // skips without PostgreSQL, fails under CI=true
	proxy, control := latproxy(t)
	u, err := url.Parse(direct)
	require.NoError(t, err)
	u.Host = proxy
	db, err := sql.Open("pgx", direct)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })

	s := startServer(t, bin, []string{"HERALD_DATA_DIR=" + t.TempDir(), "HERALD_DATABASE_URL=" + u.String()})
	status, out := s.call(t, "POST", "/v2/workflows", map[string]any{"name": "Outage", "workflowId": "outage", "steps": []any{
		map[string]any{"name": "One", "type": "in_app", "controlValues": map[string]any{"body": "{{payload.i}}"}},
	}})
	require.Equal(t, http.StatusCreated, status, "%v", out)

	client := &http.Client{Timeout: 30 * time.Second} // far beyond what is allowed: a hang shows as a late answer
	send := func(method, path string, body any) (int, error) {
		var rd *bytes.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		} else {
			rd = bytes.NewReader(nil)
		}
		req, err := http.NewRequest(method, s.base+path, rd)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "ApiKey "+testAPIKey)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer res.Body.Close()
		var v map[string]any
		if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
			return res.StatusCode, fmt.Errorf("answer %d is not JSON: %w", res.StatusCode, err)
		}
		return res.StatusCode, nil
	}

	var mu sync.Mutex
	var triggers, health []answer
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// 20 triggers a second, each with its transactionId, and /health four
	// times a second, each request on its own (a hung one holds up nothing).
	loop := func(every time.Duration, do func(i int) answer, into *[]answer) {
		defer wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := do(i)
				mu.Lock()
				*into = append(*into, a)
				mu.Unlock()
			}()
		}
	}
	wg.Add(2)
	go loop(50*time.Millisecond, func(i int) answer {
		a := answer{i: i, sent: time.Now()}
		a.status, a.err = send("POST", "/v1/events/trigger", map[string]any{"name": "outage", "to": fmt.Sprintf("o-%d", i%5),
			"payload": map[string]any{"i": i}, "transactionId": fmt.Sprintf("out-%d", i)})
		a.answered = time.Now()
		return a
	}, &triggers)
	go loop(250*time.Millisecond, func(i int) answer {
		a := answer{i: i, sent: time.Now()}
		a.status, a.err = send("GET", "/health", nil)
		a.answered = time.Now()
		return a
	}, &health)

	time.Sleep(3 * time.Second)
	frozen := time.Now()
	control("freeze")
	time.Sleep(outageFreeze)
	thawed := time.Now()
	control("thaw?old=dead")
	time.Sleep(outageRecovery)
	close(stop)
	wg.Wait()

	// Every request was answered, in time, with a status it may have.
	for _, set := range []struct {
		name    string
		answers []answer
		allowed []int
	}{{"trigger", triggers, []int{http.StatusCreated, http.StatusServiceUnavailable}},
		{"health", health, []int{http.StatusOK, http.StatusServiceUnavailable}}} {
		sort.Slice(set.answers, func(i, j int) bool { return set.answers[i].sent.Before(set.answers[j].sent) })
		var slowest time.Duration
		for _, a := range set.answers {
			require.NoError(t, a.err, "%s %d sent %s after the freeze got no answer", set.name, a.i, a.sent.Sub(frozen))
			require.Contains(t, set.allowed, a.status, "%s %d", set.name, a.i)
			wait := a.answered.Sub(a.sent)
			require.LessOrEqual(t, wait, outageAnswer, "%s %d sent %s after the freeze waited too long", set.name, a.i, a.sent.Sub(frozen))
			slowest = max(slowest, wait)
		}
		t.Logf("%s: %d requests, slowest answer %s", set.name, len(set.answers), slowest.Round(time.Millisecond))
	}
	// While frozen, /health said the database was unreachable.
	sawDown := false
	for _, a := range health {
		if a.sent.After(frozen.Add(time.Second)) && a.answered.Before(thawed) && a.status == http.StatusServiceUnavailable {
			sawDown = true
		}
	}
	require.True(t, sawDown, "/health never answered 503 while the database was gone")
	// After the thaw: from some moment within outageRecovery on, every
	// trigger is acknowledged and every health check is 200.
	recovered := thawed
	for _, set := range [][]answer{triggers, health} {
		for _, a := range set {
			ok := a.status == http.StatusCreated || a.status == http.StatusOK
			if !ok && a.sent.After(recovered) {
				recovered = a.sent
			}
		}
	}
	t.Logf("serving again %s after the thaw (frozen %s)", recovered.Sub(thawed).Round(time.Millisecond), outageFreeze)
	require.LessOrEqual(t, recovered.Sub(thawed), outageRecovery, "Herald did not serve again in time after the thaw")
	require.True(t, time.Since(recovered) > 4*time.Second, "too little time after recovery to tell it stays")

	// Nothing acknowledged is lost, nothing is delivered twice.
	var acked []string
	got := map[string]int{}
	for _, a := range triggers {
		if a.status == http.StatusCreated {
			acked = append(acked, fmt.Sprintf("out-%d", a.i))
		}
	}
	count := func() int {
		rows, err := db.Query("SELECT transaction_id, count(*) FROM messages GROUP BY transaction_id")
		require.NoError(t, err)
		defer rows.Close()
		clear(got)
		for rows.Next() {
			var tx string
			var n int
			require.NoError(t, rows.Scan(&tx, &n))
			got[tx] = n
		}
		require.NoError(t, rows.Err())
		missing := 0
		for _, tx := range acked {
			if got[tx] == 0 {
				missing++
			}
		}
		return missing
	}
	require.Eventually(t, func() bool { return count() == 0 }, 60*time.Second, 250*time.Millisecond,
		"acknowledged triggers without their in-app message")
	for tx, n := range got {
		require.Equal(t, 1, n, "%s was delivered %d times", tx, n)
	}
	unanswered := len(triggers) - len(acked)
	t.Logf("%d triggers acknowledged (each delivered once), %d answered 503 (%d of those written anyway)",
		len(acked), unanswered, len(got)-len(acked))
	select {
	case <-s.done:
		t.Fatalf("herald serve exited during the outage: %s", s.log())
	default:
	}
	require.NotContains(t, strings.ToLower(s.log()), "panic")
}
