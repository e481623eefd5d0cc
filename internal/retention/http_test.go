package retention_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/config"
	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/metrics"
	"github.com/herald-notify/herald/internal/provider/sms/twilio/twiliofake"
	"github.com/herald-notify/herald/internal/retention"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

const day = 24 * time.Hour

// server is Herald's API and workers on a real store: the API on the real
// clock, the workers on a clock the test moves (delays and digest windows
// end without waiting).
type server struct {
	t       *testing.T
	db      *sqlstore.DB
	handler http.Handler
	key     string
	eng     *engine.Engine
	clock   *clock
	met     *metrics.Metrics
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newServer(t *testing.T, kind string) *server {
	db := testdb.Open(t, kind)
	a := &app.App{Store: db, Keys: testdb.Keys(t)}
	first, err := a.Bootstrap(t.Context())
	require.NoError(t, err)
	log := slog.New(slog.DiscardHandler)
	s := &server{t: t, db: db, key: first.Keys["development"], clock: &clock{t: time.Now().Add(time.Minute)},
		met: metrics.New(metrics.Options{Logger: log})}
	s.handler = httpapi.New(httpapi.Options{Store: db, Keys: a.Keys, Logger: log, Metrics: s.met})
	s.eng = engine.New(engine.Options{Store: db, Logger: log, Metrics: s.met, Now: s.clock.Now,
		Delivery: engine.DeliveryOptions{AllowPrivateNetworks: true}})
	return s
}

// do sends a request with the development key and decodes the answer.
func (s *server) do(method, path string, body any) (int, map[string]any) {
	s.t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(s.t, err)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Authorization", "ApiKey "+s.key)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	var out map[string]any
	if rec.Body.Len() > 0 {
		require.NoError(s.t, json.Unmarshal(rec.Body.Bytes(), &out), rec.Body.String())
	}
	return rec.Code, out
}

func (s *server) ok(method, path string, body any, want int) map[string]any {
	s.t.Helper()
	code, out := s.do(method, path, body)
	require.Equal(s.t, want, code, "%s %s: %v", method, path, out)
	return out
}

// drain runs the workers until no job is due.
func (s *server) drain() {
	s.t.Helper()
	for range 1000 {
		n, err := s.eng.RunOnce(context.Background())
		require.NoError(s.t, err)
		if n == 0 {
			return
		}
	}
	s.t.Fatal("the workers never ran out of due jobs")
}

// trigger sends an event and returns its transactionId's notifications' ids.
func (s *server) trigger(workflow, to, tx string) []string {
	s.t.Helper()
	s.ok("POST", "/v1/events/trigger", map[string]any{"name": workflow, "to": to, "transactionId": tx}, 201)
	return s.notificationIDs(tx)
}

func (s *server) notificationIDs(tx string) []string {
	s.t.Helper()
	var out []string
	for _, n := range list(s.t, s.ok("GET", "/v1/notifications?"+url.Values{"transactionId": {tx}}.Encode(), nil, 200)["data"]) {
		out = append(out, n["_id"].(string))
	}
	return out
}

// age moves a transaction's rows back by d, as if triggered d earlier.
func (s *server) age(tx string, d time.Duration) {
	s.t.Helper()
	for _, table := range []string{"notifications", "jobs", "transactions", "messages", "execution_details"} {
		q := "UPDATE " + table + " SET created_at = created_at - $1 WHERE transaction_id = $2"
		if table == "execution_details" {
			q = "UPDATE execution_details SET created_at = created_at - $1 WHERE notification_id IN" +
				" (SELECT id FROM notifications WHERE transaction_id = $2)"
		}
		_, err := s.db.Writer().ExecContext(s.t.Context(), q, d.Milliseconds(), tx)
		require.NoError(s.t, err, q)
	}
}

func list(t *testing.T, v any) []map[string]any {
	t.Helper()
	arr, ok := v.([]any)
	require.True(t, ok, "not an array: %v", v)
	out := make([]map[string]any, len(arr))
	for i, x := range arr {
		out[i], ok = x.(map[string]any)
		require.True(t, ok)
	}
	return out
}

// TestPurgeThroughTheAPI: a trigger past the activity retention whose work
// is done is gone from every read of the API, its SMS with it, its in-app
// message left in the inbox, its transactionId free again; old triggers
// with an open digest window or a pending delay are kept with their
// reservations and complete after the purge; young ones are untouched.
func TestPurgeThroughTheAPI(t *testing.T) {
	t.Parallel()
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, kind)
			f := twiliofake.New()
			defer f.Close()
			s.ok("POST", "/v1/integrations", map[string]any{"providerId": "twilio", "identifier": "texts", "active": true,
				"credentials": map[string]any(f.Credentials())}, 201)
			s.ok("POST", "/v2/subscribers", map[string]any{"subscriberId": "ada", "phone": "+15555550123"}, 201)
			inbox := func(body string) map[string]any {
				return map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": body}}
			}
			for _, wf := range []map[string]any{
				{"name": "Code", "workflowId": "code", "steps": []any{
					map[string]any{"name": "Text", "type": "sms", "controlValues": map[string]any{"body": "Your code"}}, inbox("code")}},
				{"name": "Batched", "workflowId": "batched", "steps": []any{
					map[string]any{"name": "Batch", "type": "digest", "controlValues": map[string]any{"amount": 1, "unit": "hours"}}, inbox("{{step.total_count}} events")}},
				{"name": "Later", "workflowId": "later", "steps": []any{
					map[string]any{"name": "Wait", "type": "delay", "controlValues": map[string]any{"type": "regular", "amount": 1, "unit": "hours"}},
					inbox("later")}},
			} {
				s.ok("POST", "/v2/workflows", wf, 201)
			}

			done := s.trigger("code", "ada", "old-done")
			digest := s.trigger("batched", "ada", "old-digest")
			delay := s.trigger("later", "ada", "old-delay")
			s.drain()
			young := s.trigger("code", "ada", "young")
			s.drain()
			require.Len(t, f.Received(), 2)
			for _, tx := range []string{"old-done", "old-digest", "old-delay"} {
				s.age(tx, 40*day)
			}
			smsOf := func(tx string) int {
				return len(list(t, s.ok("GET", "/v1/messages?"+url.Values{"channel": {"sms"}, "transactionId": {tx}}.Encode(), nil, 200)["data"]))
			}
			require.Equal(t, 1, smsOf("old-done"))
			feed := func() []map[string]any {
				return list(t, s.ok("GET", "/v1/subscribers/ada/notifications/feed?limit=100", nil, 200)["data"])
			}
			require.Len(t, feed(), 2, "the two code workflows' in-app messages so far")

			details := detailCount(t, s, done[0])
			p := retention.New(retention.Options{Store: s.db, Retention: config.Retention{Activity: 30 * day, Inbox: 365 * day,
				Interval: time.Hour}, Metrics: s.met, Batch: 2, Fixed: true, Logger: slog.New(slog.DiscardHandler)})
			totals, err := p.RunOnce(t.Context())
			require.NoError(t, err)
			require.Equal(t, retention.Totals{"notifications": 1, "jobs": 2, "execution_details": int64(details),
				"messages": 1, "transactions": 1}, totals)
			requireDeleted(t, s.met, map[string]float64{"notifications": 1, "jobs": 2, "execution_details": float64(details),
				"messages": 1, "transactions": 1, "inbox_messages": 0})

			// The finished trigger is gone from every read.
			s.ok("GET", "/v1/notifications/"+done[0], nil, 404)
			require.Empty(t, s.notificationIDs("old-done"))
			for _, n := range list(t, s.ok("GET", "/v1/notifications?limit=100", nil, 200)["data"]) {
				require.NotEqual(t, done[0], n["_id"])
			}
			for _, q := range []string{"subscriberIds=ada", "channels=sms", "workflowIds=code"} {
				for _, n := range list(t, s.ok("GET", "/v1/notifications?"+q, nil, 200)["data"]) {
					require.NotEqual(t, done[0], n["_id"], q)
				}
			}
			require.Zero(t, smsOf("old-done"))
			require.Len(t, feed(), 2, "its in-app message stays (inbox retention)")
			// The unfinished ones and the young one are kept.
			for _, id := range []string{digest[0], delay[0], young[0]} {
				s.ok("GET", "/v1/notifications/"+id, nil, 200)
			}
			require.Equal(t, 1, smsOf("young"))

			// The transactionId is free again; the kept ones are still taken.
			s.ok("POST", "/v1/events/trigger", map[string]any{"name": "code", "to": "ada", "transactionId": "old-done"}, 201)
			s.ok("POST", "/v1/events/trigger", map[string]any{"name": "later", "to": "ada", "transactionId": "old-delay"}, 409)
			s.ok("POST", "/v1/events/trigger", map[string]any{"name": "batched", "to": "ada", "transactionId": "old-digest"}, 409)

			// The kept work completes as if nothing happened: a new event
			// joins the open window, the window and the delay end.
			s.trigger("batched", "ada", "joins")
			s.drain()
			s.clock.Advance(2 * time.Hour)
			s.drain()
			s.clock.Advance(2 * time.Hour)
			s.drain()
			contents := map[string]int{}
			for _, m := range feed() {
				contents[m["content"].(string)]++
			}
			require.Equal(t, map[string]int{"code": 3, "later": 1, "2 events": 1}, contents,
				"three code workflows', the kept delay's, and one digest of the kept window and the event that joined it")
			for _, id := range append(digest, delay...) {
				ev := s.ok("GET", "/v1/notifications/"+id, nil, 200)
				for _, j := range list(t, ev["jobs"]) {
					require.Equal(t, "completed", j["status"], id)
				}
			}

			// Finished now, the two old triggers go at the next run; the
			// in-app messages they made stay.
			totals, err = p.RunOnce(t.Context())
			require.NoError(t, err)
			require.Equal(t, int64(2), totals["notifications"])
			require.Equal(t, int64(2), totals["transactions"])
			s.ok("GET", "/v1/notifications/"+digest[0], nil, 404)
			s.ok("GET", "/v1/notifications/"+delay[0], nil, 404)
			require.Len(t, feed(), 5)
			totals, err = p.RunOnce(t.Context())
			require.NoError(t, err)
			require.Empty(t, totals, "nothing more is due")
		})
	}
}

func detailCount(t *testing.T, s *server, notification string) int {
	t.Helper()
	var n int
	require.NoError(t, s.db.Reader().QueryRow("SELECT count(*) FROM execution_details WHERE notification_id = $1", notification).Scan(&n))
	return n
}

// requireDeleted checks herald_retention_deleted_total by kind.
func requireDeleted(t *testing.T, m *metrics.Metrics, want map[string]float64) {
	t.Helper()
	families, err := m.Registry().Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "herald_retention_deleted_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			got[s.GetLabel()[0].GetValue()] = s.GetCounter().GetValue()
		}
	}
	for k, v := range want {
		require.Equal(t, v, got[k], "kind %s", k)
	}
	require.Len(t, got, len(metrics.RetentionKinds), "every kind exported")
}
