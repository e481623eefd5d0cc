package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/httpapi/openapitest"
	"github.com/herald-notify/herald/internal/realtime"
	"github.com/herald-notify/herald/internal/store/sqlstore"
)

// withRealtime makes h's server serve realtime events from its store's
// after-commit hook, and returns the server on a loopback listener.
func withRealtime(t *testing.T, h *harness) *httptest.Server {
	t.Helper()
	d := startDispatcher(t, h.DB)
	h.Handler = httpapi.New(httpapi.Options{Store: h.DB, Keys: h.Keys, Logger: testLogger(t), Realtime: d})
	srv := httptest.NewServer(h.Handler)
	t.Cleanup(func() {
		d.Close()
		srv.Close()
	})
	return srv
}

// startDispatcher runs a dispatcher fed by db's hook and by other
// processes' NOTIFYs.
func startDispatcher(t *testing.T, db *sqlstore.DB) *realtime.Dispatcher {
	t.Helper()
	d := realtime.NewDispatcher(realtime.NewHub(), db, testLogger(t))
	db.OnInboxChange(d.Changed)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go d.Run(ctx)
	go d.Listen(ctx, db.ListenInbox)
	return d
}

// socket is a socket.io client over a websocket, as @novu/js opens it.
type socket struct {
	t    *testing.T
	conn *websocket.Conn
}

type event struct {
	Name string
	Data map[string]any
	Raw  json.RawMessage // the payload as sent
}

// decodeEvent decodes an event's payload after validating it against the
// OpenAPI document, as the harness validates every HTTP answer.
func decodeEvent(t *testing.T, name string, raw []byte) event {
	t.Helper()
	require.NoError(t, openapitest.CheckEvent(name, raw), "event %s: %s", name, raw)
	e := event{Name: name, Raw: raw}
	require.NoError(t, json.Unmarshal(raw, &e.Data))
	return e
}

func socketURL(srv *httptest.Server, token string) string {
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/socket.io/?" +
		url.Values{"token": {token}, "EIO": {"4"}, "transport": {"websocket"}}.Encode()
}

// dialSocket connects and completes the socket.io handshake.
func dialSocket(t *testing.T, srv *httptest.Server, token string) *socket {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, socketURL(srv, token), nil)
	require.NoError(t, err)
	t.Cleanup(func() { conn.CloseNow() }) //nolint:errcheck
	s := &socket{t: t, conn: conn}
	open := s.read()
	require.True(t, strings.HasPrefix(open, `0{"sid":`), open)
	var hs map[string]any
	require.NoError(t, json.Unmarshal([]byte(open[1:]), &hs))
	require.Equal(t, 25000.0, hs["pingInterval"])
	require.Equal(t, 20000.0, hs["pingTimeout"])
	require.Equal(t, []any{}, hs["upgrades"])
	s.write("40")
	connected := s.read()
	require.True(t, strings.HasPrefix(connected, `40{"sid":"`), connected)
	return s
}

func (s *socket) read() string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	typ, b, err := s.conn.Read(ctx)
	require.NoError(s.t, err)
	require.Equal(s.t, websocket.MessageText, typ)
	return string(b)
}

func (s *socket) write(frame string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(s.t, s.conn.Write(ctx, websocket.MessageText, []byte(frame)))
}

// next is the next event, validated, pings answered on the way.
func (s *socket) next() event {
	s.t.Helper()
	for {
		f := s.read()
		if f == "2" {
			s.write("3")
			continue
		}
		require.True(s.t, strings.HasPrefix(f, "42["), f)
		var arr []json.RawMessage
		require.NoError(s.t, json.Unmarshal([]byte(f[2:]), &arr))
		require.Len(s.t, arr, 2)
		var name string
		require.NoError(s.t, json.Unmarshal(arr[0], &name))
		return decodeEvent(s.t, name, arr[1])
	}
}

// eventStream reads Server-Sent Events.
type eventStream struct {
	t     *testing.T
	lines *bufio.Reader
}

// openEvents opens the event stream of an inbox session's token and reads
// its first line: once it is there, the stream hears every change.
func openEvents(t *testing.T, srv *httptest.Server, token string) *eventStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/inbox/events", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { res.Body.Close() })
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	lines := bufio.NewReader(res.Body)
	first, err := lines.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, ": connected\n", first)
	return &eventStream{t: t, lines: lines}
}

