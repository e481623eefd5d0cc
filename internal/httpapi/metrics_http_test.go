package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/provider/email/sendgrid/sendgridfake"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/testdb"
)

// scrape reads GET /metrics (validated against the document) into its
// samples: "name{labels}" (labels as exposed, sorted by name) → value.
func (h *harness) scrape(t *testing.T, auth string) (map[string]float64, string) {
	t.Helper()
	res := h.call(t, auth, "GET", "/metrics", nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
	require.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain; version=0.0.4"), res.Header.Get("Content-Type"))
	samples := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(res.Raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		require.Positive(t, i, line)
		v, err := strconv.ParseFloat(line[i+1:], 64)
		require.NoError(t, err, line)
		samples[line[:i]] = v
	}
	require.NoError(t, sc.Err())
	return samples, string(res.Raw)
}

// TestMetrics: after requests, a trigger and its deliveries (one retried),
// the named series are there with their labels — routes as patterns, never
// raw paths — and plausible values; the job queue is read at scrape time;
// the pools, runtime and process series are served; no secret is.
func TestMetrics(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		f := sendgridfake.New()
		defer f.Close()
		h.sendgridIntegration(t, f, "mail-main")
		h.createWorkflow(t, dev, emailWorkflow("welcome"))
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "firstName": "Ada", "email": "ada@example.com"})
		for range 3 {
			require.Equal(t, 200, h.call(t, dev, "GET", "/v2/subscribers/ada", nil, nil).Status)
		}
		require.Equal(t, 404, h.call(t, dev, "GET", "/v2/subscribers/nobody-here", nil, nil).Status)
		require.Equal(t, 404, h.call(t, dev, "GET", "/no/such/path/ada", nil, nil).Status)
		require.Equal(t, 404, h.call(t, dev, "BREW", "/coffee", nil, nil).Status)
		require.Equal(t, 204, h.serve(newRequest(t, "", "OPTIONS", "/v2/subscribers", nil,
			map[string]string{"Origin": "https://app.test", "Access-Control-Request-Method": "GET"})).Status)

		f.Fail(providertest.Unavailable, 1)
		h.trigger(t, dev, map[string]any{"name": "welcome", "to": "ada", "transactionId": "tx-metrics"})

		m, _ := h.scrape(t, dev)
		require.Equal(t, 1.0, m[`herald_jobs{status="due",type="email"}`], "the trigger's first job waits for a worker")
		require.Equal(t, 0.0, m[`herald_jobs{status="running",type="email"}`])
		require.Contains(t, m, `herald_jobs{status="delayed",type="digest"}`, "known types are there at zero")
		require.Contains(t, m, "herald_jobs_oldest_due_seconds")
		require.Less(t, m["herald_jobs_oldest_due_seconds"], 60.0)

		clock := &testClock{t: time.Now().Add(time.Minute)}
		eng := h.deliveryEngine(clock)
		for range 3 {
			drain(t, eng)
			clock.Advance(10 * time.Second) // past the retry's backoff
		}
		require.Len(t, f.Received(), 1)

		// The queue is read again once its reading is a second old.
		var body string
		require.Eventually(t, func() bool {
			m, body = h.scrape(t, dev)
			return m[`herald_jobs{status="due",type="email"}`] == 0
		}, 5*time.Second, 50*time.Millisecond)
		for _, series := range []string{
			`herald_messages_sent_total{channel="email",outcome="retry",provider="sendgrid"}`,
			`herald_messages_sent_total{channel="email",outcome="sent",provider="sendgrid"}`,
			`herald_messages_sent_total{channel="in_app",outcome="sent",provider="svc"}`,
			`herald_jobs_finished_total{status="completed",type="email"}`,
			`herald_jobs_finished_total{status="completed",type="in_app"}`,
			`herald_job_latency_seconds_count{type="email"}`,
			`herald_job_latency_seconds_count{type="in_app"}`,
			`herald_http_request_duration_seconds_count{code="201",method="POST",route="POST /v1/events/trigger"}`,
			`herald_http_request_duration_seconds_count{code="404",method="GET",route="GET /v2/subscribers/{subscriberId}"}`,
		} {
			require.Equal(t, 1.0, m[series], series)
		}
		require.Equal(t, 3.0, m[`herald_http_request_duration_seconds_count{code="200",method="GET",route="GET /v2/subscribers/{subscriberId}"}`])
		require.Equal(t, 1.0, m[`herald_http_request_duration_seconds_count{code="404",method="GET",route="unmatched"}`])
		require.Equal(t, 1.0, m[`herald_http_request_duration_seconds_count{code="404",method="other",route="unmatched"}`])
		require.Equal(t, 1.0, m[`herald_http_request_duration_seconds_count{code="204",method="OPTIONS",route="OPTIONS (preflight)"}`])
		require.Positive(t, m[`herald_http_request_duration_seconds_count{code="200",method="GET",route="GET /metrics"}`])
		lat := m[`herald_http_request_duration_seconds_sum{code="201",method="POST",route="POST /v1/events/trigger"}`]
		require.True(t, lat > 0 && lat < 10, "the trigger took %v s", lat)
		require.Equal(t, 1.0, m[`herald_http_request_duration_seconds_bucket{code="201",method="POST",route="POST /v1/events/trigger",le="+Inf"}`])
		// Latency counts from the due time of the run that finished the job:
		// the e-mail's retry was due within a second of the first round and
		// ran in the next, 10 s on; the in-app step ran in the round that
		// queued it.
		email, inApp := m[`herald_job_latency_seconds_sum{type="email"}`], m[`herald_job_latency_seconds_sum{type="in_app"}`]
		require.True(t, email >= 8 && email <= 10, "e-mail job latency %v s", email)
		require.True(t, inApp >= 0 && inApp < 1, "in-app job latency %v s", inApp)

		// Pools, runtime, process.
		pools := []string{"herald_write", "herald_read"}
		if h.DB.Dialect() == "postgres" {
			pools = []string{"herald"}
		}
		for _, p := range pools {
			require.Contains(t, m, `go_sql_max_open_connections{db_name="`+p+`"}`)
			require.Contains(t, m, `go_sql_wait_count_total{db_name="`+p+`"}`)
		}
		require.Positive(t, m["go_goroutines"])
		require.Contains(t, m, "process_cpu_seconds_total")
		require.Contains(t, m, "process_resident_memory_bytes")

		// Bounded labels: a route label is a pattern of the table or unmatched.
		routes := map[string]bool{"unmatched": true, "OPTIONS (preflight)": true}
		for _, p := range httpapi.RoutePatterns(h.Handler.(*httpapi.Server)) {
			routes[p] = true
		}
		for _, r := range regexp.MustCompile(`route="([^"]*)"`).FindAllStringSubmatch(body, -1) {
			require.True(t, routes[r[1]], "route label %q", r[1])
		}
		for _, v := range regexp.MustCompile(`="([^"]*)"`).FindAllStringSubmatch(body, -1) {
			for _, raw := range []string{"ada", "nobody-here", "coffee", "tx-metrics", "/no/such"} {
				require.NotContains(t, v[1], raw, "a label value from a request: no raw path, subscriber or transaction")
			}
		}

		// No secret: keys, the server secret, the database's address, the
		// provider's credentials, the subscriber's address.
		secrets := []string{h.DevKey, h.ProdKey, h.DevKey[:12], "ada@example.com", "test-secret-0123456789abcdef",
			testdb.PostgresURL(), "127.0.0.1:5432"}
		for k, v := range f.Credentials() {
			if s, ok := v.(string); ok && len(s) >= 6 && k != "from" && k != "senderName" {
				secrets = append(secrets, s)
			}
		}
		for _, s := range secrets {
			require.False(t, strings.Contains(body, s), "a secret in /metrics: %q", s)
		}
	})
}

