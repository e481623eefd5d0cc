package webhooks_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/netguard"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/webhooks"
)

// TestDelivery: an event goes once to every enabled endpoint of its
// environment whose types take it, signed, in the contract's envelope, and
// its attempt is listed.
func TestDelivery(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *sqlstore.DB) {
		w := newWorld(t, db, webhooks.Options{})
		all, only, off := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
		eAll := w.endpoint(all.URL + "/all")
		eOnly := w.endpoint(only.URL+"/only", webhooks.MessageRead)
		eOff := w.endpoint(off.URL + "/off")
		w.update(store.WebhookEndpointUpdateParams{ID: eOff.ID, Disabled: ptr(true)})
		before := time.Now().Add(-time.Second)
		w.emit(webhooks.WorkflowCreated, "welcome")
		as := w.waitAttempts(eAll.ID, 1)
		require.Eventually(t, w.idle, 5*time.Second, 5*time.Millisecond)
		require.Empty(t, only.got(), "an endpoint whose types do not name the event gets nothing")
		require.Empty(t, off.got(), "a disabled endpoint gets nothing")
		require.Empty(t, w.attempts(eOnly.ID))

		hits := all.got()
		require.Len(t, hits, 1)
		h := hits[0]
		require.Equal(t, "/all", h.path)
		require.Equal(t, "application/json", h.header.Get("Content-Type"))
		env := envelope(t, h)
		require.Regexp(t, `^evt_[A-Za-z0-9]+$`, env["id"])
		require.Equal(t, env["id"], h.header.Get("webhook-id"))
		require.Equal(t, "workflow.created", env["type"])
		require.Equal(t, "workflow", env["object"])
		require.Equal(t, w.env.Identifier, env["environmentId"])
		require.Regexp(t, `^app_`, env["environmentId"])
		require.Equal(t, map[string]any{"object": map[string]any{"workflowId": "welcome"}}, env["data"])
		ts, err := time.Parse(time.RFC3339, env["timestamp"].(string))
		require.NoError(t, err)
		require.True(t, ts.After(before), "%s", ts)
		sent, err := strconv.ParseInt(h.header.Get("webhook-timestamp"), 10, 64)
		require.NoError(t, err)
		require.InDelta(t, time.Now().Unix(), sent, 5)
		require.Equal(t, 1, verify(t, h, eAll.Secret), "signed with the endpoint's secret")
		require.Zero(t, verify(t, h, eOnly.Secret), "not with another's")

		require.Len(t, as, 1)
		a := as[0]
		require.Equal(t, 1, a.Attempt)
		require.Equal(t, env["id"], a.EventID)
		require.Equal(t, "workflow.created", a.EventType)
		require.NotNil(t, a.StatusCode)
		require.Equal(t, 200, *a.StatusCode)
		require.True(t, a.Success)
		require.Empty(t, a.Error)
		require.NotNil(t, a.AttemptedAt)
		require.Nil(t, a.NextAttemptAt)

		// An endpoint that names the type gets it.
		w.svc.Emit(context.Background(), w.scope, webhooks.Event{Type: webhooks.MessageRead, Data: map[string]any{"object": map[string]any{}}})
		w.waitAttempts(eOnly.ID, 1)
		w.waitAttempts(eAll.ID, 2)
		require.Len(t, only.got(), 1)
		require.Equal(t, 1, verify(t, only.got()[0], eOnly.Secret))
	})
}