// next is the stream's next event (`event:` then `data:`), validated.
func (s *eventStream) next() event {
	s.t.Helper()
	var name string
	for {
		line, err := s.lines.ReadString('\n')
		require.NoError(s.t, err)
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimSpace(strings.TrimPrefix(line, "event: "))
		case strings.HasPrefix(line, "data: "):
			require.NotEmpty(s.t, name, "data before its event line")
			return decodeEvent(s.t, name, []byte(strings.TrimSpace(strings.TrimPrefix(line, "data: "))))
		}
	}
}

// expect reads the next events and checks their names.
func (s *eventStream) expect(names ...string) []event {
	s.t.Helper()
	out := make([]event, len(names))
	for i, n := range names {
		out[i] = s.next()
		require.Equal(s.t, n, out[i].Name, "event %d: %v", i, out[i])
	}
	return out
}

// expect reads the next events and checks their names.
func (s *socket) expect(names ...string) []event {
	s.t.Helper()
	out := make([]event, len(names))
	for i, n := range names {
		out[i] = s.next()
		require.Equal(s.t, n, out[i].Name, "event %d: %v", i, out[i])
	}
	return out
}

var (
	newMessageEvents = []string{realtime.EventNotificationReceived, realtime.EventUnseenCountChanged, realtime.EventUnreadCountChanged}
	countEvents      = []string{realtime.EventUnseenCountChanged, realtime.EventUnreadCountChanged}
)

func unreadTotal(e event) float64 { return e.Data["counts"].(map[string]any)["total"].(float64) }

