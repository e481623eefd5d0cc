// Package realtime measures Herald's realtime events: the time from a
// commit to the event on a connected socket, and the memory an idle
// socket costs the server.
//
//	HERALD_BENCH_REALTIME=1 go test ./internal/bench/realtime -run TestRealtimeBench -v -timeout 20m
//
// Environment: HERALD_BENCH_SOCKETS (idle sockets, default 10000),
// HERALD_BENCH_EVENTS (measured events, default 1000), HERALD_BENCH_STORE
// (sqlite or postgres, default sqlite).
package realtime

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/realtime"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// rssKB is the process's resident memory.
func rssKB(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			n, err := strconv.Atoi(strings.Fields(line)[1])
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

func dial(ctx context.Context, url string) (*websocket.Conn, error) {
	conn, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	if _, _, err := conn.Read(ctx); err != nil { // open
		return nil, err
	}
	if err := conn.Write(ctx, websocket.MessageText, []byte("40")); err != nil {
		return nil, err
	}
	if _, _, err := conn.Read(ctx); err != nil { // connected
		return nil, err
	}
	return conn, nil
}

// TestRealtimeIdleClients is the client process of TestRealtimeBench: it
// opens a socket for every URL on stdin, says "ready", and holds them until
// stdin closes.
func TestRealtimeIdleClients(t *testing.T) {
	if os.Getenv("HERALD_BENCH_CLIENT") != "1" {
		t.Skip("the client process of TestRealtimeBench")
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	var urls []string
	for in.Scan() && in.Text() != "" {
		urls = append(urls, in.Text())
	}
	ctx := context.Background()
	conns := make([]*websocket.Conn, len(urls))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	var failed atomic.Int64
	for i, u := range urls {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := dial(ctx, u)
			if err != nil {
				failed.Add(1)
				return
			}
			conns[i] = c
			go func() { // answer pings, as a client does
				for {
					_, b, err := c.Read(ctx)
					if err != nil {
						return
					}
					if string(b) == "2" {
						c.Write(ctx, websocket.MessageText, []byte("3")) //nolint:errcheck
					}
				}
			}()
		}()
	}
	wg.Wait()
	fmt.Printf("ready %d %d\n", len(urls)-int(failed.Load()), failed.Load())
	io.Copy(io.Discard, os.Stdin) //nolint:errcheck
	for _, c := range conns {
		if c != nil {
			c.CloseNow() //nolint:errcheck
		}
	}
}

func TestRealtimeBench(t *testing.T) {
	if os.Getenv("HERALD_BENCH_REALTIME") != "1" {
		t.Skip("set HERALD_BENCH_REALTIME=1")
	}
	sockets, events := envInt("HERALD_BENCH_SOCKETS", 10000), envInt("HERALD_BENCH_EVENTS", 1000)
	kind := os.Getenv("HERALD_BENCH_STORE")
	if kind == "" {
		kind = "sqlite"
	}
	ctx := context.Background()
	keys := testdb.Keys(t)
	var db, other *sqlstore.DB // other: a second process's store on the same PostgreSQL database
	var pgURL string
	if kind == "postgres" {
		u := testdb.NewPostgresSchema(t)
		pgURL = u
		for _, p := range []**sqlstore.DB{&db, &other} {
			s, err := sqlstore.OpenPostgres(ctx, u, keys)
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			*p = s
		}
	} else {
		db = testdb.Open(t, kind)
	}
	a := &app.App{Store: db, Keys: keys}
	first, err := a.Bootstrap(ctx)
	require.NoError(t, err)
	log := slog.New(slog.DiscardHandler)
	d := realtime.NewDispatcher(realtime.NewHub(), db, log)
	var committed atomic.Int64 // when the last inbox change committed (ns)
	db.OnInboxChange(func(c store.InboxChange) {
		committed.Store(time.Now().UnixNano())
		d.Changed(c)
	})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go d.Run(runCtx)
	go d.Listen(runCtx, db.ListenInbox)
	srv := httptest.NewServer(httpapi.New(httpapi.Options{Store: db, Keys: keys, Logger: log, Realtime: d}))
	defer srv.Close()
	defer d.Close()
	env, err := db.EnvironmentGetByName(ctx, "development")
	require.NoError(t, err)
	scope := store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}
	wsURL := "ws" + strings.TrimPrefix(srv.URL, "http") + "/socket.io/?EIO=4&transport=websocket&token="
	token := func(sid string) (string, string) {
		s, _, err := db.SubscriberUpsert(ctx, &store.SubscriberUpsertParams{Scope: scope, SubscriberID: sid, Now: time.Now()})
		require.NoError(t, err)
		tok, err := keys.SignInboxSession(secret.InboxSession{OrganizationID: env.OrganizationID, EnvironmentID: env.ID,
			SubscriberID: s.ID, ExternalID: sid, ExpiresAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)
		return s.ID, tok
	}

	// Idle sockets, held by another process so that only the server's
	// memory is measured.
	var urls strings.Builder
	for i := range sockets {
		_, tok := token(fmt.Sprintf("idle-%d", i))
		urls.WriteString(wsURL + tok + "\n")
	}
	urls.WriteString("\n")
	runtime.GC()
	before := rssKB(t)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heapBefore, stackBefore := ms.HeapInuse, ms.StackInuse
	goBefore := runtime.NumGoroutine()
	client := exec.Command(os.Args[0], "-test.run=^TestRealtimeIdleClients$", "-test.v")
	client.Env = append(os.Environ(), "HERALD_BENCH_CLIENT=1")
	pr, pw := io.Pipe() // closed at the end: the client then lets go
	client.Stdin = io.MultiReader(strings.NewReader(urls.String()), pr)
	out, err := client.StdoutPipe()
	require.NoError(t, err)
	client.Stderr = os.Stderr
	start := time.Now()
	require.NoError(t, client.Start())
	defer func() {
		pw.Close()
		client.Wait() //nolint:errcheck
	}()
	lines := bufio.NewScanner(out)
	var ready string
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), "ready ") {
			ready = lines.Text()
			break
		}
	}
	require.Equal(t, fmt.Sprintf("ready %d 0", sockets), ready)
	deadline := time.Now().Add(time.Minute)
	for d.Hub().Sockets() < sockets {
		require.True(t, time.Now().Before(deadline), "sockets registered: %d", d.Hub().Sockets())
		runtime.Gosched()
	}
	opened := time.Since(start)
	runtime.GC()
	after := rssKB(t)
	runtime.ReadMemStats(&ms)
	perSocket := float64(after-before) * 1024 / float64(sockets)
	t.Logf("%d idle sockets opened in %s: server RSS %d → %d KiB, %.1f KiB per socket (heap %.1f KiB, stacks %.1f KiB, %.1f goroutines per socket)",
		sockets, opened.Round(time.Millisecond), before, after, perSocket/1024,
		float64(ms.HeapInuse-heapBefore)/1024/float64(sockets), float64(ms.StackInuse-stackBefore)/1024/float64(sockets),
		float64(runtime.NumGoroutine()-goBefore)/float64(sockets))

	// Latency: a subscriber's message read and unread in turn, each change
	// timed from its commit to its unread_count_changed on the socket.
	subID, tok := token("hot")
	conn, err := dial(ctx, wsURL+tok)
	require.NoError(t, err)
	defer conn.CloseNow() //nolint:errcheck
	dev := first.Keys["development"]
	call := func(method, path, body string) {
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "ApiKey "+dev)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.Less(t, res.StatusCode, 300, "%s", b)
	}
	call("POST", "/v2/workflows", `{"name":"rt","workflowId":"rt","steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"Hi"}}]}`)
	call("POST", "/v1/events/trigger", `{"name":"rt","to":"hot"}`)
	eng := engine.New(engine.Options{Store: db, Logger: log})
	for {
		n, err := eng.RunOnce(ctx)
		require.NoError(t, err)
		if n == 0 {
			break
		}
	}
	readEvent := func(name string) time.Time {
		for {
			_, b, err := conn.Read(ctx)
			require.NoError(t, err)
			if strings.HasPrefix(string(b), `42["`+name+`"`) {
				return time.Now()
			}
		}
	}
	readEvent(realtime.EventUnreadCountChanged)
	page, err := db.InboxList(ctx, &store.InboxListParams{Scope: scope, SubscriberID: subID, Limit: 1, Now: time.Now()})
	require.NoError(t, err)
	require.Len(t, page.Messages, 1)
	i := 0
	change := func(through *sqlstore.DB) {
		action := store.InboxRead
		if i%2 == 1 {
			action = store.InboxUnread
		}
		i++
		_, err := through.InboxChangeOne(ctx, &store.InboxChangeParams{Scope: scope, SubscriberID: subID, Action: action,
			ID: page.Messages[0].ID, Now: time.Now()})
		require.NoError(t, err)
	}
	measure := func(what string, through *sqlstore.DB) {
		lat := make([]time.Duration, 0, events)
		for range events {
			change(through)
			got := readEvent(realtime.EventUnreadCountChanged)
			lat = append(lat, got.Sub(time.Unix(0, committed.Load())))
		}
		slices.Sort(lat)
		pct := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
		t.Logf("%s, %d idle sockets, %s: commit → unread_count_changed on the socket over %d events: p50 %s, p99 %s, max %s",
			kind, sockets, what, events, pct(0.5).Round(time.Microsecond), pct(0.99).Round(time.Microsecond),
			lat[len(lat)-1].Round(time.Microsecond))
	}
	measure("same process", db)
	if other == nil {
		return
	}
	other.OnInboxChange(func(store.InboxChange) { committed.Store(time.Now().UnixNano()) })
	// The API's LISTEN is up (it started before the idle sockets opened).
	admin, err := sql.Open("pgx", pgURL)
	require.NoError(t, err)
	defer admin.Close()
	deadline = time.Now().Add(30 * time.Second)
	for n := 0; n == 0; {
		require.NoError(t, admin.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_activity WHERE query = 'LISTEN herald_inbox'").Scan(&n))
		require.True(t, time.Now().Before(deadline), "the API never listened")
	}
	measure("through NOTIFY from another process", other)
}