// TestRetrySchedule: a failed attempt is followed by the next after the
// schedule's delay, under the same webhook-id and body; the last one the
// schedule allows has no next.
func TestRetrySchedule(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *sqlstore.DB) {
		gap := 300 * time.Millisecond
		w := newWorld(t, db, webhooks.Options{Schedule: []time.Duration{0, gap, gap}})
		flaky := newReceiver(t, func(n int, rw http.ResponseWriter, _ *http.Request) {
			if n < 3 {
				rw.WriteHeader(http.StatusInternalServerError)
				return
			}
			rw.WriteHeader(http.StatusNoContent)
		})
		e := w.endpoint(flaky.URL)
		w.emit(webhooks.WorkflowUpdated, "flaky")
		as := w.waitAttempts(e.ID, 3)
		hits := flaky.got()
		require.Len(t, hits, 3)
		for i, a := range as {
			require.Equal(t, i+1, a.Attempt)
			require.Equal(t, hits[0].header.Get("webhook-id"), hits[i].header.Get("webhook-id"), "the same id on every attempt")
			require.Equal(t, hits[0].body, hits[i].body, "the same body on every attempt")
			require.Equal(t, 1, verify(t, hits[i], e.Secret))
		}
		for i := 1; i < 3; i++ {
			require.GreaterOrEqual(t, hits[i].at.Sub(hits[i-1].at), gap-20*time.Millisecond, "attempt %d came before its delay", i+1)
		}
		require.Equal(t, 500, *as[0].StatusCode)
		require.False(t, as[0].Success)
		require.Equal(t, "The endpoint answered 500 Internal Server Error", as[0].Error)
		require.NotNil(t, as[0].NextAttemptAt)
		require.WithinDuration(t, as[0].AttemptedAt.Add(gap), *as[0].NextAttemptAt, 200*time.Millisecond)
		require.NotNil(t, as[1].NextAttemptAt)
		require.Equal(t, 204, *as[2].StatusCode)
		require.True(t, as[2].Success)
		require.Nil(t, as[2].NextAttemptAt)

		// Always failing: the schedule's attempts, then none.
		down := newReceiver(t, status(http.StatusServiceUnavailable))
		d := w.endpoint(down.URL, webhooks.WorkflowDeleted)
		w.emit(webhooks.WorkflowDeleted, "down")
		as = w.waitAttempts(d.ID, 3)
		require.Eventually(t, w.idle, 5*time.Second, 5*time.Millisecond)
		require.Len(t, w.attempts(d.ID), 3, "no attempt beyond the schedule")
		require.Nil(t, as[2].NextAttemptAt, "none will come")
		require.False(t, as[2].Success)
	})
}

// TestGoneDisables: a 410 disables the endpoint with no retry; events while
// it is disabled are never sent to it, not even once it is enabled again;
// disabling an endpoint cancels its pending retries.
func TestGoneDisables(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *sqlstore.DB) {
		w := newWorld(t, db, webhooks.Options{Schedule: []time.Duration{0, 50 * time.Millisecond}})
		gone := newReceiver(t, func(n int, rw http.ResponseWriter, _ *http.Request) {
			if n == 1 {
				rw.WriteHeader(http.StatusGone)
			}
		})
		e := w.endpoint(gone.URL)
		w.emit(webhooks.WorkflowCreated, "first")
		as := w.waitAttempts(e.ID, 1)
		require.Equal(t, 410, *as[0].StatusCode)
		require.Nil(t, as[0].NextAttemptAt, "no retry after a 410")
		got, err := db.WebhookEndpointGet(context.Background(), w.scope, e.ID)
		require.NoError(t, err)
		require.True(t, got.Disabled)
		// The emitter still remembers the endpoint enabled: the store's
		// transaction, which reads the endpoints, stores nothing.
		w.emit(webhooks.WorkflowCreated, "while-disabled")
		require.Eventually(t, w.idle, 5*time.Second, 5*time.Millisecond)
		w.update(store.WebhookEndpointUpdateParams{ID: e.ID, Disabled: ptr(false)})
		w.emit(webhooks.WorkflowCreated, "enabled-again")
		w.waitAttempts(e.ID, 2)
		require.Eventually(t, w.idle, 5*time.Second, 5*time.Millisecond)
		hits := gone.got()
		require.Len(t, hits, 2)
		require.Equal(t, "enabled-again", envelope(t, hits[1])["data"].(map[string]any)["object"].(map[string]any)["workflowId"])

		// Disabling cancels what was scheduled.
		slow := newWorld(t, db, webhooks.Options{Schedule: []time.Duration{0, time.Hour}})
		failing := newReceiver(t, status(http.StatusBadGateway))
		f := slow.endpoint(failing.URL, webhooks.WorkflowPublished)
		slow.emit(webhooks.WorkflowPublished, "pending")
		as = slow.waitAttempts(f.ID, 1)
		require.NotNil(t, as[0].NextAttemptAt)
		require.False(t, slow.idle(), "the retry waits an hour")
		slow.update(store.WebhookEndpointUpdateParams{ID: f.ID, Disabled: ptr(true)})
		require.True(t, slow.idle(), "disabling canceled the retry")
		require.Len(t, slow.attempts(f.ID), 1)
	})
}

