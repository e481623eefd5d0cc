package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDefaultHealthURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, addr, want string
	}{
		{"no HERALD_ADDR", "", "http://127.0.0.1:3000/health"},
		{"loopback", "127.0.0.1:4000", "http://127.0.0.1:4000/health"},
		{"any IPv4", "0.0.0.0:3000", "http://127.0.0.1:3000/health"},
		{"empty host", ":8080", "http://127.0.0.1:8080/health"},
		{"any IPv6", "[::]:9000", "http://127.0.0.1:9000/health"},
		{"IPv6 loopback", "[::1]:9000", "http://[::1]:9000/health"},
		{"host name", "herald.internal:3000", "http://herald.internal:3000/health"},
		{"no port", "0.0.0.0:", "http://127.0.0.1:3000/health"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := defaultHealthURL(c.addr)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
	_, err := defaultHealthURL("3000")
	require.ErrorContains(t, err, `HERALD_ADDR "3000"`, "an address without a colon is not guessed at")
}

func TestHealthcheck(t *testing.T) {
	t.Parallel()
	status := func(code int) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/health" || r.Method != http.MethodGet {
				http.NotFound(w, r)
				return
			}
			w.WriteHeader(code)
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/health"
	}

	// A port that was listening and is closed: nothing answers there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String() + "/health"
	require.NoError(t, ln.Close())

	// A listener that never accepts: the kernel completes the handshake and
	// the request waits for an answer that never comes.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { silent.Close() })

	redirect := httptest.NewServer(http.RedirectHandler(status(200), http.StatusFound))
	t.Cleanup(redirect.Close)

	for _, c := range []struct {
		name, url, err string
	}{
		{"200", status(200), ""},
		{"503", status(503), "503 Service Unavailable"},
		{"404", status(404), "404 Not Found"},
		{"redirect is not followed", redirect.URL, "302 Found"},
		{"nothing listening", closed, "connection refused"},
		{"no answer", "http://" + silent.Addr().String() + "/health", "no answer from"},
		{"not a URL", "://nope", "missing protocol scheme"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			err := healthcheck(context.Background(), c.url, 300*time.Millisecond)
			if c.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, c.err)
			require.Less(t, time.Since(start), 5*time.Second, "the timeout bounds the check")
		})
	}
}

// TestHealthcheckCommand runs `herald healthcheck` as the container runs it:
// the built binary against a real `herald serve`, its exit status the verdict.
func TestHealthcheckCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the binary")
	}
	t.Parallel()
	bin := heraldBinary(t)
	env, _ := serveStore(t, "sqlite")
	srv := startServer(t, bin, env)
	u, err := url.Parse(srv.base)
	require.NoError(t, err)
	_, port, err := net.SplitHostPort(u.Host)
	require.NoError(t, err)

	check := func(args []string, env ...string) (int, string) {
		cmd := exec.Command(bin, append([]string{"healthcheck"}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), string(out)
		}
		require.NoError(t, err)
		return 0, string(out)
	}

	code, out := check(nil, "HERALD_ADDR=0.0.0.0:"+port)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "http://127.0.0.1:"+port+"/health")
	code, out = check([]string{"--url", srv.base + "/health"})
	require.Equal(t, 0, code, out)
	code, out = check([]string{"--url", srv.base + "/no-such-page"})
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "404")

	srv.kill(t)
	code, out = check(nil, "HERALD_ADDR=127.0.0.1:"+port)
	require.Equal(t, 1, code, out)
	require.True(t, strings.HasPrefix(out, "herald: health check:"), out)
}
