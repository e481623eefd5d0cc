package httpapi_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/store"
)

// lookupCounter counts API key look-ups.
type lookupCounter struct {
	store.Store
	lookups atomic.Int32
}

func (c *lookupCounter) APIKeyGetByHash(ctx context.Context, hash string) (store.APIKey, store.Environment, error) {
	c.lookups.Add(1)
	return c.Store.APIKeyGetByHash(ctx, hash)
}

// TestAuthFailureLimit: failed authentications are limited per client
// address. Past the limit an address gets 429 (error shape, Retry-After,
// RateLimit-*) before any key is looked up — even for a valid key — until
// its budget refills; successes cost nothing; other addresses are not
// affected; X-Forwarded-For is not trusted.
func TestAuthFailureLimit(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		clock := &testClock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
		counter := &lookupCounter{Store: h.DB}
		h.Handler = httpapi.New(httpapi.Options{Store: counter, Keys: h.Keys, Logger: testLogger(t), AuthFailureLimit: 3, Now: clock.Now})
		dev, session := h.authFor(asDev), h.authFor(asSession)
		const bad = "ApiKey hk_0000000000000000000000000000000000000000000000000000000000000000"
		from := func(addr, auth string, headers map[string]string) response {
			t.Helper()
			req := newRequest(t, auth, "GET", "/v2/subscribers", nil, headers)
			req.RemoteAddr = addr
			res := h.serve(req)
			validateResponse(t, docProbe(req), res)
			return res
		}
		blocked := func(res response, retryAfter string) {
			t.Helper()
			requireError(t, res, 429, "GET", "/v2/subscribers")
			require.Equal(t, retryAfter, res.Header.Get("Retry-After"))
			require.Equal(t, retryAfter, res.Header.Get("RateLimit-Reset"))
			require.Equal(t, "3", res.Header.Get("RateLimit-Limit"))
			require.Equal(t, "0", res.Header.Get("RateLimit-Remaining"))
			require.Empty(t, res.Header.Get("Idempotency-Key"), "a refused request is unauthenticated")
		}

		// Successes are free.
		for range 10 {
			require.Equal(t, 200, from("192.0.2.10:1000", dev, nil).Status)
		}
		// Three failures of any kind, then the address is refused, valid key or not.
		require.Equal(t, 401, from("192.0.2.10:1001", bad, nil).Status)
		require.Equal(t, 401, from("192.0.2.10:1002", "Bearer forged", nil).Status)
		require.Equal(t, 401, from("192.0.2.10:1003", "", nil).Status)
		lookups := counter.lookups.Load()
		blocked(from("192.0.2.10:1004", dev, idem("blocked-1")), "20")
		blocked(from("192.0.2.10:1005", bad, nil), "20")
		blocked(from("192.0.2.10:1006", session, nil), "20")
		require.Equal(t, lookups, counter.lookups.Load(), "no key was looked up for a blocked address")

		// Other addresses are not affected, whatever they claim to forward for.
		require.Equal(t, 200, from("192.0.2.11:1000", dev, nil).Status)
		blocked(from("192.0.2.10:1007", dev, map[string]string{"X-Forwarded-For": "198.51.100.1"}), "20")
		// An IPv6 client is counted by its /64.
		for _, addr := range []string{"[2001:db8::1]:1", "[2001:db8::2]:1", "[2001:db8::3]:1"} {
			require.Equal(t, 401, from(addr, bad, nil).Status)
		}
		blocked(from("[2001:db8::ffff]:1", dev, nil), "20")
		require.Equal(t, 200, from("[2001:db8:0:1::1]:1", dev, nil).Status, "another /64")

		// The budget refills at 3 a minute: one try per 20 s.
		clock.Advance(10 * time.Second)
		blocked(from("192.0.2.10:1008", dev, nil), "10")
		clock.Advance(10 * time.Second)
		require.Equal(t, 401, from("192.0.2.10:1009", bad, nil).Status, "one more try")
		blocked(from("192.0.2.10:1010", dev, nil), "20")
		clock.Advance(20 * time.Second)
		require.Equal(t, 200, from("192.0.2.10:1011", dev, nil).Status, "a success spends nothing")
		require.Equal(t, 200, from("192.0.2.10:1012", dev, nil).Status)
		clock.Advance(time.Minute)
		for range 3 {
			require.Equal(t, 401, from("192.0.2.10:1013", bad, nil).Status, "refilled to the whole budget")
		}
		blocked(from("192.0.2.10:1014", dev, nil), "20")

		logs := logsOf(t)
		require.Contains(t, logs, "address blocked")
		require.Contains(t, logs, "192.0.2.10")
		require.NotContains(t, logs, h.DevKey)
	})
}

// TestAuthFailureLimitOff: without the option failures are not limited.
func TestAuthFailureLimitOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "sqlite")
	for range 50 {
		require.Equal(t, http.StatusUnauthorized, h.DoAs("ApiKey nope", "GET", "/v2/subscribers", nil, nil).Status)
	}
	require.Equal(t, http.StatusOK, h.Do("GET", "/v2/subscribers", nil).Status)
}