// TestTimeoutAndRedirect: a receiver that never answers fails its attempt
// at the time limit without an HTTP status, holding no sender beyond it;
// a redirect is an answer like any other, not followed.
func TestTimeoutAndRedirect(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *sqlstore.DB) {
		limit := 250 * time.Millisecond
		release := make(chan struct{})
		t.Cleanup(func() { close(release) })
		w := newWorld(t, db, webhooks.Options{Timeout: limit, Concurrency: 1, Schedule: []time.Duration{0}})
		hang := newReceiver(t, func(_ int, _ http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
		e := w.endpoint(hang.URL, webhooks.WorkflowCreated)
		began := time.Now()
		for i := range 3 {
			w.emit(webhooks.WorkflowCreated, "hang-"+strconv.Itoa(i))
		}
		as := w.waitAttempts(e.ID, 3)
		// One slot: three attempts in turn, each freed at the limit.
		require.Less(t, time.Since(began), 3*limit+3*time.Second, "a sender was held beyond the time limit")
		for _, a := range as {
			require.Nil(t, a.StatusCode, "no HTTP answer")
			require.False(t, a.Success)
			require.Equal(t, "No answer within 250ms", a.Error)
			require.Nil(t, a.NextAttemptAt, "a one-attempt schedule")
		}

		target := newReceiver(t, nil)
		redirect := newReceiver(t, func(_ int, rw http.ResponseWriter, r *http.Request) {
			http.Redirect(rw, r, target.URL+"/landing", http.StatusFound)
		})
		r := w.endpoint(redirect.URL, webhooks.WorkflowDeleted)
		w.emit(webhooks.WorkflowDeleted, "moved")
		as = w.waitAttempts(r.ID, 1)
		require.Equal(t, 302, *as[0].StatusCode)
		require.False(t, as[0].Success)
		require.Empty(t, target.got(), "the redirect was not followed")
	})
}

// TestPrivateNetworksRefused: without private networks, an attempt to a
// name resolving to a private address, or to a loopback literal, is
// refused by the guard before any connection.
func TestPrivateNetworksRefused(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *sqlstore.DB) {
		var dials atomic.Int32
		guard := &netguard.Dialer{
			Resolve: func(context.Context, string) ([]netip.Addr, error) {
				return []netip.Addr{netip.MustParseAddr("10.0.0.5")}, nil
			},
			Dial: func(context.Context, string, string) (net.Conn, error) {
				dials.Add(1)
				return nil, errors.New("test dialer: no connection made")
			},
		}
		w := newWorld(t, db, webhooks.Options{Dialer: guard, Schedule: []time.Duration{0}})
		require.False(t, w.svc.AllowPrivateNetworks())
		// Stored directly: the API refuses such URLs already (CheckURL).
		named := w.endpoint("http://hooks.internal.example/h")
		literal := w.endpoint("http://127.0.0.1:9/h")
		w.emit(webhooks.WorkflowCreated, "private")
		for _, e := range []string{named.ID, literal.ID} {
			as := w.waitAttempts(e, 1)
			require.Nil(t, as[0].StatusCode)
			require.Contains(t, as[0].Error, "refused by the private-network guard")
		}
		require.Zero(t, dials.Load(), "no connection was attempted")
	})
}

// panicky is a transport that panics.
type panicky struct{}