// TestRealtimeSocket: the socket.io endpoint refuses bad tokens and
// requests that are not websockets; a connected subscriber's sockets (all
// of them, and no other subscriber's) get notification_received and the
// counts after a trigger, and the counts after a mark-as and a v2 change.
func TestRealtimeSocket(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		srv := withRealtime(t, h)
		dev := h.authFor(asDev)
		identifier := h.identifierOf(t, dev)
		token := h.openSession(t, identifier, h.DevKey, map[string]any{"subscriberId": "rt-1", "firstName": "Ada"})["token"].(string)
		otherToken := h.openSession(t, identifier, h.DevKey, map[string]any{"subscriberId": "rt-2"})["token"].(string)

		t.Run("refused", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			for _, bad := range []string{"", "not-a-token", tamper(token, otherToken), h.Session("development")} {
				_, res, err := websocket.Dial(ctx, socketURL(srv, bad), nil)
				require.Error(t, err)
				require.Equal(t, http.StatusUnauthorized, res.StatusCode, "token %q", bad)
			}
			res, err := http.Get(srv.URL + "/socket.io/?EIO=4&transport=websocket&token=" + url.QueryEscape(token))
			require.NoError(t, err)
			res.Body.Close()
			require.Equal(t, http.StatusBadRequest, res.StatusCode)
			res, err = http.Get(srv.URL + "/socket.io/?EIO=4&transport=polling&token=" + url.QueryEscape(token))
			require.NoError(t, err)
			res.Body.Close()
			require.Equal(t, http.StatusBadRequest, res.StatusCode)
		})

		tab1, tab2 := dialSocket(t, srv, token), dialSocket(t, srv, token)
		other := dialSocket(t, srv, otherToken)
		h.createWorkflow(t, dev, map[string]any{"name": "rt-flow", "workflowId": "rt-flow", "severity": "high", "tags": []string{"t1"},
			"steps": []any{map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{
				"subject": "Hi", "body": "Hello {{subscriber.firstName}}", "redirect": map[string]any{"url": "https://x.test/a"},
				"primaryAction": map[string]any{"label": "Go", "redirect": map[string]any{"url": "https://x.test/go"}}}}}})
		eng := h.newEngine(engine.Options{})
		h.trigger(t, dev, map[string]any{"name": "rt-flow", "to": "rt-1", "transactionId": "rt-tx-1"})
		drain(t, eng)
		var messageID string
		for _, tab := range []*socket{tab1, tab2} {
			got := tab.expect(newMessageEvents...)
			m := got[0].Data["message"].(map[string]any)
			messageID = m["_id"].(string)
			require.Equal(t, "Hello Ada", m["content"])
			require.Equal(t, "Hi", m["subject"])
			require.Equal(t, "in_app", m["channel"])
			require.Equal(t, "rt-tx-1", m["transactionId"])
			require.Equal(t, false, m["read"])
			require.Equal(t, "high", m["severity"])
			require.Equal(t, "rt-1", m["subscriber"].(map[string]any)["subscriberId"])
			cta := m["cta"].(map[string]any)
			require.Equal(t, "https://x.test/a", cta["data"].(map[string]any)["url"])
			require.Equal(t, "Go", cta["action"].(map[string]any)["buttons"].([]any)[0].(map[string]any)["content"])
			wf := m["workflow"].(map[string]any)
			require.Equal(t, "rt-flow", wf["identifier"])
			require.Equal(t, "high", wf["severity"])
			require.Equal(t, map[string]any{"unseenCount": 1.0}, got[1].Data)
			require.Equal(t, map[string]any{"counts": map[string]any{"total": 1.0,
				"severity": map[string]any{"high": 1.0, "medium": 0.0, "low": 0.0, "none": 0.0}}}, got[2].Data)
		}

		// Another subscriber's first event is its own message: rt-1's never reached it.
		h.trigger(t, dev, map[string]any{"name": "rt-flow", "to": "rt-2", "transactionId": "rt-tx-2"})
		drain(t, eng)
		got := other.expect(newMessageEvents...)
		require.Equal(t, "rt-2", got[0].Data["message"].(map[string]any)["subscriber"].(map[string]any)["subscriberId"])

		// The admin API's mark-as.
		res := h.call(t, dev, "POST", markPath("rt-1"), map[string]any{"messageId": messageID, "markAs": "read"}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		for _, tab := range []*socket{tab1, tab2} {
			got := tab.expect(countEvents...)
			require.Equal(t, 0.0, unreadTotal(got[1]))
			require.Equal(t, map[string]any{"unseenCount": 0.0}, got[0].Data) // read is seen too
		}
		// The v2 operations.
		res = h.call(t, dev, "PATCH", "/v2/subscribers/rt-1/notifications/"+messageID+"/unread", nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, 1.0, unreadTotal(tab1.expect(countEvents...)[1]))
		res = h.call(t, dev, "PATCH", "/v2/subscribers/rt-1/notifications/"+messageID+"/archive", nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, 0.0, unreadTotal(tab1.expect(countEvents...)[1]))

		// Pings: the client's pong keeps the socket; a disconnect ends it.
		tab2.write("41")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for { // the events tab2 did not read yet, then the close
			if _, _, err := tab2.conn.Read(ctx); err != nil {
				require.Equal(t, websocket.StatusNormalClosure, websocket.CloseStatus(err), "%v", err)
				break
			}
		}
	})
}

// TestRealtimeEvents: the Server-Sent Events stream carries the same
// events, for the Bearer token, and refuses a bad one.
func TestRealtimeEvents(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		srv := withRealtime(t, h)
		dev := h.authFor(asDev)
		token := h.openSession(t, h.identifierOf(t, dev), h.DevKey, map[string]any{"subscriberId": "sse-1"})["token"].(string)

		for _, bad := range []string{"", "?token=nope"} {
			res, err := http.Get(srv.URL + "/v1/inbox/events" + bad)
			require.NoError(t, err)
			res.Body.Close()
			require.Equal(t, http.StatusUnauthorized, res.StatusCode)
		}
		stream := openEvents(t, srv, token)
		h.createWorkflow(t, dev, map[string]any{"name": "sse-flow", "workflowId": "sse-flow",
			"steps": []any{map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "Hi"}}}})
		h.trigger(t, dev, map[string]any{"name": "sse-flow", "to": "sse-1"})
		drain(t, h.newEngine(engine.Options{}))
		got := stream.expect(newMessageEvents...)
		require.Equal(t, "Hi", got[0].Data["message"].(map[string]any)["content"])
		require.Equal(t, map[string]any{"unseenCount": 1.0}, got[1].Data)
	})
}
