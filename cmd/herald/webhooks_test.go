package main

import (
	"database/sql"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/nodetest"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestWebhooksSurviveRestart: a receiver that verifies Herald's webhooks
// with the standardwebhooks npm package (clients/webhook-receiver) answers
// an event's first attempt 500; Herald is killed (SIGKILL) once that
// attempt is recorded, started again on the same store, and the second
// attempt arrives on schedule, with the same webhook-id, and verifies.
// Then a rotated secret: the next event verifies with the new secret and,
// during the rotation, with the old one.
func TestWebhooksSurviveRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := heraldBinary(t)
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			w := startWebhookServer(t, bin, kind, map[string]any{"url": "/hooks/herald", "eventTypes": []string{"workflow.created"},
				"description": "restart"}, "HERALD_WEBHOOK_RETRY_SCHEDULE=0s,2s")
			rec, env, s, endpoint := w.rec, w.env, w.s, w.endpoint
			id, secret := endpoint["id"].(string), endpoint["secret"].(string)
			rec.Configure([]string{secret}, http.StatusInternalServerError)

			status, out := s.call(t, "POST", "/v2/workflows", map[string]any{"name": "Hooked", "workflowId": "hooked",
				"steps": []any{map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "hi"}}}})
			require.Equal(t, http.StatusCreated, status, "%v", out)
			deliveries := func() []any {
				status, out := s.call(t, "GET", "/v2/webhooks/endpoints/"+id+"/deliveries", nil)
				require.Equal(t, http.StatusOK, status, "%v", out)
				return out.([]any)
			}
			require.Eventually(t, func() bool { return len(deliveries()) == 1 }, 20*time.Second, 20*time.Millisecond,
				"the first attempt was not recorded")
			first := deliveries()[0].(map[string]any)
			require.EqualValues(t, 500, first["statusCode"])
			require.NotNil(t, first["nextAttemptAt"], "a retry is scheduled")
			s.kill(t)

			got := rec.Received()
			require.Len(t, got, 1)
			require.True(t, got[0].Verified, "standardwebhooks verified the first attempt: %s", got[0].Error)
			require.Equal(t, "workflow.created", got[0].Type)
			require.Equal(t, "/hooks/herald", got[0].Path)

			s = startServer(t, bin, env)
			require.Eventually(t, func() bool { return len(rec.Received()) == 2 }, 20*time.Second, 20*time.Millisecond,
				"the second attempt did not come after the restart")
			got = rec.Received()
			require.True(t, got[1].Verified, "standardwebhooks verified the second attempt: %s", got[1].Error)
			require.Equal(t, got[0].ID, got[1].ID, "the same webhook-id on every attempt")
			require.Equal(t, got[0].Body, got[1].Body, "the same body on every attempt")
			body := got[1].Body.(map[string]any)
			require.Equal(t, "workflow", body["object"])
			require.Regexp(t, `^app_`, body["environmentId"])
			require.Equal(t, "hooked", body["data"].(map[string]any)["object"].(map[string]any)["workflowId"])
			require.Eventually(t, func() bool { return len(deliveries()) == 2 }, 10*time.Second, 20*time.Millisecond)
			second := deliveries()[0].(map[string]any)
			require.EqualValues(t, 2, second["attempt"])
			require.Equal(t, true, second["success"])
			require.Nil(t, second["nextAttemptAt"])

			// A rotation: the old secret still signs beside the new one.
			status, out = s.call(t, "POST", "/v2/webhooks/endpoints/"+id+"/rotate-secret", nil)
			require.Equal(t, http.StatusOK, status, "%v", out)
			rotated := out.(map[string]any)["secret"].(string)
			require.NotEqual(t, secret, rotated)
			rec.Configure([]string{rotated})
			status, _ = s.call(t, "POST", "/v2/workflows", map[string]any{"name": "New", "workflowId": "rotated-new"})
			require.Equal(t, http.StatusCreated, status)
			require.Eventually(t, func() bool { return len(rec.Received()) == 3 }, 20*time.Second, 20*time.Millisecond)
			rec.Configure([]string{secret})
			status, _ = s.call(t, "POST", "/v2/workflows", map[string]any{"name": "Old", "workflowId": "rotated-old"})
			require.Equal(t, http.StatusCreated, status)
			require.Eventually(t, func() bool { return len(rec.Received()) == 4 }, 20*time.Second, 20*time.Millisecond)
			got = rec.Received()
			require.True(t, got[2].Verified, "verified with the new secret: %s", got[2].Error)
			require.True(t, got[3].Verified, "verified with the old secret during the rotation: %s", got[3].Error)
			require.NotContains(t, s.log(), "level=ERROR")
			s.kill(t)
		})
	}
}

