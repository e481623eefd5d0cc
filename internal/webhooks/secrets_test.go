package webhooks_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/metrics"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
	"github.com/herald-notify/herald/internal/webhooks"
)

// TestServerSecretRotation: herald secret rotate re-encrypts the endpoints'
// secrets, current and previous; the store opened with the new server
// secret reads them in the clear, and with the old one refuses to start.
func TestServerSecretRotation(t *testing.T) {
	t.Parallel()
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			oldKeys, err := secret.Derive("the old server secret, long enough")
			require.NoError(t, err)
			newKeys, err := secret.Derive("the new server secret, long enough")
			require.NoError(t, err)
			db, reopen := testdb.Reopenable(t, kind, oldKeys)
			require.NoError(t, db.SecretCheck(ctx))
			scope := store.Scope{OrganizationID: "000000000000000000000001", EnvironmentID: "000000000000000000000002"}
			e, err := db.WebhookEndpointCreate(ctx, &store.WebhookEndpointCreateParams{Scope: scope, URL: "https://h.example.com",
				Secret: webhooks.NewSecret(), Now: time.Now()})
			require.NoError(t, err)
			rotated, err := db.WebhookSecretRotate(ctx, &store.WebhookSecretRotateParams{Scope: scope, ID: e.ID,
				Secret: webhooks.NewSecret(), PreviousUntil: time.Now().Add(time.Hour), Now: time.Now()})
			require.NoError(t, err)
			var sealed string
			require.NoError(t, db.Reader().QueryRow("SELECT secret || previous_secret FROM webhook_endpoints").Scan(&sealed))
			require.NotContains(t, sealed, strings.TrimPrefix(rotated.Secret, "whsec_"))
			require.NotContains(t, sealed, strings.TrimPrefix(e.Secret, "whsec_"))

			st, err := db.SecretRotate(ctx, oldKeys, newKeys)
			require.NoError(t, err)
			require.Equal(t, 1, st.WebhookEndpoints)
			again := reopen(newKeys)
			require.NoError(t, again.SecretCheck(ctx))
			got, err := again.WebhookEndpointGet(ctx, scope, e.ID)
			require.NoError(t, err)
			require.Equal(t, rotated.Secret, got.Secret)
			require.Equal(t, e.Secret, got.PreviousSecret)
			stale := reopen(oldKeys)
			require.ErrorIs(t, stale.SecretCheck(ctx), sqlstore.ErrSecretMismatch)
		})
	}
}

// TestMetrics: the attempts' outcomes and the queue's gauges.
func TestMetrics(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *sqlstore.DB) {
		met := metrics.New(metrics.Options{})
		gone := newReceiver(t, status(http.StatusGone))
		flaky := newReceiver(t, func(n int, rw http.ResponseWriter, _ *http.Request) {
			if n == 1 {
				rw.WriteHeader(http.StatusInternalServerError)
			}
		})
		w := newWorld(t, db, webhooks.Options{Metrics: met, Schedule: []time.Duration{0, 10 * time.Millisecond}})
		met.WebhookQueue(w.svc.QueueStats, nil)
		g := w.endpoint(gone.URL)
		f := w.endpoint(flaky.URL)
		w.emit(webhooks.WorkflowCreated, "counted")
		w.waitAttempts(g.ID, 1)
		w.waitAttempts(f.ID, 2)
		count := func(outcome string) string {
			m := regexp.MustCompile(`herald_webhook_deliveries_total\{outcome="` + outcome + `"\} (\S+)`).FindStringSubmatch(scrape(t, met))
			if m == nil {
				return "absent"
			}
			return m[1]
		}
		require.Eventually(t, func() bool { return count("success") == "1" }, 5*time.Second, 5*time.Millisecond)
		require.Equal(t, "1", count("retry"))
		require.Equal(t, "1", count("gone"))
		require.Equal(t, "absent", count("failed"))
		body := scrape(t, met)
		require.Contains(t, body, "herald_webhook_attempts_due 0")
		require.Contains(t, body, "herald_webhook_oldest_due_seconds 0")
	})
}

// scrape is what GET /metrics answers.
func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	return rec.Body.String()
}
