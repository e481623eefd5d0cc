package httpapi_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestRateLimit: with --rate-limit, an environment's requests beyond the
// bucket get a 429 in the error shape with Retry-After and RateLimit-*
// headers; another environment has its own bucket; time refills it.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "sqlite")
	var mu sync.Mutex
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	h.Handler = httpapi.New(httpapi.Options{Store: h.DB, Keys: testdb.Keys(t), Logger: testLogger(t), RateLimit: 5, Now: clock})

	for i := range 5 {
		res := h.Do("GET", "/v2/subscribers", nil)
		require.Equal(t, 200, res.Status, "request %d", i)
		require.Equal(t, "5", res.Header.Get("RateLimit-Limit"))
	}
	res := h.Do("GET", "/v2/subscribers", nil)
	require.Equal(t, 429, res.Status)
	require.Equal(t, "1", res.Header.Get("Retry-After"))
	require.Equal(t, "0", res.Header.Get("RateLimit-Remaining"))
	require.NotEmpty(t, res.Header.Get("RateLimit-Reset"))
	require.EqualValues(t, 429, res.Object(t)["statusCode"])

	res = h.DoAs("ApiKey "+h.ProdKey, "GET", "/v2/subscribers", nil, nil)
	require.Equal(t, 200, res.Status, "each environment has its own bucket")

	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	require.Equal(t, 200, h.Do("GET", "/v2/subscribers", nil).Status, "refilled")
}