// TestJobLatencyObservesEveryFinishedJob: herald_job_latency_seconds and
// herald_jobs_finished_total see each finished job once, with its type and
// from its due time, wherever its end is written: an in-app first step run
// with its trigger, digest events merged at trigger time and by a worker,
// delays and digest windows' leaders completed by the resume of due
// delayed jobs, the steps workers run after them, and a fan-out.
func TestJobLatencyObservesEveryFinishedJob(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		clock := &testClock{t: time.Now().UTC().Truncate(time.Millisecond)}
		h.Handler = httpapi.New(httpapi.Options{Store: h.DB, Keys: h.Keys, Logger: testLogger(t), Metrics: h.Metrics, Now: clock.Now})
		h.DB.SetTriggerPlanner(engine.InAppPlanner(sandbox.New(sandbox.DefaultLimits), h.DB))
		eng := h.newEngine(engine.Options{Now: clock.Now})
		dev := h.authFor(asDev)
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "firstName": "Ada"})
		inbox := map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "Hello"}}
		delay := func(seconds int) map[string]any {
			return map[string]any{"name": "Wait", "type": "delay", "controlValues": map[string]any{"amount": seconds, "unit": "seconds"}}
		}
		digest := map[string]any{"name": "Batch", "type": "digest", "controlValues": map[string]any{"amount": 1, "unit": "minutes"}}
		for key, steps := range map[string][]any{
			"inline":       {inbox},                    // run with the trigger
			"digest-first": {digest, inbox},            // placed at trigger time
			"delay":        {delay(30), inbox},         // resumed 10 s after its delay
			"delay-digest": {delay(10), digest, inbox}, // placed by a worker
		} {
			h.createWorkflow(t, dev, map[string]any{"name": key, "workflowId": key, "steps": steps})
		}
		for _, name := range []string{"inline", "digest-first", "digest-first", "delay", "delay-digest", "delay-digest"} {
			h.trigger(t, dev, map[string]any{"name": name, "to": "ada"})
		}
		series := func(m map[string]float64, name, jobType string) float64 {
			return m[name+`{type="`+jobType+`"}`]
		}
		finished := func(m map[string]float64, jobType, status string) float64 {
			return m[`herald_jobs_finished_total{status="`+status+`",type="`+jobType+`"}`]
		}

		// At trigger time, with no worker: the in-app step and the event
		// merged into the window the first one opened, each due and done at
		// the trigger's time.
		m, _ := h.scrape(t, dev)
		require.Equal(t, 1.0, series(m, "herald_job_latency_seconds_count", "in_app"))
		require.Equal(t, 0.0, series(m, "herald_job_latency_seconds_sum", "in_app"))
		require.Equal(t, 1.0, finished(m, "in_app", "completed"))
		require.Equal(t, 1.0, series(m, "herald_job_latency_seconds_count", "digest"))
		require.Equal(t, 1.0, finished(m, "digest", "merged"))
		require.Equal(t, 0.0, series(m, "herald_job_latency_seconds_count", "delay"))

		// The delays start; nothing ends.
		drain(t, eng)
		m, _ = h.scrape(t, dev)
		require.Equal(t, 0.0, series(m, "herald_job_latency_seconds_count", "delay"))
		require.Equal(t, 1.0, series(m, "herald_job_latency_seconds_count", "digest"))

		// 40 s on: the three delays complete, 10 s and twice 30 s after they
		// ended; the in-app step after the 30 s delay runs (due at the
		// trigger's time: 40 s); the two digest events after the 10 s delays,
		// due as they are queued, are placed by a worker at once, one opening
		// a window for 1 min, the other merged into it.
		clock.Advance(40 * time.Second)
		drain(t, eng)
		m, _ = h.scrape(t, dev)
		require.Equal(t, 3.0, series(m, "herald_job_latency_seconds_count", "delay"))
		require.Equal(t, 70.0, series(m, "herald_job_latency_seconds_sum", "delay"))
		require.Equal(t, 3.0, finished(m, "delay", "completed"))
		require.Equal(t, 2.0, series(m, "herald_job_latency_seconds_count", "digest"))
		require.Equal(t, 0.0, series(m, "herald_job_latency_seconds_sum", "digest"))
		require.Equal(t, 2.0, finished(m, "digest", "merged"))
		require.Equal(t, 2.0, series(m, "herald_job_latency_seconds_count", "in_app"))
		require.Equal(t, 40.0, series(m, "herald_job_latency_seconds_sum", "in_app"))

		// 2 min after the triggers: the window opened at the triggers' time
		// closed 60 s ago, the one opened 40 s on 20 s ago; their leaders
		// complete, and the in-app steps after them run.
		clock.Advance(80 * time.Second)
		drain(t, eng)
		m, _ = h.scrape(t, dev)
		require.Equal(t, 4.0, series(m, "herald_job_latency_seconds_count", "digest"))
		require.Equal(t, 80.0, series(m, "herald_job_latency_seconds_sum", "digest"))
		require.Equal(t, 2.0, finished(m, "digest", "completed"))
		require.Equal(t, 4.0, series(m, "herald_job_latency_seconds_count", "in_app"))
		require.Equal(t, 4.0, finished(m, "in_app", "completed"))
		require.Equal(t, 3.0, series(m, "herald_job_latency_seconds_count", "delay"), "each job once")

		// A fan-out job is observed when its last batch is written.
		res := h.call(t, dev, "POST", "/v2/topics/team/subscriptions", map[string]any{"subscriptions": []any{"ada"}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		h.trigger(t, dev, map[string]any{"name": "inline", "to": []any{map[string]any{"type": "Topic", "topicKey": "team"}}})
		drain(t, eng)
		m, _ = h.scrape(t, dev)
		require.Equal(t, 1.0, series(m, "herald_job_latency_seconds_count", "fanout"))
		require.Equal(t, 1.0, finished(m, "fanout", "completed"))
		require.Equal(t, 5.0, series(m, "herald_job_latency_seconds_count", "in_app"), "the fanned-out step, run by a worker")

		// The in-app steps of the merged notifications never ran: skipped,
		// not observed. No job is left to end.
		require.Equal(t, 2, h.count(t, "SELECT count(*) FROM jobs WHERE status = 'skipped' AND type = 'in_app'"))
		require.Zero(t, finished(m, "in_app", "skipped"))
		require.Zero(t, h.count(t, "SELECT count(*) FROM jobs WHERE status NOT IN ('completed', 'merged', 'skipped')"))
	})
}