func (panicky) RoundTrip(*http.Request) (*http.Response, error) { panic("a transport bug") }

// TestPanicRecorded: a panic in an attempt fails that attempt, recorded on
// it, and the sender goes on.
func TestPanicRecorded(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *sqlstore.DB) {
		w := newWorld(t, db, webhooks.Options{Transport: panicky{}, Schedule: []time.Duration{0, 10 * time.Millisecond}})
		e := w.endpoint("https://hooks.example.com/h")
		w.emit(webhooks.WorkflowCreated, "boom")
		as := w.waitAttempts(e.ID, 2)
		for _, a := range as {
			require.Equal(t, "Internal error: the attempt failed unexpectedly", a.Error)
			require.Nil(t, a.StatusCode)
		}
		require.NotNil(t, as[0].NextAttemptAt)
		w.emit(webhooks.WorkflowCreated, "again")
		w.waitAttempts(e.ID, 4)
	})
}

// TestLostClaimRetried: an attempt claimed by a sender that never answers
// (it died) is claimed again when its lease ends and made; the dead
// sender's late answer is dropped.
func TestLostClaimRetried(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		rec := newReceiver(t, nil)
		w := newQuietWorld(t, db, webhooks.Options{}) // no sender: this test claims
		e := w.endpoint(rec.URL)
		w.emit(webhooks.WorkflowCreated, "orphan")
		claimed, err := db.WebhookAttemptClaim(ctx, 10, 100*time.Millisecond, time.Now())
		require.NoError(t, err)
		require.Len(t, claimed, 1)
		require.Equal(t, e.ID, claimed[0].Endpoint.ID)
		require.Equal(t, e.Secret, claimed[0].Endpoint.Secret, "the secret comes back opened")
		again, err := db.WebhookAttemptClaim(ctx, 10, time.Minute, time.Now())
		require.NoError(t, err)
		require.Empty(t, again, "leased")

		// The claim's holder dies; another sender takes it after the lease.
		newWorld(t, db, webhooks.Options{})
		as := w.waitAttempts(e.ID, 1)
		require.True(t, as[0].Success)
		require.Len(t, rec.got(), 1)
		// The dead one's answer comes late: dropped.
		late := claimed[0].Attempt
		require.NoError(t, db.WebhookAttemptFinish(ctx, []store.WebhookAttemptResult{{Attempt: late, StatusCode: ptr(500),
			Error: "late", AttemptedAt: time.Now(), NextAttemptAt: ptr(time.Now())}}, time.Now()))
		as = w.attempts(e.ID)
		require.Len(t, as, 1)
		require.True(t, as[0].Success)
		require.True(t, w.idle(), "the late answer scheduled nothing")
	})
}

// TestRotationSigns: after a rotation both secrets sign until the old
// one's time is over.
func TestRotationSigns(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *sqlstore.DB) {
		rec := newReceiver(t, nil)
		w := newWorld(t, db, webhooks.Options{})
		e := w.endpoint(rec.URL)
		until := time.Now().Add(time.Second)
		rotated, err := db.WebhookSecretRotate(context.Background(), &store.WebhookSecretRotateParams{Scope: w.scope, ID: e.ID,
			Secret: webhooks.NewSecret(), PreviousUntil: until, Now: time.Now()})
		require.NoError(t, err)
		require.Equal(t, e.Secret, rotated.PreviousSecret)
		require.NotEqual(t, e.Secret, rotated.Secret)
		w.emit(webhooks.WorkflowCreated, "during")
		w.waitAttempts(e.ID, 1)
		h := rec.got()[0]
		require.Len(t, splitEntries(h), 2)
		require.Equal(t, 1, verify(t, h, rotated.Secret))
		require.Equal(t, 1, verify(t, h, e.Secret))
		require.Eventually(t, func() bool { return time.Now().After(until) }, 3*time.Second, 10*time.Millisecond)
		w.emit(webhooks.WorkflowCreated, "after")
		w.waitAttempts(e.ID, 2)
		h = rec.got()[1]
		require.Len(t, splitEntries(h), 1)
		require.Equal(t, 1, verify(t, h, rotated.Secret))
		require.Zero(t, verify(t, h, e.Secret))
	})
}