// TestWebhookEventsSurviveKill: Herald is killed (SIGKILL) right after it
// answered a run of triggers, each of which created an in-app message:
// the message.sent events whose outbox entries were still waiting die with
// nothing but the process. After a restart on the same store every
// message's event reaches the receiver (verified by standardwebhooks),
// each message once.
func TestWebhookEventsSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := heraldBinary(t)
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			// What the killed process had claimed is taken again after 4 s
			// (attempts) and 2 s (outbox entries).
			w := startWebhookServer(t, bin, kind, map[string]any{"url": "/hooks/kill", "eventTypes": []string{"message.sent"}},
				"HERALD_WEBHOOK_TIMEOUT=1s")
			rec, env, db, s := w.rec, w.env, w.db, w.s
			rec.Configure([]string{w.endpoint["secret"].(string)})
			status, out := s.call(t, "POST", "/v2/workflows", map[string]any{"name": "Burst", "workflowId": "burst",
				"steps": []any{map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "hi"}}}})
			require.Equal(t, http.StatusCreated, status, "%v", out)

			const triggers = 30
			for i := range triggers { // known subscribers: their in-app messages are made with the trigger (mostly)
				status, out := s.call(t, "POST", "/v2/subscribers", map[string]any{"subscriberId": fmt.Sprintf("kill-%d", i)})
				require.Equal(t, http.StatusCreated, status, "%v", out)
			}
			for i := range triggers {
				status, out := s.call(t, "POST", "/v1/events/trigger", map[string]any{"name": "burst",
					"to": map[string]any{"subscriberId": fmt.Sprintf("kill-%d", i)}})
				require.Equal(t, http.StatusCreated, status, "%v", out)
			}
			s.kill(t)
			var pending, messages int
			require.NoError(t, db.QueryRow("SELECT count(*) FROM webhook_outbox").Scan(&pending))
			require.NoError(t, db.QueryRow("SELECT count(*) FROM messages WHERE channel = 'in_app'").Scan(&messages))
			t.Logf("killed with %d in-app messages made (the rest by the workers after the restart), %d outbox entries waiting"+
				" and %d events received", messages, pending, len(rec.Received()))

			s = startServer(t, bin, env)
			ids := func() map[string]bool {
				seen := map[string]bool{}
				for _, r := range rec.Received() {
					require.True(t, r.Verified, "standardwebhooks verified it: %s", r.Error)
					require.Equal(t, "message.sent", r.Type)
					seen[r.Body.(map[string]any)["data"].(map[string]any)["object"].(map[string]any)["_id"].(string)] = true
				}
				return seen
			}
			made := func() int {
				var n int
				require.NoError(t, db.QueryRow("SELECT count(*) FROM messages WHERE channel = 'in_app'").Scan(&n))
				return n
			}
			// Every message made has its event (a trigger whose job the
			// killed worker held makes its message when the job's lease
			// ends, later than this test waits).
			byWebhook := func() map[string]string {
				out := map[string]string{}
				for _, r := range rec.Received() {
					msg := r.Body.(map[string]any)["data"].(map[string]any)["object"].(map[string]any)["_id"].(string)
					if prev, ok := out[r.ID]; ok {
						require.Equal(t, prev, msg, "a webhook-id is one event")
					}
					out[r.ID] = msg
				}
				return out
			}
			// One event per message (an attempt repeated after the kill has
			// the same webhook-id).
			require.Eventually(t, func() bool { n := made(); return len(ids()) == n && len(byWebhook()) == n }, 20*time.Second,
				20*time.Millisecond, "a message's event was lost with the process")
			require.GreaterOrEqual(t, len(ids()), messages)
			time.Sleep(500 * time.Millisecond)
			require.Len(t, byWebhook(), len(ids()), "no event made twice")
			require.NoError(t, db.QueryRow("SELECT count(*) FROM webhook_outbox").Scan(&pending))
			require.Zero(t, pending)
			require.NotContains(t, s.log(), "level=ERROR")
			s.kill(t)
		})
	}
}

// webhookServer is herald serve on a fresh store of its kind, with an
// endpoint at a standardwebhooks receiver.
type webhookServer struct {
	rec      *nodetest.WebhookReceiver
	env      []string
	db       *sql.DB
	s        *server
	endpoint map[string]any
}

// startWebhookServer starts a receiver and herald (private networks
// allowed, env added) and creates the endpoint body describes, its url a
// path on the receiver.
func startWebhookServer(t *testing.T, bin, kind string, body map[string]any, env ...string) *webhookServer {
	t.Helper()
	w := &webhookServer{rec: nodetest.StartWebhookReceiver(t)}
	w.env, w.db = serveStore(t, kind)
	w.env = append(append(w.env, "HERALD_ALLOW_PRIVATE_NETWORKS=true"), env...)
	w.s = startServer(t, bin, w.env)
	body["url"] = w.rec.URL + body["url"].(string)
	status, out := w.s.call(t, "POST", "/v2/webhooks/endpoints", body)
	require.Equal(t, http.StatusCreated, status, "%v", out)
	w.endpoint = out.(map[string]any)
	return w
}