// TestMetricsToken: with a metrics token, GET /metrics answers 401 in the
// error shape unless the request carries it as a Bearer token; API keys and
// session tokens are not it. Without one, it is open.
func TestMetricsToken(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		h.scrape(t, "") // open without a token
		const token = "metrics-0123456789-secret"
		h.Handler = httpapi.New(httpapi.Options{Store: h.DB, Keys: h.Keys, Logger: testLogger(t), Metrics: h.Metrics, MetricsToken: token})
		for _, auth := range []string{"", "Bearer", "Bearer wrong", "Bearer " + token + "x", "Bearer " + token[:len(token)-1],
			"ApiKey " + token, "Basic " + token, token, h.authFor(asDev), h.authFor(asSession)} {
			res := h.call(t, auth, "GET", "/metrics", nil, nil)
			require.Equal(t, http.StatusUnauthorized, res.Status, "%q", auth)
			body := res.Object(t)
			require.EqualValues(t, 401, body["statusCode"])
			require.Equal(t, "/metrics", body["path"])
			require.Equal(t, "Unauthorized", body["error"])
			require.NotContains(t, string(res.Raw), token)
		}
		m, body := h.scrape(t, "Bearer "+token)
		require.Contains(t, m, `herald_jobs{status="due",type="in_app"}`)
		require.NotContains(t, body, token)
		h.scrape(t, "bearer  "+token) // the scheme in any case, as everywhere
		require.NotContains(t, logsOf(t), token, "the token is never logged")
	})
}