// TestFastPath: an environment without endpoints costs its emitters one
// cached look-up, and stores nothing; a change through this process is
// seen at once.
func TestFastPath(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *sqlstore.DB) {
		counting := &countingStore{DB: db}
		w := newWorld(t, db, webhooks.Options{Store: counting, CacheTTL: time.Hour})
		ctx := context.Background()
		for range 1000 {
			require.False(t, w.svc.Wants(ctx, w.env.ID, webhooks.MessageSent))
			w.emit(webhooks.WorkflowCreated, "nobody")
			require.Nil(t, w.svc.MessagesChanged(ctx, webhooks.MessageRead, store.WebhookMessagesChangedParams{Scope: w.scope}),
				"no outbox entry where nobody takes the events")
		}
		require.EqualValues(t, 1, counting.lookups.Load(), "one read for 3,000 events")
		var events int
		require.NoError(t, db.Reader().QueryRow("SELECT count(*) FROM webhook_events").Scan(&events))
		require.Zero(t, events)
		w.endpoint("https://hooks.example.com/h", webhooks.MessageSent)
		require.True(t, w.svc.Wants(ctx, w.env.ID, webhooks.MessageSent))
		require.False(t, w.svc.Wants(ctx, w.env.ID, webhooks.MessageRead))
		require.EqualValues(t, 2, counting.lookups.Load())
	})
}

// TestQueueAndPrune: the queue's reading for the metrics, and the pruning
// of what is no longer needed.
func TestQueueAndPrune(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		rec := newReceiver(t, nil)
		w := newQuietWorld(t, db, webhooks.Options{})
		e := w.endpoint(rec.URL)
		start := time.Now()
		for i := range 5 {
			w.emit(webhooks.WorkflowCreated, "q-"+strconv.Itoa(i))
		}
		q, err := w.svc.QueueStats(ctx, time.Now())
		require.NoError(t, err)
		require.EqualValues(t, 5, q.Due)
		require.WithinDuration(t, start, q.OldestDue, time.Second)
		claimed, err := db.WebhookAttemptClaim(ctx, 10, time.Minute, time.Now())
		require.NoError(t, err)
		require.Len(t, claimed, 5)
		q, err = w.svc.QueueStats(ctx, time.Now())
		require.NoError(t, err)
		require.Zero(t, q.Due, "claimed attempts are not waiting")
		var results []store.WebhookAttemptResult
		for i, c := range claimed {
			results = append(results, store.WebhookAttemptResult{Attempt: c.Attempt, StatusCode: ptr(200), Success: true,
				AttemptedAt: start.Add(time.Duration(i) * time.Second)})
		}
		require.NoError(t, db.WebhookAttemptFinish(ctx, results, time.Now()))
		require.Len(t, w.attempts(e.ID), 5)
		n, err := db.WebhookPrune(ctx, 2, time.Now().Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, 3+3, n, "three attempts beyond the newest two, then their events")
		as := w.attempts(e.ID)
		require.Len(t, as, 2)
		require.WithinDuration(t, start.Add(4*time.Second), *as[0].AttemptedAt, time.Millisecond, "the newest kept")
		var events int
		require.NoError(t, db.Reader().QueryRow("SELECT count(*) FROM webhook_events").Scan(&events))
		require.Equal(t, 2, events)
	})
}

// countingStore counts the endpoint look-ups of the emitters.
type countingStore struct {
	*sqlstore.DB
	lookups atomic.Int32
}

func (c *countingStore) WebhookEndpointTypes(ctx context.Context, environmentID string) ([][]string, error) {
	c.lookups.Add(1)
	return c.DB.WebhookEndpointTypes(ctx, environmentID)
}

func splitEntries(h hit) []string { return strings.Fields(h.header.Get("webhook-signature")) }

func ptr[T any](v T) *T { return &v }
