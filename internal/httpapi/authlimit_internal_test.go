package httpapi

import (
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestClientAddr(t *testing.T) {
	t.Parallel()
	for remote, want := range map[string]string{
		"192.0.2.7:5000":                 "192.0.2.7",
		"[::ffff:192.0.2.7]:5000":        "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:443":     "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1%eth0]:80": "2001:db8:1:2::/64",
		"[::1]:80":                       "::/64",
		"pipe":                           "pipe",
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		require.Equal(t, want, clientAddr(r), remote)
	}
}

// TestAuthLimiterMemoryIsBounded: an attacker rotating addresses fills the
// table up to its cap, no further; the least recently failing address goes
// first; an address whose budget refilled is forgotten.
func TestAuthLimiterMemoryIsBounded(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	l := newAuthLimiter(2, func() time.Time { return now }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	l.max = 100
	w := httptest.NewRecorder()
	for i := range 1000 {
		l.fail(fmt.Sprintf("10.0.%d.%d", i/256, i%256))
		l.fail(fmt.Sprintf("10.0.%d.%d", i/256, i%256))
		require.LessOrEqual(t, l.size(), 100)
	}
	require.Equal(t, 100, l.size())
	require.Error(t, l.allow(w, "10.0.3.231"), "the latest address is still blocked")
	require.NoError(t, l.allow(w, "10.0.0.0"), "the oldest was forgotten")

	now = now.Add(time.Minute)
	require.NoError(t, l.allow(w, "10.0.3.231"))
	require.Equal(t, 99, l.size(), "a refilled address is dropped when next seen")
}
