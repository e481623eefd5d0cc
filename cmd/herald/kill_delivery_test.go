package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider/email/resend/resendfake"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestKilledServerDeliversOnce: SIGKILL while hundreds of e-mails are in
// flight to a provider that takes 200 ms to answer (batches of deliveries
// running beside the workers that claim the next); after a restart every
// acknowledged e-mail is delivered, and none twice: the re-run of a call the
// dead process had made carries the same idempotency key, which the provider
// (Resend) answers without sending again.
func TestKilledServerDeliversOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := heraldBinary(t)
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			env, db := serveStore(t, kind)
			env = append(env, "HERALD_ALLOW_PRIVATE_NETWORKS=true")
			f := resendfake.New()
			defer f.Close()
			f.SetDelay(200 * time.Millisecond)
			count := func(q string) int {
				var n int
				require.NoError(t, db.QueryRow(q).Scan(&n), q)
				return n
			}
			const events = 240
			s := startServer(t, bin, env)
			status, out := s.call(t, "POST", "/v1/integrations", map[string]any{"providerId": "resend", "active": true,
				"credentials": map[string]any(f.Credentials())})
			require.Equal(t, http.StatusCreated, status, "%v", out)
			status, _ = s.call(t, "POST", "/v2/workflows", map[string]any{"name": "Mail", "workflowId": "mail", "steps": []any{
				map[string]any{"name": "Mail", "type": "email", "controlValues": map[string]any{"subject": "Receipt {{ payload.i }}", "body": "x"}}}})
			require.Equal(t, http.StatusCreated, status)
			for i := range 20 {
				status, _ := s.call(t, "POST", "/v2/subscribers", map[string]any{"subscriberId": fmt.Sprintf("m-%d", i),
					"email": fmt.Sprintf("m-%d@example.com", i)})
				require.Equal(t, http.StatusCreated, status)
			}
			for b := 0; b < events; b += 60 {
				var evs []any
				for i := b; i < b+60; i++ {
					evs = append(evs, map[string]any{"name": "mail", "to": fmt.Sprintf("m-%d", i%20), "payload": map[string]any{"i": i}})
				}
				status, out := s.call(t, "POST", "/v1/events/trigger/bulk", map[string]any{"events": evs})
				require.Equal(t, http.StatusCreated, status, "%v", out)
			}
			// Killed while 20 calls are in flight (not only after 20 once
			// were): the calls the dead process made are then made again.
			require.Eventually(t, func() bool { return f.Waiting() >= 20 }, 30*time.Second, time.Millisecond,
				"deliveries never overlapped")
			s.kill(t)
			running := count("SELECT count(*) FROM jobs WHERE status = 'running'")
			t.Logf("killed with %d of %d e-mails received and %d jobs leased", len(f.Received()), events, running)
			_, err := db.Exec("UPDATE jobs SET lease_until = 1 WHERE status = 'running'")
			require.NoError(t, err)

			s = startServer(t, bin, env)
			require.Eventually(t, func() bool { return count("SELECT count(*) FROM jobs WHERE status = 'completed'") == events },
				60*time.Second, 20*time.Millisecond, "the restarted server did not finish its jobs")
			require.Len(t, f.Received(), events, "every acknowledged e-mail sent once")
			require.Greater(t, f.Requests(), events, "the calls the dead process had made were made again, and answered from their keys")
			subjects := map[string]bool{}
			for _, d := range f.Received() {
				require.False(t, subjects[d.Subject], "%s sent twice", d.Subject)
				subjects[d.Subject] = true
			}
			require.Equal(t, events, count("SELECT count(*) FROM messages"))
		})
	}
}
