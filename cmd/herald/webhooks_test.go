package main

import (
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
			rec := nodetest.StartWebhookReceiver(t)
			env, _ := serveStore(t, kind)
			env = append(env, "HERALD_ALLOW_PRIVATE_NETWORKS=true", "HERALD_WEBHOOK_RETRY_SCHEDULE=0s,2s")
			s := startServer(t, bin, env)

			status, out := s.call(t, "POST", "/v2/webhooks/endpoints", map[string]any{"url": rec.URL + "/hooks/herald",
				"eventTypes": []string{"workflow.created"}, "description": "restart"})
			require.Equal(t, http.StatusCreated, status, "%v", out)
			endpoint := out.(map[string]any)
			id, secret := endpoint["id"].(string), endpoint["secret"].(string)
			rec.Configure([]string{secret}, http.StatusInternalServerError)

			status, out = s.call(t, "POST", "/v2/workflows", map[string]any{"name": "Hooked", "workflowId": "hooked",
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