// TestLogsCarryRequestTransactionAndJobIDs: every line logged with a
// request's context carries its request id (echoed in X-Request-Id) and,
// once authenticated, its environment; a trigger's lines its transaction
// id; a job's lines their job, transaction and environment ids — so that
// one transaction is followed from the request to each delivery.
func TestLogsCarryRequestTransactionAndJobIDs(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		env, err := h.DB.EnvironmentGetByName(context.Background(), "development")
		require.NoError(t, err)
		h.createWorkflow(t, dev, map[string]any{"name": "Hello", "workflowId": "hello", "steps": []any{
			map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "hi"}}}})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada"})

		res := h.call(t, dev, "POST", "/v1/events/trigger", map[string]any{"name": "hello", "to": "ada", "transactionId": "tx-logs-1"},
			map[string]string{"X-Request-Id": "req-logs-1"})
		require.Equal(t, 201, res.Status, "%s", res.Raw)
		require.Equal(t, "req-logs-1", res.Header.Get("X-Request-Id"))
		access := lineWith(t, logsOf(t), "msg=request", "requestId=req-logs-1")
		require.Contains(t, access, "environmentId="+env.ID)
		require.Contains(t, access, "transactionId=tx-logs-1")
		require.Contains(t, access, "path=/v1/events/trigger")

		// A generated id when none (or a bad one) is sent, the same in the log.
		res = h.call(t, dev, "GET", "/v2/subscribers/ada", nil, map[string]string{"X-Request-Id": "bad id"})
		gen := res.Header.Get("X-Request-Id")
		require.Regexp(t, `^[0-9a-f]{16}$`, gen)
		require.NotContains(t, lineWith(t, logsOf(t), "msg=request", "requestId="+gen), "transactionId=")

		// An unauthenticated request: its id, no environment.
		res = h.call(t, "", "GET", "/v2/subscribers/ada", nil, map[string]string{"X-Request-Id": "req-logs-anon"})
		require.Equal(t, 401, res.Status)
		require.NotContains(t, lineWith(t, logsOf(t), "msg=request", "requestId=req-logs-anon"), "environmentId=")

		// A failure's log line carries the request id too.
		srv := h.Handler.(*httpapi.Server)
		srv.HandleForTest("GET /test/boom", func(http.ResponseWriter, *http.Request) error { return errors.New("boom") })
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, newRequest(t, dev, "GET", "/test/boom", nil, map[string]string{"X-Request-Id": "req-logs-boom"}))
		require.Equal(t, 500, rec.Code)
		failed := lineWith(t, logsOf(t), `msg="request failed"`, "requestId=req-logs-boom")
		require.Contains(t, failed, "environmentId="+env.ID)

		// The engine's lines of the trigger's job.
		var engineLog logBuffer
		eng := h.newEngine(engine.Options{Logger: slog.New(slog.NewTextHandler(&engineLog, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		drain(t, eng)
		jobID := h.jobsOf(t, "tx-logs-1")[0]["_id"].(string)
		done := lineWith(t, engineLog.String(), `msg="job finished"`, "jobId="+jobID)
		require.Contains(t, done, "transactionId=tx-logs-1")
		require.Contains(t, done, "environmentId="+env.ID)
		require.Contains(t, done, "status=completed")
	})
}

// lineWith returns the one line of logs containing every part.
func lineWith(t *testing.T, logs string, parts ...string) string {
	t.Helper()
	var found []string
	for _, l := range strings.Split(logs, "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok {
			found = append(found, l)
		}
	}
	require.Len(t, found, 1, "lines with %q in:\n%s", parts, logs)
	return found[0]
}
